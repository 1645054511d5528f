// The `session` workflow: one conversation, its state in a class with named steps (the shape
// of Temporal's safe-message-handlers sample). This file is the loop, the turn, the calls and
// the end; the steps around them are in their own files: the start (placement, turn 0) in
// start.ts, setup, verify and Stop hooks in environment.ts, approvals and questions in people.ts,
// host routing in host.ts, the workspace gate in workspace-gate.ts, every step's timeout and
// retries in step-options.ts, the input and state types in session-types.ts. Policy is in
// policy.ts, control tools in control-tools.ts, and everything that reads or writes content runs
// in activities.
//
// A turn costs two task-queue activities: `modelTurn` (pending messages, context, the answer,
// parsing) and `toolCall` per call (with the turn's checkpoint); store-only steps are local
// activities. It replaced the `conversation` workflow type, now retired: a worker refuses to start
// while runs of that type are open (src/retired.ts, docs/decisions.md).
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  deprecatePatch,
  isCancellation,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { Activities, ModelTurnInput, PendingAppend, SessionActivities } from '../activities/types.js';
import type { RunConfig } from '../src/config.js';
import { ModelErrorType } from '../src/model/error-types.js';
import type { CallSummary } from '../activities/types.js';
import { ProviderWake } from './provider-wake.js';
import { SA_COST, SA_MODEL, SA_SCHEDULE, SA_TENANT, SA_STATUS, SA_TURNS, SA_WORKSPACE } from '../src/search-attributes.js';
import { addUsage, ZERO_USAGE, type ConversationStatus, type IndexEntry, type SubagentOutcome } from '../src/types.js';
import {
  INFRASTRUCTURE_ERROR,
  REFUSAL_TYPES,
  cancelSignal,
  hostDrainingSignal,
  pauseSignal,
  resumeSignal,
  rollbackUpdate,
  sendMessageSignal,
  stateQuery,
  type ConversationResult,
  type RollbackRequest,
  type RollbackResult,
} from './api.js';
import { endWorkflow } from './outcome.js';
import { ModelStepPriority } from './model-priority.js';
import type { BranchResult } from '../src/workspace/result-branch.js';
import { defaultBranch, expandBranch } from '../src/workspace/routing.js';
import { DRAIN_LOSES_NOTHING, HostLost, HostRouting, withEpoch } from './host.js';
import { WorkspaceGate } from './workspace-gate.js';
import { CONTROL_TOOLS, isControlTool, type ControlHost, type ControlOutcome } from './control-tools.js';
import { delegateCall } from './delegate.js';
import { BudgetGate } from './budget.js';
import { activitySummary, currentDetails } from './summaries.js';
import { failureType, rootMessage } from './failures.js';
import { PROVIDER_WAIT, providerWaitMs, providerWaitOf, type ProviderWait } from './provider-wait.js';
import {
  deniedMessage,
  groupCalls,
  loopResponse,
  needsApproval,
  noToolReply,
  planModeRefusal,
  readsOnly,
  timeBudgetStop,
  timeLeftMs,
  toolTimeoutMs,
} from './policy.js';
import type { Ending, SessionCarried, SessionCore, SessionInput, SessionState, WorkspaceActivities, WorkspaceRef } from './session-types.js';
import { sessionStepOptions, STEP_OPTIONS, type SessionStepOptions } from './step-options.js';
import { SessionStart } from './start.js';
import { Environment, environmentResult } from './environment.js';
import { People } from './people.js';

export type { SessionInput, SessionState } from './session-types.js';

/** The (deprecated) patch under which a call lost with its host is answered as interrupted also when setup then fails on the new host. */
const ANSWER_CALL_SETUP_FAILED_AFTER_MOVE = 'answer-call-setup-failed-after-move';

/**
 * The patch under which the first turn's read-only calls run while that checkpoint is being made:
 * only what may change the workspace waits for it (the first tool call on a 1 GB tree is a read
 * that no longer waits ~29 s; bench/first-turn.ts).
 */
const READS_BEFORE_TURN_ZERO = 'reads-before-turn-zero';

/** The patch under which read-only calls share the workspace gate instead of taking it one at a time: the reads of one answer overlap. */
const PARALLEL_READS = 'parallel-reads';

class Session implements ControlHost, SessionCore {
  readonly conversationId = workflowInfo().workflowId;
  readonly config: RunConfig;
  private readonly workspace: string;
  readonly st: SessionCarried;
  private reason?: string;
  cancelRequested?: string;
  /** The cancellation Temporal delivered (cancel --now, the UI), rethrown at the end so the workflow ends CANCELED. */
  cancellation?: unknown;
  private paused = false;
  /**
   * Writes, rollbacks, verify and writing sub-agents hold it alone, in order; read-only calls share
   * it; and it holds turn 0's checkpoint while that is made alongside the first model step (workspace-gate.ts).
   */
  readonly gate = new WorkspaceGate();
  private stalledReason?: string;
  private statusBeforeStall: ConversationStatus = 'running';
  /** What the refusing provider or its pool said, while the model step waits for it (workflows/provider-wait.ts). */
  private providerWait?: string;
  private statusBeforeProviderWait: ConversationStatus = 'running';

