// Token accounting: a real BPE tokenizer per model family, per-message overhead, context windows.
// Messages are counted once when they are written (the count lives in the store and the index),
// so the pruner never re-tokenizes history.
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { userContextWindows } from './models.js';

export type EncodingName = 'o200k_base' | 'cl100k_base';

/** Per-message framing (role, separators), as Mini-Agent counts it (+4). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Per tool call of an assistant message: id, type and JSON framing around name and arguments. */
const TOOL_CALL_OVERHEAD_TOKENS = 4;

/** Texts longer than this are counted from samples (see countTokens). */
export const SAMPLE_ABOVE_CHARS = 256 * 1024;
const SAMPLE_COUNT = 16;
const SAMPLE_CHARS = 8 * 1024;

// js-tiktoken merges each regex piece in quadratic time: a 4 KB run of one letter takes seconds.
// Runs this long never occur in prose or ordinary code, so they are counted in short slices.
const LONG_RUN = /[\p{L}\p{M}]{64,}|[^\s\p{L}\p{M}\p{N}]{64,}|\s{64,}/gu;
const RUN_SLICE = 32;

/**
 * Names to look a model up by, lower-cased: `openai/gpt-4o` → `gpt-4o`; a colon may separate a
 * provider (`azure:gpt-4o`) or a tag (`qwen2.5-coder:32b`), so both sides are tried.
 */
function candidateNames(model: string): string[] {
  const m = model.trim().toLowerCase();
  const base = m.slice(m.lastIndexOf('/') + 1);
  const colon = base.indexOf(':');
  return colon < 0 ? [base] : [base, base.slice(0, colon), base.slice(colon + 1)];
}

const O200K = /^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o1|o3|o4|codex-|computer-use)/;

export function encodingFor(model: string): EncodingName {
  if (model.trim().toLowerCase().startsWith('scripted:')) return 'cl100k_base';
  return candidateNames(model).some((n) => O200K.test(n)) ? 'o200k_base' : 'cl100k_base';
}

const encoders = new Map<EncodingName, Tiktoken>();

function encoder(name: EncodingName): Tiktoken {
  let enc = encoders.get(name);
  if (!enc) {
    // Building an encoder parses ~1 MB of ranks (about a second): once per process and encoding.
    const ranks: TiktokenBPE = name === 'o200k_base' ? o200kBase : cl100kBase;
    enc = new Tiktoken(ranks);
    encoders.set(name, enc);
  }
  return enc;
}

function encodeLength(enc: Tiktoken, text: string): number {
  // Special-token text (`<|endoftext|>`) in tool output is ordinary text here, never a control token.
  return enc.encode(text, [], []).length;
}

const repeatedRunCache = new Map<string, number>();

function countRun(enc: Tiktoken, encName: EncodingName, run: string): number {
  const first = run[0]!;
  let same = true;
  for (let i = 1; i < run.length && same; i++) same = run[i] === first;
  if (same) {
    // `=====`, `-----`, blank padding: tokens per 64-char block, counted once per character.
    const key = `${encName}\u0000${first}`;
    let per64 = repeatedRunCache.get(key);
    if (per64 === undefined) {
      per64 = encodeLength(enc, first.repeat(64));
      repeatedRunCache.set(key, per64);
    }
    return Math.ceil((run.length / 64) * per64);
  }
  let n = 0;
  for (let i = 0; i < run.length; i += RUN_SLICE) n += encodeLength(enc, run.slice(i, i + RUN_SLICE));
  return n;
}

function countExact(enc: Tiktoken, encName: EncodingName, text: string): number {
  let n = 0;
  let last = 0;
  LONG_RUN.lastIndex = 0;
  for (let m = LONG_RUN.exec(text); m; m = LONG_RUN.exec(text)) {
    if (m.index > last) n += encodeLength(enc, text.slice(last, m.index));
    n += countRun(enc, encName, m[0]);
    last = m.index + m[0].length;
  }
  if (last < text.length) n += encodeLength(enc, text.slice(last));
  return n;
}

