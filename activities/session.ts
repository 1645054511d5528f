// Activities of the `session` workflow. Per turn at most two go through the task queue: the
// model step (`modelTurn`: pending messages, context, every segment of the answer, parsing) and
// each tool call (`toolCall`, with the turn's checkpoint when it changed files). Store-only steps
// (`recordToolResult`, `emitEvents`, `endTurnRecord`, `finishSession`) run as local activities.
// The run configuration is written once (initConversation) and read here by conversation id.
// The worker's extensions and tracing see a turn through the turn port (src/extensions/observer.ts), called
// here at its named points: beforeModel/afterModel around the model step, onTurnEnd where a
// turn's record is written, beforeTool/afterTool around each tool call, onStop, onFinish.
import { tenantOfRun } from '../src/runtime/tenant.js';
import { effectiveSandbox } from '../src/sandbox/index.js';
import { ApplicationFailure } from '@temporalio/common';
import { runConfigSchema, type RunConfig } from '../src/config.js';
import type { Store } from '../src/store/index.js';
import type { ToolCall } from '../src/types.js';
import { activityLog, currentAttempt, keepAlive, portOf, type ActivityDeps } from './deps.js';
import { observeModel, observeTool, type RepositoryScope, type StepScope } from '../src/extensions/observer.js';
import { repositorySettings } from '../src/extensions/repository.js';
import { SettingsError } from '../src/extensions/settings.js';
import { forgetRepositoryExtensions, repositoryExtensionsOf } from './repository.js';
import type { HookRecord } from '../src/extensions/hooks.js';
import { modelStep } from '../src/turn/model-step.js';
import type { TurnDeps } from '../src/turn/deps.js';
import { agentsOf } from './repository.js';
import { modelCallSlots } from './limits.js';
import { answerCall, checkpointTurn, toolStep } from '../src/turn/answer.js';
import type {
  CheckpointTurnInput,
  EndTurnRecordInput,
  FinishSessionInput,
  ModelTurnInput,
  ModelTurnResult,
  RecordToolResultInput,
  RunToolResult,
  SessionActivities,
  StopHookInput,
  StopHookResult,
  ToolCallInput,
  ToolCallResult,
} from './types.js';
import type { LedgerEntry } from '../src/tools/index.js';
import { conversationActivities } from './conversation.js';
import { rollbackActivities } from './rollback.js';
import { inc } from '../src/metrics.js';
import { stallOnInfrastructure } from './infra-errors.js';
import { onPlacedWorkspace, refuseUnsandboxed } from './guard.js';
import { fenced, startsUnder } from './fence.js';
import { providerWaits } from '../src/model/pool-wait.js';
import { tenantWeight } from '../src/model/pool-weights.js';
import { isScripted } from '../src/model/client.js';
import { isRecorded } from '../src/model/scripted/recorded.js';

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

export function sessionActivities(deps: ActivityDeps): SessionActivities {
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
  const turnDeps: TurnDeps = { store, agentsOf: (conversationId, workspace) => agentsOf(deps, conversationId, workspace), modelCallSlots };
  const step = modelStep(turnDeps);
  const conversation = conversationActivities(deps);

  /**
   * A turn ended: its record in the store (the conversation row and `turn_completed`, keyed: a repeat
   * writes nothing new), then onTurnEnd. The one place a turn's end is written, whether it rides on
   * the next model step or is written on its own (the last turn, and histories from before that).
   */
  async function turnEnded(input: EndTurnRecordInput, workspace?: string): Promise<void> {
    const { conversationId, turn, usage, costUsd, status } = input;
    const written = await store.recordTurnEnd(conversationId, { turn, usage, costUsd, status });
    if (written.length) inc('agentrun_turns_total');
    workspace ??= (await store.getConversation(conversationId))?.workspace ?? '';
    await port.onTurnEnd({ conversationId, turn, workspace });
  }

  /**
   * A tool call answered between beforeTool and afterTool (the call's name is read here, once). The
   * tool step reads the call with its ledger entry (`read`, in one round trip, before the step
   * starts); the workflow's own answers the call alone.
   */
  async function observedCall<R extends RunToolResult>(
    input: RecordToolResultInput & { workspace: string },
    run: (call: ToolCall, entry?: LedgerEntry | null) => Promise<R>,
    read?: { call: ToolCall | null; entry?: LedgerEntry | null },
  ) {
    const { call, entry } = read ?? { call: await store.getToolCall(input.conversationId, input.callId), entry: undefined };
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
    return observeTool(port, step, () => run(call, entry));
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
      const { endTurn, ...stepInput } = input;
      const config = await configFor(store, input.conversationId);
      return port.inWorkspace(
        input.workspace,
        async () => {
          // The previous turn's record rides on this step (workflows/session/loop.ts saves a local activity per turn).
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
            // A scripted or recorded model's faults are keyed by attempt: its refusals keep the retries they
            // script; only a rehearsal pool's waits (AGENTRUN_POOLS names one for it) are the workflow's.
            () =>
              providerWaits(isScripted(config.model) || isRecorded(config.model) ? 'pool' : 'all', currentAttempt() + (input.priorAttempts ?? 0), () =>
                step.answer(stepInput, config),
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
          // The tenant's weight now: the next model step carries it to Temporal (workflows/session/model-priority.ts).
          const weighted = { ...r, tenantWeight: await tenantWeight(store, config.tenant) };
          return port.watchesStop() ? { ...weighted, stopHook: true } : weighted;
        },
        await stepScope(input.conversationId, input.workspace, config),
      );
    }),

    // Runs on the workspace's host and heartbeats while it runs (keepAlive): commands beat only every 2 s.
    // Its first read, before the placement check (hostStep's order), brings the fence along: a stale
    // attempt starts nothing without a fence read of its own.
    toolCall: stallOnInfrastructure(
      fenced(
        store,
        async (input: ToolCallInput): Promise<ToolCallResult> => {
          const { fenceEpoch, call, entry } = await store.getToolCallWithEntry(input.conversationId, input.callId);
          startsUnder(input.conversationId, fenceEpoch);
          // Read before the step's scope is set up (it may start MCP servers): an entry found 'started'
          // may be done by now (a timed-out attempt still running), so the ledger reads it again; none
          // (the claim decides atomically) and 'done' (final) stand.
          const read = entry?.state === 'started' ? { call } : { call, entry };
          return onPlacedWorkspace(
            home,
            keepAlive(async (input: ToolCallInput): Promise<ToolCallResult> => {
              const config = await configFor(store, input.conversationId);
              // Every command step, not only the first: a conversation moved to this worker is held to its rule.
              refuseUnsandboxed(deps, config.sandbox);
              return port.inWorkspace(
                input.workspace,
                () =>
                  observedCall(
                    input,
                    (call, entry) =>
                      toolStep(store, home, {
                        ...input,
                        call,
                        entry,
                        model: config.model,
                        repo: config.repo,
                        sandbox: effectiveSandbox(config, home, allowEnv ?? []),
                        tenant: tenantOfRun(config),
                      }),
                    read,
                  ),
                await stepScope(input.conversationId, input.workspace, config),
              );
            }),
          )(input);
        },
        { watch: true, checkedByStep: true },
      ),
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
    // A writing sub-agent's changes leave the host before its delegate call is answered (workflows/session/delegate.ts).
    checkpointTurn: hostStep(
      keepAlive(async (input: CheckpointTurnInput) => {
        const config = await configFor(store, input.conversationId);
        return checkpointTurn(store, home, { ...input, offHost: true, repo: config.repo });
      }),
    ),
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
