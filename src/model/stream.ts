// One streamed Chat Completions call: text, reasoning and native tool-call fragments are
// reported as they arrive; the assembled answer, finish reason and usage are returned. The call
// heartbeats while the model has not started, gives up after the first-token timeout, and ends
// once the answer and its usage are in, without waiting for the server to close the connection.
import type OpenAI from 'openai';
import { APIUserAbortError } from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { NativeToolCallAssembler } from '../parser/native.js';
import type { FinishReason, Usage } from '../types.js';

export interface StreamRequest {
  client: OpenAI;
  model: string;
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[];
  headers: Record<string, string>;
  signal?: AbortSignal;
  /** Provider-specific body fields (settings, vLLM's continue_final_message, …), sent as given. */
  extraBody?: Record<string, unknown>;
  onText(text: string): void;
  onReasoning(text: string): void;
  /** The response's headers, once they arrive (rate-limit headers for the provider pool). */
  onHeaders?(headers: Headers): void;
  /** Called on every chunk (for heartbeats). */
  onChunk?(): void;
  /**
   * Called every `waitBeatMs` until the first token arrives, so a model slow to start is not
   * taken for a dead worker (heartbeats), while a hang after it started still is.
   */
  onWaiting?(elapsedMs: number): void;
  waitBeatMs?: number;
  /** Abandon the attempt (abort the request) when no token arrived in this time. */
  firstTokenTimeoutMs?: number;
  /**
   * After the finish reason, how long to wait for the usage chunk (or the end) before completing:
   * a server that sends `[DONE]` and keeps the connection open must not hold the call.
   */
  usageGraceMs?: number;
  /** The most one answer may hold (text, reasoning and call arguments) in bytes: past it the answer is cut (see ANSWER_CUT). */
  maxAnswerBytes?: number;
  /** The longest one answer may stream: a provider that trickles is cut there, like an answer too large. */
  maxAnswerMs?: number;
}

export interface StreamResult {
  /** The answer's text; a cut answer ends with a note to the model saying so. */
  content: string;
  reasoning: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: FinishReason;
  usage: Usage;
  /** False when the provider sent no usage and it was estimated. */
  usageReported: boolean;
  /** Why the answer was cut short (too many bytes, too long a time); its tool calls were dropped. */
  cut?: 'bytes' | 'time';
}

export const DEFAULT_MAX_ANSWER_BYTES = 1024 * 1024;
const DEFAULT_MAX_ANSWER_MS = 20 * 60_000;

/**
 * What a cut answer ends with: the model reads it in its own answer at the next turn, so it knows
 * its calls did not run and why, and can do the same work in smaller steps.
 */
function cutNote(why: 'bytes' | 'time', maxBytes: number, maxMs: number): string {
  const limit =
    why === 'bytes'
      ? `${Math.round(maxBytes / 1024)} KiB, the most one answer may hold`
      : `${maxMs >= 60_000 ? `${Math.round(maxMs / 60_000)} minutes` : `${Math.round(maxMs / 1000)} s`}, the longest one answer may stream`;
  return `\n\n[agentrun: this answer was cut at ${limit}; its tool calls were not run. Do the work in smaller steps: write a long file in several calls.]`;
}

const FINISH_REASONS: FinishReason[] = ['stop', 'length', 'tool_calls', 'content_filter', 'function_call'];
const DEFAULT_USAGE_GRACE_MS = 1500;

/** Usage the provider reported before the attempt failed, attached to the thrown error. */
const REPORTED_USAGE = Symbol('reportedUsage');

/** The usage a failed attempt had reported (a stream cut after its usage chunk, an error body with usage). */
export function failedAttemptUsage(err: unknown): Usage | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const attached = (err as { [REPORTED_USAGE]?: Usage })[REPORTED_USAGE];
  if (attached) return attached;
  // An error body `{"error": {…, "usage": {…}}}`, as some servers send after generating.
  const body = (err as { error?: { usage?: unknown } }).error;
  return body && typeof body === 'object' ? toUsage(body.usage) : undefined;
}

