// How a finished conversation ends its workflow, so that Temporal's own status tells the outcome:
// the UI's Failures filter, `ExecutionStatus="Failed"` and alerts on failed workflows find the
// conversations that did not do their task. agentrun's own readers take the full result back from
// the failure's details (resultFromFailure) or the memo.
import { ApplicationFailure, upsertMemo } from '@temporalio/workflow';
import { BUDGET_EXHAUSTED, CONVERSATION_FAILED, RESULT_MEMO, type ConversationResult } from '../api.js';

/**
 * The workflow's return for `result`: the result itself when it completed (or was cancelled by a
 * signal, a clean stop the operator asked for); a thrown non-retryable failure carrying it when it
 * failed or ran out of budget; `cancellation` rethrown (CANCELED) when Temporal asked to cancel.
 */
export function endWorkflow(result: ConversationResult, cancellation: unknown): ConversationResult {
  if (result.status === 'completed') return result;
  if (result.status === 'failed' || result.status === 'budget_exhausted') {
    const budget = result.status === 'budget_exhausted';
    throw ApplicationFailure.create({
      type: budget ? BUDGET_EXHAUSTED : CONVERSATION_FAILED,
      message: budget ? `budget exhausted: ${result.reason}` : result.reason,
      nonRetryable: true,
      details: [result],
    });
  }
  if (result.status === 'cancelled' && cancellation !== undefined) {
    upsertMemo({ [RESULT_MEMO]: result });
    throw cancellation;
  }
  return result;
}
