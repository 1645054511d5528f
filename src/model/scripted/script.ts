// The scripted model's file format (src/model/scripted/README.md): what each turn
// answers, how it is streamed, where it is cut for length and which attempts fail and how.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

interface ScriptToolCall {
  name: string;
  /** An object is sent as compact JSON; a string is sent verbatim (to script invalid JSON). */
  arguments?: Record<string, unknown> | string;
  /** Defaults to `call_<turn>_<index>`, stable across attempts. */
  id?: string;
}

/**
 * A fault on one attempt of a turn. Exactly one of `http`, `context_length_exceeded`,
 * `disconnect_after_chars`, `hang_after_chars`, `malformed_line`, `stream_error`,
 * `first_token_delay_ms`.
 */
export interface ScriptFault {
  /** 1-based Temporal activity attempt (`x-agentrun-attempt`). */
  attempt: number;
  /** Only this continuation segment (0-based); every segment when absent. */
  segment?: number;
  http?: number;
  retry_after_ms?: number;
  retry_after_s?: number;
  /** Error body for `http`: an object is sent as JSON, a string verbatim. */
  body?: string | Record<string, unknown>;
  context_length_exceeded?: boolean;
  /** Destroy the socket once this many characters (reasoning + answer) were streamed. */
  disconnect_after_chars?: number;
  /** Stop sending once this many characters were streamed, keep the connection open. */
  hang_after_chars?: number;
  /** A raw line injected into the SSE stream (at `after_chars`, default 0). */
  malformed_line?: string;
  /** Send `data: {"error":{"message":…}}` mid-stream (at `after_chars`) and end the stream. */
  stream_error?: string;
  after_chars?: number;
  /** This attempt waits this long before its first chunk (headers go out at once). */
  first_token_delay_ms?: number;
  /**
   * With `http`, `disconnect_after_chars` or `stream_error`: the provider reports usage before
   * failing (a usage chunk in the stream, when asked for; `usage` in the error object of an HTTP error).
   */
  with_usage?: boolean;
}

export interface ScriptUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  reasoning_tokens?: number;
  cached_tokens?: number;
}

export interface ScriptTurn {
  say?: string;
  tool_calls?: ScriptToolCall[];
  /** Streamed as `delta.reasoning_content` before the answer, in the first segment only. */
  reasoning?: string;
  /** Characters per SSE chunk (default `default_chunk`, else 24). */
  chunk?: number;
  delay_ms?: number;
  first_token_delay_ms?: number;
  /** Offsets in the answer (say, then each tool call's argument JSON) where segments end with `length`. */
  truncate_at?: number[];
  usage?: ScriptUsage;
  /** Finish reason of the last segment (default `tool_calls` when the turn has tool calls, else `stop`). */
  finish_reason?: string;
  faults?: ScriptFault[];
  /** Prompt-strategy continuations repeat this many characters of the previous segment first. */
  continuation_overlap?: number;
}

/** `{ repeat: N, turn }` expands to N turns; `{{n}}` in strings becomes 1…N. */
interface ScriptRepeat {
  repeat: number;
  turn: ScriptTurn;
}

export interface Script {
  turns: (ScriptTurn | ScriptRepeat)[];
  default_chunk?: number;
  default_delay_ms?: number;
  /** Model name echoed in every chunk (default: the request's `model`). */
  model?: string;
  /** Answers to `x-agentrun-purpose: summary` requests; a string is `{ say: string }`. */
  summaries?: (ScriptTurn | string)[];
  /** Keep serving the last turn after the script ends: `true` for ever, N for N more turns. */
  repeat_last?: boolean | number;
  /**
   * Report `cached_tokens` as a provider with a prompt cache would: the share of the request (tools,
   * then messages, serialised) that repeats the previous request of the same conversation and
   * purpose from its start. A response's `usage.cached_tokens` wins.
   */
  prompt_cache?: boolean;
}

const count = z.number().int().min(0);
const positive = z.number().int().positive();

const toolCallSchema = z.strictObject({
  name: z.string().min(1),
  arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).optional(),
  id: z.string().min(1).optional(),
});

const FAULT_KINDS = [
  'http',
  'context_length_exceeded',
  'disconnect_after_chars',
  'hang_after_chars',
  'malformed_line',
  'stream_error',
  'first_token_delay_ms',
] as const;