/** Usage from a provider's usage object: OpenAI's fields, cached tokens under either name. */
export function toUsage(raw: unknown): Usage | undefined {
  const u = raw as
    | {
        prompt_tokens?: number;
        completion_tokens?: number;
        total_tokens?: number;
        completion_tokens_details?: { reasoning_tokens?: number };
        prompt_tokens_details?: { cached_tokens?: number };
        /** Anthropic's name, passed on by gateways (LiteLLM) that translate its usage. */
        cache_read_input_tokens?: number;
      }
    | null
    | undefined;
  if (!u || typeof u !== 'object' || typeof u.prompt_tokens !== 'number') return undefined;
  const completion = u.completion_tokens ?? 0;
  return {
    promptTokens: u.prompt_tokens,
    completionTokens: completion,
    totalTokens: u.total_tokens ?? u.prompt_tokens + completion,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens || undefined,
    // Cached tokens are part of prompt_tokens in the OpenAI format (and in the gateways' translations).
    cachedTokens: Math.min(u.prompt_tokens, u.prompt_tokens_details?.cached_tokens || u.cache_read_input_tokens || 0) || undefined,
  };
}

/** No token arrived within the first-token timeout; the request was aborted. */
export class FirstTokenTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(
      `no token arrived within the first-token timeout of ${Math.round(timeoutMs / 1000)} s; the attempt was abandoned (raise --first-token-timeout for a slow model)`,
    );
  }
}

const GRACE_OVER = Symbol('graceOver');

