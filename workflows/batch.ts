// A batch: one repository job per repository, as child `session` workflows, at most
// `concurrency` at once. A failed job does not stop the others; the table is the result.
import {
  CancelledFailure,
  ChildWorkflowFailure,
  condition,
  defineQuery,
  executeChild,
  setHandler,
  workflowInfo,
  allHandlersFinished,
} from '@temporalio/workflow';
import type { RunConfig } from '../src/config.js';
import type { ConversationStatus } from '../src/types.js';
import type { Diffstat } from '../src/workspace/result-branch.js';
import { resultFromFailure, type ConversationResult } from './api.js';
import { session, type SessionInput } from './session.js';
import { resultBranchName, workflowDetails, workflowSummary } from './summaries.js';

export const BATCH_WORKFLOW_TYPE = 'batch';

export interface BatchInput {
  repos: string[];
  task: string;
  /** The run options every job shares (branch, push, budgets…); `repo` is set per job. */
  config: RunConfig;
  concurrency: number;
  searchAttributes?: boolean;
}

export interface BatchRow {
  repo: string;
  conversationId: string;
  status: ConversationStatus | 'pending';
  reason?: string;
  branch?: string;
  commit?: string;
  pushed?: boolean;
  diffstat?: Omit<Diffstat, 'text'>;
  turns: number;
  costUsd: number;
  /** The repository's check (`--verify`): passed or not, and whether it was already failing before turn 1 (`--verify-baseline`). */
  verify?: { passed: boolean | null; exitCode: number | null; attempts: number; failingBefore?: boolean };
  /** Filled in by readers (src/client/batch-waiting.ts), not the workflow: a running job that waits for a person, and the line that answers it. */
  waiting?: { for: 'approval' | 'question'; what: string; command: string };
}

export interface BatchTotals {
  jobs: number;
  completed: number;
  failed: number;
  running: number;
  pending: number;
  turns: number;
  costUsd: number;
  files: number;
  insertions: number;
  deletions: number;
}

export interface BatchResult {
  batchId: string;
  rows: BatchRow[];
  totals: BatchTotals;
}

export const batchStateQuery = defineQuery<BatchResult>('batchState');

export function batchTotals(rows: BatchRow[]): BatchTotals {
  const done = (r: BatchRow) => r.status !== 'pending' && r.status !== 'running' && r.status !== 'waiting' && r.status !== 'paused';
  return {
    jobs: rows.length,
    completed: rows.filter((r) => r.status === 'completed').length,
    failed: rows.filter((r) => done(r) && r.status !== 'completed').length,
    running: rows.filter((r) => r.status === 'running' || r.status === 'waiting' || r.status === 'paused').length,
    pending: rows.filter((r) => r.status === 'pending').length,
    turns: rows.reduce((s, r) => s + r.turns, 0),
    costUsd: rows.reduce((s, r) => s + r.costUsd, 0),
    files: rows.reduce((s, r) => s + (r.diffstat?.files ?? 0), 0),
    insertions: rows.reduce((s, r) => s + (r.diffstat?.insertions ?? 0), 0),
    deletions: rows.reduce((s, r) => s + (r.diffstat?.deletions ?? 0), 0),
  };
}

export async function batch(input: BatchInput): Promise<BatchResult> {
  const batchId = workflowInfo().workflowId;
  const rows: BatchRow[] = input.repos.map((repo, i) => ({ repo, conversationId: `${batchId}-${i + 1}`, status: 'pending', turns: 0, costUsd: 0 }));
  setHandler(batchStateQuery, () => ({ batchId, rows, totals: batchTotals(rows) }));

  const runJob = async (row: BatchRow) => {
    row.status = 'running';
    const child: SessionInput = {
      task: input.task,
      workspace: row.repo,
      config: { ...input.config, repo: row.repo },
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
        // A job that failed carries its result in the failure (workflows/outcome.ts).
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
    }
  };

  let next = 0;
  const lane = async () => {
    while (next < rows.length) await runJob(rows[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(input.concurrency, rows.length)) }, lane));
  await condition(allHandlersFinished);
  return { batchId, rows, totals: batchTotals(rows) };
}
