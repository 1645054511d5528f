// Every step a session schedules, in one table, and the one runner that schedules them: a step's
// timeout and retries, its one-line summary for the Temporal UI (summaries.ts), its priority, the
// queue it runs on (the shared queue, the workspace's host, or a local activity), how it meets a
// lost host, whether it holds the workspace gate, and whether an infrastructure fault stalls the
// conversation instead of failing it. The only code of the session that calls proxyActivities.
// Deterministic: no Node APIs here.
import {
  ActivityCancellationType,
  ActivityFailure,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  TimeoutFailure,
  workflowInfo,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/types.js';
import type { RunConfig } from '../../src/config.js';
import type { ConversationStatus } from '../../src/types.js';
import { MODEL_STEP_ATTEMPTS, NON_RETRYABLE_MODEL_ERRORS } from '../../src/model/error-types.js';
import { INFRASTRUCTURE_ERROR } from '../../src/types.js';
import { failureType, rootMessage } from '../failures.js';
import { activitySummary } from '../summaries.js';
import { attemptTimedOut, HostLost, withEpoch, type HostCarried, type HostRouting } from './host.js';
import type { ModelStepPriority } from './model-priority.js';
import { providerWaitMs, providerWaitOf, type ProviderWait } from './provider-wait.js';
import { ProviderWake } from './provider-wake.js';
import type { Status } from './status.js';
import type { WorkspaceRef } from './types.js';
import type { WorkspaceGate } from './workspace-gate.js';

/** maximumAttempts 0: without limit. */
const retry = (maximumAttempts: number, maximumInterval = '30s') => ({
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval,
  ...(maximumAttempts > 0 ? { maximumAttempts } : {}),
});

/** The model step's retry policy; its attempts also bound the summary's retries (MODEL_STEP_ATTEMPTS). */
const MODEL_STEP_RETRY = { ...retry(MODEL_STEP_ATTEMPTS, '60s'), nonRetryableErrorTypes: NON_RETRYABLE_MODEL_ERRORS };

type StepConfig = Pick<RunConfig, 'heartbeatTimeoutMs' | 'setupTimeoutMs' | 'hostTimeoutMs'>;

/**
 * Patch: an attempt of a host step that times out while it runs comes back to the workflow, which
 * probes the host before the step runs there again (`StepRunner.probing`).
 */
const PROBE_BEFORE_RETRY = 'probe-host-before-retry';

/** Patch: setup (after a move too) and verify are probed like the model step and tool calls (`StepSpec.probedSinceSetupPatch`). */
const PROBE_SETUP_BEFORE_RETRY = 'probe-setup-before-retry';

/**
 * The server's names for an attempt's heartbeat and start-to-close timeouts in a retry policy
 * (`TemporalTimeout:` and the timeout type): listed as non-retryable, the attempt ends the step.
 */
const ATTEMPT_TIMEOUTS = ['TemporalTimeout:Heartbeat', 'TemporalTimeout:StartToClose'];

/** Clone, re-materialise and fork copy: on the shared queue (whoever takes a clone becomes the host), heartbeating. */
const placing = (c: StepConfig) => ({ startToCloseTimeout: '5m', heartbeatTimeout: Math.max(c.heartbeatTimeoutMs, 10_000), retry: retry(5) });

/** Setup: its own limit, plus the cache's copies and (`baseline`) the baseline verify. */
const setup = (c: StepConfig, baseline = false) => ({
  startToCloseTimeout: (c.setupTimeoutMs ?? 20 * 60_000) + (baseline ? 35 : 5) * 60_000,
  heartbeatTimeout: c.heartbeatTimeoutMs,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: retry(3),
});

interface StepSpec {
  /**
   * `shared`: the workflow's own task queue (whoever takes it); `host`: the workspace host's queue
   * (the shared one for a workspace without a host), chosen when the step is scheduled.
   */
  queue: 'shared' | 'host';
  options: (c: StepConfig, arg: never) => ActivityOptions;
  summary: (...about: never[]) => string;
  /**
   * A lost host: `none`, the step is not routed (it is not on a host, or its caller runs a
   * sequence of steps on the host); `fail`, HostLost goes to the caller; `move`, the workspace moves
   * and the step runs once more on the new host; `rerun`, the step runs again on the new host until
   * it answers (the caller hears of restored files through `restored`).
   */
  host: 'none' | 'fail' | 'move' | 'rerun';
  /** The workspace gate: held alone (`exclusive`), or shared by read-only calls (`byCall`). */
  gate?: 'exclusive' | 'byCall';
  /** An infrastructure fault stalls the conversation (never fails it) while this step is tried again; what it is doing, for the stall's reason. */
  durably?: string;
  /** Carries Temporal's priority and fairness keys (model-priority.ts). */
  priority?: boolean;
  /**
   * After an attempt that timed out while it ran, the host is probed before the step runs there
   * again (`StepRunner.probing`). Only steps whose attempt numbers may start again at 1 in a new
   * round, or that carry the earlier rounds' attempts (`priorAttempts`): the others number their
   * stream rows by attempt, and a frozen host in them is found after the server's retries.
   */
  probed?: boolean;
  /** Probed only in runs that took PROBE_SETUP_BEFORE_RETRY: before it, the server retried the step after such a timeout. */
  probedSinceSetupPatch?: boolean;
}

/** Every remote step of a session, by name. */
const STEPS = {
  /** The model step: on the workspace's host (it reads rules and checks commands there), or the shared queue without one. */
  model: {
    queue: 'host',
    host: 'rerun',
    priority: true,
    probed: true,
    durably: 'the model step',
    summary: activitySummary.model,
    options: (c) => ({
      startToCloseTimeout: '20m',
      heartbeatTimeout: c.heartbeatTimeoutMs,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: MODEL_STEP_RETRY,
    }),
  },
  /** One tool call, within the tool's own timeout (`arg`). */
  tool: {
    queue: 'host',
    host: 'fail',
    gate: 'byCall',
    probed: true,
    durably: 'the call',
    summary: activitySummary.tool,
    options: (c, timeoutMs: number) => ({
      startToCloseTimeout: timeoutMs,
      heartbeatTimeout: c.heartbeatTimeoutMs,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: retry(5),
    }),
  },
  /**
   * Does the workspace's host answer? A step that does nothing, one attempt within the host timeout:
   * a frozen host whose polls are still open takes it and never answers.
   */
  probe: {
    queue: 'host',
    host: 'none',
    summary: activitySummary.probe,
    options: (c) => ({ startToCloseTimeout: c.hostTimeoutMs, heartbeatTimeout: c.hostTimeoutMs, retry: { maximumAttempts: 1 } }),
  },
  /** A workspace placed (or cloned, or a fork copied) on whichever worker takes it. */
  place: { queue: 'shared', host: 'none', summary: activitySummary.setup, options: placing },
  /**
   * The first placement of a local workspace started with its origin: any worker may take the task, and
   * those elsewhere refuse it, so it is offered again soon and without an attempt limit, for up to ten minutes.
   */
  placeByOrigin: {
    queue: 'shared',
    host: 'none',
    summary: activitySummary.setup,
    options: (c) => ({
      ...placing(c),
      scheduleToCloseTimeout: '10m',
      retry: { initialInterval: '200ms', backoffCoefficient: 1.5, maximumInterval: '5s' },
    }),
  },
  /** A lost workspace rebuilt from a checkpoint on any live host. */
  restore: { queue: 'shared', host: 'none', summary: activitySummary.restore, options: placing },
  /** The workspace and the first messages (and turn 0's checkpoint, unless made alongside the first model step). */
  init: {
    queue: 'host',
    host: 'none',
    durably: 'starting the conversation',
    summary: activitySummary.setup,
    options: (c) => ({ startToCloseTimeout: '5m', heartbeatTimeout: c.heartbeatTimeoutMs, retry: retry(10) }),
  },
  /** Turn 0's checkpoint made alongside the first model step. */
  turnZeroCheckpoint: {
    queue: 'host',
    host: 'none',
    durably: 'the turn-0 checkpoint',
    summary: activitySummary.checkpoint,
    options: (c) => ({ startToCloseTimeout: '10m', heartbeatTimeout: c.heartbeatTimeoutMs, retry: retry(10) }),
  },
  /** The turn's checkpoint after a writing sub-agent, made and stored off the host before its call is answered (a lost host: to the caller). */
  subagentCheckpoint: {
    queue: 'host',
    host: 'fail',
    durably: "saving the sub-agent's changes",
    summary: activitySummary.checkpoint,
    options: (c) => ({ startToCloseTimeout: '10m', heartbeatTimeout: c.heartbeatTimeoutMs, retry: retry(5) }),
  },
  /** A checkpoint's copy pushed off the workspace's host (turn 0's, a fork's). */
  saveOffHost: { queue: 'host', host: 'none', summary: activitySummary.checkpoint, options: () => ({ startToCloseTimeout: '5m', retry: retry(5) }) },
  /** Setup before turn 1 (`arg`: with the baseline verify). */
  setup: {
    queue: 'host',
    host: 'move',
    probed: true,
    probedSinceSetupPatch: true,
    durably: 'the setup',
    summary: activitySummary.setup,
    options: (c, baseline: boolean) => setup(c, baseline),
  },
  /** Setup again on the host a move restored the workspace on (the routing runs it there). */
  setupAfterMove: {
    queue: 'host',
    host: 'none',
    probed: true,
    probedSinceSetupPatch: true,
    durably: 'the setup after the move',
    summary: activitySummary.setup,
    options: (c) => setup(c),
  },
  /** The repository's check at attempt_completion (its events are keyed by the workflow's run number, not the activity's attempt). */
  verify: {
    queue: 'host',
    host: 'move',
    gate: 'exclusive',
    probed: true,
    probedSinceSetupPatch: true,
    durably: 'verify',
    summary: activitySummary.verify,
    options: (c) => ({ startToCloseTimeout: '35m', heartbeatTimeout: c.heartbeatTimeoutMs, retry: retry(3) }),
  },
  /** The workspace's Stop hooks (a lost host: they went with it; the caller ends the conversation). */
  stopHooks: {
    queue: 'host',
    host: 'fail',
    durably: 'the Stop hooks',
    summary: activitySummary.stopHooks,
    options: (c) => ({ startToCloseTimeout: '15m', heartbeatTimeout: c.heartbeatTimeoutMs, retry: retry(3) }),
  },
  /** An operator's rollback (its failure is the update's answer, so it never stalls). */
  rollback: {
    queue: 'host',
    host: 'move',
    summary: activitySummary.rollback,
    options: (c) => ({ startToCloseTimeout: '10m', heartbeatTimeout: c.heartbeatTimeoutMs, retry: retry(5) }),
  },
  /** Repository jobs: the workspace committed onto the result branch (and pushed). */
  resultBranch: {
    queue: 'host',
    host: 'move',
    durably: 'the result branch',
    summary: activitySummary.resultBranch,
    options: () => ({ startToCloseTimeout: '10m', retry: retry(5) }),
  },
  /** A sub-agent's agent file, read where the workspace is. */
  delegateAgent: {
    queue: 'host',
    host: 'move',
    durably: 'reading the agent',
    summary: activitySummary.delegate,
    options: () => ({ startToCloseTimeout: '1m', retry: retry(5) }),
  },
} as const satisfies Record<string, StepSpec>;

export type StepName = keyof typeof STEPS;
type About<K extends StepName> = Parameters<(typeof STEPS)[K]['summary']>;
type Arg<K extends StepName> = Parameters<(typeof STEPS)[K]['options']>[1];

/** The local (store-only) steps: short; an outage that outlasts these retries stalls the conversation (see `durably`). */
const LOCAL_STEPS = {
  /** A session's store-only steps. */
  store: { startToCloseTimeout: '30s', retry: { ...retry(5, '10s'), nonRetryableErrorTypes: ['UnknownConversation'] } },
  /** A session's budget records (raised limits, pause events). */
  budgetRecord: { startToCloseTimeout: '30s', retry: retry(5, '10s') },
} as const satisfies Record<string, LocalActivityOptions>;

/** How one run of a step is scheduled. */
export interface StepRun<K extends StepName> {
  /** The step's own option argument (a tool's timeout, setup's baseline). */
  arg?: Arg<K>;
  /** What it is doing, when the table's line is too general (which call). */
  what?: string;
  /** `byCall` gate: the call only reads. */
  reads?: boolean;
  /** `rerun`: the workspace was restored on another host (what ran there since its checkpoint is lost). */
  restored?: () => void;
}

/**
 * Schedules a session's steps by the table: the one place that builds the layers every step has
 * (stall on faults → the workspace gate → host routing → the activity with its options and summary).
 */
export class StepRunner {
  /** Store-only steps, as local activities. */
  readonly store = proxyLocalActivities<Activities>(LOCAL_STEPS.store);
  readonly budgetStore = proxyLocalActivities<Activities>(LOCAL_STEPS.budgetRecord);
  /** `agentrun pool resume` ends a provider wait early. */
  readonly providerWake = new ProviderWake();
  /** What made the running step stall, while it does (the conversation is `stalled`). */
  private stalledReason?: string;
  private statusBeforeStall: ConversationStatus = 'running';
  /** What the refusing provider or its pool said, while the model step waits for it (provider-wait.ts). */
  private providerWait?: string;
  private statusBeforeProviderWait: ConversationStatus = 'running';

  constructor(
    readonly conversationId: string,
    private readonly config: StepConfig,
    /** The workspace directory as started (a host's own directory replaces it once placed). */
    private readonly workspace: string,
    private readonly st: HostCarried,
    readonly hosts: HostRouting,
    /** Writes, rollbacks, verify and writing sub-agents hold it alone, in order; read-only calls share it (workspace-gate.ts). */
    readonly gate: WorkspaceGate,
    private readonly status: Status,
    private readonly priority: ModelStepPriority,
  ) {
    status.explainWith('stalled', () => this.stalledReason);
    status.explainWith('waiting_for_provider', () => `the provider: ${this.providerWait}`);
  }

  /** The reason of a stall in progress (the state query shows it). */
  get stalled(): string | undefined {
    return this.stalledReason;
  }

  /** What the provider said while the model step waits for it (the state query shows it). */
  get waitingForProvider(): string | undefined {
    return this.providerWait;
  }

  /** The workspace directory: on its host for repository jobs; and the placement's epoch, which every host step carries. */
  get ref(): WorkspaceRef {
    return { conversationId: this.conversationId, workspace: this.st.host?.workspace ?? this.workspace, ...withEpoch(this.hosts.epoch) };
  }

  /** The step's options and summary. */
  private options<K extends StepName>(name: K, about: About<K>, arg?: Arg<K>): ActivityOptions {
    const spec: StepSpec = STEPS[name];
    const base = { ...spec.options(this.config, arg as never), summary: (spec.summary as (...a: unknown[]) => string)(...about) };
    return spec.priority ? this.priority.options(base) : base;
  }

  /** The step's activities on its queue: built when it runs (after a move the host's queue is another). */
  private activities(spec: StepSpec, options: ActivityOptions): Activities {
    if (spec.queue === 'shared') return proxyActivities<Activities>(options);
    return proxyActivities<Activities>(this.hosts.routed({ ...options, taskQueue: workflowInfo().taskQueue }));
  }

  /**
   * A probed host step (the model step, a tool call, setup, verify), its attempts each ended by a heartbeat or
   * start-to-close timeout: a host frozen (SIGSTOP, a paused VM) with its polls still open would be
   * handed every retry by the server, the loss seen only after the last one. So the workflow probes the host first: one that does not
   * answer within the host timeout is lost (the step's timeout goes up, HostLost to the routing);
   * one that answers runs the step again, as many times as its retry policy allows attempts.
   */
  private async probing<T>(spec: StepSpec, options: ActivityOptions, schedule: (options: ActivityOptions, earlierRounds: number) => Promise<T>): Promise<T> {
    const host = this.st.host;
    if (!spec.probed || !host || !(spec.probedSinceSetupPatch ? patched(PROBE_SETUP_BEFORE_RETRY) : patched(PROBE_BEFORE_RETRY))) return schedule(options, 0);
    const retry = options.retry ?? {};
    const untilTimeout = { ...options, retry: { ...retry, nonRetryableErrorTypes: [...(retry.nonRetryableErrorTypes ?? []), ...ATTEMPT_TIMEOUTS] } };
    const rounds = retry.maximumAttempts || Infinity;
    for (let round = 1; ; round++) {
      try {
        // Each round's attempts count on from the most the earlier ones could have used: the model
        // step numbers its usage rows by attempt and continues the answer an earlier one streamed,
        // setup keys its stream rows by attempt.
        return await schedule(untilTimeout, (round - 1) * (retry.maximumAttempts || 1));
      } catch (err) {
        // A move meanwhile: the routing decides what the step does now.
        if (!attemptTimedOut(err) || round >= rounds || this.st.host !== host || !(await this.answers())) throw err;
      }
    }
  }

  /** Whether the workspace's host answers the probe step (a worker without it answers too: it says it has none). */
  private async answers(): Promise<boolean> {
    try {
      await this.activities(STEPS.probe, this.options('probe', [])).probeHost();
      return true;
    } catch (err) {
      if (isCancellation(err)) throw err;
      return !(err instanceof ActivityFailure && err.cause instanceof TimeoutFailure);
    }
  }

  /**
   * Run step `name` (`about`: its summary's arguments) as its line in the table says; `call`
   * schedules its activity. `afterWait`: the provider wait the step comes back from, if any;
   * `priorAttempts`: the attempts of this step scheduled before this one (after a provider wait, or
   * in earlier rounds of `probing`), which the activity adds to its own attempt number.
   */
  run<K extends StepName, T>(
    name: K,
    about: About<K>,
    call: (activities: Activities, afterWait: ProviderWait | undefined, priorAttempts: number) => Promise<T>,
    how: StepRun<K> = {},
  ): Promise<T> {
    const spec: StepSpec = STEPS[name];
    const routed = (fn: () => Promise<T>): Promise<T> => {
      if (spec.host === 'fail') return this.hosts.onHost(fn);
      if (spec.host === 'move') return this.hosts.onHostOrMove(fn);
      if (spec.host === 'rerun') return this.rerunOnHost(fn, how.restored);
      return fn();
    };
    const gated = (fn: () => Promise<T>): Promise<T> => {
      if (spec.gate === 'exclusive') return this.gate.exclusive(fn);
      // Reads share the gate: the read-only calls of one answer overlap; what writes waits for them and they for it.
      if (spec.gate === 'byCall' && how.reads) return this.gate.shared(fn);
      if (spec.gate === 'byCall') return this.gate.exclusive(fn);
      return fn();
    };
    // Built inside the routing: after a move the host's queue is another.
    const attempt = (afterWait?: ProviderWait) =>
      gated(() =>
        routed(() =>
          this.probing(spec, this.options(name, about, how.arg), (options, earlierRounds) =>
            call(this.activities(spec, options), afterWait, (afterWait?.attempt ?? 0) + earlierRounds),
          ),
        ),
      );
    return spec.durably !== undefined ? this.durably(how.what ?? spec.durably, attempt) : attempt();
  }

  /** A store-only step that stalls the conversation (never fails it) on infrastructure faults. */
  record<T>(what: string, call: (store: Activities) => Promise<T>): Promise<T> {
    return this.durably(what, () => call(this.store));
  }

  /**
   * On the workspace's host until it answers: a host lost while turn 0's checkpoint is made waits for
   * that checkpoint's step, which places the workspace again; any other loss moves the workspace,
   * and the step runs again on the new host (like a retry, when the files were kept).
   */
  private async rerunOnHost<T>(fn: () => Promise<T>, restored?: () => void): Promise<T> {
    for (;;) {
      try {
        return await this.hosts.onHost(fn);
      } catch (err) {
        if (!(err instanceof HostLost)) throw err;
        // Nothing left the host yet, so nothing can be restored; the checkpoint's step places the workspace again.
        if (this.gate.turnZero) {
          await this.gate.turnZero;
          continue;
        }
        if (!(await this.hosts.recover(err))) continue;
        restored?.();
      }
    }
  }

  /**
   * Run an activity step; while it fails with an infrastructure fault (database, git, disk),
   * the conversation is `stalled` with the reason and the step is retried (capped backoff,
   * without limit); when it succeeds the previous status comes back. A refusing provider is waited
   * for the same way. Other failures go on up.
   */
  async durably<T>(what: string, step: (afterWait?: ProviderWait) => Promise<T>): Promise<T> {
    let lastWait: ProviderWait | undefined;
    const status = this.status;
    for (let attempt = 0, waits = 0; ; attempt++) {
      try {
        const r = await step(lastWait);
        if (this.stalledReason !== undefined) {
          this.stalledReason = undefined;
          status.set(this.statusBeforeStall);
        }
        // Only the step that waited ends the wait: a step running beside it (turn 0's checkpoint) does not.
        if (lastWait !== undefined && this.providerWait !== undefined) {
          this.providerWait = undefined;
          if (status.now === 'waiting_for_provider') status.set(this.statusBeforeProviderWait);
        }
        return r;
      } catch (err) {
        // The provider refused for now (only model steps end so): wait, never fail.
        const wait = providerWaitOf(err);
        if (wait) {
          if (this.providerWait === undefined) this.statusBeforeProviderWait = status.now;
          this.providerWait = wait.message;
          if (status.now !== 'waiting_for_provider') status.set('waiting_for_provider');
          else status.show();
          lastWait = wait;
          await this.providerWake.sleep(providerWaitMs(wait, waits++));
          continue;
        }
        if (failureType(err) !== INFRASTRUCTURE_ERROR) throw err;
        if (this.stalledReason === undefined) this.statusBeforeStall = status.now;
        this.stalledReason = `${what}: ${rootMessage(err as Error)}`;
        if (status.now !== 'stalled') status.set('stalled');
        await sleep(Math.min(60_000, 2_000 * 2 ** Math.min(attempt, 5)));
      }
    }
  }
}