export async function streamChat(req: StreamRequest): Promise<StreamResult> {
  const body = {
    model: req.model,
    messages: req.messages,
    stream: true as const,
    ...(req.tools?.length ? { tools: req.tools } : {}),
    ...req.extraBody,
  };
  // Our own controller: aborted by the caller's signal, the first-token timeout, or when the
  // answer is complete but the connection stays open.
  const abort = new AbortController();
  const forward = () => abort.abort();
  if (req.signal?.aborted) abort.abort();
  req.signal?.addEventListener('abort', forward, { once: true });
  const started = Date.now();
  let tokenSeen = false;
  let timedOut = false;
  const beat = req.onWaiting ? setInterval(() => req.onWaiting!(Date.now() - started), req.waitBeatMs ?? 5000) : undefined;
  const deadline = req.firstTokenTimeoutMs
    ? setTimeout(() => {
        timedOut = true;
        abort.abort();
      }, req.firstTokenTimeoutMs)
    : undefined;
  const firstToken = () => {
    if (tokenSeen) return;
    tokenSeen = true;
    clearInterval(beat);
    clearTimeout(deadline);
  };

  const content: string[] = [];
  const reasoning: string[] = [];
  const tools = new NativeToolCallAssembler();
  let finish: FinishReason | undefined;
  let usage: Usage | undefined;
  let iterator: AsyncIterator<ChatCompletionChunk> | undefined;
  const maxBytes = req.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  const maxMs = req.maxAnswerMs ?? DEFAULT_MAX_ANSWER_MS;
  let bytes = 0;
  let cut: 'bytes' | 'time' | undefined;
  try {
    const { data: stream, response } = await req.client.chat.completions.create(body, { headers: req.headers, signal: abort.signal }).withResponse();
    req.onHeaders?.(response.headers);
    iterator = stream[Symbol.asyncIterator]();
    for (;;) {
      // After the finish reason the answer is whole: a late error or silence only loses the usage.
      const next = finish
        ? await withGrace(
            iterator.next().catch((): typeof GRACE_OVER => GRACE_OVER),
            req.usageGraceMs ?? DEFAULT_USAGE_GRACE_MS,
          )
        : await iterator.next();
      if (next === GRACE_OVER || next.done) break;
      const chunk = next.value;
      req.onChunk?.();
      usage = toUsage(chunk.usage) ?? usage;
      const choice = chunk.choices?.[0];
      if (choice) {
        const delta = choice.delta as typeof choice.delta & { reasoning_content?: string | null; reasoning?: string | null };
        const thought = delta.reasoning_content ?? delta.reasoning;
        if (thought) {
          firstToken();
          reasoning.push(thought);
          req.onReasoning(thought);
        }
        if (delta.content) {
          firstToken();
          content.push(delta.content);
          req.onText(delta.content);
        }
        if (delta.tool_calls?.length) {
          firstToken();
          tools.push(delta.tool_calls);
          for (const c of delta.tool_calls) bytes += Buffer.byteLength(c.function?.arguments ?? '') + Buffer.byteLength(c.function?.name ?? '');
        }
        bytes += Buffer.byteLength(thought ?? '') + Buffer.byteLength(delta.content ?? '');
        if (choice.finish_reason) {
          firstToken();
          finish = FINISH_REASONS.includes(choice.finish_reason as FinishReason) ? (choice.finish_reason as FinishReason) : 'unknown';
        }
      }
      // The answer and its usage are in: done, whether or not the connection closes.
      if (finish && usage) break;
      // Too large or too slow (a provider that never stops, or trickles): cut here, and say so.
      if (!finish && (bytes > maxBytes || Date.now() - started > maxMs)) {
        cut = bytes > maxBytes ? 'bytes' : 'time';
        break;
      }
    }
    if (cut) {
      const note = cutNote(cut, maxBytes, maxMs);
      content.push(note);
      req.onText(note);
      finish = 'stop';
    }
    if (timedOut) throw new FirstTokenTimeout(req.firstTokenTimeoutMs!);
    // The SDK ends an aborted stream quietly: say it was aborted, not that it ended early.
    if (!finish && req.signal?.aborted) throw new APIUserAbortError();
    if (!finish) throw new StreamEndedEarly();
  } catch (err) {
    const thrown = timedOut && !(err instanceof FirstTokenTimeout) ? new FirstTokenTimeout(req.firstTokenTimeoutMs!) : err;
    if (usage && thrown && typeof thrown === 'object') Object.assign(thrown, { [REPORTED_USAGE]: usage });
    throw thrown;
  } finally {
    clearInterval(beat);
    clearTimeout(deadline);
    req.signal?.removeEventListener('abort', forward);
    // Closes the connection when we stopped before the server did.
    abort.abort();
    void iterator?.return?.().catch(() => {});
  }
  const text = content.join('');
  return {
    content: text,
    reasoning: reasoning.join(''),
    // A cut answer's calls may be half-written: none runs.
    toolCalls: cut ? [] : tools.calls().map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
    finishReason: finish,
    usage: usage ?? estimateUsage(req.messages, text),
    usageReported: usage !== undefined,
    ...(cut ? { cut } : {}),
  };
}

/** The next chunk, or GRACE_OVER when none came in `ms`. */
function withGrace<T>(next: Promise<T>, ms: number): Promise<T | typeof GRACE_OVER> {
  let timer: NodeJS.Timeout | undefined;
  const over = new Promise<typeof GRACE_OVER>((resolve) => {
    timer = setTimeout(() => resolve(GRACE_OVER), ms);
  });
  return Promise.race([next, over]).finally(() => clearTimeout(timer));
}

/** Providers that send no usage chunk: estimate at 4 characters a token. */
function estimateUsage(messages: ChatCompletionMessageParam[], completion: string): Usage {
  const promptChars = messages.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : JSON.stringify(m.content ?? '').length), 0);
  const promptTokens = Math.ceil(promptChars / 4);
  const completionTokens = Math.ceil(completion.length / 4);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

/** The connection closed cleanly but the answer never finished: retry the attempt. */
class StreamEndedEarly extends Error {
  constructor() {
    super('the stream ended before the provider sent a finish reason');
  }
}
