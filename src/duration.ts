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

/** The bounds of a duration setting (a flag or a variable), in milliseconds, and an example to show. */
export interface DurationRange {
  minMs: number;
  maxMs: number;
  /** Also accept 0 below `minMs` (e.g. "after every checkpoint"). */
  zero?: boolean;
  example: string;
}

/** Shortest form of `ms` as a user writes it: 1d, 10m, 1s, 0s. */
function formatBound(ms: number): string {
  for (const [unit, factor] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms >= factor && ms % factor === 0) return `${ms / factor}${unit}`;
  return ms === 0 ? '0s' : `${ms}ms`;
}

/**
 * Milliseconds of a duration setting given as `text` by `source` (a flag or a variable), within
 * `range`; otherwise one line naming the source, the range and an example. A plain number is
 * milliseconds, as everywhere.
 */
export function parseDurationSetting(text: string, source: string, range: DurationRange): number {
  let ms = Number.NaN;
  try {
    ms = parseDuration(text);
  } catch {
    // reported below with the range
  }
  if ((range.zero && ms === 0) || (ms >= range.minMs && ms <= range.maxMs)) return ms;
  const zero = range.zero ? ', or 0' : '';
  throw new Error(
    `${source} must be a duration from ${formatBound(range.minMs)} to ${formatBound(range.maxMs)}${zero} (e.g. ${range.example}; a plain number is milliseconds), got "${text}"`,
  );
}

/** The variable `name` of `env` as a duration setting, or undefined when it is unset or blank. */
export function durationSettingFromEnv(env: NodeJS.ProcessEnv, name: string, range: DurationRange): number | undefined {
  const text = env[name]?.trim();
  return text ? parseDurationSetting(text, name, range) : undefined;
}