  /** Every step's timeout and retries (step-options.ts). */
  readonly steps: SessionStepOptions;
  /** Temporal's priority and fairness keys of the model step (workflows/model-priority.ts). */
  private readonly stepPriority: ModelStepPriority;
  readonly local: Activities & SessionActivities;
  readonly hosts: HostRouting;
  /** What the session waits for now, for the UI's current details. */
  private waitingFor?: string;
  /** `agentrun pool resume` ends a provider wait early. */
  private readonly providerWake = new ProviderWake();
  /** Budget limits that pause instead of ending (workflows/budget.ts). */
  private readonly budget: BudgetGate;
  /** Placement, the first messages and turn 0's checkpoint (start.ts). */
  private readonly starting: SessionStart;
  /** Setup, verify and the Stop hooks (environment.ts). */
  private readonly environment: Environment;
  /** Approvals and questions (people.ts). */
  private readonly people: People;

  constructor(readonly input: SessionInput) {
    this.config = input.config;
    this.workspace = input.workspace;
    this.st = input.carried ?? {
      status: 'running',
      turn: 0,
      nextSeq: 1,
      usage: ZERO_USAGE,
      costUsd: 0,
      startedAtMs: Date.now(),
      noToolStreak: 0,
      loopNudged: false,
      checkpointTurns: [],
      saves: [],
      pending: [],
      runs: 0,
      rollbacks: [],
      approvals: [],
    };
    this.steps = sessionStepOptions(this.config);
    this.stepPriority = new ModelStepPriority(this.config);
    // Store-only steps: short; an outage that outlasts these retries stalls the conversation (see `durably`).
    this.local = proxyLocalActivities<Activities & SessionActivities>(STEP_OPTIONS.sessionStore);
    this.environment = new Environment(this);
    this.starting = new SessionStart(this, (fromSettings) => this.environment.setup(fromSettings));
    this.people = new People(this, (call, ok, output, status) => this.answer(call, ok, output, status));
    this.hosts = new HostRouting(
      this.st,
      workflowInfo().taskQueue,
      this.config,
      (from, cp, epoch, move) => this.starting.materialize(from, cp, epoch, move),
      (content) => this.st.pending.push({ role: 'user', kind: 'notice', content, turn: this.st.turn }),
      () => this.st.turn,
      // A sub-agent on its parent's host: its config names the parent (kept over continue-as-new, unlike workspaceHost).
      input.workspaceHost !== undefined || input.config.agent?.parentId !== undefined,
      // What setup made (node_modules …) is ignored by git, so no checkpoint holds it: a restored workspace gets setup again.
      { needed: () => this.st.environment?.setup?.ok === true, run: () => this.environment.setupAfterMove() },
    );
    this.budget = new BudgetGate({
      conversationId: this.conversationId,
      config: this.config,
      st: this.st,
      cancelRequested: () => this.cancelRequested,
      setStatus: (status) => this.setStatus(status),
      recordTurn: () => this.recordTurn(),
      durably: (what, step) => this.durably(what, step),
      partialBranch: async () => (this.st.host ? (this.st.branch = await this.durably('the partial branch', () => this.resultBranch(true))) : undefined),
    });
  }

  /**
   * HOST ROUTING: every activity that touches the workspace is built here, on the workspace host's
   * queue. Build it inside the call (`hosts.onHost(() => ...)`): after a move the queue is another.
   * Every scheduled activity carries a `summary`, the line the Temporal UI shows for it (summaries.ts).
   */
  workspaceActivities(options: Omit<ActivityOptions, 'taskQueue'> & { summary: string }): WorkspaceActivities {
    return proxyActivities<WorkspaceActivities>(this.hosts.routed({ ...options, taskQueue: workflowInfo().taskQueue }));
  }

  /** The workspace directory: on its host for repository jobs; and the placement's epoch, which every host step carries. */
  get ref(): WorkspaceRef {
    return { conversationId: this.conversationId, workspace: this.st.host?.workspace ?? this.workspace, ...withEpoch(this.hosts.epoch) };
  }

  // ── messages from outside ──────────────────────────────────────────────────────────────────

