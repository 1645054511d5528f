/** Deterministic varied prose, so 20 KB is ~4-5k tokens (not a run of one character). */
export function prose(seed: number, bytes: number): string {
  const words = [
    'alpha',
    'vector',
    'module',
    'compile',
    'render',
    'thread',
    'buffer',
    'socket',
    'schema',
    'parser',
    'tensor',
    'ledger',
    'bridge',
    'kernel',
    'cursor',
    'plugin',
  ];
  let x = seed * 2654435761;
  const out: string[] = [];
  let n = 0;
  while (n < bytes) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const w = `${words[x % words.length]}${x % 97}`;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ').slice(0, bytes);
}
