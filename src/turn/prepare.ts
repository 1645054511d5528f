// prepareContext (the first part of the session's model step, modelTurn): build this turn's prompt
// from the store and prune it into the safe zone. The decision (a ContextPlan plus the system prompt) is
// stored per turn; callModel renders exactly that, so a retried model call sends the same request.
import { createHash } from 'node:crypto';
import os from 'node:os';
import { Context } from '@temporalio/activity';
import { buildSystemPrompt } from '../context/prompt.js';
import { commandWorkspace } from '../sandbox/policy.js';
import { planContext, type PruneInput } from '../context/prune.js';
import { modelHeaders, type StoredContext } from '../context/request.js';
import { loadRules } from '../context/rules.js';
import { parseSafeZone } from '../context/safe-zone.js';
import { summarise as requestSummary } from '../context/summarise.js';
import { contextWindowFor, countTokens } from '../model/tokens.js';
import { transcripts } from '../context/transcript.js';
import { answeredByWorkflow, readsOnly, renderXmlToolDocs } from '../tools/index.js';
import { withNetworkPolicy } from '../tools/execute-command.js';
import { offeredTools } from '../extensions/agents.js';
import { extensionNotes } from '../extensions/scope.js';
import type { StoredMessage } from '../types.js';
import type { SegmentRow } from '../store/types.js';
import { activityLog, callAttemptKey, cancellationSignal, currentAttempt, heartbeat } from './step.js';
import type { TurnDeps } from './deps.js';
import { inc } from '../metrics.js';
import type { RunConfig } from '../config.js';

export interface PrepareInput {
  conversationId: string;
  workspace: string;
  config: RunConfig;
  turn: number;
  /** Highest seq that belongs to the history of this turn. */
  throughSeq: number;
  /** After a provider context-length error: prune harder. */
  harder?: boolean;
  /** The answer's seq: its segments stored by an earlier attempt are read with the turn's state (PreparedRequest.segments). */
  segmentsOf?: number;
}

export interface PrepareResult {
  promptTokens: number;
  safeZone: number;
  fits: boolean;
  /** Present when this pass changed the context (an audit record was written). */
  pruned?: { tokensBefore: number; tokensAfter: number; actions: string[] };
  reason?: string;
}

/** What the model call renders a turn's request from: the stored context and the history through the turn's last message. */
export interface PreparedRequest {
  context: StoredContext;
  history: StoredMessage[];
  /** With PrepareInput.segmentsOf: that answer's segments as the store held them when the step began. */
  segments?: SegmentRow[];
}

/**
 * The system prompt is the same turn after turn (tools, rules, instructions, the day the
 * conversation started), and most of it is the same for every conversation (the tools'
 * documentation): only the workspace path, the rules and the instructions differ. Counting its ~4k tokens costs ~20 ms, so
 * it is counted by paragraph, each distinct paragraph once per worker (bench/concurrency.ts at 50
 * conversations: 945 ms of the worker's CPU went to counting each conversation's prompt whole).
 * A break is counted as one token, though it often merges into its neighbour: the sum is never
 * below the whole text's count and at most one token per break above it (4098 against 4070 for
 * the built-in prompt), an overestimate the pruner's margin absorbs.
 */
const paragraphCounts = new Map<string, number>();
const PARAGRAPH_BREAK_TOKENS = 1;
export function systemPromptTokens(system: string, model: string): number {
  const paragraphs = system.split('\n\n');
  let n = (paragraphs.length - 1) * PARAGRAPH_BREAK_TOKENS;
  for (const paragraph of paragraphs) {
    const key = `${model}\0${paragraph.length > 256 ? createHash('sha1').update(paragraph).digest('base64') : paragraph}`;
    let count = paragraphCounts.get(key);
    if (count === undefined) {
      count = countTokens(paragraph, model);
      if (paragraphCounts.size >= 10_000) paragraphCounts.delete(paragraphCounts.keys().next().value!);
      paragraphCounts.set(key, count);
    }
    n += count;
  }
  return n;
}

/** The running activity's maximum attempts as Temporal reports them (modelTurn). */
function enclosingMaxAttempts(): number | undefined {
  try {
    return Context.current().info.retryPolicy?.maximumAttempts || undefined;
  } catch {
    return undefined; // outside an activity (benches)
  }
}