  registerHandlers(): void {
    setHandler(stateQuery, () => this.state());
    this.budget.register();
    this.providerWake.register();
    setHandler(hostDrainingSignal, ({ hostId, incarnation }) => this.hosts.drain(hostId, incarnation));
    setHandler(sendMessageSignal, ({ text }) => {
      this.st.pending.push({ role: 'user', kind: 'user', content: text, turn: this.st.turn });
    });
    setHandler(cancelSignal, ({ reason }) => {
      this.cancelRequested = reason || 'cancelled by the operator';
    });
    setHandler(pauseSignal, () => {
      this.paused = true;
    });
    setHandler(resumeSignal, () => {
      this.paused = false;
    });
    this.people.register();
    setHandler(
      rollbackUpdate,
      (req) =>
        // The state to roll back to must exist first (turn 0's may be being made alongside the first model step).
        this.gate.exclusiveAfterTurnZero(() => this.rollback(req)),
      {
        validator: (req) => {
          if (req.commit !== undefined) {
            if (!this.st.saves.includes(req.commit))
              throw new Error(`${req.commit} is not a state saved before a rollback of this conversation; saved: ${this.st.saves.join(', ') || '(none)'}`);
            return;
          }
          const turns = this.st.checkpointTurns;
          const beingMade = req.toTurn === 0 && this.gate.turnZero !== undefined;
          if (req.toTurn === undefined || !(turns.includes(req.toTurn) || beingMade)) {
            throw new Error(`no checkpoint for turn ${req.toTurn}; checkpoints exist for turns ${turns.join(', ') || '(none)'}`);
          }
        },
      },
    );
  }

  state(): SessionState {
    return {
      ...this.st,
      // The query keeps the older shape's fields that clients read.
      checkpoints: this.st.checkpointTurns.map((turn) => ({ turn })),
      conversationId: this.conversationId,
      model: this.config.model,
      workspace: this.workspace,
      reason: this.reason,
      pendingApproval: this.people.pendingApproval,
      pendingQuestion: this.people.pendingQuestion,
      paused: this.paused,
      stalledReason: this.stalledReason,
      providerWait: this.providerWait,
    };
  }

  // ── the conversation ───────────────────────────────────────────────────────────────────────

  async run(): Promise<ConversationResult> {
    try {
      if (!this.input.carried) {
        // A setup that failed ends the conversation before any turn (no model call).
        const early = await this.starting.start();
        if (early) return await this.finish(early);
      }
      this.st.runs += 1;
      let turnsThisRun = 0;
      for (;;) {
        if (this.cancelRequested) return await this.finish({ status: 'cancelled', reason: this.cancelRequested });
        if (this.paused) {
          await this.recordTurn();
          await this.holdWhilePaused();
          continue;
        }
        const over = this.budget.stop(Date.now());
        if (over) {
          // `--on-budget pause`: wait for a raise with the work kept (workflows/budget.ts).
          const ending = this.budget.pauses() ? await this.budget.pause(over) : { status: 'budget_exhausted' as const, reason: over };
          if (ending) return await this.finish(ending);
          continue;
        }
        if (turnsThisRun > 0 && this.continueAsNewDue(turnsThisRun)) {
          await condition(allHandlersFinished);
          const next = { workspace: this.workspace, config: this.config, searchAttributes: this.input.searchAttributes, carried: this.st };
          // Pinned until continue-as-new: the next run starts on the deployment's current version (docs/decisions.md).
          deprecatePatch('continue-as-new-auto-upgrade');
          return await makeContinueAsNewFunc<typeof session>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(next);
        }
        turnsThisRun += 1;
        const ending = await this.turnWithinTimeBudget();
        if (ending) return await this.finish(ending);
      }
    } catch (err) {
      if (isCancellation(err)) {
        this.cancellation = err;
        return await CancellationScope.nonCancellable(() => this.finish({ status: 'cancelled', reason: this.cancelRequested ?? 'the workflow was cancelled' }));
      }
      if (err instanceof ActivityFailure) {
        // A worker's refusal (`--env`, the workspace) is its own one line; other failures name their step.
        const refused = REFUSAL_TYPES.includes(failureType(err) ?? '');
        return await this.finish({ status: 'failed', reason: refused ? rootMessage(err) : `${err.activityType} failed: ${rootMessage(err)}` });
      }
      if (err instanceof HostLost && this.config.agent?.parentId !== undefined) {
        const reason = `${err.message}; a sub-agent stays in its parent's directory, so it ends here and its parent moves the workspace`;
        return { ...(await this.finish({ status: 'failed', reason })), hostLost: { hostId: err.hostId, why: err.why } };
      }
      if (err instanceof HostLost)
        return await this.finish({ status: 'failed', reason: `${err.message}, and the workspace could not be moved to another host` });
      if (err instanceof ApplicationFailure) return await this.finish({ status: 'failed', reason: rootMessage(err) });
      throw err;
    }
  }

  private continueAsNewDue(turnsThisRun: number): boolean {
    const every = this.config.continueAsNewEveryTurns;
    return workflowInfo().continueAsNewSuggested || (every !== undefined && turnsThisRun >= every);
  }

  /** The last turn's record, when no model step follows soon to carry it (a pause, the end). */
  private async recordTurn(): Promise<void> {
    const record = this.st.unrecordedTurn;
    if (!record) return;
    await this.durably('recording the turn', () => this.local.endTurnRecord(record));
    this.st.unrecordedTurn = undefined;
  }

