// Activities of the `session` workflow. Per turn at most two go through the task queue: the
// model step (`modelTurn`: pending messages, context, every segment of the answer, parsing) and
// each tool call (`toolCall`, with the turn's checkpoint when it changed files). Store-only steps
// (`recordToolResult`, `emitEvents`, `endTurnRecord`, `finishSession`) run as local activities.
// The run configuration is written once (initConversation) and read here by conversation id.
// The worker's extensions and tracing see a turn through the turn port (src/observer.ts), called
// here at its named points: beforeModel/afterModel around the model step, onTurnEnd where a
// turn's record is written, beforeTool/afterTool around each tool call, onStop, onFinish.
import { effectiveSandbox } from '../src/sandbox/index.js';
import { ApplicationFailure } from '@temporalio/common';
import { runConfigSchema, type RunConfig } from '../src/config.js';
import { messageTokens } from '../src/context/tokens.js';
import type { Store } from '../src/store/index.js';
import { createCheckpoint } from '../src/workspace/checkpoint.js';
import { saveCheckpointOffHost } from '../src/workspace/offhost.js';
import { recordWorkspaceUsage } from '../src/workspace/host.js';
import type { CallSummary } from '../src/parser/calls.js';
import type { ConversationStatus, FinishReason, MessageKind, Role, StoredMessage, ToolCall, Usage } from '../src/types.js';
import { addUsage, ZERO_USAGE } from '../src/types.js';
import { contextActivities } from './context.js';
import { activityLog, cancellationSignal, currentAttempt, heartbeat, keepAlive, portOf, withHeartbeat, type ActivityDeps } from './deps.js';
import { observeModel, observeTool, type RepositoryScope, type StepScope, type StopVerdict } from '../src/observer.js';
import { repositorySettings } from '../src/extensions/repository.js';
import { SettingsError } from '../src/extensions/settings.js';
import { forgetRepositoryExtensions, repositoryExtensionsOf } from './repository.js';
import type { HookRecord } from '../src/extensions/hooks.js';
import { modelActivities } from './model.js';
import { answerCall, parseStoredAnswer } from './tools.js';
import type { FinishInput, PrepareResult, RunToolInput, RunToolResult } from './types.js';
import { conversationActivities } from './conversation.js';
import { rollbackActivities } from './rollback.js';
import { inc } from '../src/metrics.js';
import { stallOnInfrastructure } from './infra-errors.js';
import { onPlacedWorkspace, refuseUnsandboxed } from './guard.js';
import { fenced } from './fence.js';
import { providerWaits } from '../src/model/pool-wait.js';
import { tenantWeight } from '../src/model/pool-weights.js';
import { isScripted } from '../src/model/client.js';
import { isRecorded } from '../src/scripted/recorded.js';

export interface SessionRef {
  conversationId: string;
  workspace: string;
  /** The epoch of the workspace's placement (src/store/fence.ts): the host's writes carry it; absent before fencing. */
  epoch?: number;
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
  /** The workflow waits for a refusing provider itself (src/model/pool-wait.ts): refusals end the step as ProviderWait. */
  waitForProvider?: boolean;
  /** Attempts of this step before the last ProviderWait: the answer's attempts are numbered on from there (stream resets). */
  priorAttempts?: number;
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
  /** The workspace has Stop hooks: the workflow runs `stopHook` before it lets the conversation end. */
  stopHook?: boolean;
  /** The run's tenant weight (`agentrun tenant weight set`), for the next step's Temporal fairness weight. */
  tenantWeight?: number;
}

