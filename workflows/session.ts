// The `session` workflow: one conversation, its state in a class with named steps (the shape
// of Temporal's safe-message-handlers sample). Order only; policy is in policy.ts, control
// tools in control-tools.ts, and everything that reads or writes content runs in activities.
//
// A turn costs two task-queue activities: `modelTurn` (pending messages, context, the answer,
// parsing) and `toolCall` per call (with the turn's checkpoint); store-only steps are local
// activities. It replaced the `conversation` workflow type, now retired: a worker refuses to start
// while runs of that type are open (src/retired.ts, docs/decisions.md).
import {
  ActivityCancellationType,
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
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
import type { Activities } from '../activities/types.js';
import type { EndTurnRecordInput, ModelTurnInput, PendingAppend, SessionActivities } from '../activities/session.js';
import type { EnvironmentActivities, VerifyOutcome } from '../activities/environment.js';
import type { RunConfig } from '../src/config.js';
import { MODEL_STEP_ATTEMPTS, ModelErrorType, NON_RETRYABLE_MODEL_ERRORS } from '../src/model/error-types.js';
import type { CallSummary } from '../src/parser/calls.js';
import { SA_COST, SA_MODEL, SA_SCHEDULE, SA_TENANT, SA_STATUS, SA_TURNS, SA_WORKSPACE } from '../src/search-attributes.js';
import { addUsage, ZERO_USAGE, type ConversationStatus, type IndexEntry, type MessageKind, type Role, type SubagentOutcome } from '../src/types.js';
import {
  answerUpdate,
  INFRASTRUCTURE_ERROR,
  REFUSAL_TYPES,
  cancelSignal,
  decideApprovalUpdate,
  hostDrainingSignal,
  pauseSignal,
  resumeSignal,
  rollbackUpdate,
  sendMessageSignal,
  stateQuery,
  type ApprovalDecision,
  type ApprovalOutcome,
  type ConversationResult,
  type ForkOrigin,
  type ConversationState,
  type PendingApproval,
  type PendingQuestion,
  type RollbackRequest,
  type RollbackResult,
} from './api.js';
import { endWorkflow } from './outcome.js';
import { ModelStepPriority } from './model-priority.js';
import type { BranchResult } from '../src/workspace/result-branch.js';
import { defaultBranch, expandBranch } from '../src/workspace/routing.js';
import type { WorkspaceOrigin } from '../src/workspace/identity.js';
import { DRAIN_LOSES_NOTHING, HostLost, HostRouting, type HostCarried, type Placement } from './host.js';
import { WorkspaceGate } from './workspace-gate.js';
import { CONTROL_TOOLS, isControlTool, type ControlHost, type ControlOutcome } from './control-tools.js';
import { delegateCall, type SubagentState } from './delegate.js';
import { BudgetGate, type BudgetCarried } from './budget.js';
import { activitySummary, currentDetails } from './summaries.js';
import { failureType, rootMessage } from './failures.js';
import { PROVIDER_WAIT, providerWaitMs, providerWaitOf, type ProviderWait } from './provider-wait.js';
import {
  approvalTimeoutReason,
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

export interface SessionInput {
  /** The task: sent once, at the start (not carried over continue-as-new: it is in the store). */
  task?: string;
  workspace: string;
  config: RunConfig;
  /** Upsert typed search attributes (only when they are registered on the namespace). */
  searchAttributes?: boolean;
  carried?: SessionCarried;
  /** Start from another conversation's first `atTurn` turns and that turn's checkpoint (repository jobs). */
  fork?: ForkOrigin;
  /** A sub-agent on its parent's workspace: already placed on the parent's host. */
  workspaceHost?: Placement;
  /** A local workspace: the machine and directory it was started on (first placement only; not carried over continue-as-new). */
  origin?: WorkspaceOrigin;
}

/** What a later run needs after continue-as-new: bounded, no transcript, no per-message index. */
export interface SessionCarried
  extends
    HostCarried,
    SubagentState,
    BudgetCarried,
    Pick<ConversationState, 'status' | 'turn' | 'nextSeq' | 'usage' | 'costUsd' | 'startedAtMs' | 'noToolStreak' | 'loopNudged' | 'todos' | 'runs'> {
  /** Turns that have a checkpoint (the commits are in the store). */
  checkpointTurns: number[];
  /** Workspace states saved before rollbacks: `rollback --to <commit>` undoes that rollback. */
  saves: string[];
  /** Messages for the model, written with the next turn. */
  pending: { role: Role; kind: MessageKind; content: string; turn: number }[];
  rollbacks: { toTurn?: number; commit?: string; atTurn: number }[];
  /** The last approval decisions (who, when). */
  approvals: ApprovalOutcome[];
  // HOST ROUTING: `host`, `workspaceQueue`, `offHost`, `failovers` (workflows/host.ts).
  /** Repository jobs: the result branch, once committed. */
  branch?: BranchResult;
  forkedFrom?: ForkOrigin;
  /** How often Stop hooks kept the conversation from ending. */
  stopBlocks?: number;
  /** The last turn's record (store row, `turn_completed`), written by the next model step, or before a pause or the end. */
  unrecordedTurn?: EndTurnRecordInput;
  /** The repository's environment: how setup went, the verify command in force and its runs (setup's log is in the stream). */
  environment?: SessionEnvironment;
}

export interface SessionEnvironment {
  setup?: { ok: boolean; ms: number; cached: boolean; exitCode?: number | null; reason?: string; tail?: string };
  verify?: string;
  /** Verify runs at attempt_completion so far; the last one's outcome (its tail bounded). */
  verifyRuns: number;
  lastVerify?: VerifyOutcome;
  baseline?: VerifyOutcome;
}

/** The `state` query's answer: the public state (api.ts), and the carried bookkeeping with it. */
export type SessionState = SessionCarried & ConversationState;

/** maximumAttempts 0: without limit. */
const retry = (maximumAttempts: number, maximumInterval = '30s') => ({
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval,
  ...(maximumAttempts > 0 ? { maximumAttempts } : {}),
});

/**
 * The first placement of a local workspace started with its origin: any worker may take the task, and
 * those elsewhere refuse it, so it is offered again soon and without an attempt limit, for up to ten minutes.
 */
const PLACE_BY_ORIGIN = { scheduleToCloseTimeout: '10m', retry: { initialInterval: '200ms', backoffCoefficient: 1.5, maximumInterval: '5s' } };

/** The model step's retry policy; its attempts also bound the summary's retries (MODEL_STEP_ATTEMPTS). */
const MODEL_STEP_RETRY = { ...retry(MODEL_STEP_ATTEMPTS, '60s'), nonRetryableErrorTypes: NON_RETRYABLE_MODEL_ERRORS };

type Ending = { status: ConversationStatus; reason: string; result?: string };

/** Stop hooks may keep a conversation from ending this many times; after that it ends when the model finishes. */
const MAX_STOP_BLOCKS = 3;

/** The patch under which a call lost with its host is answered as interrupted also when setup then fails on the new host. */
const ANSWER_CALL_SETUP_FAILED_AFTER_MOVE = 'answer-call-setup-failed-after-move';

/**
 * The patch under which a local workspace's turn-0 checkpoint (and its bundle base, stored off the
 * host) is made alongside the first model step instead of before it: nothing
 * that can change the workspace runs until it is done.
 */
const TURN_ZERO_ALONGSIDE = 'turn-zero-alongside-first-step';

/**
 * The patch under which the first turn's read-only calls run while that checkpoint is being made:
 * only what may change the workspace waits for it (the first tool call on a 1 GB tree is a read
 * that no longer waits ~29 s; bench/first-turn.ts).
 */
const READS_BEFORE_TURN_ZERO = 'reads-before-turn-zero';

/** The patch under which read-only calls share the workspace gate instead of taking it one at a time: the reads of one answer overlap. */
const PARALLEL_READS = 'parallel-reads';

type PlaceFn = (epoch: number | undefined) => Promise<Placement | null>;

export class Session implements ControlHost {
  readonly conversationId = workflowInfo().workflowId;
  private readonly config: RunConfig;
  private readonly workspace: string;
  private readonly st: SessionCarried;
  private reason?: string;
  private cancelRequested?: string;
  /** The cancellation Temporal delivered (cancel --now, the UI), rethrown at the end so the workflow ends CANCELED. */
  cancellation?: unknown;
  private paused = false;
  private pendingApproval?: PendingApproval;
  private decision?: ApprovalDecision & { atMs: number };
  private pendingQuestion?: PendingQuestion;
  private answerText?: string;
  /** Writes, rollbacks, verify and writing sub-agents hold it alone, in order; read-only calls share it (workspace-gate.ts). */
  private readonly workspaceLock = new WorkspaceGate();
  private stalledReason?: string;
  private statusBeforeStall: ConversationStatus = 'running';
  /** What the refusing provider or its pool said, while the model step waits for it (workflows/provider-wait.ts). */
  private providerWait?: string;
  private statusBeforeProviderWait: ConversationStatus = 'running';

  private readonly modelOptions: ActivityOptions;
  /** Temporal's priority and fairness keys of the model step (workflows/model-priority.ts). */
  private readonly stepPriority: ModelStepPriority;
  private readonly local: Activities & SessionActivities;
  /** Set when the last verify run failed and no attempt is left: the conversation ends `failed`. */
  private verifyFailed = false;
  /** Clone, re-materialise and fork copy: on the shared queue (whoever takes a clone becomes the host), heartbeating. */
  private readonly placingOptions: ActivityOptions;
  private readonly hosts: HostRouting;
  /** What the session waits for now, for the UI's current details. */
  private waitingFor?: string;
  /**
   * The turn-0 checkpoint while it is being made alongside the first model step (TURN_ZERO_ALONGSIDE);
   * cleared once made, kept when it failed (whoever waits for it next fails with it). Every step that
   * could change the workspace (tool calls, control tools, hooks, setup, verify, rollback, a move)
   * waits for it first.
   */
  private turnZero?: Promise<void>;
  /** Budget limits that pause instead of ending (workflows/budget.ts). */
  private readonly budget: BudgetGate;

  constructor(private readonly input: SessionInput) {
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
    const heartbeatTimeout = this.config.heartbeatTimeoutMs;
    this.stepPriority = new ModelStepPriority(this.config);
    this.modelOptions = {
      startToCloseTimeout: '20m',
      heartbeatTimeout,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: MODEL_STEP_RETRY,
    };
    // Store-only steps: short; an outage that outlasts these retries stalls the conversation (see `durably`).
    this.local = proxyLocalActivities<Activities & SessionActivities>({
      startToCloseTimeout: '30s',
      retry: { ...retry(5, '10s'), nonRetryableErrorTypes: ['UnknownConversation'] },
    });
    this.placingOptions = { startToCloseTimeout: '5m', heartbeatTimeout: Math.max(heartbeatTimeout, 10_000), retry: retry(5) };
    this.hosts = new HostRouting(
      this.st,
      workflowInfo().taskQueue,
      this.config,
      (from, cp, epoch, move) =>
        this.config.repo !== undefined
          ? this.placing(activitySummary.restore(cp.turn)).materializeWorkspace({
              conversationId: this.conversationId,
              repo: this.config.repo,
              base: from.base,
              turn: cp.turn,
              commit: cp.commit,
              ...withEpoch(epoch),
              ...movedFrom(from.hostId, move),
            })
          : this.placing(activitySummary.restore(cp.turn)).materializeWorkspace({
              conversationId: this.conversationId,
              workspace: from.workspace,
              turn: cp.turn,
              commit: cp.commit,
              ...withEpoch(epoch),
              ...movedFrom(from.hostId, move),
            }),
      (content) => this.st.pending.push({ role: 'user', kind: 'notice', content, turn: this.st.turn }),
      () => this.st.turn,
      // A sub-agent on its parent's host: its config names the parent (kept over continue-as-new, unlike workspaceHost).
      input.workspaceHost !== undefined || input.config.agent?.parentId !== undefined,
      // What setup made (node_modules …) is ignored by git, so no checkpoint holds it: a restored workspace gets setup again.
      { needed: () => this.st.environment?.setup?.ok === true, run: () => this.setupAfterMove() },
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
  private workspaceActivities(options: Omit<ActivityOptions, 'taskQueue'> & { summary: string }): Activities & SessionActivities & EnvironmentActivities {
    return proxyActivities<Activities & SessionActivities & EnvironmentActivities>(this.hosts.routed({ ...options, taskQueue: workflowInfo().taskQueue }));
  }

  private placing(summary: string): Activities {
    return proxyActivities<Activities>({ ...this.placingOptions, summary });
  }

  /** The workspace directory: on its host for repository jobs; and the placement's epoch, which every host step carries. */
  private get ref() {
    return { conversationId: this.conversationId, workspace: this.st.host?.workspace ?? this.workspace, ...withEpoch(this.hosts.epoch) };
  }

  // ── messages from outside ──────────────────────────────────────────────────────────────────

  registerHandlers(): void {
    setHandler(stateQuery, () => this.state());
    this.budget.register();
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
    setHandler(
      decideApprovalUpdate,
      async (d) => {
        const callId = this.pendingApproval!.callId;
        const atMs = Date.now();
        this.decision = { ...d, atMs };
        return { callId, approved: d.approved, by: d.by, atMs };
      },
      {
        validator: (d) => {
          if (!this.pendingApproval) throw new Error('no tool call is waiting for approval');
          if (d.callId && d.callId !== this.pendingApproval.callId) throw new Error(`call ${d.callId} is not the one waiting (${this.pendingApproval.callId})`);
          // What was approved must be what was shown: the arguments' hash from `pending` / the page.
          const shown = this.pendingApproval.argsHash;
          if (d.argsHash !== undefined && shown !== undefined && d.argsHash !== shown)
            throw new Error(
              `the arguments of call ${this.pendingApproval.callId} changed since you looked (you saw ${d.argsHash}, it is ${shown}); run agentrun pending again`,
            );
          // Until the workflow takes the decision, a second one (another operator, a retry) must not replace it.
          if (this.decision !== undefined) throw new Error(`call ${this.pendingApproval.callId} is already decided`);
        },
      },
    );
    setHandler(
      answerUpdate,
      async ({ text }) => {
        const callId = this.pendingQuestion!.callId;
        this.answerText = text;
        return { callId };
      },
      {
        validator: ({ text }) => {
          if (!this.pendingQuestion) throw new Error('no question is waiting for an answer');
          if (!text.trim()) throw new Error('the answer is empty');
        },
      },
    );
    setHandler(
      rollbackUpdate,
      (req) =>
        // The state to roll back to must exist first (turn 0's may be being made alongside the first model step).
        this.workspaceLock.exclusive(() => (this.turnZero ? this.turnZero.then(() => this.rollback(req)) : this.rollback(req))),
      {
        validator: (req) => {
          if (req.commit !== undefined) {
            if (!this.st.saves.includes(req.commit))
              throw new Error(`${req.commit} is not a state saved before a rollback of this conversation; saved: ${this.st.saves.join(', ') || '(none)'}`);
            return;
          }
          const turns = this.st.checkpointTurns;
          const beingMade = req.toTurn === 0 && this.turnZero !== undefined;
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
      pendingApproval: this.pendingApproval,
      pendingQuestion: this.pendingQuestion,
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
        const early = await this.start();
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
          // Pinned until continue-as-new: the next run starts on the deployment's current version
          // (docs/decisions.md). Runs recorded before this replay the plain command.
          if (patched('continue-as-new-auto-upgrade')) return await makeContinueAsNewFunc<typeof session>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(next);
          return await continueAsNew<typeof session>(next);
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

  private async start(): Promise<Ending | undefined> {
    if (this.input.fork) {
      await this.startFork(this.input.fork);
      // A fork's workspace comes from a checkpoint, without what setup made (ignored files): setup again (or the cache).
      return this.environmentStep(true);
    }
    if (this.input.workspaceHost) return this.startOnParentHost(this.input.workspaceHost);
    const placeLocal: PlaceFn = (epoch) =>
      // Started with its origin: only a host on that machine that sees that directory takes it, so
      // the placement is retried (briefly, without limit) until one of the hosts there does.
      (this.input.origin
        ? proxyActivities<Activities>({ ...this.placingOptions, ...PLACE_BY_ORIGIN, summary: activitySummary.setup(`place ${this.workspace}`) })
        : this.placing(activitySummary.setup(`place ${this.workspace}`))
      ).placeLocalWorkspace({
        conversationId: this.conversationId,
        workspace: this.workspace,
        ...withEpoch(epoch),
        ...(this.input.origin ? { origin: this.input.origin } : {}),
      });
    // Local workspaces too have a host, and checkpoints (bundles in the store) another host can rebuild them from.
    const local = this.config.repo === undefined && patched('local-workspace-host');
    const alongside = local && patched(TURN_ZERO_ALONGSIDE);
    const init =
      this.config.repo !== undefined
        ? await this.placeAndInit((epoch) =>
            this.placing(activitySummary.setup(`clone ${this.config.repo}`)).prepareWorkspace({
              conversationId: this.conversationId,
              task: this.input.task ?? '',
              config: this.config,
              ...withEpoch(epoch),
            }),
          )
        : local
          ? await this.placeAndInit(placeLocal, alongside)
          : await this.initWorkspace();
    if (init.checkpoint) this.st.checkpointTurns.push(0);
    // Placed on a host, the checkpoint not made yet: it is made now, while the first model step runs.
    else if (alongside) this.makeTurnZeroAlongside(placeLocal);
    this.updateSearchAttributes();
    return this.environmentStep('environment' in init && init.environment === true);
  }

  /**
   * The repository's environment, before turn 1: setup (or its outputs from the cache) on the
   * workspace's host, and the verify command in force. Only for conversations that name one (flags)
   * or whose settings do; a worker lost during setup means setup runs again (on the new host after a move).
   */
  private async environmentStep(fromSettings: boolean): Promise<Ending | undefined> {
    const { config } = this;
    if (!(config.setup?.length || config.verify || fromSettings)) return undefined;
    if (!patched('environment-setup')) return undefined;
    // Setup changes the workspace: not before its turn-0 checkpoint exists.
    if (this.turnZero) await this.turnZero;
    const baseline = config.verifyBaseline ? { baseline: true } : {};
    const options = this.setupOptions(config.verifyBaseline, oneLineCommands(config.setup) ?? 'the repository settings');
    const r = await this.durably('the setup', () =>
      this.hosts.onHostOrMove(() => this.workspaceActivities(options).setupWorkspace({ ...this.ref, ...baseline })),
    );
    this.st.environment = {
      verifyRuns: 0,
      ...(r.setup
        ? { setup: { ok: r.setup.ok, ms: r.setup.ms, cached: r.setup.cached, exitCode: r.setup.exitCode, reason: r.setup.reason, tail: r.setup.tail } }
        : {}),
      ...(r.verify ? { verify: r.verify } : {}),
      ...(r.baseline ? { baseline: { ...r.baseline, tail: r.baseline.tail.slice(-1000) } } : {}),
    };
    if (r.refused) return { status: 'failed', reason: r.refused };
    if (r.setup && !r.setup.ok) return { status: 'failed', reason: r.setup.reason ?? `setup failed (exit ${r.setup.exitCode})` };
    return undefined;
  }

  private setupOptions(baseline: boolean, what: string) {
    return {
      // Its own limit, plus the cache's copies and the baseline verify.
      startToCloseTimeout: (this.config.setupTimeoutMs ?? 20 * 60_000) + (baseline ? 35 : 5) * 60_000,
      heartbeatTimeout: this.config.heartbeatTimeoutMs,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: retry(3),
      summary: activitySummary.setup(what),
    };
  }

  /**
   * Setup again on the host a move restored the workspace on, before any step there (HostRouting
   * calls it, on that host): the checkpoint held the repository's files, not what setup made. The
   * host's cache or the commands, with the same network and time limit; a failure ends the conversation.
   */
  private async setupAfterMove(): Promise<void> {
    const afterMove = this.st.failovers?.length ?? 1;
    const options = this.setupOptions(false, `again after move ${afterMove}: ${oneLineCommands(this.config.setup) ?? 'the repository settings'}`);
    const r = await this.durably('the setup after the move', () => this.workspaceActivities(options).setupWorkspace({ ...this.ref, afterMove }));
    const failed = r.refused ?? (r.setup && !r.setup.ok ? (r.setup.reason ?? `setup failed (exit ${r.setup.exitCode})`) : undefined);
    if (failed === undefined) return;
    if (r.setup) {
      const { ok, ms, cached, exitCode, reason, tail } = r.setup;
      this.st.environment!.setup = { ok, ms, cached, exitCode, reason, tail };
    }
    throw ApplicationFailure.nonRetryable(`${failed}, on host ${this.st.host?.hostId ?? '?'} after the workspace moved there`, 'SetupFailed');
  }

  /**
   * The repository's check, run when the model calls attempt_completion. A failure goes back to the
   * model (its output's tail, like a Stop hook's reason) until `verifyAttempts` runs are spent; then
   * the conversation ends `failed` (its branch is still committed, named unverified). The completion
   * when the model may finish, else undefined.
   */
  private async verifyStep(turn: number, completion: string, command: string): Promise<string | undefined> {
    const env = this.st.environment!;
    const max = this.config.verifyAttempts ?? 3;
    env.verifyRuns += 1;
    const attempt = env.verifyRuns;
    const options = {
      startToCloseTimeout: '35m',
      heartbeatTimeout: this.config.heartbeatTimeoutMs,
      retry: retry(3),
      summary: activitySummary.verify(command, attempt),
    };
    const v = await this.durably('verify', () =>
      this.workspaceLock.exclusive(() => this.hosts.onHostOrMove(() => this.workspaceActivities(options).verifyWorkspace({ ...this.ref, command, attempt }))),
    );
    env.lastVerify = { ...v, tail: v.tail.slice(-2000) };
    if (v.passed) return completion;
    const last = attempt >= max;
    this.st.pending.push({
      role: 'user',
      kind: 'notice',
      turn,
      content:
        `[The repository's check \`${command}\` failed (exit ${v.exitCode ?? 'none'}; run ${attempt} of at most ${max}). The end of its output:]\n${v.tail.slice(-3000)}\n` +
        (last ? '[No verify run is left: the conversation ends as failed.]' : 'Fix what it reports, then call attempt_completion again.'),
    });
    if (!last) return undefined;
    this.verifyFailed = true;
    return completion;
  }

  /** A sub-agent works in its parent's workspace, on the parent's host; if that host is lost, the child fails (the parent moves). */
  private async startOnParentHost(host: Placement): Promise<undefined> {
    // The child's own conversation: its first placement, nothing earlier to fence off.
    this.hosts.place(host, this.hosts.nextEpoch());
    const init = await this.hosts.onHost(() => this.initWorkspace());
    if (init.checkpoint) this.st.checkpointTurns.push(0);
    this.updateSearchAttributes();
    return undefined;
  }

  /** `deferCheckpoint`: without the turn-0 checkpoint (made by makeTurnZeroAlongside). */
  private initWorkspace(deferCheckpoint = false) {
    const act = this.workspaceActivities({
      startToCloseTimeout: '5m',
      heartbeatTimeout: this.config.heartbeatTimeoutMs,
      retry: retry(10),
      summary: activitySummary.setup(deferCheckpoint ? 'workspace and first messages' : 'workspace, checkpoint and first messages'),
    });
    return this.durably('starting the conversation', () =>
      act.initConversation({ ...this.ref, config: this.config, task: this.input.task ?? '', ...(deferCheckpoint ? { deferCheckpoint } : {}) }),
    );
  }

  /**
   * Whichever worker takes the clone (or the local placement) becomes the workspace host; turn 0's
   * checkpoint leaves it at once. `deferCheckpoint`: the checkpoint is not made here
   * (makeTurnZeroAlongside makes it); a worker that made it all the same (older code) is kept to it.
   */
  private async placeAndInit(place: PlaceFn, deferCheckpoint = false) {
    for (;;) {
      const epoch = this.hosts.nextEpoch();
      const placed = await place(epoch);
      // A local workspace taken by a worker without a host queue: the shared queue, as before hosts.
      if (!placed) return this.initWorkspace();
      this.hosts.place(placed, epoch);
      try {
        return await this.hosts.onHost(async () => {
          const init = await this.initWorkspace(deferCheckpoint);
          if (init.checkpoint) await this.saveOffHost(0, init.checkpoint.commit);
          return init;
        });
      } catch (err) {
        // The new host died before the job started there: clone again elsewhere.
        if (!(err instanceof HostLost)) throw err;
      }
    }
  }

  /**
   * Start the turn-0 checkpoint of a placed local workspace and its off-host copy (the bundle base,
   * for a large directory most of the first turn's work), without waiting: the first model step
   * runs meanwhile. Whoever could change the workspace waits for `turnZero` first.
   */
  private makeTurnZeroAlongside(place: PlaceFn): void {
    const made: Promise<void> = this.turnZeroCheckpoint(place).then(() => {
      if (this.turnZero === made) this.turnZero = undefined;
    });
    // A failure surfaces in whichever step waits for it next (the first one after the model step at the latest).
    made.catch(() => undefined);
    this.turnZero = made;
  }

  /**
   * The turn-0 checkpoint on the workspace's host, then off it. Retried activities are safe (a
   * checkpoint made already is kept while the files are the same; a stored bundle is kept). The host
   * lost meanwhile: the workspace is placed again (as the first placement was) and the checkpoint
   * made there; the first model step, if it lost the host too, waits for this and runs again.
   */
  private async turnZeroCheckpoint(place: PlaceFn): Promise<void> {
    for (;;) {
      try {
        const made = await this.hosts.onHost(async () => {
          const act = this.workspaceActivities({
            startToCloseTimeout: '10m',
            heartbeatTimeout: this.config.heartbeatTimeoutMs,
            retry: retry(10),
            summary: activitySummary.checkpoint(0, 'on the host, alongside the first model step'),
          });
          const cp = await this.durably('the turn-0 checkpoint', () => act.checkpointTurnZero(this.ref));
          if (cp) await this.saveOffHost(0, cp.commit);
          return cp !== undefined;
        });
        if (made && !this.st.checkpointTurns.includes(0)) this.st.checkpointTurns.unshift(0);
        return;
      } catch (err) {
        if (!(err instanceof HostLost)) throw err;
      }
      const again = await this.placeAndInit(place, true);
      // Placed on a worker without a host queue: it made the checkpoint on the shared queue.
      if (again.checkpoint) {
        if (!this.st.checkpointTurns.includes(0)) this.st.checkpointTurns.unshift(0);
        return;
      }
    }
  }

  /** A fork: the parent's first turns as this conversation's transcript, that turn's checkpoint as the workspace. */
  private async startFork(fork: ForkOrigin): Promise<void> {
    const { parentId, atTurn } = fork;
    const st = this.st;
    const copy = await this.placing(activitySummary.setup(`fork of ${parentId} at turn ${atTurn}`)).forkConversation({
      conversationId: this.conversationId,
      parentId,
      atTurn,
      task: this.input.task ?? '',
      config: this.config,
    });
    const cp = copy.checkpoints[copy.checkpoints.length - 1]!;
    Object.assign(st, { nextSeq: copy.nextSeq, turn: atTurn, checkpointTurns: copy.checkpoints.map((c) => c.turn), forkedFrom: fork });
    const epoch = this.hosts.nextEpoch();
    this.hosts.place(
      await this.placing(activitySummary.restore(cp.turn)).materializeWorkspace({
        conversationId: this.conversationId,
        fromConversationId: parentId,
        repo: this.config.repo!,
        turn: cp.turn,
        commit: cp.commit,
        ...withEpoch(epoch),
      }),
      epoch,
    );
    // Under the fork's own name too, so the fork can fail over without its parent's refs.
    await this.hosts.onHost(() => this.saveOffHost(cp.turn, cp.commit));
    if (fork.message) st.pending.push({ role: 'user', kind: 'user', content: fork.message, turn: atTurn });
    this.updateSearchAttributes();
  }

  private async saveOffHost(turn: number, commit: string): Promise<void> {
    const repo = this.config.repo !== undefined ? { repo: this.config.repo } : {};
    await this.workspaceActivities({
      startToCloseTimeout: '5m',
      retry: retry(5),
      summary: activitySummary.checkpoint(turn, 'off the host'),
    }).saveCheckpointOffHost({
      conversationId: this.conversationId,
      ...repo,
      workspace: this.ref.workspace,
      turn,
      commit,
      ...this.fencedPush(turn),
    });
    this.st.offHost = { turn, commit };
  }

  /** A fenced placement pushes a turn's ref with --force-with-lease on the commit the workflow knows there. */
  private fencedPush(turn: number): { epoch?: number; lease?: string } {
    return this.hosts.epoch === undefined ? {} : { epoch: this.hosts.epoch, lease: this.hosts.lease(turn) };
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
    await this.workspaceLock.exclusive(async () => {});
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
              this.stepPriority.options({ ...this.modelOptions, summary: activitySummary.model(turn, this.config.model, harder) }),
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
    const readsFirst = this.turnZero !== undefined && patched(READS_BEFORE_TURN_ZERO);
    if (this.turnZero && !readsFirst) await this.turnZero;
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
        if (this.turnZero && !group.every(readsOnly)) await this.turnZero;
        const results = await Promise.all(group.map((c) => this.handleCall(c)));
        if (results.some((r) => r.stop)) {
          if (this.cancelRequested) return { status: 'cancelled', reason: this.cancelRequested };
          return { status: 'failed', reason: 'the question to the user was not answered in time' };
        }
        completion = results.find((r) => r.completion !== undefined)?.completion;
        if (completion !== undefined) break;
      }
      // Stop hooks, verify, the end: not before the checkpoint exists (only reads ran meanwhile).
      if (completion !== undefined && this.turnZero) await this.turnZero;
      if (completion !== undefined && answer.stopHook && patched('stop-hook')) completion = await this.stopHooks(turn, completion);
      const verify = st.environment?.verify;
      if (completion !== undefined && verify !== undefined && patched('verify-step')) completion = await this.verifyStep(turn, completion, verify);
      if (answer.loop && completion === undefined) {
        const r = loopResponse(answer.loop, st.loopNudged);
        if (r.stop) return { status: 'loop_detected', reason: r.stop };
        st.loopNudged = true;
        st.pending.push({ role: 'user', kind: 'notice', content: r.notice!, turn });
      }
    }
    const record = { conversationId: this.conversationId, turn, usage: st.usage, costUsd: st.costUsd, status: st.status };
    // Histories from before this patch recorded every turn with its own local activity.
    if (patched('turn-record-with-next-step')) st.unrecordedTurn = record;
    else await this.durably('recording the turn', () => this.local.endTurnRecord(record));
    this.updateSearchAttributes();
    if (completion !== undefined && st.host && this.config.repo !== undefined) st.branch = await this.durably('the result branch', () => this.resultBranch());
    if (completion !== undefined && this.verifyFailed) return { status: 'failed', reason: 'verification failed', result: completion };
    if (completion !== undefined) return { status: 'completed', reason: 'the model called attempt_completion', result: completion };
    return undefined;
  }

  /**
   * The workspace's Stop hooks (settings.json), run as their own activity when the model is about
   * to finish: one that blocks keeps the conversation going, its reason the model's next message.
   * At most MAX_STOP_BLOCKS times per conversation, so a hook that always blocks cannot hold it.
   */
  private async stopHooks(turn: number, completion: string): Promise<string | undefined> {
    const st = this.st;
    const blocked = st.stopBlocks ?? 0;
    if (blocked >= MAX_STOP_BLOCKS) return completion;
    const options = { startToCloseTimeout: '15m', heartbeatTimeout: this.config.heartbeatTimeoutMs, retry: retry(3), summary: activitySummary.stopHooks(turn) };
    let r;
    try {
      r = await this.durably('the Stop hooks', () => this.hosts.onHost(() => this.workspaceActivities(options).stopHook({ ...this.ref, turn, blocked })));
    } catch (err) {
      if (!(err instanceof HostLost)) throw err;
      // The hooks went with the host; the model had finished, so the conversation ends.
      await this.hosts.recover(err);
      return completion;
    }
    if (r.continue === undefined) return completion;
    st.stopBlocks = blocked + 1;
    st.pending.push({
      role: 'user',
      kind: 'notice',
      turn,
      content: `[A Stop hook did not let the conversation end (${st.stopBlocks} of at most ${MAX_STOP_BLOCKS} times): ${r.continue}]\nDeal with that, then call attempt_completion again.`,
    });
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
    const options = this.stepPriority.options({
      startToCloseTimeout: '20m',
      heartbeatTimeout: this.config.heartbeatTimeoutMs,
      retry: MODEL_STEP_RETRY,
      summary: activitySummary.model(turn, this.config.model, extra.harder),
    });
    for (;;) {
      try {
        return await this.hosts.onHost(() => this.workspaceActivities(options).modelTurn({ ...this.ref, turn, seq, appends, ...extra }));
      } catch (err) {
        if (!(err instanceof HostLost)) throw err;
        // The first step, while turn 0's checkpoint is made: nothing left the host yet, so nothing
        // can be restored; the checkpoint's step places the workspace again, and this runs there.
        if (this.turnZero) {
          await this.turnZero;
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
      this.workspaceActivities({ startToCloseTimeout: '10m', retry: retry(5), summary: activitySummary.resultBranch(branch) }).commitResultBranch({
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
      const outcome = await this.askApproval(call);
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
    const tool = () =>
      this.workspaceActivities({
        startToCloseTimeout: toolTimeoutMs(call),
        heartbeatTimeout: this.config.heartbeatTimeoutMs,
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        retry: retry(5),
        summary: activitySummary.tool(this.st.turn, call.preview),
      });
    this.showProgress(call.preview);
    // A sub-agent never moves (its parent does, from the parent's checkpoints): nothing of its own leaves the host.
    const offHost = this.st.host && this.config.agent?.parentId === undefined ? { offHost: true } : {};
    // Reads share the gate (PARALLEL_READS): the read-only calls of one answer overlap; what writes waits for them and they for it.
    const gate = <T>(fn: () => Promise<T>) => (readsOnly(call) && patched(PARALLEL_READS) ? this.workspaceLock.shared(fn) : this.workspaceLock.exclusive(fn));
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
                checkpoint: call.mutating,
                ...offHost,
                ...this.fencedPush(this.st.turn),
              }),
            ),
          ),
        );
        break;
      } catch (err) {
        if (!(err instanceof HostLost)) throw err;
        // A read while turn 0's checkpoint is made: nothing left the host yet; the checkpoint's step
        // places the workspace again, and the read runs there (READS_BEFORE_TURN_ZERO; none before it).
        if (this.turnZero) {
          await this.turnZero;
          continue;
        }
        let restored: boolean;
        try {
          restored = await this.hosts.recover(err);
        } catch (failed) {
          // Moved, but setup failed on the new host: the conversation ends there, and the call
          // went with the old host all the same. Answered, so the transcript says what became of it.
          if (failed instanceof ApplicationFailure && failed.type === 'SetupFailed' && patched(ANSWER_CALL_SETUP_FAILED_AFTER_MOVE))
            await this.answerInterrupted(call, resultSeq);
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
    // a local workspace on a host delegates (its child starts on that host); before, any
    // workspace with a host refused. Histories of the refusal replay without the patch.
    const onParentHost = patched('delegate-on-parent-host');
    const host = this.st.host;
    // Issue 21 point 4: the agent file is read on the workspace's host (not the shared queue), and
    // a child that lost the host makes the parent move at once. Older histories replay without.
    const onHostToo = onParentHost && host !== undefined && patched('delegate-reads-on-host');
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
        repositoryJob: onParentHost ? this.config.repo !== undefined : host !== undefined,
        get workspaceHost() {
          const now = self.st.host;
          return onParentHost && now
            ? { hostId: now.hostId, workspace: now.workspace, base: now.base, ...(now.incarnation ? { incarnation: now.incarnation } : {}) }
            : undefined;
        },
        ...(onHostToo
          ? {
              onHost: <T>(fn: (options: ActivityOptions) => Promise<T>) =>
                this.hosts.onHostOrMove(() => fn(this.hosts.routed({ startToCloseTimeout: '1m', retry: retry(5) }))),
              hostLost: async (lost: { hostId: string; why: string }) => {
                await this.hosts.recover(new HostLost(lost.hostId, lost.why));
              },
            }
          : {}),
        st: this.st,
        cancelRequested: () => this.cancelRequested,
        durably: (what, step) => this.durably(what, step),
        exclusive: (fn) => this.workspaceLock.exclusive(fn),
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

  async ask(call: CallSummary, question: string): Promise<string | undefined> {
    this.pendingQuestion = { callId: call.id, question, sinceMs: Date.now() };
    this.answerText = undefined;
    this.setStatus('waiting');
    await this.durably('announcing the question', () =>
      this.local.emitEvents({ conversationId: this.conversationId, events: [{ type: 'question_asked', callId: call.id, question }] }),
    );
    const answered = await this.waitFor(() => this.answerText !== undefined, this.config.questionTimeoutMs);
    this.pendingQuestion = undefined;
    const text = this.answerText;
    this.answerText = undefined;
    if (answered) return text;
    if (!this.cancelRequested) await this.answer(call, false, 'No answer arrived in time.', 'error');
    return undefined;
  }

  /** Ask the operator; undefined when the conversation was cancelled while waiting. */
  private async askApproval(call: CallSummary): Promise<ApprovalOutcome | undefined> {
    this.pendingApproval = {
      callId: call.id,
      name: call.name,
      preview: call.preview,
      reasons: call.reasons,
      sinceMs: Date.now(),
      ...(call.argsHash !== undefined ? { argsHash: call.argsHash } : {}),
    };
    this.decision = undefined;
    this.setStatus('waiting');
    const reason = call.reasons.join('; ') || `${call.name} needs approval`;
    await this.durably('announcing the approval', () =>
      this.local.emitEvents({ conversationId: this.conversationId, events: [{ type: 'approval_requested', callId: call.id, name: call.name, reason }] }),
    );
    const decided = await this.waitFor(() => this.decision !== undefined, this.config.approvalTimeoutMs);
    this.pendingApproval = undefined;
    if (!decided && this.cancelRequested) return undefined;
    const d = this.decision as (ApprovalDecision & { atMs: number }) | undefined;
    this.decision = undefined;
    const outcome: ApprovalOutcome = d
      ? { callId: call.id, approved: d.approved, by: d.by, atMs: d.atMs, reason: d.reason }
      : {
          callId: call.id,
          approved: this.config.approvalTimeoutAction === 'approve',
          atMs: Date.now(),
          reason: approvalTimeoutReason(this.config),
          timedOut: true,
        };
    this.st.approvals = [...this.st.approvals.slice(-19), outcome];
    await this.durably('recording the decision', () =>
      this.local.emitEvents({ conversationId: this.conversationId, events: [{ type: 'approval_decided', ...outcome }] }),
    );
    return outcome;
  }

  /** Wait for a person, bounded by `timeoutMs`; false on timeout or cancel. */
  private async waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
    if (this.st.status !== 'waiting') this.setStatus('waiting');
    const ok = await condition(() => done() || this.cancelRequested !== undefined, timeoutMs);
    this.setStatus('running');
    return ok && done();
  }

  // ── rollback ───────────────────────────────────────────────────────────────────────────────

  /** Runs under the workspace lock: after any running tool call, before the next, in every state. */
  private async rollback(req: RollbackRequest): Promise<RollbackResult> {
    const st = this.st;
    st.rollbacks.push({ ...req, atTurn: st.turn });
    const act = () =>
      this.workspaceActivities({
        startToCloseTimeout: '10m',
        heartbeatTimeout: this.config.heartbeatTimeoutMs,
        retry: retry(5),
        summary: activitySummary.rollback(req.commit ? req.commit.slice(0, 12) : `turn ${req.toTurn}`),
      });
    let r;
    try {
      const restore = () => act().rollbackWorkspace({ ...this.ref, toTurn: req.toTurn ?? -1, commit: req.commit });
      // A lost host: move the workspace first (its notice goes to the model too), then roll back there.
      r = await (patched('rollback-moves') ? this.hosts.onHostOrMove(restore) : this.hosts.onHost(restore));
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
  private async durably<T>(what: string, step: (afterWait?: ProviderWait) => Promise<T>): Promise<T> {
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
          await sleep(providerWaitMs(wait, waits++));
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

  private setStatus(status: ConversationStatus): void {
    this.st.status = status;
    this.updateSearchAttributes();
  }

  /** The UI's current details (turn, status, cost so far, what the session waits for); `waitingFor` when it changes. */
  private showProgress(waitingFor?: string): void {
    if (waitingFor !== undefined) this.waitingFor = waitingFor;
    const st = this.st;
    const waiting =
      st.status === 'waiting'
        ? this.pendingApproval
          ? `approval of ${this.pendingApproval.preview}`
          : this.pendingQuestion
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

  private updateSearchAttributes(): void {
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
    this.pendingApproval = undefined;
    this.pendingQuestion = undefined;
    this.setStatus(end.status);
    const { st } = this;
    const outcome = { status: end.status, reason: end.reason, turns: st.turn, usage: st.usage, costUsd: st.costUsd };
    // The turn-0 checkpoint still being made (the first step failed, or was cancelled): finished or failed first.
    if (this.turnZero) await this.turnZero.catch(() => undefined);
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

/** Why a move happened, for its stream event: only a drain adds it, so the inputs of moves after a loss stay as they were. */
function movedFrom(hostId: string, move: { why: string; drained: boolean }): { fromHost?: string; drained?: boolean } {
  return move.drained ? { fromHost: hostId, drained: true } : {};
}

/** `{ epoch }` when there is one: inputs of placements made before fencing stay as they were. */
function withEpoch(epoch: number | undefined): { epoch?: number } {
  return epoch === undefined ? {} : { epoch };
}

export async function session(input: SessionInput): Promise<ConversationResult> {
  const s = new Session(input);
  s.registerHandlers();
  return endWorkflow(await s.run(), s.cancellation);
}

/** The setup commands on one line for a summary (`npm ci; npm run build`), or undefined when the settings name them. */
function oneLineCommands(commands: string[] | undefined): string | undefined {
  return commands?.length ? commands.map((c) => c.split('\n')[0]).join('; ') : undefined;
}

/** What the result says of setup and verify (`run --json`'s result line, the batch table). */
function environmentResult(env: SessionEnvironment | undefined): Pick<ConversationResult, 'setup' | 'verify'> {
  if (!env) return {};
  const v = env.lastVerify;
  return {
    ...(env.setup
      ? {
          setup: {
            ok: env.setup.ok,
            ms: env.setup.ms,
            cached: env.setup.cached,
            ...(env.setup.ok ? {} : { exitCode: env.setup.exitCode ?? null, reason: env.setup.reason, tail: env.setup.tail }),
          },
        }
      : {}),
    ...(env.verify
      ? {
          verify: {
            command: env.verify,
            passed: v?.passed ?? null,
            exitCode: v?.exitCode ?? null,
            attempts: env.verifyRuns,
            ms: v?.ms ?? 0,
            ...(v && !v.passed ? { tail: v.tail } : {}),
            ...(env.baseline ? { baseline: { passed: env.baseline.passed, exitCode: env.baseline.exitCode } } : {}),
          },
        }
      : {}),
  };
}
