// Continuation stitching. When an answer stops with `finish_reason: "length"` the runner asks
// the model to continue (prefill: the partial answer is sent back as an assistant prefix;
// prompt: a user message asks it to carry on). Models often start the next segment by repeating
// the last words, line or lines of the previous one; gluing the segments blindly would then
// duplicate text inside a file the model is writing. These functions remove that repetition.

export interface StitchOptions {
  /** Shortest repetition that is removed (default 8): shorter matches are likely legitimate text. */
  minOverlap?: number;
  /** Longest repetition looked for (default 2000 characters). */
  maxOverlap?: number;
}

export interface StitchResult {
  /** previous + the part of next that is new. */
  text: string;
  /** Characters dropped from the start of `next`. */
  overlap: number;
}

const DEFAULT_MIN = 8;
const DEFAULT_MAX = 2000;

/**
 * Join a continuation segment to what came before, dropping the longest suffix of `previous`
 * that `next` starts with (if at least `minOverlap` characters long). If `next` restates the
 * tail after some leading whitespace of its own (a newline, or different indentation of the
 * restated line), that leading whitespace is dropped with the repetition and the whitespace
 * already in `previous` is kept.
 */
export function stitchContinuation(previous: string, next: string, opts: StitchOptions = {}): StitchResult {
  const min = Math.max(1, opts.minOverlap ?? DEFAULT_MIN);
  const max = opts.maxOverlap ?? DEFAULT_MAX;
  const exact = longestOverlap(previous, next, max);
  if (exact >= min) return { text: previous + next.slice(exact), overlap: exact };
  const lead = leadingWhitespace(next);
  if (lead > 0 && lead < next.length) {
    const rest = next.slice(lead);
    const k = longestOverlap(previous, rest, max);
    if (k >= min) return { text: previous + rest.slice(k), overlap: lead + k };
  }
  return { text: previous + next, overlap: 0 };
}

export interface NativeStitchResult extends StitchResult {
  /**
   * append: next glued as is; overlap: a repeated tail removed; restart: next is a complete
   * argument object on its own (the model started over), so it replaces previous; unfenced:
   * next was wrapped in a ``` code fence that was removed.
   */
  mode: 'append' | 'overlap' | 'restart' | 'unfenced';
}

/**
 * Native continuation path: the OpenAI API cannot prefill a half-written tool call, so when a
 * segment ends for length inside a tool call, the runner keeps the calls that are complete and
 * asks the model to continue the argument JSON of the last, unfinished call as plain text. That
 * text is stitched onto the partial argument string here, and only the whole result is then
 * validated (`parseNativeArguments`); a fragment is never parsed on its own.
 *
 * Same overlap rule as `stitchContinuation`, with JSON validity as the judge where the text
 * alone is ambiguous: a removed overlap is kept if the result is valid JSON, else plain
 * appending is used if that is valid; a continuation wrapped in a code fence is unwrapped if
 * that makes the join valid; a `next` that is a complete object on its own while no join is
 * valid is a restart. If nothing is valid yet (the continuation was cut off too), the
 * overlap-removed join is returned for the next continuation to extend.
 */
export function stitchNativeArguments(previous: string, next: string, opts: StitchOptions = {}): NativeStitchResult {
  const stitched = stitchContinuation(previous, next, opts);
  if (stitched.overlap > 0 && isJson(stitched.text)) return { ...stitched, mode: 'overlap' };
  const appended = previous + next;
  if (isJson(appended)) return { text: appended, overlap: 0, mode: 'append' };
  const fenced = unfence(next);
  if (fenced !== null) {
    const inner = stitchNativeArguments(previous, fenced, opts);
    if (isJson(inner.text)) return { ...inner, mode: 'unfenced' };
  }
  if (/^\s*\{/.test(next) && isJsonObject(next)) return { text: next, overlap: 0, mode: 'restart' };
  // Still incomplete (the continuation may itself be cut off): the best join so far.
  return { ...stitched, mode: stitched.overlap > 0 ? 'overlap' : 'append' };
}

/** Length of the longest suffix of `a` that is a prefix of `b`, up to `max` (KMP, linear). */
export function longestOverlap(a: string, b: string, max = DEFAULT_MAX): number {
  const m = Math.min(max, a.length, b.length);
  if (m <= 0) return 0;
  const p = b.slice(0, m);
  const fail = new Int32Array(m);
  for (let i = 1, q = 0; i < m; i++) {
    while (q > 0 && p.charCodeAt(i) !== p.charCodeAt(q)) q = fail[q - 1]!;
    if (p.charCodeAt(i) === p.charCodeAt(q)) q++;
    fail[i] = q;
  }
  let q = 0;
  for (let i = a.length - m; i < a.length; i++) {
    const c = a.charCodeAt(i);
    // A full match can only be the answer at the very end; otherwise fall back and go on.
    if (q === m) q = fail[q - 1]!;
    while (q > 0 && c !== p.charCodeAt(q)) q = fail[q - 1]!;
    if (c === p.charCodeAt(q)) q++;
  }
  return q;
}

function leadingWhitespace(s: string): number {
  let i = 0;
  while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\n' || s[i] === '\r')) i++;
  return i;
}

function unfence(s: string): string | null {
  const m = /^\s*```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```\s*$/.exec(s);
  return m ? m[1]! : null;
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

function isJsonObject(s: string): boolean {
  try {
    const v: unknown = JSON.parse(s);
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
}