export interface ToolCallInput extends SessionRef {
  turn: number;
  callId: string;
  resultSeq: number;
  /** Checkpoint the workspace after the call when it changed files (mutating tools). */
  checkpoint?: boolean;
  /** Push that checkpoint off the host (repository jobs) or store it as a bundle (local workspaces) before answering, so a move can restore it. */
  offHost?: boolean;
  /** The commit the workflow knows at this turn's ref on the remote ('' none): the push's --force-with-lease. */
  lease?: string;
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

export interface StopHookInput extends SessionRef {
  turn: number;
  /** How often Stop hooks kept this conversation going already (Claude Code's `stop_hook_active` when > 0). */
  blocked: number;
}

/** `continue`: the reason a Stop hook gave for not ending (the model reads it); else the conversation ends. */
export type StopHookResult = StopVerdict;

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

  /** The repository's settings for a step's scope: those kept at the start, when this worker runs them. */
  async function repositoryScope(conversationId: string, workspace: string): Promise<RepositoryScope | undefined> {
    try {
      const settings = repositorySettings(await repositoryExtensionsOf(deps, conversationId, workspace));
      return settings ? { settings } : undefined;
    } catch (err) {
      if (err instanceof SettingsError) return { error: err.message };
      throw err;
    }
  }
  const port = portOf(deps);
  const context = contextActivities(deps);
  const model = modelActivities(deps);
  const conversation = conversationActivities(deps);

  /**
   * A turn ended: its record in the store (the conversation row and `turn_completed`, keyed: a repeat
   * writes nothing new), then onTurnEnd. The one place a turn's end is written, whether it rides on
   * the next model step or is written on its own (the last turn, and histories from before that).
   */
  async function turnEnded(input: EndTurnRecordInput, workspace?: string): Promise<void> {
    const { conversationId, turn, usage, costUsd, status } = input;
    await store.updateConversation(conversationId, { turns: turn, usage, costUsd, status });
    const written = await store.appendStream(conversationId, [{ type: 'turn_completed', turn, usage, costUsd }]);
    if (written.length) inc('agentrun_turns_total');
    workspace ??= (await store.getConversation(conversationId))?.workspace ?? '';
    await port.onTurnEnd({ conversationId, turn, workspace });
  }

  /** Attempts before this one: the earlier schedules of the step (waits for the provider), and the try before pruning harder. */
  function priorAttempts(input: ModelTurnInput, segment: number): { priorAttempts?: number } {
    const n = (input.priorAttempts ?? 0) + (input.harder && segment === 0 ? 1 : 0);
    return n > 0 ? { priorAttempts: n } : {};
  }

  /** The model step proper: pending messages, context, every segment of the answer, parsing. */
  async function answer(input: ModelTurnInput, config: RunConfig): Promise<ModelTurnResult> {
    const { conversationId, workspace, turn, seq } = input;
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
    let message: StoredMessage | undefined;
    for (; ; segment++) {
      const r = await model.callModel({
        ...ref,
        turn,
        seq,
        segment,
        prepared: prepared.request,
        ...priorAttempts(input, segment),
      });
      usage = addUsage(usage, r.usage);
      cost += r.costUsd;
      finishReason = r.finishReason;
      if (r.merged) {
        tokens = r.tokens;
        message = r.message;
        break;
      }
      heartbeat();
    }
    const parsed = await parseStoredAnswer(store, conversationId, seq, workspace, config, message);
    activityLog(conversationId, turn).info({ seq, calls: parsed.calls.map((c) => c.name), loop: parsed.loop }, 'model turn done');
    return { fits: true, pruned: prepared.pruned, appendTokens, tokens, finishReason, usage, costUsd: cost, calls: parsed.calls, loop: parsed.loop };
  }

  /** A tool call answered between beforeTool and afterTool (the call's name is read here, once). */
  async function observedCall<R extends RunToolResult>(input: RecordToolResultInput & { workspace: string }, run: (call: ToolCall) => Promise<R>) {
    const call = await store.getToolCall(input.conversationId, input.callId);
    if (!call) throw new Error(`tool call ${input.callId} of ${input.conversationId} is not in the store`);
    const step = {
      conversationId: input.conversationId,
      turn: input.turn,
      workspace: input.workspace,
      callId: input.callId,
      name: call.name,
      attempt: currentAttempt(),
      answeredByWorkflow: Boolean(input.override),
    };
    return observeTool(port, step, () => run(call));
  }