const faultSchema = z
  .strictObject({
    attempt: positive,
    segment: count.optional(),
    http: z.number().int().min(400).max(599).optional(),
    retry_after_ms: count.optional(),
    retry_after_s: z.number().min(0).optional(),
    body: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
    context_length_exceeded: z.literal(true).optional(),
    disconnect_after_chars: count.optional(),
    hang_after_chars: count.optional(),
    malformed_line: z.string().optional(),
    stream_error: z.string().optional(),
    after_chars: count.optional(),
    first_token_delay_ms: count.optional(),
    with_usage: z.literal(true).optional(),
  })
  .superRefine((f, ctx) => {
    const kinds = FAULT_KINDS.filter((k) => f[k] !== undefined);
    if (kinds.length !== 1) {
      ctx.addIssue({ code: 'custom', message: `a fault needs exactly one of ${FAULT_KINDS.join(', ')} (got ${kinds.join(', ') || 'none'})` });
    }
    if ((f.retry_after_ms !== undefined || f.retry_after_s !== undefined || f.body !== undefined) && f.http === undefined) {
      ctx.addIssue({ code: 'custom', message: 'retry_after_ms, retry_after_s and body go with http' });
    }
    if (f.with_usage && f.http === undefined && f.disconnect_after_chars === undefined && f.stream_error === undefined) {
      ctx.addIssue({ code: 'custom', path: ['with_usage'], message: 'with_usage goes with http, disconnect_after_chars or stream_error' });
    }
    if (f.after_chars !== undefined && f.malformed_line === undefined && f.stream_error === undefined) {
      ctx.addIssue({ code: 'custom', path: ['after_chars'], message: 'after_chars goes with malformed_line or stream_error' });
    }
  });

const turnSchema = z
  .strictObject({
    say: z.string().optional(),
    tool_calls: z.array(toolCallSchema).optional(),
    reasoning: z.string().optional(),
    chunk: positive.optional(),
    delay_ms: count.optional(),
    first_token_delay_ms: count.optional(),
    truncate_at: z.array(positive).optional(),
    usage: z
      .strictObject({
        prompt_tokens: count.optional(),
        completion_tokens: count.optional(),
        reasoning_tokens: count.optional(),
        cached_tokens: count.optional(),
      })
      .optional(),
    finish_reason: z.string().min(1).optional(),
    faults: z.array(faultSchema).optional(),
    continuation_overlap: count.optional(),
  })
  .superRefine((t, ctx) => {
    if (t.say === undefined && t.tool_calls === undefined && t.reasoning === undefined) {
      ctx.addIssue({ code: 'custom', message: 'a turn needs say, tool_calls or reasoning' });
    }
    const cuts = t.truncate_at ?? [];
    for (let i = 1; i < cuts.length; i++) {
      if (cuts[i]! <= cuts[i - 1]!) ctx.addIssue({ code: 'custom', path: ['truncate_at', i], message: 'offsets must increase' });
    }
    // With templates the length is only known when served; the server reports it then.
    if (cuts.length && !JSON.stringify(t).includes('{{')) {
      const length = answerPieces(t, 0).reduce((n, p) => n + p.text.length, 0);
      const last = cuts[cuts.length - 1]!;
      if (last >= length) ctx.addIssue({ code: 'custom', path: ['truncate_at'], message: `offset ${last} is not inside the answer (${length} characters)` });
    }
  });

const repeatSchema = z.strictObject({ repeat: positive, turn: turnSchema });

/**
 * A union whose branch is picked from the value itself, so a bad item reports its own field
 * errors instead of zod's bare "Invalid input" for a failed union.
 */
function pick<T>(choose: (value: unknown) => z.ZodType<T>): z.ZodType<T> {
  return z.unknown().superRefine((value, ctx) => {
    const result = choose(value).safeParse(value);
    if (!result.success) {
      for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    }
  }) as unknown as z.ZodType<T>;
}

const hasKey = (value: unknown, key: string) => typeof value === 'object' && value !== null && key in value;

const scriptSchema: z.ZodType<Script> = z.strictObject({
  turns: z.array(pick<ScriptTurn | ScriptRepeat>((v) => (hasKey(v, 'repeat') ? repeatSchema : turnSchema))).min(1),
  default_chunk: positive.optional(),
  default_delay_ms: count.optional(),
  model: z.string().min(1).optional(),
  summaries: z.array(pick<ScriptTurn | string>((v) => (typeof v === 'string' ? z.string() : turnSchema))).optional(),
  repeat_last: z.union([z.boolean(), count]).optional(),
  prompt_cache: z.boolean().optional(),
});

/** Zod issues as one line: `turns[2].faults[0].http: Too big: expected number to be <=599; …`. */
function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.reduce<string>((s, k) => (typeof k === 'number' ? `${s}[${k}]` : s ? `${s}.${String(k)}` : String(k)), '');
      return `${path || '(top level)'}: ${issue.message}`;
    })
    .join('; ');
}

