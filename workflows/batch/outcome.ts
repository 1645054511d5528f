// A batch's outcome as its workflow status: one whose jobs did not all complete ends Failed, so the
// Temporal UI's status filter, `ExecutionStatus="Failed"` queries and alerts on failed workflows
// find it; the table rides in the failure's details, where readers take it from (batchResultOf).
// Only at the very end: a halted batch is still Running and resumable, as before.
import { ApplicationFailure } from '@temporalio/workflow';
import { BATCH_FAILED, type BatchResult, type BatchRollout } from './api.js';

/** The batch's result, or (for batches that ask for it, see BatchRollout.outcomeAsStatus) a failure carrying it. */
export function batchOutcome(result: BatchResult, rollout: BatchRollout): BatchResult {
  const t = result.totals;
  if (!rollout.outcomeAsStatus || t.completed === t.jobs) return result;
  throw ApplicationFailure.nonRetryable(
    `batch ${result.batchId} ${result.state === 'aborted' ? 'was aborted' : 'ended'}: ${t.completed} of ${t.jobs} jobs completed, ${t.failed} failed${t.skipped ? `, ${t.skipped} skipped` : ''}`,
    BATCH_FAILED,
    result,
  );
}
