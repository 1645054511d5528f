// What a provider's answer says about its rate limits: `retry-after` (errors.ts) and, where sent,
// OpenAI's `x-ratelimit-{remaining,reset}-{requests,tokens}` (reset as a duration such as `6m0s`)
// and Anthropic's `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{remaining,reset}`
// (reset as an RFC 3339 time). A limit with nothing remaining pauses the pool until it resets.

/** One header from a fetch `Headers` or a plain record. */
export function header(headers: unknown, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const v = (headers as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `1s`, `6m0s`, `20ms`, `1h2m3.5s`, or a bare number of seconds → milliseconds; undefined when unreadable. */
export function resetDurationMs(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000;
  const parts = [...t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== t) return undefined;
  return parts.reduce((ms, p) => ms + Number(p[1]) * UNIT_MS[p[2]!]!, 0);
}

const OPENAI_KINDS = ['requests', 'tokens'];
const ANTHROPIC_KINDS = ['requests', 'tokens', 'input-tokens', 'output-tokens'];

/**
 * Milliseconds until the provider's exhausted limit resets (the latest, when several are at zero),
 * or undefined when no limit it reports is exhausted (or it reports none). Providers that send
 * `-1`/`0` without meaning it (Azure's Responses API) are read as they are: 0 remaining with a reset.
 */
export function rateLimitResetMs(headers: unknown, now = Date.now()): number | undefined {
  let until: number | undefined;
  const exhausted = (remaining: string | undefined) => remaining !== undefined && Number(remaining) === 0;
  for (const kind of OPENAI_KINDS) {
    if (!exhausted(header(headers, `x-ratelimit-remaining-${kind}`))) continue;
    const reset = header(headers, `x-ratelimit-reset-${kind}`);
    const ms = reset === undefined ? undefined : resetDurationMs(reset);
    if (ms !== undefined) until = Math.max(until ?? 0, ms);
  }
  for (const kind of ANTHROPIC_KINDS) {
    if (!exhausted(header(headers, `anthropic-ratelimit-${kind}-remaining`))) continue;
    const reset = header(headers, `anthropic-ratelimit-${kind}-reset`);
    const at = reset === undefined ? NaN : Date.parse(reset);
    if (!Number.isNaN(at)) until = Math.max(until ?? 0, Math.max(0, at - now));
  }
  return until;
}