  private async holdWhilePaused(): Promise<void> {
    this.setStatus('paused');
    await condition(() => !this.paused || this.cancelRequested !== undefined);
    this.setStatus('running');
  }

  /** One turn, raced by the wall-time budget: when it runs out, the running step is cancelled and the conversation ends. */
  private async turnWithinTimeBudget(): Promise<Ending | undefined> {
    const left = timeLeftMs(this.config, this.budget.clockStart(Date.now()), Date.now());
    // A budget that pauses lets the turn in flight finish (as a model call in flight finishes past the cost limit) and pauses before the next.
    if (left === undefined || this.budget.pauses()) return this.turn();
    const turnScope = new CancellationScope();
    const timerScope = new CancellationScope();
    let spent = false;
    void timerScope
      .run(() => sleep(left))
      .then(
        () => {
          spent = true;
          turnScope.cancel();
        },
        () => undefined,
      );
    try {
      return await turnScope.run(() => this.turn());
    } catch (err) {
      // Once the budget cancelled the turn, however the running step ended (cancelled, or timed out
      // while being cancelled on a slow worker) is the budget's doing, not a failure.
      if (spent && (isCancellation(err) || err instanceof ActivityFailure)) {
        return {
          status: 'budget_exhausted',
          reason: timeBudgetStop(this.config, this.budget.clockStart(Date.now()), Date.now()) ?? 'time budget spent during a turn',
        };
      }
      throw err;
    } finally {
      timerScope.cancel();
    }
  }

  private async turn(): Promise<Ending | undefined> {
    const st = this.st;
    // A rollback asked for before this turn finishes first, so its notice reaches the model now.
    await this.gate.exclusive(async () => {});
    const appends = this.takePending();
    st.turn += 1;
    const turn = st.turn;
    const seq = st.nextSeq++;
    // The previous turn's record rides on this step: one local activity less per turn.
    const previous = { ...(st.unrecordedTurn ? { endTurn: st.unrecordedTurn } : {}), ...(patched(PROVIDER_WAIT) ? { waitForProvider: true } : {}) };
    const step = (harder?: boolean) =>
      this.durably('the model step', (afterWait) => {
        const extra = { ...previous, ...(harder ? { harder } : {}), ...(afterWait?.attempt ? { priorAttempts: afterWait.attempt } : {}) };
        return st.host
          ? this.modelTurnOnHost(turn, seq, appends, extra)
          : proxyActivities<SessionActivities>(
              this.stepPriority.options({ ...this.steps.model, summary: activitySummary.model(turn, this.config.model, harder) }),
            ).modelTurn({
              ...this.ref,
              turn,
              seq,
              appends,
              ...extra,
            });
      });
    this.showProgress(`the model (${this.config.model})`);
    let answer;
    for (;;) {
      const poolMark = this.budget.poolMark;
      try {
        answer = await step();
        break;
      } catch (err) {
        // A batch's shared budget had no room for the call: wait for a raise, then the same step again.
        const pool = await this.budget.waitForPool(err, poolMark);
        if (pool === 'retry') continue;
        if (pool) return pool;
        // The provider counts differently than we do: prune harder once and try again.
        if (failureType(err) !== ModelErrorType.ContextLengthExceeded) throw err;
        answer = await step(true);
        break;
      }
    }
    this.stepPriority.learn(answer);
    // What changes the workspace waits for its turn-0 checkpoint. Calls that only read (a first look
    // around a large tree) run meanwhile (READS_BEFORE_TURN_ZERO); before that patch the whole rest of the turn waited.
    const readsFirst = this.gate.turnZero !== undefined && patched(READS_BEFORE_TURN_ZERO);
    if (this.gate.turnZero && !readsFirst) await this.gate.turnZero;
    st.unrecordedTurn = undefined;
    st.usage = addUsage(st.usage, answer.usage);
    st.costUsd += answer.costUsd;
    if (!answer.fits) return { status: 'context_overflow', reason: answer.reason ?? 'the conversation no longer fits the context window' };

    let completion: string | undefined;
    if (answer.calls.length === 0) {
      st.noToolStreak += 1;
      const r = noToolReply(this.config, st.noToolStreak);
      if (r.fail) return { status: 'failed', reason: r.fail };
      st.pending.push({ role: 'user', kind: 'reminder', content: r.remind!, turn });
    } else {
      st.noToolStreak = 0;
      for (const group of groupCalls(answer.calls)) {
        if (this.gate.turnZero && !group.every(readsOnly)) await this.gate.turnZero;
        const results = await Promise.all(group.map((c) => this.handleCall(c)));
        if (results.some((r) => r.stop)) {
          if (this.cancelRequested) return { status: 'cancelled', reason: this.cancelRequested };
          return { status: 'failed', reason: 'the question to the user was not answered in time' };
        }
        completion = results.find((r) => r.completion !== undefined)?.completion;
        if (completion !== undefined) break;
      }
      // Stop hooks, verify, the end: not before the checkpoint exists (only reads ran meanwhile).
      if (completion !== undefined && this.gate.turnZero) await this.gate.turnZero;
      if (completion !== undefined && answer.stopHook) {
        deprecatePatch('stop-hook');
        completion = await this.environment.stopHooks(turn, completion);
      }
      const verify = st.environment?.verify;
      if (completion !== undefined && verify !== undefined) {
        deprecatePatch('verify-step');
        completion = await this.environment.verify(turn, completion, verify);
      }
      if (answer.loop && completion === undefined) {
        const r = loopResponse(answer.loop, st.loopNudged);
        if (r.stop) return { status: 'loop_detected', reason: r.stop };
        st.loopNudged = true;
        st.pending.push({ role: 'user', kind: 'notice', content: r.notice!, turn });
      }
    }
    const record = { conversationId: this.conversationId, turn, usage: st.usage, costUsd: st.costUsd, status: st.status };
    // The record rides on the next model step (or a pause, or the end: recordTurn).
    deprecatePatch('turn-record-with-next-step');
    st.unrecordedTurn = record;
    this.updateSearchAttributes();
    if (completion !== undefined && st.host && this.config.repo !== undefined) st.branch = await this.durably('the result branch', () => this.resultBranch());
    if (completion !== undefined && this.environment.verifyFailed) return { status: 'failed', reason: 'verification failed', result: completion };
    if (completion !== undefined) return { status: 'completed', reason: 'the model called attempt_completion', result: completion };
    return undefined;
  }

