// What a person says to a running conversation (approve or deny the waiting call, answer its
// question, cancel it) and the state query bounded in time: written once, used by the SDK
// (client.ts), the CLI (src/cli/commands.ts) and the page (src/ui/server.ts). Each surface keeps
// only how it reports a failure (an error, a line and exit 2, an HTTP status).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { answerUpdate, cancelSignal, decideApprovalUpdate, stateQuery, type ConversationState } from '../../workflows/api.js';

type Handle = ReturnType<Client['workflow']['getHandle']>;

export interface Decision {
  /** The call approved or denied; absent: the one waiting. */
  callId?: string;
  /** The hash of the arguments the person saw; the workflow refuses the decision if others wait. */
  argsHash?: string;
  approved: boolean;
  reason?: string;
  /** Who decided, recorded with the decision. */
  by?: string;
}

/** Approve or deny the call waiting in the conversation (an update: it needs a worker). */
export function decideApproval(h: Handle, d: Decision): Promise<{ callId: string; approved: boolean; by?: string; atMs?: number }> {
  return h.executeUpdate(decideApprovalUpdate, { args: [{ callId: d.callId, argsHash: d.argsHash, approved: d.approved, reason: d.reason, by: d.by }] });
}

/** Answer the question the conversation asked (an update: it needs a worker). */
export function answerQuestion(h: Handle, text: string): Promise<{ callId: string }> {
  return h.executeUpdate(answerUpdate, { args: [{ text }] });
}

/** Ask the conversation to stop after its running step; `now` also cancels the running step. */
export async function requestCancel(h: Handle, reason: string | undefined, now = false): Promise<void> {
  await h.signal(cancelSignal, { reason });
  if (now) await h.cancel();
}

/** The workflow's state query, bounded in time (a conversation with no worker would hang it); undefined when it does not answer. */
export async function queryStateWithin(client: Client, id: string, ms: number): Promise<ConversationState | undefined> {
  try {
    return (await client.withDeadline(Date.now() + ms, () => client.workflow.getHandle(id).query(stateQuery))) as ConversationState;
  } catch {
    return undefined;
  }
}

/** No worker took an update within its deadline (the server may remember pollers of a dead worker). */
export class UpdateDeadlineError extends Error {
  constructor(readonly ms: number) {
    super(`no worker took this within ${ms / 1000} s`);
    this.name = 'UpdateDeadlineError';
  }
}

/** Run `fn` (an update) within `ms`; past it, an UpdateDeadlineError. */
export async function withinDeadline<T>(client: Client, ms: number, fn: () => Promise<T>): Promise<T> {
  try {
    return await client.withDeadline(Date.now() + ms, fn);
  } catch (err) {
    const e = err as Error & { code?: number };
    if (e.code === 4 || /deadline/i.test(`${e.message} ${e.cause instanceof Error ? e.cause.message : ''}`)) throw new UpdateDeadlineError(ms);
    throw err;
  }
}

/** The message of a Temporal error, from its cause when it has one (the server's words). */
export function temporalMessage(err: unknown): string {
  const e = err as Error;
  return e.cause instanceof Error ? e.cause.message : e.message;
}

/** Whether Temporal refused because the conversation is not running (finished, or never was: it says "not found" for both). */
export function notRunning(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError || /workflow execution already completed|not found/i.test(temporalMessage(err));
}
