// The session's model step (modelTurn): the pending messages written, the context prepared
// (src/turn/prepare.ts), every segment of the answer streamed (callModel), merged, and its calls
// classified (src/turn/answer.ts), as the streaming split found them (the text is parsed once). callModel streams one segment of the assistant's
// answer. Deltas go to the stream table (tagged with seq, attempt and segment; a retried attempt
// first emits a reset). While the answer is cut off for length, modelTurn calls again for the next
// segment; the last segment merges all of them into the message at `seq`.
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { messageTokens } from '../model/tokens.js';
import { CancelledFailure, type ApplicationFailure } from '@temporalio/common';
import { answeringConfig, modelCall, prefillFor } from '../model/call.js';
import { StreamedAnswer, type ParseEvent, type XmlParseResult } from '../parser/xml-stream.js';
import { toolNames, toOpenAITools } from '../tools/index.js';
import { withNetworkPolicy } from '../tools/execute-command.js';
import { offeredTools } from '../extensions/agents.js';
import { mergeSegments } from '../model/merge.js';
import { continuationMessages, modelHeaders, renderRequest, type StoredContext } from '../context/request.js';
import { timedWait } from '../metrics.js';
import { activityLog, callAttemptKey, cancellationSignal, currentAttempt, heartbeat, withHeartbeat } from './step.js';
import type { TurnDeps } from './deps.js';
import { StreamWriter } from './stream-writer.js';
import { inc } from '../metrics.js';
import { transcripts } from '../context/transcript.js';
import { pooledCall } from '../model/budget-pool.js';
import { contextStep, type PreparedRequest, type PrepareResult } from './prepare.js';
import { parseStoredAnswer } from './answer.js';
import { resumeStreamedAnswer } from './resume.js';
import type { CallSummary } from './calls.js';
import type { RunConfig } from '../config.js';
import { addUsage, ZERO_USAGE, type FinishReason, type MessageKind, type Role, type StoredMessage, type Usage } from '../types.js';

/** A message the workflow decided to add (user message, reminder, notice); written by the next model step. */
export interface PendingAppend {
  seq: number;
  turn: number;
  role: Role;
  kind: MessageKind;
  content: string;
}

export interface ModelStepInput {
  conversationId: string;
  workspace: string;
  turn: number;
  seq: number;
  appends: PendingAppend[];
  /** After a provider context-length error: prune harder. */
  harder?: boolean;
  /** Attempts of this step before the last ProviderWait: the answer's attempts are numbered on from there (stream resets). */
  priorAttempts?: number;
}

export interface ModelStepResult {
  fits: boolean;
  reason?: string;
  pruned?: PrepareResult['pruned'];
  /** Tokens of each written append, in order, then of the assistant message. */
  appendTokens: number[];
  tokens: number;
  finishReason?: FinishReason;
  usage: Usage;
  costUsd: number;
  calls: CallSummary[];
  loop?: string;
}

export interface CallModelInput {
  conversationId: string;
  workspace: string;
  config: RunConfig;
  turn: number;
  seq: number;
  segment: number;
  /** Model calls already made for this segment by earlier activities (the retry after a context-length error). */
  priorAttempts?: number;
  /** This segment continues the text that attempt streamed before it died (src/turn/resume.ts). */
  resumedAfter?: number;
  /** The turn's context as prepareContext stored it and the history it read, when the caller holds them (else read from the store). */
  prepared?: PreparedRequest;
}

export interface CallModelResult {
  finishReason: FinishReason;
  usage: Usage;
  costUsd: number;
  /** True when this segment finished the message (stop, or continuation budget spent) and it was merged. */
  merged: boolean;
  tokens: number;
  preview: string;
  /** The merged assistant message as stored, when `merged`. */
  message?: StoredMessage;
  /** Its text's tool calls as the stream split them, when this segment streamed the whole message: not parsed again. */
  xml?: XmlParseResult;
}

