// callModel (a part of the session's model step, modelTurn): stream one segment of the assistant's
// answer. Deltas go to the stream table (tagged with seq, attempt and segment; a retried attempt
// first emits a reset). While the answer is cut off for length, modelTurn calls again for the next
// segment; the last segment merges all of them into the message at `seq`.
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { messageTokens } from '../src/model/tokens.js';
import { CancelledFailure, type ApplicationFailure } from '@temporalio/common';
import { modelCall, prefillFor } from '../src/model/call.js';
import { XmlToolCallParser, type ParseEvent } from '../src/parser/xml-stream.js';
import { toolNames, toOpenAITools } from '../src/tools/index.js';
import { withNetworkPolicy } from '../src/tools/execute-command.js';
import { offeredTools } from '../src/extensions/agents.js';
import { agentsOf } from './repository.js';
import { mergeSegments } from '../src/model/merge.js';
import { continuationMessages, modelHeaders, renderRequest, type StoredContext } from '../src/context/request.js';
import { activityLog, cancellationSignal, currentAttempt, heartbeat, type ActivityDeps } from './deps.js';
import { StreamWriter } from './stream-writer.js';
import { inc } from '../src/metrics.js';
import { transcripts } from '../src/context/transcript.js';
import { modelCallSlots } from './limits.js';
import { pooledCall } from '../src/model/budget-pool.js';
import { Context } from '@temporalio/activity';
import type { CallModelInput, CallModelResult, PreparedRequest } from './types.js';
import type { StoredMessage } from '../src/types.js';

export function modelActivities(deps: ActivityDeps) {
  const { store } = deps;
  return {
    async callModel(input: CallModelInput): Promise<CallModelResult> {
      const { conversationId, config, turn, seq, segment } = input;
      const attempt = currentAttempt() + (input.priorAttempts ?? 0);
      const logger = activityLog(conversationId, turn);
      const { context, history } = input.prepared ?? (await storedRequest(conversationId, turn, seq));
      const base = renderRequest(conversationId, context, history, config.toolFormat);
      // The first segment has none before it.
      const earlier = segment === 0 ? [] : (await store.getSegments(conversationId, seq)).filter((s) => s.segment < segment);
      const request =
        segment === 0
          ? { messages: base, extraBody: {} }
          : continuationMessages(base, mergeSegments(earlier, config.continuation), config.continuation, prefillFor(config));

      const writer = new StreamWriter(store, conversationId, { seq, attempt, segment });
      if (attempt > 1) writer.event({ type: 'reset', seq, attempt, segment, reason: `attempt ${attempt} replaces the text streamed by the previous attempt` });
      if (segment > 0) writer.event({ type: 'continuation', seq, segment });

      let call: Awaited<ReturnType<typeof modelCall>>;
      // <thinking> blocks in the text go to watchers as reasoning, apart from the answer.
      const splitter = new XmlToolCallParser(toolNames());
      const route = (events: ParseEvent[]) => {
        for (const e of events) {
          if (e.type === 'thinking') writer.reasoning(e.text);
          else writer.text(e.type === 'text' ? e.text : e.raw);
        }
      };
      const tools =
        config.toolFormat === 'native'
          ? (toOpenAITools(
              withNetworkPolicy(offeredTools(config, (await agentsOf(deps, conversationId, input.workspace)).agents), config.network),
            ) as ChatCompletionTool[])
          : undefined;
      const release = await modelCallSlots.acquire(() => heartbeat({ waitingForSlot: true }));
      try {
        // A batch's shared budget: the call's worst case is reserved before it is made (src/model/budget-pool.ts).
        call = await pooledCall(store.pool, config, { conversationId, seq, segment, attempt: callAttemptKey(attempt) }, JSON.stringify(request.messages), () =>
          modelCall({
            store,
            config,
            conversationId,
            turn,
            seq,
            segment,
            attempt,
            purpose: 'turn',
            messages: request.messages,
            extraBody: request.extraBody,
            tools,
            headers: modelHeaders(conversationId, turn, segment, 'turn', attempt),
            signal: cancellationSignal(),
            heartbeat,
            what: `model call (turn ${turn}, segment ${segment}, attempt ${attempt})`,
            onText: (t) => route(splitter.push(t)),
            onReasoning: (t) => writer.reasoning(t),
          }),
        );
      } catch (err) {
        await writer.flush().catch(() => {});
        // Aborted because Temporal cancelled this activity (the conversation was cancelled): report a
        // cancellation, which the workflow ends gracefully on, not a model failure.
        if (cancellationSignal()?.aborted) throw new CancelledFailure(`model call (turn ${turn}, segment ${segment}) was cancelled`);
        const failure = err as ApplicationFailure;
        logger.warn({ type: failure.type, err: failure.message }, 'model call failed');
        inc('agentrun_model_calls_total', { outcome: failure.type ?? 'error' });
        throw failure;
      } finally {
        release();
      }
      const { result } = call;
      inc('agentrun_model_calls_total', { outcome: result.finishReason });
      inc('agentrun_tokens_total', { kind: 'prompt' }, result.usage.promptTokens);
      inc('agentrun_tokens_total', { kind: 'completion' }, result.usage.completionTokens);
      const cached = result.usage.cachedTokens ?? 0;
      inc('agentrun_prompt_tokens_total', { cached: 'true' }, cached);
      inc('agentrun_prompt_tokens_total', { cached: 'false' }, result.usage.promptTokens - cached);
      if (segment > 0) inc('agentrun_continuations_total');
      route(splitter.end());
      await writer.flush();
      const cost = call.costUsd;
      inc('agentrun_cost_usd_total', {}, cost);
      await store.putSegment({
        conversationId,
        seq,
        segment,
        content: result.content,
        reasoning: result.reasoning || undefined,
        toolCalls: result.toolCalls,
        finishReason: result.finishReason,
        usage: result.usage,
      });

      const last = result.finishReason !== 'length' || segment >= config.maxContinuations;
      let tokens = 0;
      let preview = result.content.slice(0, 200);
      let message: StoredMessage | undefined;
      if (last) {
        const merged = mergeSegments([...earlier, result], config.continuation);
        tokens = messageTokens({ role: 'assistant', content: merged.content, toolCalls: merged.toolCalls }, config.model);
        message = {
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
        };
        await store.putMessage(message);
        await store.appendStream(conversationId, [{ type: 'message_completed', seq, finishReason: result.finishReason, usage: merged.usage }]);
        preview = merged.content.slice(0, 200);
      }
      logger.info({ seq, segment, finishReason: result.finishReason, usage: result.usage, merged: last }, 'model segment done');
      // Reported usage includes billed attempts that failed and the turn's summaries (src/model/call.ts).
      return { finishReason: result.finishReason, usage: call.reported.usage, costUsd: call.reported.costUsd, merged: last, tokens, preview, message };
    },
  };

  /** The turn's request as prepareContext stored it, over the transcript through the message before `seq`. */
  async function storedRequest(conversationId: string, turn: number, seq: number): Promise<PreparedRequest> {
    const ctx = (await store.getContext(conversationId, turn)) as { plan: StoredContext } | null;
    if (!ctx) throw new Error(`no context was prepared for turn ${turn} of ${conversationId}`);
    return { context: ctx.plan, history: await transcripts.read(store, conversationId, seq - 1) };
  }
}

/** A call's attempt, unique across re-runs of the step (a new activity after a budget wait starts at attempt 1 again). */
function callAttemptKey(attempt: number): string {
  try {
    return `${Context.current().info.activityId}.${attempt}`;
  } catch {
    return String(attempt);
  }
}