/**
 * Tokens of `text` for `model`. Exact below SAMPLE_ABOVE_CHARS (256 KB), except that runs of 64+
 * letters/symbols/spaces are counted in slices (within a few tokens). Above that, the count is an
 * estimate: 16 evenly spread 8 KB samples, each cut at a line start, give tokens per character,
 * scaled to the whole text — typically within 2% on code and logs, and it costs ~50 ms instead of
 * ~0.3 s per MB. The pruner keeps a margin (the safe zone), so that error is harmless.
 */
export function countTokens(text: string, model: string): number {
  if (!text) return 0;
  const name = encodingFor(model);
  const enc = encoder(name);
  if (text.length <= SAMPLE_ABOVE_CHARS) return countExact(enc, name, text);
  const stride = Math.floor(text.length / SAMPLE_COUNT);
  let sampledChars = 0;
  let sampledTokens = 0;
  for (let i = 0; i < SAMPLE_COUNT; i++) {
    let start = i * stride;
    const nl = text.indexOf('\n', start);
    if (nl >= 0 && nl - start < 512) start = nl + 1;
    const sample = text.slice(start, start + SAMPLE_CHARS);
    sampledChars += sample.length;
    sampledTokens += countExact(enc, name, sample);
  }
  return Math.ceil((sampledTokens / Math.max(1, sampledChars)) * text.length);
}

/** Tokens one message costs in a request: content + tool calls + per-message framing. */
export function messageTokens(msg: { role: string; content: string; toolCalls?: { name: string; arguments: string }[] }, model: string): number {
  let n = MESSAGE_OVERHEAD_TOKENS + countTokens(msg.content ?? '', model);
  for (const call of msg.toolCalls ?? []) {
    n += TOOL_CALL_OVERHEAD_TOKENS + countTokens(call.name, model) + countTokens(call.arguments ?? '', model);
  }
  return n;
}

/**
 * Context windows (input + output) by model-name prefix, longest prefix first. Users extend or
 * override it with `overrides` (same prefix matching) or `--context-window`.
 */
export const CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  'gpt-4.1': 1_047_576,
  'gpt-4.5': 128_000,
  'gpt-4o': 128_000,
  'chatgpt-4o': 128_000,
  'gpt-4-turbo': 128_000,
  'gpt-4-32k': 32_768,
  'gpt-4': 8_192,
  'gpt-3.5-turbo': 16_385,
  'gpt-5-chat': 128_000,
  'gpt-5': 400_000,
  'gpt-oss': 131_072,
  'o1-mini': 128_000,
  o1: 200_000,
  o3: 200_000,
  o4: 200_000,
  'codex-mini': 200_000,
  claude: 200_000,
  deepseek: 128_000,
  'qwen3-coder': 262_144,
  'qwen-max': 32_768,
  'qwen-long': 10_000_000,
  qwen: 131_072,
  gemini: 1_048_576,
  'glm-4': 128_000,
  kimi: 131_072,
  moonshot: 131_072,
  'mistral-large': 131_072,
  codestral: 256_000,
  'llama-3': 131_072,
  grok: 131_072,
};

const DEFAULT_CONTEXT_WINDOW = 128_000;

function lookup(table: Readonly<Record<string, number>>, name: string): number | undefined {
  let bestLength = -1;
  let value: number | undefined;
  for (const [key, v] of Object.entries(table)) {
    const k = key.toLowerCase();
    if (name.startsWith(k) && k.length > bestLength) {
      bestLength = k.length;
      value = v;
    }
  }
  return value;
}

/** The window of a model: the overrides (default: the user's model table, src/model/models.ts), the built-in table, 128k. */
export function contextWindowFor(model: string, overrides: Record<string, number> | undefined = userContextWindows()): number {
  const full = model.trim().toLowerCase();
  // Overrides may name the model with or without its provider prefix.
  for (const name of overrides ? [full, ...candidateNames(model)] : []) {
    const hit = lookup(overrides!, name);
    if (hit !== undefined) return hit;
  }
  if (full.startsWith('scripted:')) return DEFAULT_CONTEXT_WINDOW;
  for (const name of candidateNames(model)) {
    const hit = lookup(CONTEXT_WINDOWS, name);
    if (hit !== undefined) return hit;
  }
  return DEFAULT_CONTEXT_WINDOW;
}
