// One streamed Chat Completions call: text, reasoning and native tool-call fragments are
// reported as they arrive; the assembled answer, finish reason and usage are returned.
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { NativeToolCallAssembler } from '../parser/native.js';
import type { FinishReason, Usage } from '../types.js';

export interface StreamRequest {
  client: OpenAI;
  model: string;
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[];
  headers: Record<string, string>;
  signal?: AbortSignal;
  /** Provider-specific body fields (vLLM's continue_final_message, …). */
  extraBody?: Record<string, unknown>;
  maxTokens?: number;
  onText(text: string): void;
  onReasoning(text: string): void;
  /** Called on every chunk (for heartbeats). */
  onChunk?(): void;
}

export interface StreamResult {
  content: string;
  reasoning: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: FinishReason;
  usage: Usage;
}

const FINISH_REASONS: FinishReason[] = ['stop', 'length', 'tool_calls', 'content_filter', 'function_call'];

export async function streamChat(req: StreamRequest): Promise<StreamResult> {
  const body = {
    model: req.model,
    messages: req.messages,
    stream: true as const,
    stream_options: { include_usage: true },
    ...(req.tools?.length ? { tools: req.tools } : {}),
    ...(req.maxTokens ? { max_tokens: req.maxTokens } : {}),
    ...req.extraBody,
  };
  const stream = await req.client.chat.completions.create(body, { headers: req.headers, signal: req.signal });
  const content: string[] = [];
  const reasoning: string[] = [];
  const tools = new NativeToolCallAssembler();
  let finish: FinishReason | undefined;
  let usage: Usage | undefined;
  for await (const chunk of stream) {
    req.onChunk?.();
    if (chunk.usage) {
      const u = chunk.usage as typeof chunk.usage & { completion_tokens_details?: { reasoning_tokens?: number }; prompt_tokens_details?: { cached_tokens?: number } };
      usage = {
        promptTokens: u.prompt_tokens,
        completionTokens: u.completion_tokens,
        totalTokens: u.total_tokens,
        reasoningTokens: u.completion_tokens_details?.reasoning_tokens || undefined,
        cachedTokens: u.prompt_tokens_details?.cached_tokens || undefined,
      };
    }
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta as typeof choice.delta & { reasoning_content?: string | null; reasoning?: string | null };
    const thought = delta.reasoning_content ?? delta.reasoning;
    if (thought) {
      reasoning.push(thought);
      req.onReasoning(thought);
    }
    if (delta.content) {
      content.push(delta.content);
      req.onText(delta.content);
    }
    if (delta.tool_calls?.length) tools.push(delta.tool_calls);
    if (choice.finish_reason) finish = FINISH_REASONS.includes(choice.finish_reason as FinishReason) ? (choice.finish_reason as FinishReason) : 'unknown';
  }
  if (!finish) throw new StreamEndedEarly();
  const text = content.join('');
  return {
    content: text,
    reasoning: reasoning.join(''),
    toolCalls: tools.calls().map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
    finishReason: finish,
    usage: usage ?? estimateUsage(req.messages, text),
  };
}

/** Providers that send no usage chunk: estimate at 4 characters a token. */
function estimateUsage(messages: ChatCompletionMessageParam[], completion: string): Usage {
  const promptChars = messages.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : JSON.stringify(m.content ?? '').length), 0);
  const promptTokens = Math.ceil(promptChars / 4);
  const completionTokens = Math.ceil(completion.length / 4);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

/** The connection closed cleanly but the answer never finished: retry the attempt. */
export class StreamEndedEarly extends Error {
  constructor() {
    super('the stream ended before the provider sent a finish reason');
  }
}
