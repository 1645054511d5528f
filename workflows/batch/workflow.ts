// A batch: one repository job per repository, as child `session` workflows, at most
// `concurrency` at once. A failed job does not stop the others; the table is the result.
// The jobs start in waves (`--waves`), and a brake on the rate of bad jobs in a wave halts the batch
// until an operator resumes or aborts it (rollout.ts).
import { CancelledFailure, ChildWorkflowFailure, executeChild, workflowInfo } from '@temporalio/workflow';
import { resultFromFailure, type ConversationResult } from '../api.js';
import type { SessionInput } from '../session/types.js';
import { session } from '../session/workflow.js';
import { resultBranchName, workflowDetails, workflowSummary } from '../summaries.js';
import { batchInWaves } from './rollout.js';
import { batchBudgetOf, type BatchInput, type BatchResult, type BatchRow } from './api.js';

export async function batch(input: BatchInput): Promise<BatchResult> {
  const batchId = workflowInfo().workflowId;
  const rows: BatchRow[] = input.repos.map((repo, i) => ({ repo, conversationId: `${batchId}-${i + 1}`, status: 'pending', turns: 0, costUsd: 0 }));
  const budgetPool = batchBudgetOf(input, batchId, workflowInfo().startTime)?.pool;
  return batchInWaves(input, batchId, rows, (row) => runJob(row));

  async function runJob(row: BatchRow): Promise<void> {
    row.status = 'running';
    const job = input.jobs?.[rows.indexOf(row)];
    const child: SessionInput = job
      ? { ...job, config: { ...job.config, ...(budgetPool ? { budgetPool } : {}) }, searchAttributes: input.searchAttributes }
      : {
          task: input.task,
          workspace: row.repo,
          config: { ...input.config, repo: row.repo, ...(budgetPool ? { budgetPool } : {}) },
          searchAttributes: input.searchAttributes,
        };
    // The job's branch as it will be named (its template expanded), for the Temporal UI.
    const branch = resultBranchName({ repo: row.repo, branch: input.config.branch }, { id: row.conversationId, atMs: Date.now() });
    try {
      const r: ConversationResult = await executeChild(session, {
        workflowId: row.conversationId,
        args: [child],
        // What the Temporal UI shows for the job: its task and repository, under the batch.
        staticSummary: workflowSummary(input.task, { repo: row.repo, branch }),
        staticDetails: `${workflowDetails(input.task, { repo: row.repo, branch, model: input.config.model })}\n\nJob of batch ${batchId}.`,
      }).catch((err: unknown) => {
        // A job that failed carries its result in the failure (workflows/session/outcome.ts).
        const failed = resultFromFailure(err);
        if (failed) return failed;
        throw err;
      });
      Object.assign(row, { status: r.status, reason: r.reason, turns: r.turns, costUsd: r.costUsd });
      if (r.verify)
        row.verify = {
          passed: r.verify.passed,
          exitCode: r.verify.exitCode,
          attempts: r.verify.attempts,
          ...(r.verify.baseline ? { failingBefore: !r.verify.baseline.passed } : {}),
        };
      if (r.branch) {
        const { text: _text, ...diffstat } = r.branch.diffstat;
        Object.assign(row, { branch: r.branch.branch, commit: r.branch.commit, pushed: r.branch.pushed, diffstat });
      }
    } catch (err) {
      // The child itself failed or was terminated: the row says so, the others go on.
      row.status = err instanceof ChildWorkflowFailure && err.cause instanceof CancelledFailure ? 'cancelled' : 'failed';
      row.reason = err instanceof ChildWorkflowFailure ? `${err.cause?.message ?? err.message}` : (err as Error).message;
      row.infra = true;
    }
  }
}
