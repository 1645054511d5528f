// A batch's messages and table: shared by the batch workflow (workflow.ts, rollout.ts) and its
// clients (CLI, tests), with what the CLI checks its flags and starts a batch with (the waves'
// parsing, the start metadata). Faces import a workflow's api files only (test/unit/layers.test.ts).
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { RunConfig } from '../../src/config.js';
import type { ConversationStatus } from '../../src/types.js';
import type { Diffstat } from '../../src/workspace/result-branch.js';
import type { Brake, WaveTarget } from './waves.js';

export { DEFAULT_BRAKE_ON, parseBrake, parseBrakeOn, parseWaves, wavePlan } from './waves.js';
export { batchStartMetadata } from '../summaries.js';

/** The batch workflow's type (its function's name in the worker's bundle). */
export const BATCH_WORKFLOW_TYPE = 'batch';

export interface BatchInput {
  repos: string[];
  task: string;
  /** The run options every job shares (branch, push, budgets…); `repo` is set per job. */
  config: RunConfig;
  concurrency: number;
  searchAttributes?: boolean;
  /** One budget for the whole batch in USD (`--budget`): every model call of its jobs reserves from it (src/model/budget-pool.ts). */
  budgetUsd?: number;
  /**
   * A scheduled batch's share of its schedule's monthly budget (`schedule create --budget-month`):
   * every model call of its jobs reserves from the pool of the schedule and the calendar month (UTC)
   * the batch started in, which every run of that month shares.
   */
  budgetMonthUsd?: number;
  /** Waves, brake, halt (rollout.ts); absent: one wave, no brake. */
  rollout?: BatchRollout;
}

export interface BatchRow {
  repo: string;
  conversationId: string;
  /** `skipped`: never started, because the batch halted (or was aborted) first. */
  status: ConversationStatus | 'pending' | 'skipped';
  reason?: string;
  /** The wave it belongs to (1-based), when the batch runs in waves. */
  wave?: number;
  /** It ended for the infrastructure (its workflow failed, its host was lost), not for its own work: the brake counts it only with `infra`. */
  infra?: boolean;
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
  /** Never started: the batch halted or was aborted first. */
  skipped?: number;
  /** Failures of the infrastructure (among `failed`). */
  infra?: number;
  turns: number;
  costUsd: number;
  files: number;
  insertions: number;
  deletions: number;
}

export interface BatchResult extends Partial<BatchRolloutState> {
  batchId: string;
  rows: BatchRow[];
  totals: BatchTotals;
}

export const batchStateQuery = defineQuery<BatchResult>('batchState');

export function batchTotals(rows: BatchRow[]): BatchTotals {
  const live = (r: BatchRow) =>
    r.status === 'running' || r.status === 'waiting' || r.status === 'paused' || r.status === 'awaiting_budget' || r.status === 'waiting_for_provider';
  const done = (r: BatchRow) => r.status !== 'pending' && r.status !== 'skipped' && !live(r);
  const skipped = rows.filter((r) => r.status === 'skipped').length;
  const infra = rows.filter((r) => r.infra).length;
  return {
    jobs: rows.length,
    completed: rows.filter((r) => r.status === 'completed').length,
    failed: rows.filter((r) => done(r) && r.status !== 'completed').length,
    running: rows.filter(live).length,
    pending: rows.filter((r) => r.status === 'pending').length,
    ...(skipped ? { skipped } : {}),
    ...(infra ? { infra } : {}),
    turns: rows.reduce((s, r) => s + r.turns, 0),
    costUsd: rows.reduce((s, r) => s + r.costUsd, 0),
    files: rows.reduce((s, r) => s + (r.diffstat?.files ?? 0), 0),
    insertions: rows.reduce((s, r) => s + (r.diffstat?.insertions ?? 0), 0),
    deletions: rows.reduce((s, r) => s + (r.diffstat?.deletions ?? 0), 0),
  };
}

/** The rollout options of a batch (BatchInput.rollout). */
export interface BatchRollout {
  waves?: WaveTarget[];
  shuffleSeed?: number;
  brake?: Brake;
  /** How long a halted batch waits for resume or abort before it aborts (default 7 days). */
  haltTimeoutMs?: number;
  /** Started by a schedule with --pause-on-failure: a halt fails the batch at once, so the schedule pauses itself. */
  failOnHalt?: boolean;
}

export type BatchState = 'running' | 'halted' | 'completed' | 'aborted';

export interface WaveState {
  wave: number;
  jobs: number;
  started: number;
  finished: number;
  /** Jobs the brake counts as bad, and infrastructure failures (counted only with `--brake-on infra`). */
  bad: number;
  infra: number;
}

/** What the batch query and result add to the table. */
export interface BatchRolloutState {
  state: BatchState;
  /** Why it halted (or was aborted). */
  reason?: string;
  /** The wave running now (1-based). */
  wave: number;
  waves: WaveState[];
  brake?: Brake & { overridden?: boolean };
  /** The batch's budget (`--budget`): its pool and limit; the spend is in the pool (batch status reads it). */
  budget?: { pool: string; limitUsd: number };
}

export interface BatchControl {
  action: 'resume' | 'abort' | 'raise-budget';
  /** resume: with the brake off for the rest of the batch. */
  override?: boolean;
  /** raise-budget: USD added to the batch's budget, once per raiseId. */
  addUsd?: number;
  raiseId?: string;
  by?: string;
}

export const batchControlUpdate = defineUpdate<{ state: BatchState; budget?: { limitUsd: number; spentUsd: number; reservedUsd: number } }, [BatchControl]>(
  'batchControl',
);

/** The pool of a batch's budget. */
export const batchPool = (batchId: string) => `batch:${batchId}`;

/** The calendar month (UTC) of a time, as YYYY-MM. */
export const utcMonth = (at: Date) => at.toISOString().slice(0, 7);

/** The pool a schedule's runs of one month (YYYY-MM) share (`--budget-month`). */
export const schedulePool = (scheduleId: string, month: string) => `schedule:${scheduleId}:${month}`;

/** The pool a batch's jobs reserve from and its limit when first opened, if it has one: its own budget, or its schedule's month. */
export function batchBudgetOf(input: BatchInput, batchId: string, startedAt: Date): { pool: string; limitUsd: number } | undefined {
  if (input.budgetUsd !== undefined) return { pool: batchPool(batchId), limitUsd: input.budgetUsd };
  if (input.budgetMonthUsd !== undefined && input.config.scheduleId)
    return { pool: schedulePool(input.config.scheduleId, utcMonth(startedAt)), limitUsd: input.budgetMonthUsd };
  return undefined;
}