  /**
   * Repository jobs: the model step reads the workspace (rules, command checks), so it runs on the
   * workspace's host. After a host loss it runs again on the new host, with the restore notice
   * written before the answer so the model reads it now.
   */
  private async modelTurnOnHost(
    turn: number,
    seq: number,
    appends: PendingAppend[],
    extra: Pick<ModelTurnInput, 'harder' | 'endTurn' | 'waitForProvider' | 'priorAttempts'>,
  ) {
    const options = this.stepPriority.options({ ...this.steps.modelOnHost, summary: activitySummary.model(turn, this.config.model, extra.harder) });
    for (;;) {
      try {
        return await this.hosts.onHost(() => this.workspaceActivities(options).modelTurn({ ...this.ref, turn, seq, appends, ...extra }));
      } catch (err) {
        if (!(err instanceof HostLost)) throw err;
        // The first step, while turn 0's checkpoint is made: nothing left the host yet, so nothing
        // can be restored; the checkpoint's step places the workspace again, and this runs there.
        if (this.gate.turnZero) {
          await this.gate.turnZero;
          continue;
        }
        // Kept as it was on the new host: the step runs again there, like a retry.
        if (!(await this.hosts.recover(err))) continue;
        appends = [...appends, ...this.takePending()];
        seq = this.st.nextSeq++;
      }
    }
  }

  /** Repository jobs: commit the workspace onto the result branch (and push it); on the new host after a loss. */
  private resultBranch(partial = false): Promise<BranchResult> {
    const { conversationId, config, st } = this;
    // A budget wait that ran out (--on-budget-timeout partial-branch): the work so far, pushed for repository jobs.
    const branch = partial
      ? `${defaultBranch(conversationId)}-partial`
      : expandBranch(config.branch ?? defaultBranch(conversationId), conversationId, st.startedAtMs);
    return this.hosts.onHostOrMove(() =>
      this.workspaceActivities({ ...STEP_OPTIONS.resultBranch, summary: activitySummary.resultBranch(branch) }).commitResultBranch({
        conversationId,
        workspace: this.ref.workspace,
        task: this.input.task ?? '',
        base: st.host!.base,
        branch,
        push: partial ? config.repo !== undefined : config.push,
        ...(st.environment?.lastVerify
          ? {
              verify: {
                command: st.environment.lastVerify.command,
                passed: st.environment.lastVerify.passed,
                exitCode: st.environment.lastVerify.exitCode,
                attempts: st.environment.verifyRuns,
              },
            }
          : {}),
        ...withEpoch(this.hosts.epoch),
      }),
    );
  }

  /** Messages decided since the last turn get their seqs now, so they never land between a turn's tool results. */
  private takePending(): PendingAppend[] {
    const out = this.st.pending.map((p) => ({ ...p, seq: this.st.nextSeq++ }));
    this.st.pending = [];
    return out;
  }

  /** Answer one tool call. */
  private async handleCall(call: CallSummary): Promise<{ completion?: string; stop?: boolean }> {
    if (call.invalid) {
      await this.answer(call, false, call.invalid, 'error');
      return {};
    }
    if (isControlTool(call)) {
      // A sub-agent, a question, the completion: what the session waits for now.
      this.showProgress(call.preview);
      return CONTROL_TOOLS[call.name]!(this, call);
    }
    const refusal = planModeRefusal(this.config, call);
    if (refusal) {
      await this.answer(call, false, refusal, 'error');
      return {};
    }
    if (needsApproval(this.config, call)) {
      const outcome = await this.people.askApproval(call);
      if (!outcome) return { stop: true };
      if (!outcome.approved) {
        await this.answer(call, false, deniedMessage(call.name, outcome.reason, outcome.by), 'denied');
        return {};
      }
    }
    await this.runTool(call);
    return {};
  }