/** A script file is small: a larger one (or /dev/zero) is refused before it is read. */
export const MAX_SCRIPT_BYTES = 8 * 1024 * 1024;

/**
 * Read a script file, JSON or YAML (told apart by content), and validate it. Opened without
 * blocking and without following a final link, and read only when it is a regular file of at most
 * MAX_SCRIPT_BYTES: a FIFO, a device or a huge file is refused at once instead of hanging or
 * filling the worker.
 */
export async function loadScript(file: string): Promise<Script> {
  let text: string;
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    const st = await handle.stat();
    if (!st.isFile()) throw new Error('it is not a regular file');
    if (st.size > MAX_SCRIPT_BYTES) throw new Error(`it is larger than ${MAX_SCRIPT_BYTES / 1024 / 1024} MiB`);
    text = await handle.readFile('utf8');
  } catch (err) {
    throw new Error(`scripted model: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  } finally {
    await handle?.close();
  }
  return parseScript(text, file);
}

/** Parse and validate script text; `name` is the file name used in error messages. */
export function parseScript(text: string, name = 'script'): Script {
  let data: unknown;
  try {
    data = /^\s*[[{]/.test(text) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    // Where, never what: the file may be anything the caller named, and its content is not theirs to see.
    throw new Error(`scripted model: ${name} is not valid ${/^\s*[[{]/.test(text) ? 'JSON' : 'YAML'}${whereParseFailed(err)}`);
  }
  // Not a script at all (no `turns`): its keys are not named back either.
  if (!hasKey(data, 'turns')) throw new Error(`scripted model: ${name} is not a script: it has no \`turns\` list`);
  const result = scriptSchema.safeParse(data);
  if (!result.success) throw new Error(`scripted model: ${name}: ${formatIssues(result.error)}`);
  return result.data;
}

function whereParseFailed(err: unknown): string {
  const e = err as { linePos?: { line: number; col: number }[]; message?: string };
  if (e.linePos?.[0]) return ` (line ${e.linePos[0].line}, column ${e.linePos[0].col})`;
  const at = /position (\d+)/.exec(e.message ?? '');
  return at ? ` (at character ${at[1]})` : '';
}

function isRepeat(item: ScriptTurn | ScriptRepeat): item is ScriptRepeat {
  return typeof (item as ScriptRepeat).repeat === 'number';
}

/** Replace `{{key}}` in every string of a turn (say, reasoning, tool-call arguments). */
export function fillTemplate<T>(value: T, vars: Record<string, string | number>): T {
  if (typeof value === 'string') {
    return value.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => (key in vars ? String(vars[key]) : whole)) as T;
  }
  if (Array.isArray(value)) return value.map((v) => fillTemplate(v, vars)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillTemplate(v, vars)])) as T;
  }
  return value;
}

const expanded = new WeakMap<Script, ScriptTurn[]>();

/** The script's turns with `repeat` items expanded (cached per script object). */
export function expandTurns(script: Script): ScriptTurn[] {
  let turns = expanded.get(script);
  if (!turns) {
    turns = script.turns.flatMap((item) => (isRepeat(item) ? Array.from({ length: item.repeat }, (_, i) => fillTemplate(item.turn, { n: i + 1 })) : [item]));
    expanded.set(script, turns);
  }
  return turns;
}

/** The turn that answers turn `turn` (1-based), honouring `repeat_last`; undefined past the end. */
export function turnAt(script: Script, turn: number): ScriptTurn | undefined {
  const turns = expandTurns(script);
  if (turn >= 1 && turn <= turns.length) return turns[turn - 1];
  const extra = script.repeat_last === true ? Infinity : typeof script.repeat_last === 'number' ? script.repeat_last : 0;
  if (turn > turns.length && turn <= turns.length + extra) return turns[turns.length - 1];
  return undefined;
}

/** One stretch of the answer: text content, or the argument JSON of one native tool call. */
export type AnswerPiece = { kind: 'content'; text: string } | { kind: 'tool'; index: number; id: string; name: string; text: string };

/** The answer as the linear text that `truncate_at` offsets count over: say, then each call's arguments. */
export function answerPieces(turn: ScriptTurn, turnNumber: number): AnswerPiece[] {
  const pieces: AnswerPiece[] = [];
  if (turn.say !== undefined) pieces.push({ kind: 'content', text: turn.say });
  (turn.tool_calls ?? []).forEach((call, index) => {
    const args = call.arguments === undefined ? '{}' : typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
    pieces.push({ kind: 'tool', index, id: call.id ?? `call_${turnNumber}_${index}`, name: call.name, text: args });
  });
  return pieces;
}
