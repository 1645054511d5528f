// Durations as users write them. No imports: the CLI's light paths and the workflow use it.

/** Parse `90s`, `30m`, `2h`, `1d`, or plain milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new Error(`invalid duration "${text}": use a number with ms, s, m, h or d (e.g. 30m)`);
  const n = Number(m[1]);
  const unit = m[2] ?? 'ms';
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit]!;
  return Math.round(n * factor);
}
