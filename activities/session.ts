// Activities of the `session` workflow. Per turn at most two go through the task queue: the
// model step (`modelTurn`: pending messages, context, every segment of the answer, parsing) and
// each tool call (`toolCall`, with the turn's checkpoint when it changed files). Store-only steps
// (`recordToolResult`, `emitEvents`, `endTurnRecord`, `finishSession`) run as local activities.
// The run configuration is written once (initConversation) and read here by conversation id.
import { effectiveSandbox } from '../src/sandbox/index.js';
import { ApplicationFailure } from '@temporalio/common';
import { runConfigSchema, type RunConfig } from '../src/config.js';
import { messageTokens } from '../src/context/tokens.js';
import type { Store } from '../src/store/index.js';
import { createCheckpoint } from '../src/workspace/checkpoint.js';
import { saveCheckpointOffHost } from '../src/workspace/offhost.js';
import { recordWorkspaceUsage } from '../src/workspace/host.js';
import type { CallSummary } from '../src/parser/calls.js';
import type { ConversationStatus, FinishReason, MessageKind, Role, Usage } from '../src/types.js';
import { addUsage, ZERO_USAGE } from '../src/types.js';
import { contextActivities } from './context.js';
import { activityLog, cancellationSignal, heartbeat, withHeartbeat, type ActivityDeps } from './deps.js';
import { modelActivities } from './model.js';
import { answerCall, parseStoredAnswer } from './tools.js';
import type { FinishInput, PrepareResult, RunToolInput, RunToolResult } from './types.js';
import { conversationActivities } from './conversation.js';
import { turnActivities } from './turn.js';
import { inc } from '../src/metrics.js';
import { stallOnInfrastructure } from './infra-errors.js';

export interface SessionRef {
  conversationId: string;
  workspace: string;
}

/** A message the workflow decided to add (user message, reminder, notice); written by the next model step. */
export interface PendingAppend {
  seq: number;
  turn: number;
  role: Role;
  kind: MessageKind;
  content: string;
}

export interface ModelTurnInput extends SessionRef {
  turn: number;
  seq: number;
  appends: PendingAppend[];
  /** After a provider context-length error: prune harder. */
  harder?: boolean;
  /** The previous turn's record, written first (the workflow saves a local activity per turn). */
  endTurn?: EndTurnRecordInput;
}

export interface ModelTurnResult {
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
  /** Set by a worker with extensions when the workspace has Stop hooks (src/extensions/worker.ts). */
  stopHook?: boolean;
}

export interface ToolCallInput extends SessionRef {
  turn: number;
  callId: string;
  resultSeq: number;
  /** Checkpoint the workspace after the call when it changed files (mutating tools). */
  checkpoint?: boolean;
  /** Push that checkpoint off the host (repository jobs) or store it as a bundle (local workspaces) before answering, so a move can restore it. */
  offHost?: boolean;
}

export interface ToolCallResult extends RunToolResult {
  checkpoint?: { turn: number; commit: string; files: number };
}

export interface RecordToolResultInput {
  conversationId: string;
  turn: number;
  callId: string;
  resultSeq: number;
  override?: RunToolInput['override'];
}

export interface EndTurnRecordInput {
  conversationId: string;
  turn: number;
  usage: Usage;
  costUsd: number;
  status: ConversationStatus;
}

/** How the session ended (the store row, the stream's `finished` event). */
export type FinishSessionInput = FinishInput;

/** Per-process cache of each conversation's run configuration (it never changes during a run). */
const configs = new Map<string, RunConfig>();

export async function configFor(store: Store, conversationId: string): Promise<RunConfig> {
  const hit = configs.get(conversationId);
  if (hit) return hit;
  const row = await store.getConversation(conversationId);
  if (!row) throw ApplicationFailure.nonRetryable(`conversation ${conversationId} is not in the store`, 'UnknownConversation');
  const config = runConfigSchema.parse(row.config);
  if (configs.size > 2000) configs.delete(configs.keys().next().value!);
  configs.set(conversationId, config);
  return config;
}