  // Every step is a thin adapter wrapped by what it is: a step on the workspace's host first
  // checks it is the directory placed there (activities/guard.ts); a step given its placement's
  // epoch writes under it, and a step that runs commands watches that fence while it runs
  // (activities/fence.ts); infrastructure faults stall the conversation instead of failing it.
  // A workspace's hooks and MCP servers are the conversation's: read-only when its commands are.
  // Its repository's settings are those kept at the start, when this worker runs them.
  const stepScope = async (conversationId: string, workspace: string, config: RunConfig): Promise<StepScope> => ({
    conversationId,
    readOnly: effectiveSandbox(config, home).policy === 'read-only',
    repository: await repositoryScope(conversationId, workspace),
  });
  const storeStep = <I, R>(fn: (input: I) => Promise<R>) => stallOnInfrastructure(fenced(store, fn));
  const hostStep = <I, R>(fn: (input: I) => Promise<R>, opts: { runsCommands?: boolean } = {}) =>
    stallOnInfrastructure(fenced(store, onPlacedWorkspace(home, fn), { watch: opts.runsCommands }));

  return {
    modelTurn: hostStep(async (input: ModelTurnInput): Promise<ModelTurnResult> => {
      const { endTurn, ...step } = input;
      const config = await configFor(store, input.conversationId);
      return port.inWorkspace(
        input.workspace,
        async () => {
          // The previous turn's record rides on this step (workflows/session.ts saves a local activity per turn).
          if (endTurn) await turnEnded(endTurn, input.workspace);
          const e = {
            conversationId: input.conversationId,
            turn: input.turn,
            workspace: input.workspace,
            seq: input.seq,
            model: config.model,
            attempt: currentAttempt(),
          };
          const r = await observeModel(
            port,
            e,
            // A scripted or recorded model's faults are keyed by attempt: its refusals keep the retries they script.
            () =>
              providerWaits(
                input.waitForProvider && !isScripted(config.model) && !isRecorded(config.model),
                currentAttempt() + (input.priorAttempts ?? 0),
                () => answer(step, config),
              ),
            (r) => ({
              ok: true,
              answered: r.fits,
              usage: r.usage,
              costUsd: r.costUsd,
              finishReason: r.finishReason,
              content: async () => (await store.getMessage(input.conversationId, input.seq))?.content ?? '',
            }),
          );
          // The tenant's weight now: the next model step carries it to Temporal (workflows/model-priority.ts).
          const weighted = { ...r, tenantWeight: await tenantWeight(store, config.tenant) };
          return port.watchesStop() ? { ...weighted, stopHook: true } : weighted;
        },
        await stepScope(input.conversationId, input.workspace, config),
      );
    }),

    // Runs on the workspace's host and heartbeats while it runs (keepAlive): commands beat only every 2 s.
    toolCall: hostStep(
      keepAlive(async (input: ToolCallInput): Promise<ToolCallResult> => {
        const config = await configFor(store, input.conversationId);
        // Every command step, not only the first: a conversation moved to this worker is held to its rule.
        refuseUnsandboxed(deps, config.sandbox);
        return port.inWorkspace(
          input.workspace,
          () =>
            observedCall(input, async (call) => {
              const { conversationId, workspace, turn } = input;
              const r = await answerCall(store, { ...input, call, model: config.model, sandbox: effectiveSandbox(config, home, allowEnv ?? []) });
              if (!input.checkpoint || !r.changed) return r;
              // Repository jobs: a cancelled attempt (host drained, or heartbeats lost) must not push: the
              // workflow may already have moved the workspace and go on writing this turn's ref elsewhere.
              if (input.offHost && cancellationSignal()?.aborted)
                throw ApplicationFailure.retryable('the tool call was cancelled before its checkpoint', 'Cancelled');
              const cp = await withHeartbeat(() => createCheckpoint(workspace, conversationId, turn, home));
              if (!cp) return r;
              if (input.offHost)
                await withHeartbeat(() =>
                  saveCheckpointOffHost(store, home, { repo: config.repo, workspace, conversationId, turn, commit: cp.commit, lease: input.lease }),
                );
              await store.putCheckpoint(conversationId, turn, cp.commit, cp.files);
              await store.appendStream(conversationId, [{ type: 'checkpoint', turn, commit: cp.commit, files: cp.files }]);
              recordWorkspaceUsage(store, conversationId, workspace);
              return { ...r, checkpoint: { turn, commit: cp.commit, files: cp.files.length } };
            }),
          await stepScope(input.conversationId, input.workspace, config),
        );
      }),
      { runsCommands: true },
    ),

    recordToolResult: storeStep(async (input: RecordToolResultInput): Promise<RunToolResult> => {
      // No workspace is touched: the answer is the workflow's own, or a store-only control tool.
      return port.inWorkspace('', () =>
        observedCall({ ...input, workspace: '' }, async (call) => {
          const config = await configFor(store, input.conversationId);
          return answerCall(store, { ...input, call, workspace: '', model: config.model, sandbox: effectiveSandbox(config, home, allowEnv ?? []) });
        }),
      );
    }),

    endTurnRecord: storeStep((input: EndTurnRecordInput): Promise<void> => turnEnded(input)),

    /**
     * The workspace's Stop hooks, run when the model is about to finish (the workflow asks only when
     * the model step said the workspace has some). What they decided is kept with the
     * attempt_completion result they answered, so `inspect` shows it.
     */
    stopHook: hostStep(
      async (input: StopHookInput): Promise<StopHookResult> => {
        const { conversationId, workspace, turn, blocked } = input;
        const scope = await stepScope(conversationId, workspace, await configFor(store, conversationId));
        const verdict = await port.inWorkspace(workspace, () => port.onStop({ conversationId, workspace, turn, blocked }), scope);
        activityLog(conversationId, turn).info({ hooks: verdict.records, decision: verdict.continue === undefined ? 'stop' : 'continue' }, 'Stop hooks ran');
        if (verdict.records.length) await keepStopRecords(store, conversationId, turn, verdict.records);
        return verdict;
      },
      { runsCommands: true },
    ),

    finishSession: storeStep(async (input: FinishSessionInput): Promise<{ summary?: string }> => {
      configs.delete(input.conversationId);
      forgetRepositoryExtensions(input.conversationId);
      const r = await conversation.finishConversation(input);
      const workspace = (await store.getConversation(input.conversationId))?.workspace ?? '';
      await port.onFinish({ conversationId: input.conversationId, workspace, status: input.status, result: input.result });
      return r;
    }),
    // The shared steps the session uses too (first run, rollback, appends, events), with the same fault handling.
    initConversation: hostStep(conversation.initConversation),
    checkpointTurnZero: hostStep(conversation.checkpointTurnZero),
    appendMessage: storeStep(conversation.appendMessage),
    emitEvents: storeStep(conversation.emitEvents),
    rollbackWorkspace: hostStep(rollbackActivities(deps).rollbackWorkspace),
  };
}

/** A retry replaces the Stop records of the earlier attempt. */
async function keepStopRecords(store: Store, conversationId: string, turn: number, records: HookRecord[]): Promise<void> {
  const result = (await store.getMessages(conversationId))
    .filter((m) => m.kind === 'tool_result' && m.turn === turn && m.toolName === 'attempt_completion')
    .at(-1);
  if (!result) return;
  const kept = ((result.meta?.hooks as HookRecord[] | undefined) ?? []).filter((r) => r.event !== 'Stop');
  await store.putMessage({ ...result, meta: { ...result.meta, hooks: [...kept, ...records] } });
}

export type SessionActivities = ReturnType<typeof sessionActivities>;