/** The model step over the worker's store, extensions and model-call slots. */
export function modelStep(deps: TurnDeps) {
  const { store, modelCallSlots } = deps;
  const context = contextStep(deps);
  /** Attempts before this one: the earlier schedules of the step (waits for the provider), and the try before pruning harder. */
  function priorAttempts(input: ModelStepInput, segment: number): { priorAttempts?: number } {
    const n = (input.priorAttempts ?? 0) + (input.harder && segment === 0 ? 1 : 0);
    return n > 0 ? { priorAttempts: n } : {};
  }

  /** The model step proper: pending messages, context, every segment of the answer, parsing. */
  async function answer(input: ModelStepInput, config: RunConfig): Promise<ModelStepResult> {
    const { conversationId, workspace, turn, seq } = input;
    const appendTokens: number[] = [];
    for (const a of input.appends) {
      const tokens = messageTokens({ role: a.role, content: a.content }, config.model);
      await store.putMessage({ conversationId, seq: a.seq, turn: a.turn, role: a.role, kind: a.kind, content: a.content, tokens });
      appendTokens.push(tokens);
    }
    const ref = { conversationId, workspace, config };
    // The answer's segments are read with the turn's state: one round trip for both.
    const prepared = await withHeartbeat(() => context.prepareContext({ ...ref, turn, throughSeq: seq - 1, harder: input.harder, segmentsOf: seq }));
    if (!prepared.fits)
      return { fits: false, reason: prepared.reason, pruned: prepared.pruned, appendTokens, tokens: 0, usage: ZERO_USAGE, costUsd: 0, calls: [] };

    // Segments already answered by an earlier attempt of this step are kept, not asked again.
    const done = prepared.request.segments ?? (await store.getSegments(conversationId, seq));
    let segment = 0;
    while (done.some((s) => s.segment === segment && s.finishReason === 'length') && segment < config.maxContinuations) segment++;
    // An earlier attempt that died mid-answer: its streamed text is continued, not asked for again.
    const attempt = currentAttempt() + (priorAttempts(input, segment).priorAttempts ?? 0);
    const resumed = await resumeStreamedAnswer(store, config, { conversationId, turn, seq, segment, attempt });
    if (resumed) segment = resumed.segment;
    let usage = ZERO_USAGE;
    let cost = 0;
    let tokens = 0;
    let finishReason: FinishReason | undefined;
    let message: StoredMessage | undefined;
    let xml: XmlParseResult | undefined;
    for (; ; segment++) {
      const r = await callModel({
        ...ref,
        turn,
        seq,
        segment,
        prepared: prepared.request,
        ...priorAttempts(input, segment),
        ...(resumed?.segment === segment ? { resumedAfter: resumed.attempt } : {}),
      });
      usage = addUsage(usage, r.usage);
      cost += r.costUsd;
      finishReason = r.finishReason;
      if (r.merged) {
        tokens = r.tokens;
        message = r.message;
        xml = r.xml;
        break;
      }
      heartbeat();
    }
    const parsed = await parseStoredAnswer(store, conversationId, seq, workspace, config, message && { message, xml, history: prepared.request.history });
    activityLog(conversationId, turn).info({ seq, calls: parsed.calls.map((c) => c.name), loop: parsed.loop }, 'model turn done');
    return { fits: true, pruned: prepared.pruned, appendTokens, tokens, finishReason, usage, costUsd: cost, calls: parsed.calls, loop: parsed.loop };
  }

  return { answer, callModel };

  async function callModel(input: CallModelInput): Promise<CallModelResult> {
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
    const { resumedAfter } = input;
    if (attempt > 1 && resumedAfter === undefined)
      writer.event({ type: 'reset', seq, attempt, segment, reason: `attempt ${attempt} replaces the text streamed by the previous attempt` });
    if (segment > 0) writer.event({ type: 'continuation', seq, segment, ...(resumedAfter === undefined ? {} : { resumedAfter }) });

    let call: Awaited<ReturnType<typeof modelCall>>;
    // <thinking> blocks in the text go to watchers as reasoning, apart from the answer; the same
    // pass finds the answer's calls, which the model step takes instead of parsing the text again.
    const splitter = new StreamedAnswer(toolNames());
    const route = (events: ParseEvent[]) => {
      for (const e of events) {
        if (e.type === 'thinking') writer.reasoning(e.text);
        else writer.text(e.type === 'text' ? e.text : e.raw);
      }
    };
    const tools =
      config.toolFormat === 'native'
        ? (toOpenAITools(
            withNetworkPolicy(offeredTools(config, (await deps.agentsOf(conversationId, input.workspace)).agents), config.network),
          ) as ChatCompletionTool[])
        : undefined;
    const release = await timedWait(
      'a model call slot',
      modelCallSlots.acquire(() => heartbeat({ waitingForSlot: true })),
    );
    try {
      // A batch's shared budget: the call's worst case is reserved before it is made (src/model/budget-pool.ts),
      // at the price of the model that answers this turn (a fork's recorded turns cost nothing).
      const priced = answeringConfig(config, 'turn', turn);
      call = await pooledCall(store.pool, priced, { conversationId, seq, segment, attempt: callAttemptKey(attempt) }, JSON.stringify(request.messages), () =>
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
    const stored = {
      conversationId,
      seq,
      segment,
      content: result.content,
      reasoning: result.reasoning || undefined,
      toolCalls: result.toolCalls,
      finishReason: result.finishReason,
      usage: result.usage,
    };

    const last = result.finishReason !== 'length' || segment >= config.maxContinuations;
    let tokens = 0;
    let preview = result.content.slice(0, 200);
    let message: StoredMessage | undefined;
    let xml: XmlParseResult | undefined;
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
        meta: { segments: earlier.length + 1, finishReason: result.finishReason, usage: merged.usage, ...(result.cut ? { cut: result.cut } : {}) },
      };
      // The segment, the merged message and message_completed: one statement.
      await store.putAnswer(stored, message, [{ type: 'message_completed', seq, finishReason: result.finishReason, usage: merged.usage }]);
      preview = merged.content.slice(0, 200);
      xml = splitter.parseOf(merged.content);
    } else await store.putSegment(stored);
    logger.info({ seq, segment, finishReason: result.finishReason, usage: result.usage, merged: last }, 'model segment done');
    // Reported usage includes billed attempts that failed and the turn's summaries (src/model/call.ts).
    return { finishReason: result.finishReason, usage: call.reported.usage, costUsd: call.reported.costUsd, merged: last, tokens, preview, message, xml };
  }

  /** The turn's request as prepareContext stored it, over the transcript through the message before `seq`. */
  async function storedRequest(conversationId: string, turn: number, seq: number): Promise<PreparedRequest> {
    const ctx = (await store.getContext(conversationId, turn)) as { plan: StoredContext } | null;
    if (!ctx) throw new Error(`no context was prepared for turn ${turn} of ${conversationId}`);
    return { context: ctx.plan, history: await transcripts.read(store, conversationId, seq - 1) };
  }
}
