// callModel: stream one segment of the assistant's answer. Deltas go to the stream table
// (tagged with seq, attempt and segment; a retried attempt first emits a reset). While the
// answer is cut off for length, the workflow calls again for the next segment; the last
// segment merges all of them into the message at `seq`.
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { messageTokens } from '../src/context/tokens.js';
import { MalformedLineTrap, resolveModel } from '../src/model/client.js';
import { toModelFailure } from '../src/model/errors.js';
import { costUsd } from '../src/model/pricing.js';
import { streamChat, type StreamResult } from '../src/model/stream.js';
import { parseNativeArguments } from '../src/parser/native.js';
import { XmlToolCallParser, type ParseEvent } from '../src/parser/xml-stream.js';
import { stitchContinuation, stitchNativeArguments } from '../src/parser/stitch.js';
import type { SegmentRow } from '../src/store/index.js';
import { TOOL_NAMES, toOpenAITools } from '../src/tools/index.js';
import { addUsage, ZERO_USAGE, type ContinuationStrategy } from '../src/types.js';
import { modelHeaders, renderRequest, type StoredContext } from './context.js';
import { activityLog, cancellationSignal, currentAttempt, heartbeat, type ActivityDeps } from './deps.js';
import { StreamWriter } from './stream-writer.js';
import { inc } from '../src/metrics.js';
import { modelCallSlots } from './limits.js';
import type { CallModelInput, CallModelResult } from './types.js';

const CONTINUE_PROMPT =
  'Your previous answer was cut off by the output limit. Continue exactly where it stopped: no preamble, no repetition, and keep any open tool call going.';

type NativeCall = { id: string; name: string; arguments: string };

/** Append a continuation's tool calls: the first one carries on an unfinished last call. */
export function mergeNativeCalls(previous: NativeCall[], next: NativeCall[]): NativeCall[] {
  const out = previous.map((c) => ({ ...c }));
  const last = out[out.length - 1];
  let rest = next;
  if (last && next.length && !parseNativeArguments(last.arguments).ok && (!next[0]!.name || next[0]!.name === last.name)) {
    last.arguments = stitchNativeArguments(last.arguments, next[0]!.arguments).text;
    rest = next.slice(1);
  }
  return [...out, ...rest.map((c) => ({ ...c }))];
}

/** Merge the segments of one answer: text stitched (overlap removed), usage summed. */
export function mergeSegments(segments: Pick<SegmentRow, 'content' | 'reasoning' | 'toolCalls' | 'usage'>[], strategy: ContinuationStrategy) {
  let content = '';
  let reasoning = '';
  let toolCalls: NativeCall[] = [];
  let usage = ZERO_USAGE;
  segments.forEach((s, i) => {
    content = i === 0 || strategy === 'prefill' ? content + s.content : stitchContinuation(content, s.content).text;
    reasoning += s.reasoning ?? '';
    toolCalls = i === 0 ? [...(s.toolCalls ?? [])] : mergeNativeCalls(toolCalls, s.toolCalls ?? []);
    usage = addUsage(usage, s.usage);
  });
  return { content, reasoning, toolCalls, usage };
}

/** The request for segment k > 0: the partial answer goes back as prefix or with a prompt. */
function continuationMessages(base: ChatCompletionMessageParam[], partial: ReturnType<typeof mergeSegments>, strategy: ContinuationStrategy) {
  // Unfinished native calls can't be sent as tool_calls (their JSON is cut), so they are shown as text.
  const calls = partial.toolCalls.map((c) => `\n[unfinished tool call ${c.name}, arguments so far: ${c.arguments}]`).join('');
  if (strategy === 'prefill') {
    return {
      messages: [...base, { role: 'assistant', content: partial.content + calls, prefix: true } as ChatCompletionMessageParam],
      extraBody: { continue_final_message: true, add_generation_prompt: false },
    };
  }
  return {
    messages: [...base, { role: 'assistant', content: partial.content + calls } as ChatCompletionMessageParam, { role: 'user', content: CONTINUE_PROMPT } as ChatCompletionMessageParam],
    extraBody: {},
  };
}

