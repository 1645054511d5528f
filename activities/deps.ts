// What every activity needs: the store, AGENTRUN_HOME, the turn port and a logger with the activity's context.
import { Context } from '@temporalio/activity';
import { log, type Logger } from '../src/log.js';
import { activeFence } from '../src/store/fence.js';
import { turnPort, type TurnObserver, type TurnPort } from '../src/extensions/observer.js';
import type { Store } from '../src/store/index.js';

export interface ActivityDeps {
  store: Store;
  /** AGENTRUN_HOME: private checkpoint repositories and the pricing file live here. */
  home: string;
  /** The names `--env` may pass to this worker's commands (`agentrun worker --allow-env`); absent: none. */
  allowEnv?: readonly string[];
  /** Whether this worker runs a repository's own extensions (AGENTRUN_REPOSITORY_EXTENSIONS, `--repository-extensions`); absent: off. */
  repositoryExtensions?: boolean;
  /** This worker runs a conversation's `sandbox: off` (`agentrun worker --sandbox off` or `--allow-unsandboxed`); absent: it refuses it. */
  allowUnsandboxed?: boolean;
  /** The worker's extensions and tracing at a turn's named points (src/extensions/observer.ts); none: nothing observes. */
  observer?: TurnObserver;
}

/** The port the activities call: the worker's observer, or one that does nothing. */
export function portOf(deps: ActivityDeps): TurnPort {
  return turnPort(deps.observer);
}

/** pino child logger with the conversation id, turn and activity (and attempt). */
export function activityLog(conversationId: string, turn?: number): Logger {
  let activity: string | undefined;
  let attempt: number | undefined;
  try {
    const info = Context.current().info;
    activity = info.activityType;
    attempt = info.attempt;
  } catch {
    // called outside an activity (benchmarks calling the functions directly)
  }
  return log.child({ conversationId, turn, activity, attempt });
}

export function currentAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}

export function heartbeat(details?: unknown): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    // outside an activity
  }
}

/** The activity's cancellation, and under a fence its supersession too (activities/fence.ts): either kills a running command. */
export function cancellationSignal(): AbortSignal | undefined {
  let signal: AbortSignal | undefined;
  try {
    signal = Context.current().cancellationSignal;
  } catch {
    signal = undefined;
  }
  const superseded = activeFence()?.superseded.signal;
  if (!superseded) return signal;
  return signal ? AbortSignal.any([signal, superseded]) : superseded;
}

/**
 * Heartbeat every `everyMs` while `fn` runs: a step that may take long (git on a large
 * workspace, a summary request) then has a short heartbeat timeout, so a dead worker is
 * noticed in about one heartbeat timeout instead of the whole start-to-close timeout.
 */
export async function withHeartbeat<T>(fn: () => Promise<T>, everyMs = 1000): Promise<T> {
  heartbeat();
  const timer = setInterval(() => heartbeat(), everyMs);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/**
 * An activity that does not report progress itself, or not often enough, heartbeats while it runs,
 * so the workflow can give it a short heartbeat timeout: a host that dies mid-step is noticed in
 * seconds, not after start-to-close.
 */
export function keepAlive<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return (...args: A) => withHeartbeat(() => fn(...args));
}

/** Names the scheduled activity (the same across its retries): run id and activity id. */
export function activityKey(): string {
  try {
    const info = Context.current().info;
    return `${info.workflowExecution?.runId}/${info.activityId}`;
  } catch {
    return `direct-${Date.now()}`;
  }
}
