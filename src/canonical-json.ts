// Canonical JSON: keys sorted, undefined members left out, no whitespace. Two values that mean the
// same arguments (`{a,b}` and `{b,a}`) give the same text, hence the same hash: loop detection,
// the approval's argument hash and the ledger's all compare calls through this one function.

export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj)
    .sort()
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${stableStringify(obj[k])}`)
    .join(',')}}`;
}
