// Host routing of repository jobs for the `session` workflow: the workspace lives on
// one host's disk, so every activity that touches it goes to that host's task queue. A host that
// stops answering, or is being drained, is left behind: the workspace is re-materialised from its
// last off-host checkpoint on whichever live host takes the task, and the model is told what was
// lost. Deterministic: no Node APIs here.
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  TimeoutFailure,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { RunConfig } from '../../src/config.js';
import { hostQueue, WORKSPACE_IDENTITY_FAILURE, type WorkspaceHost } from '../../src/workspace/routing.js';
import type { Failover } from '../api.js';
import { failureType } from '../failures.js';
import { RUN_AGAIN_NOTICE } from './host-loss.js';

/** The failure type of a host step whose writes were refused by the fence (activities/fence.ts). */
const FENCED = 'Fenced';
/** HostLost's `why` for a drained worker process. */
const DRAINING = 'it is being drained';

/** The workspace host did not answer (or is draining): the workflow moves the workspace. */
export class HostLost extends Error {
  constructor(
    readonly hostId: string,
    readonly why: string,
    /** The placement's epoch the lost step ran under. */
    readonly epoch?: number,
    /**
     * Drained, not lost: the worker stopped taking work and finished (or ran out of its shutdown
     * grace on) what it ran before it said so, so nothing of it is still running.
     */
    readonly drained = false,
  ) {
    super(`workspace host ${hostId} was lost: ${why}`);
  }
}

/**
 * A host-queue activity that timed out: nobody picked it up within the schedule-to-start
 * timeout (the host is gone), or its heartbeats stopped and the host did not answer the probe that
 * follows (steps.ts; before that patch: on every retry); or that found another directory at the
 * workspace's path.
 */
function isHostLoss(err: unknown): string | undefined {
  // A newer placement refused the step's writes: that placement is what this one lost to.
  if (failureType(err) === FENCED) return 'its writes were refused: a newer placement of the workspace holds it';
  // The host is there but its directory is not the one placed: as good as lost.
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === WORKSPACE_IDENTITY_FAILURE) return err.cause.message;
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof TimeoutFailure)) return undefined;
  const type = String(err.cause.timeoutType);
  if (type.includes('SCHEDULE_TO_START')) return 'no worker of that host took work from its queue in time';
  if (type.includes('HEARTBEAT')) return 'its heartbeats stopped';
  return `${err.activityType} timed out (${type})`;
}

/**
 * An attempt of a host step that ran out of time while it ran (its heartbeats stopped, or its
 * start-to-close ran out): the host took it and then went quiet, dead or frozen.
 */
export function attemptTimedOut(err: unknown): boolean {
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof TimeoutFailure)) return false;
  return err.cause.timeoutType === 'HEARTBEAT' || err.cause.timeoutType === 'START_TO_CLOSE';
}

/** What the routing keeps in the session's carried state (it survives continue-as-new). */
export interface HostCarried {
  /** The host holding the workspace; unset for local workspaces. */
  host?: WorkspaceHost;
  /** H1's marked place: the task queue of the workspace's host, kept equal to `host.queue`. */
  workspaceQueue?: string;
  /** The last checkpoint pushed off the host: where a moved workspace starts again. */
  offHost?: { turn: number; commit: string };
  failovers?: Failover[];
  /** The epoch of the current placement: host steps carry it, the store refuses older ones' writes. */
  epoch?: number;
}

export interface Placement {
  hostId: string;
  workspace: string;
  base: string;
  /** The worker process placed on (absent from workers before incarnations). */
  incarnation?: string;
  /** Local workspaces: the new host reached the directory intact, so nothing was restored. */
  kept?: boolean;
}

/** A drained worker: the process `incarnation` of `hostId`; without one (a worker that names none), every process of the id. */
interface Drained {
  hostId: string;
  incarnation?: string;
}

/** What the routing needs: the state it keeps, where it routes, and what a move does besides placing. */
export interface HostRoutingOptions {
  st: HostCarried;
  /** The workflow's own task queue, whose host queues are `<queue>@<host>`. */
  sharedQueue: string;
  config: RunConfig;
  /** Re-materialise the workspace from `offHost` on any live host (runs on the shared queue) as placement `epoch`; `move` says why, for the stream. */
  materialize: (from: WorkspaceHost, cp: { turn: number; commit: string }, epoch: number, move: { why: string; drained: boolean }) => Promise<Placement>;
  /** Tell the model, with its next step, what the move lost. */
  notify: (text: string) => void;
  turnNow: () => number;
  /** A sub-agent in its parent's directory: never moves on its own (its parent does). */
  stays: boolean;
  /**
   * What a restored workspace needs on its new host before any step runs there (setup: what it
   * made is ignored by git, so no checkpoint holds it); `needed` false: nothing. It runs on the
   * new host; if that host is lost meanwhile, the workspace moves on and it runs there.
   */
  prepare: { needed: () => boolean; run: () => Promise<void> };
}