export function modelActivities({ store }: ActivityDeps) {
  return {
    async callModel(input: CallModelInput): Promise<CallModelResult> {
      const { conversationId, config, turn, seq, segment } = input;
      const attempt = currentAttempt() + (input.priorAttempts ?? 0);
      const logger = activityLog(conversationId, turn);
      const ctx = (await store.getContext(conversationId, turn)) as { plan: StoredContext } | null;
      if (!ctx) throw new Error(`no context was prepared for turn ${turn} of ${conversationId}`);
      const history = await store.getMessages(conversationId, { toSeq: seq - 1 });
      const base = renderRequest(conversationId, ctx.plan, history, config.toolFormat);
      const earlier = (await store.getSegments(conversationId, seq)).filter((s) => s.segment < segment);
      const request = segment === 0 ? { messages: base, extraBody: {} } : continuationMessages(base, mergeSegments(earlier, config.continuation), config.continuation);

      const writer = new StreamWriter(store, conversationId, { seq, attempt, segment });
      if (attempt > 1) writer.event({ type: 'reset', seq, attempt, segment, reason: `attempt ${attempt} replaces the text streamed by the previous attempt` });
      if (segment > 0) writer.event({ type: 'continuation', seq, segment });

      const trap = new MalformedLineTrap();
      const model = await resolveModel(config.model, trap);
      let chars = 0;
      let result: StreamResult;
      // <thinking> blocks in the text go to watchers as reasoning, apart from the answer.
      const splitter = new XmlToolCallParser(TOOL_NAMES);
      const route = (events: ParseEvent[]) => {
        for (const e of events) {
          if (e.type === 'thinking') writer.reasoning(e.text);
          else writer.text(e.type === 'text' ? e.text : e.raw);
        }
      };
      const release = await modelCallSlots.acquire(() => heartbeat({ waitingForSlot: true }));
      try {
        result = await streamChat({
          client: model.client,
          model: model.model,
          messages: request.messages,
          extraBody: request.extraBody,
          tools: config.toolFormat === 'native' ? (toOpenAITools() as ChatCompletionTool[]) : undefined,
          headers: modelHeaders(conversationId, turn, segment, 'turn', attempt),
          signal: cancellationSignal(),
          onText: (t) => {
            chars += t.length;
            route(splitter.push(t));
          },
          onReasoning: (t) => writer.reasoning(t),
          onChunk: () => heartbeat({ chars }),
        });
      } catch (err) {
        await writer.flush().catch(() => {});
        const failure = toModelFailure(err, `model call (turn ${turn}, segment ${segment}, attempt ${attempt})`, trap.last);
        logger.warn({ type: failure.type, err: failure.message }, 'model call failed');
        inc('agentrun_model_calls_total', { outcome: failure.type ?? 'error' });
        throw failure;
      } finally {
        release();
      }
      inc('agentrun_model_calls_total', { outcome: result.finishReason });
      inc('agentrun_tokens_total', { kind: 'prompt' }, result.usage.promptTokens);
      inc('agentrun_tokens_total', { kind: 'completion' }, result.usage.completionTokens);
      if (segment > 0) inc('agentrun_continuations_total');
      route(splitter.end());
      await writer.flush();
      const cost = costUsd(config.model, result.usage);
      inc('agentrun_cost_usd_total', {}, cost);
      await store.putSegment({ conversationId, seq, segment, content: result.content, reasoning: result.reasoning || undefined, toolCalls: result.toolCalls, finishReason: result.finishReason, usage: result.usage });
      await store.putUsage({ conversationId, turn, seq, segment, attempt, model: config.model, usage: result.usage, costUsd: cost, purpose: 'turn' });

      const last = result.finishReason !== 'length' || segment >= config.maxContinuations;
      let tokens = 0;
      let preview = result.content.slice(0, 200);
      if (last) {
        const merged = mergeSegments([...earlier, result], config.continuation);
        tokens = messageTokens({ role: 'assistant', content: merged.content, toolCalls: merged.toolCalls }, config.model);
        await store.putMessage({
          conversationId,
          seq,
          turn,
          role: 'assistant',
          kind: 'assistant',
          content: merged.content,
          reasoning: merged.reasoning || undefined,
          toolCalls: merged.toolCalls.length ? merged.toolCalls : undefined,
          tokens,
          meta: { segments: earlier.length + 1, finishReason: result.finishReason, usage: merged.usage },
        });
        await store.appendStream(conversationId, [{ type: 'message_completed', seq, finishReason: result.finishReason, usage: merged.usage }]);
        preview = merged.content.slice(0, 200);
      }
      logger.info({ seq, segment, finishReason: result.finishReason, usage: result.usage, merged: last }, 'model segment done');
      return { finishReason: result.finishReason, usage: result.usage, costUsd: cost, merged: last, tokens, preview };
    },
  };
}
