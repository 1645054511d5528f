// The safe zone: how many tokens a request may use, below the model's context window (the rest is
// room for the answer and for counting error). No Node APIs: the CLI and the workflow may call it.

const DEFAULT_SAFE_ZONE_FRACTION = 0.8;
/** Below this the value is almost certainly a mistake (`5` meant as 5%?), not a real budget. */
const MIN_SAFE_ZONE_TOKENS = 100;

// Units are decimal: windows are quoted that way (`128k` = 128,000), so `0.8` and `102.4k` agree.
// The seed multiplies by 1024; we don't.
const UNITS: Record<string, number> = { '': 1, k: 1_000, m: 1_000_000 };

function fail(value: unknown, why: string): never {
  throw new Error(
    `invalid safe zone ${JSON.stringify(value)}: ${why}. Use a token count (100000, "80k", "1.5M"), ` +
      `a fraction of the context window (0.8 or "0.8") or a percentage ("80%")`,
  );
}

function fromNumber(n: number, value: unknown, window: number): number {
  if (!Number.isFinite(n)) fail(value, 'not a finite number');
  if (n <= 0) fail(value, 'it must be positive');
  // (0, 1] is a fraction of the window — for numbers and numeric strings alike (the seed reads the
  // string "0.8" as 0 tokens).
  const tokens = n <= 1 ? Math.floor(n * window) : Math.floor(n);
  if (tokens < MIN_SAFE_ZONE_TOKENS) fail(value, `${tokens} tokens is too small to hold a request`);
  // The window is the hard limit; a larger value can only be meant as "all of it".
  return Math.min(tokens, window);
}

/**
 * Parse `--safe-zone`: an integer token count, `"80k"`, `"1.5M"`, a fraction of the window (`0.8`,
 * `"0.8"`, `1.0` = the whole window) or a percentage (`"80%"`). Missing/empty: 80% of the window.
 * Values above the window are clamped to it. Throws a clear error on anything else.
 */
export function parseSafeZone(value: string | number | undefined | null, window: number): number {
  if (!Number.isFinite(window) || window <= 0) throw new Error(`invalid context window ${window}: it must be a positive number of tokens`);
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    return Math.floor(DEFAULT_SAFE_ZONE_FRACTION * window);
  }
  if (typeof value === 'number') return fromNumber(value, value, window);
  if (typeof value !== 'string') fail(value, 'expected a number or a string');
  const text = value
    .trim()
    .toLowerCase()
    .replace(/[_,](?=\d)/g, '');
  const pct = /^(\d+(?:\.\d+)?|\.\d+)\s*%$/.exec(text);
  if (pct) {
    const p = Number(pct[1]);
    if (p <= 0 || p > 100) fail(value, 'a percentage must be in (0, 100]');
    return fromNumber(p / 100, value, window);
  }
  const m = /^(\d+(?:\.\d+)?|\.\d+)\s*(k|m)?(?:\s*tokens?)?$/.exec(text);
  if (!m) {
    if (/^-/.test(text)) fail(value, 'it must be positive');
    fail(value, 'not a number');
  }
  const n = Number(m[1]);
  const unit = m[2] ?? '';
  if (unit) {
    const tokens = Math.floor(n * UNITS[unit]!);
    if (tokens <= 0) fail(value, 'it must be positive');
    if (tokens < MIN_SAFE_ZONE_TOKENS) fail(value, `${tokens} tokens is too small to hold a request`);
    return Math.min(tokens, window);
  }
  return fromNumber(n, value, window);
}
