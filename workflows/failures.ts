// What a failed step says, for the workflow's own records: the innermost message (an activity's
// failure wraps the application error that wraps the cause) and the application error's type.
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

/** The application error type of a failed activity (local activities may surface the ApplicationFailure itself). */
export function failureType(err: unknown): string | undefined {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) return err.cause.type ?? undefined;
  if (err instanceof ApplicationFailure) return err.type ?? undefined;
  return undefined;
}

export function rootMessage(err: Error): string {
  let e: Error = err;
  while (e.cause instanceof Error) e = e.cause;
  return e.message;
}