  private async runTool(call: CallSummary): Promise<void> {
    const resultSeq = this.st.nextSeq++;
    const tool = () => this.workspaceActivities({ ...this.steps.tool(toolTimeoutMs(call)), summary: activitySummary.tool(this.st.turn, call.preview) });
    this.showProgress(call.preview);
    // A sub-agent never moves (its parent does, from the parent's checkpoints): nothing of its own leaves the host.
    const offHost = this.st.host && this.config.agent?.parentId === undefined ? { offHost: true } : {};
    // Reads share the gate (PARALLEL_READS): the read-only calls of one answer overlap; what writes waits for them and they for it.
    const gate = <T>(fn: () => Promise<T>) => (readsOnly(call) && patched(PARALLEL_READS) ? this.gate.shared(fn) : this.gate.exclusive(fn));
    /** Runs again on the host a drain moved the workspace to (DRAIN_LOSES_NOTHING). */
    let movedByDrain = false;
    let r;
    for (;;) {
      try {
        r = await this.durably(`the ${call.name} call`, () =>
          gate(() =>
            this.hosts.onHost(() =>
              tool().toolCall({
                ...this.ref,
                turn: this.st.turn,
                callId: call.id,
                resultSeq,
                // As the call was classified when parsed (summaries from before carry none: the step classifies it).
                classified: call.safety && { target: call.target ?? '', safety: call.safety },
                checkpoint: call.mutating,
                ...offHost,
                ...this.hosts.fencedPush(this.st.turn),
              }),
            ),
          ),
        );
        break;
      } catch (err) {
        if (!(err instanceof HostLost)) throw err;
        // A read while turn 0's checkpoint is made: nothing left the host yet; the checkpoint's step
        // places the workspace again, and the read runs there (READS_BEFORE_TURN_ZERO; none before it).
        if (this.gate.turnZero) {
          await this.gate.turnZero;
          continue;
        }
        let restored: boolean;
        try {
          restored = await this.hosts.recover(err);
        } catch (failed) {
          // Moved, but setup failed on the new host: the conversation ends there, and the call
          // went with the old host all the same. Answered, so the transcript says what became of it.
          if (failed instanceof ApplicationFailure && failed.type === 'SetupFailed') {
            deprecatePatch(ANSWER_CALL_SETUP_FAILED_AFTER_MOVE);
            await this.answerInterrupted(call, resultSeq);
          }
          throw failed;
        }
        // The workspace kept as it was on the new host: the call runs again there; its ledger entry answers a started call as interrupted.
        if (!restored) continue;
        // Drained, not lost: the worker finished what it ran (its checkpoint left the host) before it
        // said so, so this call had not started there, or ran out of the shutdown grace. It runs on
        // the new host under its id: the ledger runs one that never started; one cut off replays its
        // recorded end (answered as interrupted below), or is recovered as after a crash.
        if (err.drained && patched(DRAIN_LOSES_NOTHING)) {
          movedByDrain = true;
          continue;
        }
        await this.answerInterrupted(call, resultSeq);
        return;
      }
    }
    // Done on the drained host, its checkpoint cut off by the end of the grace: its effect did not move.
    if (movedByDrain && r.replayed && call.mutating) await this.answerInterrupted(call, resultSeq, 'cutOff');
    if (r.checkpoint && !this.st.checkpointTurns.includes(r.checkpoint.turn)) this.st.checkpointTurns.push(r.checkpoint.turn);
    if (r.checkpoint && this.st.host) this.st.offHost = { turn: r.checkpoint.turn, commit: r.checkpoint.commit };
  }

  /**
   * Whatever the call did went with the host: it is answered as interrupted, never run again.
   * `cutOff`: its host was drained, but the call outlasted the shutdown grace.
   */
  private async answerInterrupted(call: CallSummary, resultSeq: number, cutOff?: 'cutOff'): Promise<void> {
    const output = cutOff
      ? `This ${call.name} call was interrupted: its worker was restarted and the call outlasted the shutdown grace (see the notice that follows). Its effect, if any, is lost.`
      : `This ${call.name} call was interrupted: the workspace host was lost (see the notice that follows). Its effect, if any, is lost.`;
    await this.durably('answering the interrupted call', () =>
      this.local.recordToolResult({
        conversationId: this.conversationId,
        turn: this.st.turn,
        callId: call.id,
        resultSeq,
        override: { ok: false, output, status: 'interrupted' },
      }),
    );
  }

  // ── ControlHost: what control tools may do ──────────────────────────────────────────────────

