// Timeouts and retries of workflow steps, in one table: what each step may take and how often it
// is tried. Store-only steps are short and retried a few times; a fault that outlasts them is the
// caller's to handle (the session stalls on it).
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';

export const STEP_OPTIONS = {
  /** A batch's own steps (its budget pool, pausing its schedule): store or Temporal calls. */
  batchStep: {
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 },
  },
  /** A session's budget records (raised limits, pause events), as local activities. */
  budgetRecord: {
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 5 },
  },
} as const satisfies Record<string, ActivityOptions | LocalActivityOptions>;