/** The context step over the worker's store and extensions. */
export function contextStep(deps: TurnDeps) {
  const { store } = deps;
  async function systemPrompt(input: PrepareInput, startedAt: Date | null): Promise<string> {
    const { config, workspace } = input;
    const offered = offeredTools(config, (await deps.agentsOf(input.conversationId, workspace)).agents);
    const tools = withNetworkPolicy(config.planMode ? offered.filter((t) => readsOnly(t) || answeredByWorkflow(t)) : offered, config.network);
    return buildSystemPrompt({
      toolDocs: config.toolFormat === 'xml' ? renderXmlToolDocs(tools) : '',
      toolFormat: config.toolFormat,
      rules: await loadRules(workspace),
      // Where its commands run: the sandbox's fixed path, the same for every job (and every host).
      workspace: commandWorkspace(config.sandbox, workspace),
      // No kernel release: workers of one fleet may differ in it, and a prompt that changed with the
      // worker a turn landed on would lose the provider's prompt cache.
      osInfo: `${os.type()} (${os.arch()})`,
      shell: '/bin/bash',
      // The day the conversation started, not today: a prompt that changed at midnight would lose the provider's prompt cache.
      date: (startedAt ?? new Date()).toISOString().slice(0, 10),
      instructions: [config.instructions, ...extensionNotes()].filter(Boolean).join('\n\n') || undefined,
      planMode: config.planMode,
    });
  }

  /** Ask the model for a structured snapshot of the oldest part of the conversation (src/context/summarise.ts). */
  function summarise(input: PrepareInput, history: StoredMessage[], throughSeq: number, previous: PruneInput['summary']) {
    const { conversationId, config, turn } = input;
    const attempt = currentAttempt();
    const headers = modelHeaders(conversationId, turn, 0, 'summary', attempt);
    return requestSummary({
      store,
      config,
      conversationId,
      turn,
      attempt,
      attemptKey: callAttemptKey(attempt),
      maxAttempts: enclosingMaxAttempts(),
      history,
      throughSeq,
      previous,
      headers,
      signal: cancellationSignal(),
      heartbeat,
    });
  }

  /**
   * The messages through `throughSeq` and, in the same round trip, the previous turn's plan, the
   * conversation's start, its prune state (the summary-failed range an aggregate: reading every
   * prune record each turn would grow with the square of the turns) and the segments asked for.
   */
  async function historyAndState(input: PrepareInput) {
    const { conversationId, turn, throughSeq, segmentsOf } = input;
    // Incremental: only the messages written since this worker's last read of the conversation.
    const r = await transcripts.readWith(store, conversationId, throughSeq, { turn, ...(segmentsOf === undefined ? {} : { segmentsOf }) });
    const { previous, prune: s, segments } = r.turnState!;
    const state: Pick<PruneInput, 'markedIds' | 'summary' | 'summaryFailedThroughSeq'> = {
      markedIds: { ids: s.markedIds },
      summary: s.summary ?? undefined,
      summaryFailedThroughSeq: s.summaryFailedThroughSeq,
    };
    return { history: r.messages, previous, state, segments };
  }

  return {
    /** The turn's context, stored; and, for the model call in the same step, what it renders the request from. */
    async prepareContext(input: PrepareInput): Promise<PrepareResult & { request: PreparedRequest }> {
      const { conversationId, config, turn } = input;
      const logger = activityLog(conversationId, turn);
      const { history, previous, state, segments } = await historyAndState(input);
      const system = await systemPrompt(input, previous.startedAt);
      const previousPlan = (previous.plan as Partial<StoredContext> | null)?.plan;
      const window = config.contextWindow ?? contextWindowFor(config.model);
      const safeZone = parseSafeZone(config.safeZone, window);
      const base: PruneInput = {
        conversationId,
        messages: history,
        systemTokens: systemPromptTokens(system, config.model),
        safeZone,
        ...state,
        keepRecentTurns: config.keepRecentTurns,
        harder: input.harder,
        pruneTarget: config.pruneTarget,
        // What the previous request cleared stays cleared: its prefix is what the provider cached.
        ...(previousPlan ? { previous: { cleared: previousPlan.cleared ?? [], truncatedArgs: previousPlan.truncatedArgs ?? [] } } : {}),
      };
      let result = planContext(base);
      let pass = 0;
      if (result.needsSummary) {
        const through = result.needsSummary.throughSeq;
        const summary = await summarise(input, history, through, base.summary);
        const withSummary = summary && planContext({ ...base, summary: { throughSeq: through, content: summary.content, tokens: summary.tokens } });
        // A summary is only worth keeping if the request it gives is smaller than the one without it.
        if (summary && withSummary && withSummary.plan.tokensAfter < result.plan.tokensAfter) {
          await store.putSummary(conversationId, through, summary.content, summary.tokens);
          result = withSummary;
        } else {
          // Remembered so the next turns don't ask again for the same range.
          await store.putPruneRecord(conversationId, turn, {
            pass: pass++,
            tokensBefore: result.plan.tokensBefore,
            tokensAfter: result.plan.tokensAfter,
            actions: [summary ? 'summary refused: it did not shrink the request' : 'summary request failed'],
            plan: { summaryFailedThroughSeq: through },
          });
          result = planContext({ ...base, summaryFailedThroughSeq: through });
        }
      }
      const { plan } = result;
      const stored: StoredContext = { system, plan };
      let pruned: PrepareResult['pruned'];
      if (plan.actions.length) {
        pruned = { tokensBefore: plan.tokensBefore, tokensAfter: plan.tokensAfter, actions: plan.actions };
        await store.putContext(conversationId, turn, stored, plan.tokensAfter);
        await store.putPruneRecord(conversationId, turn, { pass, ...pruned, plan });
        await store.appendStream(conversationId, [
          { type: 'turn_started', turn },
          { type: 'window', turn, ...pruned },
        ]);
        logger.info(pruned, 'context pruned');
        inc('agentrun_prunes_total');
      } else {
        // The plain turn: the context and turn_started in one round trip.
        await store.putContext(conversationId, turn, stored, plan.tokensAfter, [{ type: 'turn_started', turn }]);
      }
      return {
        // As a read from the store would give it back (JSON: absent, not undefined), so a retry renders the same request.
        request: { context: JSON.parse(JSON.stringify(stored)) as StoredContext, history, ...(segments ? { segments } : {}) },
        promptTokens: plan.tokensAfter,
        safeZone,
        fits: result.fits,
        pruned,
        reason: result.fits
          ? undefined
          : `the request needs ${plan.tokensAfter} tokens after pruning and summarising, over the safe zone of ${safeZone} (window ${window}); raise --safe-zone/--context-window or start a new conversation`,
      };
    },
  };
}
