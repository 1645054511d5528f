// The step a turn's logic runs in: a Temporal activity (its attempt, heartbeats, cancellation and,
// under a fence, its supersession), or a plain call outside one (benchmarks, tests), where each
// of these does nothing or answers as a first attempt would.
import { Context } from '@temporalio/activity';
import { log, type Logger } from '../log.js';
import { activeFence } from '../store/fence.js';
import { heartbeat } from '../runtime/heartbeat.js';

export { heartbeat };

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

/** The activity's cancellation, and under a fence its supersession too (activities/fence.ts wraps the step in it): either kills a running command. */
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

/** A call's attempt, unique across re-runs of the step (a new activity after a budget wait starts at attempt 1 again). */
export function callAttemptKey(attempt: number): string {
  try {
    return `${Context.current().info.activityId}.${attempt}`;
  } catch {
    return String(attempt);
  }
}