export class HostRouting {
  private readonly drained: Drained[] = [];
  /** The host steps running now, each with the host it started on. */
  private readonly running = new Map<CancellationScope, { hostId: string; incarnation?: string }>();
  private watchingDrains = false;
  private moving?: Promise<boolean>;
  /** Whether the last move restored files (false: the workspace was kept as it was). */
  private restored = true;

  private readonly st: HostCarried;
  private readonly sharedQueue: string;
  private readonly config: RunConfig;

  constructor(private readonly how: HostRoutingOptions) {
    this.st = how.st;
    this.sharedQueue = how.sharedQueue;
    this.config = how.config;
  }

  /**
   * The signal handler: this worker process is going away, move off it now. A drain applies to the
   * process (incarnation) that sent it, not to its host id for ever: a pod restarted under its old
   * name is a host like any other.
   */
  drain(hostId: string, incarnation?: string): void {
    const d: Drained = incarnation !== undefined ? { hostId, incarnation } : { hostId };
    if (!this.drained.some((x) => x.hostId === d.hostId && x.incarnation === d.incarnation)) this.drained.push(d);
  }

  private isDrained(host: { hostId: string; incarnation?: string }): boolean {
    return this.drained.some(
      (d) => d.hostId === host.hostId && (d.incarnation === undefined || host.incarnation === undefined || d.incarnation === host.incarnation),
    );
  }

  /**
   * The epoch of the next placement, given to the placement step (which raises the store's fence to
   * it before anything else).
   */
  nextEpoch(): number {
    return (this.st.epoch ?? 0) + 1;
  }

  /** The epoch host steps carry now (undefined: unfenced). */
  get epoch(): number | undefined {
    return this.st.epoch;
  }

  /** What a push of `turn`'s checkpoint ref expects there: the commit the workflow knows ('' none). */
  lease(turn: number): string {
    return this.st.offHost?.turn === turn ? this.st.offHost.commit : '';
  }

  /** A fenced placement pushes a turn's ref with --force-with-lease on the commit the workflow knows there. */
  fencedPush(turn: number): { epoch?: number; lease?: string } {
    return this.epoch === undefined ? {} : { epoch: this.epoch, lease: this.lease(turn) };
  }

  place(placed: Placement, epoch: number): void {
    this.st.epoch = epoch;
    const incarnation = placed.incarnation;
    // A process that names its incarnation runs current code, so it is not the older worker whose
    // drain named only the id: that drain is over.
    if (incarnation !== undefined)
      for (let i = this.drained.length - 1; i >= 0; i--)
        if (this.drained[i]!.hostId === placed.hostId && this.drained[i]!.incarnation === undefined) this.drained.splice(i, 1);
    this.st.host = {
      hostId: placed.hostId,
      queue: hostQueue(this.sharedQueue, placed.hostId),
      workspace: placed.workspace,
      base: placed.base,
      ...(incarnation !== undefined ? { incarnation } : {}),
    };
    this.st.workspaceQueue = this.st.host.queue;
  }

  /**
   * Run `fn` on the workspace's host (directly for local workspaces). A host that stops answering
   * within the host timeout, stops heartbeating, or is drained meanwhile surfaces as HostLost.
   */
  async onHost<T>(fn: () => Promise<T>): Promise<T> {
    const host = this.st.host;
    if (!host) return fn();
    const epoch = this.st.epoch;
    if (this.isDrained(host)) throw new HostLost(host.hostId, DRAINING, epoch, true);
    const scope = new CancellationScope();
    this.running.set(scope, host);
    this.watchDrains();
    try {
      return await scope.run(fn);
    } catch (err) {
      if (this.isDrained(host) && isCancellation(err)) throw new HostLost(host.hostId, DRAINING, epoch, true);
      const loss = isHostLoss(err);
      if (loss) throw new HostLost(host.hostId, loss, epoch);
      throw err;
    } finally {
      this.running.delete(scope);
    }
  }

  /**
   * One watcher cancels every host step whose host a drain names, instead of one watcher a step:
   * each was a condition and four promises, and workflow code pays CPU for every promise it makes.
   * It fires at the same point as they did (the condition check after the drain signal), so the
   * cancellations go out in the same order, the order the steps started in.
   */
  private watchDrains(): void {
    if (this.watchingDrains) return;
    this.watchingDrains = true;
    const reached = () => this.drained.length > 0 && [...this.running.values()].some((host) => this.isDrained(host));
    const watch = (): void => {
      void condition(reached).then(() => {
        for (const [scope, host] of this.running) {
          if (!this.isDrained(host)) continue;
          this.running.delete(scope);
          scope.cancel();
        }
        watch();
      });
    };
    // Not cancelled with the step that happened to start it: it serves every later step too.
    void CancellationScope.nonCancellable(async () => watch());
  }

