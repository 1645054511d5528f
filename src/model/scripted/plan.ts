// Decides what the scripted server answers to one request, without any I/O: which turn,
// which segment of it (checking the continuation the client sent), which faults apply.
// Everything is derived from the request and its x-agentrun-* headers, so retries and
// parallel conversations never disturb each other.
import { answerPieces, expandTurns, fillTemplate, turnAt, type Script, type ScriptFault, type ScriptTurn, type ScriptUsage } from './script.js';

export interface RequestInfo {
  conversation: string;
  turn: number;
  attempt: number;
  /** Undefined when the request had no x-agentrun-segment header. */
  segment?: number;
  purpose: string;
}

/** What one segment streams: text, or (part of) one native tool call's argument JSON. */
export type SegmentPiece = { kind: 'content'; text: string } | { kind: 'tool'; index: number; id: string; name: string; text: string };

export type Plan =
  | { kind: 'http'; status: number; headers: Record<string, string>; body: string }
  | {
      kind: 'answer';
      reasoning: string;
      pieces: SegmentPiece[];
      finishReason: string;
      usage: { prompt_tokens: number; completion_tokens: number; reasoning_tokens?: number; cached_tokens?: number };
      chunk: number;
      delayMs: number;
      firstTokenDelayMs: number;
      /** Faults that act on the stream (disconnect, hang, malformed line, stream error). */
      streamFaults: ScriptFault[];
      segment: number;
    };

const DEFAULT_CHUNK = 24;

/** Text of a message's content: a string, or the text parts of an array. */
function messageText(message: any): string {
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('');
  return '';
}

/** What an assistant message holds of an answer: its text, then its native calls' arguments. */
function answerText(message: any): string {
  const calls: any[] = Array.isArray(message?.tool_calls) ? message.tool_calls : [];
  return messageText(message) + calls.map((c) => String(c?.function?.arguments ?? '')).join('');
}

/** Characters of the request's messages (content and native call names/arguments). */
function promptChars(messages: any[]): number {
  let n = 0;
  for (const m of messages) {
    n += messageText(m).length;
    for (const c of Array.isArray(m?.tool_calls) ? m.tool_calls : []) {
      n += String(c?.function?.name ?? '').length + String(c?.function?.arguments ?? '').length;
    }
  }
  return n;
}

type Continuation = { strategy: 'prefill' | 'prompt'; partial: string } | { problem: string };

/**
 * Finds a continuation in the request. Prefill: the last message is the partial assistant
 * answer, flagged `prefix: true` (DeepSeek) or with the body's `continue_final_message: true`
 * (vLLM). Prompt: the partial answer followed by a user message asking to continue; that shape
 * is also an ordinary conversation, so it only counts when the segment header says > 0.
 */
function findContinuation(body: any, segment: number | undefined): Continuation | undefined {
  const messages: any[] = body.messages;
  const last = messages[messages.length - 1];
  const flag = body.continue_final_message === true;
  if (last?.role === 'assistant') {
    if (last.prefix === true || flag) return { strategy: 'prefill', partial: answerText(last) };
    return {
      problem:
        'the last message is an assistant message, but it has no `prefix: true` (DeepSeek) and the body has no `continue_final_message: true` (vLLM), so a real provider would not continue it',
    };
  }
  if (flag) return { problem: 'the body sets continue_final_message but the last message is not an assistant message' };
  const before = messages[messages.length - 2];
  if ((segment ?? 0) > 0 && last?.role === 'user' && before?.role === 'assistant') {
    return { strategy: 'prompt', partial: answerText(before) };
  }
  return undefined;
}

function errorAnswer(text: string, promptTokens: number, chunk: number): Plan {
  return {
    kind: 'answer',
    reasoning: '',
    pieces: [{ kind: 'content', text: `[scripted model] ${text}` }],
    finishReason: 'stop',
    usage: { prompt_tokens: promptTokens, completion_tokens: Math.ceil((text.length + 17) / 4) },
    chunk,
    delayMs: 0,
    firstTokenDelayMs: 0,
    streamFaults: [],
    segment: 0,
  };
}

