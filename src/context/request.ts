// Rendering a turn's request: the stored context (system prompt + pruning plan) over the
// transcript, the runner's headers, and the request for a continuation segment.
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { renderMessages, type ContextPlan } from './render.js';
import type { ContinuationStrategy, StoredMessage } from '../types.js';
import type { MergedAnswer } from '../model/merge.js';
import type { prefillFor } from '../model/call.js';

/** How the provider marks a prefill continuation (src/model/providers.ts). */
type PrefillMarks = ReturnType<typeof prefillFor>;

/** What prepareContext stores per turn; the model call renders exactly this. */
export interface StoredContext {
  system: string;
  plan: ContextPlan;
}

const CONTINUE_PROMPT =
  'Your previous answer was cut off by the output limit. Continue exactly where it stopped: no preamble, no repetition, and keep any open tool call going.';

export function modelHeaders(conversationId: string, turn: number, segment: number, purpose: string, attempt: number): Record<string, string> {
  return {
    'x-agentrun-conversation': conversationId,
    'x-agentrun-turn': String(turn),
    'x-agentrun-attempt': String(attempt),
    'x-agentrun-segment': String(segment),
    'x-agentrun-purpose': purpose,
  };
}

/** The request of a turn: system prompt + history rendered through the stored plan. */
export function renderRequest(
  conversationId: string,
  ctx: StoredContext,
  history: StoredMessage[],
  toolFormat: 'xml' | 'native',
): ChatCompletionMessageParam[] {
  return [{ role: 'system', content: ctx.system }, ...renderMessages(history, ctx.plan, { conversationId, toolFormat, withMessageIds: true })];
}

/** The request for segment k > 0: the partial answer goes back as prefix or with a prompt. */
export function continuationMessages(base: ChatCompletionMessageParam[], partial: MergedAnswer, strategy: ContinuationStrategy, prefill: PrefillMarks) {
  // Unfinished native calls can't be sent as tool_calls (their JSON is cut), so they are shown as text.
  const calls = partial.toolCalls.map((c) => `\n[unfinished tool call ${c.name}, arguments so far: ${c.arguments}]`).join('');
  if (strategy === 'prefill') {
    return {
      messages: [...base, { role: 'assistant', content: partial.content + calls, ...prefill.message } as ChatCompletionMessageParam],
      extraBody: prefill.body,
    };
  }
  return {
    messages: [
      ...base,
      { role: 'assistant', content: partial.content + calls } as ChatCompletionMessageParam,
      { role: 'user', content: CONTINUE_PROMPT } as ChatCompletionMessageParam,
    ],
    extraBody: {},
  };
}