  /** `fn` on the workspace host; after a host loss, once more on the new host. */
  async onHostOrMove<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.onHost(fn);
    } catch (err) {
      if (!(err instanceof HostLost)) throw err;
      await this.recover(err);
      return this.onHost(fn);
    }
  }

  /**
   * Move the workspace off the lost host and route there from now on. Calls that saw the same
   * host fail at once share one move; a call that saw an older host finds the move done.
   * Resolves to true when files were restored from the checkpoint (later changes lost), false when
   * the new host reached the workspace as it was: then the step simply runs again there.
   */
  recover(lost: HostLost): Promise<boolean> {
    // A loss seen under an earlier placement (another host, or an older epoch of this one) is over.
    const earlier = lost.epoch !== undefined && this.st.epoch !== undefined && lost.epoch !== this.st.epoch;
    if (!this.st.host || this.st.host.hostId !== lost.hostId || earlier) return this.moving ?? Promise.resolve(this.restored);
    // A sub-agent works in its parent's directory: moving it elsewhere on its own would split the
    // two. It ends with the loss (the caller's HostLost), and its parent moves the workspace.
    if (this.how.stays) return Promise.reject(lost);
    // Nothing left the host yet, so there is nothing to move from: the loss is final (never a
    // workflow task failing for ever on an undefined checkpoint).
    if (!this.st.offHost) return Promise.reject(lost);
    this.moving ??= (async () => {
      let why = lost.why;
      // A drain: the worker finished what ran there (or ran out of its grace, which that call's own result says) and its checkpoints left the host.
      let drained = lost.drained;
      let restored = false;
      for (;;) {
        const from = this.st.host!;
        const cp = this.st.offHost!;
        const epoch = this.nextEpoch();
        const placed = await this.how.materialize(from, cp, epoch, { why, drained });
        this.place(placed, epoch);
        this.restored = restored || !placed.kept;
        if (placed.kept) return this.restored;
        restored = true;
        (this.st.failovers ??= []).push({
          fromHost: from.hostId,
          toHost: placed.hostId,
          restoredTurn: cp.turn,
          atTurn: this.how.turnNow(),
          reason: why,
          ...(drained ? { drained } : {}),
        });
        // A local workspace's path was on the lost machine: the model must learn where it is now.
        const moved =
          placed.workspace !== from.workspace
            ? ` The workspace directory is now ${placed.workspace} (${from.workspace} was on the ${drained ? 'drained' : 'lost'} host); files ignored by .gitignore are not in checkpoints and are gone.`
            : '';
        this.how.notify(
          drained
            ? `[The worker host that held the workspace (${from.hostId}) was restarted gracefully: the workspace moved to host ${placed.hostId} with its checkpoint after turn ${cp.turn}, which holds the changes of every call that finished. Calls that had not started ran there; a call cut off by the restart says so in its own result.${moved}]`
            : `[The worker host that held the workspace (${from.hostId}) was lost: ${why}. The workspace was restored on host ${placed.hostId} to its checkpoint after turn ${cp.turn}. ${RUN_AGAIN_NOTICE}${moved}]`,
        );
        if (!this.how.prepare.needed()) return true;
        try {
          await this.onHost(this.how.prepare.run);
          return true;
        } catch (err) {
          // The new host was lost too before it was ready: on to another, from the same checkpoint.
          if (!(err instanceof HostLost)) throw err;
          why = err.why;
          drained = err.drained && drained;
        }
      }
    })().finally(() => {
      this.moving = undefined;
    });
    return this.moving;
  }

  /** Activity options of a host-queue activity: a dead host shows as a timeout, not as a wait. */
  routed(options: ActivityOptions): ActivityOptions {
    const host = this.st.host;
    if (!host) return options;
    return {
      ...options,
      taskQueue: host.queue,
      scheduleToStartTimeout: this.config.hostTimeoutMs,
      // Activities that do not report progress themselves heartbeat on a host (activities/workspace.ts keepAlive).
      heartbeatTimeout: options.heartbeatTimeout ?? Math.max(this.config.heartbeatTimeoutMs, 10_000),
      // The host's copy is abandoned on a move: nothing to wait for.
      cancellationType: ActivityCancellationType.TRY_CANCEL,
    };
  }
}

/** `{ epoch }` when the workspace has a placement (a local workspace on a worker without a host queue has none). */
export function withEpoch(epoch: number | undefined): { epoch?: number } {
  return epoch === undefined ? {} : { epoch };
}