/** Used by the server when the script itself cannot be had (e.g. a reload failed). */
export function errorPlan(text: string, body: any): Plan {
  return errorAnswer(text, Math.ceil(promptChars(Array.isArray(body?.messages) ? body.messages : []) / 4), DEFAULT_CHUNK);
}

function quote(text: string, max = 60): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

/** Where two texts first differ, for a mismatch report a person can act on. */
function describeMismatch(expected: string, got: string): string {
  let i = 0;
  while (i < expected.length && i < got.length && expected[i] === got[i]) i++;
  return (
    `expected the ${expected.length} characters served so far, got ${got.length}; ` +
    `they differ at offset ${i}: expected ${quote(expected.slice(i, i + 40))}, got ${quote(got.slice(i, i + 40))}`
  );
}

function httpFault(fault: ScriptFault, info: RequestInfo, promptTokens: number): Plan {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (fault.context_length_exceeded) {
    return {
      kind: 'http',
      status: 400,
      headers,
      body: JSON.stringify({
        error: {
          message: `This model's maximum context length is 8192 tokens. However, your messages resulted in ${Math.max(promptTokens, 8193)} tokens. Please reduce the length of the messages.`,
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      }),
    };
  }
  const status = fault.http!;
  // Providers send both forms; a script giving only milliseconds gets both, like OpenAI's API.
  if (fault.retry_after_ms !== undefined) headers['retry-after-ms'] = String(fault.retry_after_ms);
  if (fault.retry_after_s !== undefined) headers['retry-after'] = String(fault.retry_after_s);
  else if (fault.retry_after_ms !== undefined) headers['retry-after'] = String(Math.ceil(fault.retry_after_ms / 1000));
  let body: string;
  if (typeof fault.body === 'string') {
    body = fault.body;
    if (!/^\s*[[{]/.test(body)) headers['content-type'] = 'text/plain';
  } else {
    const [type, code] =
      status === 429
        ? ['requests', 'rate_limit_exceeded']
        : status === 401
          ? ['invalid_request_error', 'invalid_api_key']
          : status >= 500
            ? ['server_error', null]
            : ['invalid_request_error', null];
    body = JSON.stringify(
      fault.body ?? {
        error: {
          message: `Scripted fault: HTTP ${status} on turn ${info.turn}, attempt ${info.attempt}`,
          type,
          param: null,
          code,
          // What the attempt cost before it failed, as some servers report it.
          ...(fault.with_usage ? { usage: { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens } } : {}),
        },
      },
    );
  }
  return { kind: 'http', status, headers, body };
}

/** The default answer to a summary request: a short structured snapshot of what it saw. */
function defaultSummary(messages: any[], info: RequestInfo): string {
  const firstUser = messages.find((m) => m?.role === 'user');
  const goal = (messageText(firstUser).trim().split('\n')[0] ?? '').slice(0, 120) || '(no user message)';
  const all = messages.map(messageText).join('\n');
  const paths = new Set<string>();
  for (const m of all.matchAll(/<path>([^<\n]{1,200})<\/path>|"path"\s*:\s*"([^"\n]{1,200})"/g)) {
    paths.add((m[1] ?? m[2])!.trim());
    if (paths.size >= 5) break;
  }
  const tools = messages.filter((m) => m?.role === 'tool' || Array.isArray(m?.tool_calls)).length;
  return [
    '<state_snapshot>',
    `<overall_goal>${goal}</overall_goal>`,
    `<key_knowledge>Scripted summary of ${messages.length} messages (${all.length} characters) of conversation ${info.conversation}, made at turn ${info.turn}.</key_knowledge>`,
    `<file_system_state>${paths.size ? [...paths].join(', ') : 'no files mentioned'}</file_system_state>`,
    `<recent_actions>${tools} native tool messages so far.</recent_actions>`,
    '<current_plan>Continue the task from the most recent messages.</current_plan>',
    '</state_snapshot>',
  ].join('\n');
}

/**
 * Whether the partial answer a client sent back is what was served before `start`. Exact:
 * the text, then each native call's arguments so far. A cut native call can't go back as
 * `tool_calls` (its JSON is incomplete), so a runner may also show the arguments so far as
 * text in any wrapper after the content (`[unfinished tool call …: {"pa`); that passes when
 * the content matches and each call's arguments so far appear whole and in order after it.
 */
function partialMatches(partial: string, pieces: SegmentPiece[], start: number): boolean {
  const full = pieces.map((p) => p.text).join('');
  if (partial === full.slice(0, start)) return true;
  let content = '';
  const args: string[] = [];
  let pos = 0;
  for (const piece of pieces) {
    const taken = piece.text.slice(0, Math.max(0, Math.min(piece.text.length, start - pos)));
    pos += piece.text.length;
    if (piece.kind === 'content') content += taken;
    else if (taken) args.push(taken);
  }
  if (!args.length || !partial.startsWith(content)) return false;
  let at = content.length;
  for (const a of args) {
    const i = partial.indexOf(a, at);
    if (i < 0) return false;
    at = i + a.length;
  }
  return true;
}

export interface PlanContext {
  /** Which scripted summary answers this summary request (stable across retries). */
  summaryIndex(info: RequestInfo): number;
  /** Name of the script in error texts (the file name when served from a file). */
  scriptName: string;
}

/** Turn number when no x-agentrun-turn header came: one more than the assistant answers so far. */
export function inferTurn(body: any): number {
  const messages: any[] = body.messages;
  const answers = messages.filter((m) => m?.role === 'assistant').length;
  const trailing = messages[messages.length - 1]?.role === 'assistant' ? 1 : 0;
  return answers - trailing + 1;
}

export function planResponse(script: Script, body: any, info: RequestInfo, ctx: PlanContext): Plan {
  const messages: any[] = body.messages;
  const promptTokens = Math.ceil(promptChars(messages) / 4);
  const defaultChunk = script.default_chunk ?? DEFAULT_CHUNK;

  let turn: ScriptTurn | undefined;
  if (info.purpose === 'summary') {
    const entries = script.summaries ?? [];
    if (entries.length) {
      const entry = entries[Math.min(ctx.summaryIndex(info), entries.length - 1)]!;
      turn = typeof entry === 'string' ? { say: entry } : entry;
    } else {
      turn = { say: defaultSummary(messages, info) };
    }
  } else {
    turn = turnAt(script, info.turn);
    if (!turn) {
      const count = expandTurns(script).length;
      return errorAnswer(
        `The script ran out: ${ctx.scriptName} has ${count} turns and this is turn ${info.turn} of conversation ${info.conversation}. ` +
          'Add turns, or set repeat_last, to go on.',
        promptTokens,
        defaultChunk,
      );
    }
  }
  turn = fillTemplate(turn, { turn: info.turn });

  const pieces = answerPieces(turn, info.turn);
  const full = pieces.map((p) => p.text).join('');
  const cuts = turn.truncate_at ?? [];
  const chunk = turn.chunk ?? defaultChunk;
  const fail = (text: string) => errorAnswer(text, promptTokens, chunk);

  const bad = cuts.find((c) => c >= full.length);
  if (bad !== undefined) return fail(`turn ${info.turn}: truncate_at ${bad} is not inside the answer (${full.length} characters).`);

  const continuation = findContinuation(body, info.segment);
  if (continuation && 'problem' in continuation) return fail(`turn ${info.turn}: ${continuation.problem}.`);

  let segment = info.segment;
  if (segment === undefined) {
    // No header: a prefill continuation still says how far it got.
    segment = 0;
    // A partial answer that ends at no cut is a resumed one (below).
    const k = continuation && !('problem' in continuation) ? cuts.indexOf(continuation.partial.length) : -1;
    if (k >= 0) segment = k + 1;
  }
  // A partial answer that ends at no cut is what a crashed attempt had streamed: the answer goes
  // on from there to the next cut, as a provider continues any prefix it is given.
  const resumedAt =
    continuation &&
    !('problem' in continuation) &&
    continuation.partial.length > 0 &&
    continuation.partial.length < full.length &&
    !cuts.includes(continuation.partial.length) &&
    continuation.partial === full.slice(0, continuation.partial.length)
      ? continuation.partial.length
      : undefined;
  if (resumedAt === undefined && segment > cuts.length) {
    return fail(`turn ${info.turn} has ${cuts.length + 1} segments (truncate_at: [${cuts.join(', ')}]), but segment ${segment} was asked for.`);
  }
  const start = resumedAt ?? (segment === 0 ? 0 : cuts[segment - 1]!);
  const end = resumedAt !== undefined ? (cuts.find((c) => c > resumedAt) ?? full.length) : segment < cuts.length ? cuts[segment]! : full.length;
  if (segment > 0 && !continuation) {
    return fail(
      `turn ${info.turn}, segment ${segment}: the request holds no partial answer to continue (expected a last assistant message with prefix: true or continue_final_message, or the partial answer followed by a user message asking to continue).`,
    );
  }
  if (continuation && !partialMatches(continuation.partial, pieces, start)) {
    return fail(
      `turn ${info.turn}, segment ${segment} (${continuation.strategy}): the partial answer sent back is not what was served; ${describeMismatch(full.slice(0, start), continuation.partial)}.`,
    );
  }
  // A model asked to continue often repeats its last words; the script can make it do so.
  const from = continuation?.strategy === 'prompt' ? Math.max(0, start - (turn.continuation_overlap ?? 0)) : start;
  const last = end === full.length;

  const faults = (turn.faults ?? []).filter((f) => f.attempt === info.attempt && (f.segment === undefined || f.segment === segment));
  const immediate = faults.find((f) => f.http !== undefined || f.context_length_exceeded);
  if (immediate) return httpFault(immediate, info, promptTokens);
  const slowStart = faults.find((f) => f.first_token_delay_ms !== undefined);

  const served: SegmentPiece[] = [];
  let pos = 0;
  for (const piece of pieces) {
    const s = pos;
    const e = pos + piece.text.length;
    pos = e;
    const lo = Math.max(s, from);
    const hi = Math.min(e, end);
    if (piece.kind === 'content') {
      if (hi > lo) served.push({ kind: 'content', text: piece.text.slice(lo - s, hi - s) });
    } else if (hi > lo || (s === e && s >= from && (s < end || last))) {
      // A call is announced (id and name) in every segment that carries part of its arguments.
      served.push({ ...piece, text: piece.text.slice(Math.max(0, lo - s), Math.max(0, hi - s)) });
    }
  }

  const reasoning = segment === 0 ? (turn.reasoning ?? '') : '';
  const servedChars = reasoning.length + served.reduce((n, p) => n + p.text.length, 0);
  const override: ScriptUsage = turn.usage ?? {};
  const reasoningTokens = override.reasoning_tokens ?? (reasoning ? Math.ceil(reasoning.length / 4) : undefined);
  return {
    kind: 'answer',
    reasoning,
    pieces: served,
    finishReason: last ? (turn.finish_reason ?? (turn.tool_calls?.length ? 'tool_calls' : 'stop')) : 'length',
    usage: {
      prompt_tokens: override.prompt_tokens ?? promptTokens,
      completion_tokens: override.completion_tokens ?? Math.ceil(servedChars / 4),
      ...(reasoningTokens !== undefined ? { reasoning_tokens: reasoningTokens } : {}),
      ...(override.cached_tokens !== undefined ? { cached_tokens: override.cached_tokens } : {}),
    },
    chunk,
    delayMs: turn.delay_ms ?? script.default_delay_ms ?? 0,
    firstTokenDelayMs: slowStart?.first_token_delay_ms ?? turn.first_token_delay_ms ?? 0,
    streamFaults: faults.filter((f) => f !== slowStart),
    segment,
  };
}