export function sessionActivities(deps: ActivityDeps) {
  const { store, home, allowEnv } = deps;
  const context = contextActivities(deps);
  const model = modelActivities(deps);
  const conversation = conversationActivities(deps);

  /** A turn's end in the store: the conversation row and `turn_completed` (keyed: a repeat writes nothing new). */
  async function recordTurnEnd(input: EndTurnRecordInput): Promise<void> {
    const { conversationId, turn, usage, costUsd, status } = input;
    await store.updateConversation(conversationId, { turns: turn, usage, costUsd, status });
    const written = await store.appendStream(conversationId, [{ type: 'turn_completed', turn, usage, costUsd }]);
    if (written.length) inc('agentrun_turns_total');
  }

  const activities = {
    async modelTurn(input: ModelTurnInput): Promise<ModelTurnResult> {
      const { conversationId, workspace, turn, seq } = input;
      if (input.endTurn) await recordTurnEnd(input.endTurn);
      const config = await configFor(store, conversationId);
      const appendTokens: number[] = [];
      for (const a of input.appends) {
        const tokens = messageTokens({ role: a.role, content: a.content }, config.model);
        await store.putMessage({ conversationId, seq: a.seq, turn: a.turn, role: a.role, kind: a.kind, content: a.content, tokens });
        appendTokens.push(tokens);
      }
      const ref = { conversationId, workspace, config };
      const prepared = await withHeartbeat(() => context.prepareContext({ ...ref, turn, throughSeq: seq - 1, harder: input.harder }));
      if (!prepared.fits)
        return { fits: false, reason: prepared.reason, pruned: prepared.pruned, appendTokens, tokens: 0, usage: ZERO_USAGE, costUsd: 0, calls: [] };

      // Segments already answered by an earlier attempt of this step are kept, not asked again.
      const done = await store.getSegments(conversationId, seq);
      let segment = 0;
      while (done.some((s) => s.segment === segment && s.finishReason === 'length') && segment < config.maxContinuations) segment++;
      let usage = ZERO_USAGE;
      let cost = 0;
      let tokens = 0;
      let finishReason: FinishReason | undefined;
      for (; ; segment++) {
        const r = await model.callModel({ ...ref, turn, seq, segment, ...(input.harder && segment === 0 ? { priorAttempts: 1 } : {}) });
        usage = addUsage(usage, r.usage);
        cost += r.costUsd;
        finishReason = r.finishReason;
        if (r.merged) {
          tokens = r.tokens;
          break;
        }
        heartbeat();
      }
      const parsed = await parseStoredAnswer(store, conversationId, seq, workspace, config);
      activityLog(conversationId, turn).info({ seq, calls: parsed.calls.map((c) => c.name), loop: parsed.loop }, 'model turn done');
      return { fits: true, pruned: prepared.pruned, appendTokens, tokens, finishReason, usage, costUsd: cost, calls: parsed.calls, loop: parsed.loop };
    },

    async toolCall(input: ToolCallInput): Promise<ToolCallResult> {
      const { conversationId, workspace, turn } = input;
      const config = await configFor(store, conversationId);
      const r = await answerCall(store, { ...input, model: config.model, sandbox: effectiveSandbox(config, home, allowEnv ?? []) });
      if (!input.checkpoint || !r.changed) return r;
      // Repository jobs: a cancelled attempt (host drained, or heartbeats lost) must not push: the
      // workflow may already have moved the workspace and go on writing this turn's ref elsewhere.
      if (input.offHost && cancellationSignal()?.aborted) throw ApplicationFailure.retryable('the tool call was cancelled before its checkpoint', 'Cancelled');
      const cp = await withHeartbeat(() => createCheckpoint(workspace, conversationId, turn, home));
      if (!cp) return r;
      if (input.offHost)
        await withHeartbeat(() => saveCheckpointOffHost(store, home, { repo: config.repo, workspace, conversationId, turn, commit: cp.commit }));
      await store.putCheckpoint(conversationId, turn, cp.commit, cp.files);
      await store.appendStream(conversationId, [{ type: 'checkpoint', turn, commit: cp.commit, files: cp.files }]);
      recordWorkspaceUsage(store, conversationId, workspace);
      return { ...r, checkpoint: { turn, commit: cp.commit, files: cp.files.length } };
    },

    async recordToolResult(input: RecordToolResultInput): Promise<RunToolResult> {
      const config = await configFor(store, input.conversationId);
      // No workspace is touched: the answer is the workflow's own, or a store-only control tool.
      return answerCall(store, { ...input, workspace: '', model: config.model, sandbox: effectiveSandbox(config, home, allowEnv ?? []) });
    },

    endTurnRecord: recordTurnEnd,

    async finishSession(input: FinishSessionInput): Promise<{ summary?: string }> {
      configs.delete(input.conversationId);
      return conversation.finishConversation(input);
    },
    // The shared steps the session uses too (first run, rollback, appends, events), with the same fault handling.
    initConversation: conversation.initConversation,
    appendMessage: conversation.appendMessage,
    emitEvents: conversation.emitEvents,
    rollbackWorkspace: turnActivities(deps).rollbackWorkspace,
  };
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [name, stallOnInfrastructure(fn as (...a: unknown[]) => Promise<unknown>)]),
  ) as typeof activities;
}

export type SessionActivities = ReturnType<typeof sessionActivities>;