  get todos(): string | undefined {
    return this.st.todos;
  }
  set todos(value: string | undefined) {
    this.st.todos = value;
  }

  async answer(call: CallSummary, ok: boolean, output: string, status?: IndexEntry['status'], subagent?: SubagentOutcome): Promise<void> {
    const resultSeq = this.st.nextSeq++;
    const override = { ok, output, status, ...(subagent ? { subagent } : {}) };
    await this.durably('recording a tool result', () =>
      this.local.recordToolResult({ conversationId: this.conversationId, turn: this.st.turn, callId: call.id, resultSeq, override }),
    );
  }

  delegate(call: CallSummary): Promise<ControlOutcome> {
    // A workspace on a host delegates: its child starts on that host.
    deprecatePatch('delegate-on-parent-host');
    const host = this.st.host;
    // On a host, the agent file is read there (not on the shared queue), and a child that lost the
    // host makes the parent move at once.
    if (host !== undefined) deprecatePatch('delegate-reads-on-host');
    const self = this;
    return delegateCall(
      {
        conversationId: this.conversationId,
        config: this.config,
        // Read when used: a move while the agent is read, or while a writer waits for the lock, changes them.
        get workspace() {
          return self.ref.workspace;
        },
        get epoch() {
          return self.hosts.epoch;
        },
        searchAttributes: this.input.searchAttributes,
        repositoryJob: this.config.repo !== undefined,
        get workspaceHost() {
          const now = self.st.host;
          return now
            ? { hostId: now.hostId, workspace: now.workspace, base: now.base, ...(now.incarnation ? { incarnation: now.incarnation } : {}) }
            : undefined;
        },
        ...(host !== undefined
          ? {
              onHost: <T>(fn: (options: ActivityOptions) => Promise<T>) => this.hosts.onHostOrMove(() => fn(this.hosts.routed(STEP_OPTIONS.delegateAgent))),
              hostLost: async (lost: { hostId: string; why: string }) => {
                await this.hosts.recover(new HostLost(lost.hostId, lost.why));
              },
            }
          : {}),
        st: this.st,
        cancelRequested: () => this.cancelRequested,
        durably: (what, step) => this.durably(what, step),
        exclusive: (fn) => this.gate.exclusive(fn),
        answer: (c, ok, output, status, subagent) => this.answer(c, ok, output, status, subagent),
      },
      call,
    );
  }

  async runStoreTool(call: CallSummary): Promise<void> {
    const resultSeq = this.st.nextSeq++;
    await this.durably(`the ${call.name} call`, () =>
      this.local.recordToolResult({ conversationId: this.conversationId, turn: this.st.turn, callId: call.id, resultSeq }),
    );
  }

  ask(call: CallSummary, question: string): Promise<string | undefined> {
    return this.people.ask(call, question);
  }

  // ── rollback ───────────────────────────────────────────────────────────────────────────────

  /** Runs under the workspace lock: after any running tool call, before the next, in every state. */
  private async rollback(req: RollbackRequest): Promise<RollbackResult> {
    const st = this.st;
    st.rollbacks.push({ ...req, atTurn: st.turn });
    const act = () =>
      this.workspaceActivities({
        ...this.steps.rollback,
        summary: activitySummary.rollback(req.commit ? req.commit.slice(0, 12) : `turn ${req.toTurn}`),
      });
    let r;
    try {
      const restore = () => act().rollbackWorkspace({ ...this.ref, toTurn: req.toTurn ?? -1, commit: req.commit });
      // A lost host: move the workspace first (its notice goes to the model too), then roll back there.
      deprecatePatch('rollback-moves');
      r = await this.hosts.onHostOrMove(restore);
    } catch (err) {
      throw ApplicationFailure.nonRetryable(`rollback failed: ${rootMessage(err as Error)}`, 'RollbackFailed');
    }
    if (r.saved) st.saves.push(r.saved);
    // Repository jobs: that turn's checkpoint is already off the host; a later move starts from it.
    if (st.host && req.toTurn !== undefined && !req.commit) st.offHost = { turn: req.toTurn, commit: r.commit };
    const what = req.commit ? `the state saved at ${req.commit.slice(0, 12)}` : `its state after turn ${req.toTurn}`;
    st.pending.push({
      role: 'user',
      kind: 'notice',
      turn: st.turn,
      content: `[the operator rolled the workspace back to ${what}; ${r.restored.length} files restored, ${r.removed.length} removed. Re-read files before editing them.]`,
    });
    return { restored: r.restored, removed: r.removed, commit: r.commit, saved: r.saved, notRestored: r.notRestored };
  }

