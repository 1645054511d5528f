// What every activity needs: the store, AGENTRUN_HOME and a logger with the activity's context.
import { Context } from '@temporalio/activity';
import { log, type Logger } from '../src/log.js';
import type { Store } from '../src/store/index.js';

export interface ActivityDeps {
  store: Store;
  /** AGENTRUN_HOME: private checkpoint repositories and the pricing file live here. */
  home: string;
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

export function cancellationSignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}