  /**
   * Run an activity step; while it fails with an infrastructure fault (database, git, disk),
   * the conversation is `stalled` with the reason and the step is retried (capped backoff,
   * without limit); when it succeeds the previous status comes back. Other failures go on up.
   */
  async durably<T>(what: string, step: (afterWait?: ProviderWait) => Promise<T>): Promise<T> {
    let lastWait: ProviderWait | undefined;
    for (let attempt = 0, waits = 0; ; attempt++) {
      try {
        const r = await step(lastWait);
        if (this.stalledReason !== undefined) {
          this.stalledReason = undefined;
          this.setStatus(this.statusBeforeStall);
        }
        // Only the step that waited ends the wait: a step running beside it (turn 0's checkpoint) does not.
        if (lastWait !== undefined && this.providerWait !== undefined) {
          this.providerWait = undefined;
          if (this.st.status === 'waiting_for_provider') this.setStatus(this.statusBeforeProviderWait);
        }
        return r;
      } catch (err) {
        // The provider refused for now: wait, never fail (only model steps scheduled under PROVIDER_WAIT end so).
        const wait = providerWaitOf(err);
        if (wait) {
          if (this.providerWait === undefined) this.statusBeforeProviderWait = this.st.status;
          this.providerWait = wait.message;
          if (this.st.status !== 'waiting_for_provider') this.setStatus('waiting_for_provider');
          else this.showProgress();
          lastWait = wait;
          await this.providerWake.sleep(providerWaitMs(wait, waits++));
          continue;
        }
        if (failureType(err) !== INFRASTRUCTURE_ERROR) throw err;
        if (this.stalledReason === undefined) this.statusBeforeStall = this.st.status;
        this.stalledReason = `${what}: ${rootMessage(err as Error)}`;
        if (this.st.status !== 'stalled') this.setStatus('stalled');
        await sleep(Math.min(60_000, 2_000 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  // ── status and the end ─────────────────────────────────────────────────────────────────────

  setStatus(status: ConversationStatus): void {
    this.st.status = status;
    this.updateSearchAttributes();
  }

  /** The UI's current details (turn, status, cost so far, what the session waits for); `waitingFor` when it changes. */
  private showProgress(waitingFor?: string): void {
    if (waitingFor !== undefined) this.waitingFor = waitingFor;
    const st = this.st;
    const waiting =
      st.status === 'waiting'
        ? this.people.pendingApproval
          ? `approval of ${this.people.pendingApproval.preview}`
          : this.people.pendingQuestion
            ? 'an answer to its question'
            : this.waitingFor
        : st.status === 'paused'
          ? 'resume'
          : st.status === 'awaiting_budget'
            ? this.budget.waitingFor
            : st.status === 'stalled'
              ? this.stalledReason
              : st.status === 'waiting_for_provider'
                ? `the provider: ${this.providerWait}`
                : st.status === 'running'
                  ? this.waitingFor
                  : undefined;
    setCurrentDetails(currentDetails({ turn: st.turn, status: st.status, costUsd: st.costUsd, totalTokens: st.usage.totalTokens, waitingFor: waiting }));
  }

  updateSearchAttributes(): void {
    this.showProgress();
    if (!this.input.searchAttributes) return;
    upsertSearchAttributes([
      { key: SA_STATUS, value: this.st.status },
      { key: SA_WORKSPACE, value: this.workspace },
      { key: SA_MODEL, value: this.config.model },
      { key: SA_TURNS, value: this.st.turn },
      { key: SA_COST, value: this.st.costUsd },
      ...(this.config.scheduleId ? [{ key: SA_SCHEDULE, value: this.config.scheduleId }] : []),
      ...(this.config.tenant ? [{ key: SA_TENANT, value: this.config.tenant }] : []),
    ]);
  }

  private async finish(end: Ending): Promise<ConversationResult> {
    this.reason = end.reason;
    this.people.clear();
    this.setStatus(end.status);
    const { st } = this;
    const outcome = { status: end.status, reason: end.reason, turns: st.turn, usage: st.usage, costUsd: st.costUsd };
    // The turn-0 checkpoint still being made (the first step failed, or was cancelled): finished or failed first.
    if (this.gate.turnZero) await this.gate.turnZero.catch(() => undefined);
    const finished = await CancellationScope.nonCancellable(async () => {
      await this.recordTurn();
      return this.durably('recording the end', () => this.local.finishSession({ conversationId: this.conversationId, ...outcome, result: end.result }));
    });
    // Rollbacks asked for during the last step still run (and are answered) before the end,
    // and their notices are kept in the transcript.
    do {
      await condition(allHandlersFinished);
      for (const p of this.takePending())
        await this.durably('writing a notice', () => this.local.appendMessage({ conversationId: this.conversationId, ...p, model: this.config.model }));
    } while (!allHandlersFinished());
    return {
      conversationId: this.conversationId,
      ...outcome,
      result: end.result ?? finished.summary,
      ...(st.branch ? { branch: st.branch } : {}),
      ...environmentResult(st.environment),
    };
  }
}

export async function session(input: SessionInput): Promise<ConversationResult> {
  const s = new Session(input);
  s.registerHandlers();
  return endWorkflow(await s.run(), s.cancellation);
}
