// Timeouts and retries of workflow steps, in one table: what each step may take and how often it
// is tried. Store-only steps are short and retried a few times; a fault that outlasts them is the
// caller's to handle (the session stalls on it). Each step adds its own `summary` (summaries.ts).
import { ActivityCancellationType, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
import type { RunConfig } from '../src/config.js';
import { MODEL_STEP_ATTEMPTS, NON_RETRYABLE_MODEL_ERRORS } from '../src/model/error-types.js';

/** maximumAttempts 0: without limit. */
const retry = (maximumAttempts: number, maximumInterval = '30s') => ({
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval,
  ...(maximumAttempts > 0 ? { maximumAttempts } : {}),
});

/** The model step's retry policy; its attempts also bound the summary's retries (MODEL_STEP_ATTEMPTS). */
const MODEL_STEP_RETRY = { ...retry(MODEL_STEP_ATTEMPTS, '60s'), nonRetryableErrorTypes: NON_RETRYABLE_MODEL_ERRORS };

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
  /** A session's store-only steps (local activities): an outage that outlasts these retries stalls the conversation. */
  sessionStore: {
    startToCloseTimeout: '30s',
    retry: { ...retry(5, '10s'), nonRetryableErrorTypes: ['UnknownConversation'] },
  },
  /**
   * The first placement of a local workspace started with its origin: any worker may take the task, and
   * those elsewhere refuse it, so it is offered again soon and without an attempt limit, for up to ten minutes.
   */
  placeByOrigin: { scheduleToCloseTimeout: '10m', retry: { initialInterval: '200ms', backoffCoefficient: 1.5, maximumInterval: '5s' } },
  /** A checkpoint's copy pushed off the workspace's host (turn 0's, a fork's). */
  saveOffHost: { startToCloseTimeout: '5m', retry: retry(5) },
  /** Repository jobs: the workspace committed onto the result branch (and pushed). */
  resultBranch: { startToCloseTimeout: '10m', retry: retry(5) },
  /** A sub-agent's agent file, read (on the workspace's host when it has one; then with the host's routing). */
  delegateAgent: { startToCloseTimeout: '1m', retry: retry(5) },
} as const satisfies Record<string, ActivityOptions | LocalActivityOptions>;

/**
 * The session's steps whose options depend on the run's config (its heartbeat timeout, setup's
 * limit, a tool's own timeout): one entry per step, named by it.
 */
export function sessionStepOptions(config: Pick<RunConfig, 'heartbeatTimeoutMs' | 'setupTimeoutMs'>) {
  const heartbeatTimeout = config.heartbeatTimeoutMs;
  return {
    /** The model step on the shared queue (local workspaces without a host). */
    model: { startToCloseTimeout: '20m', heartbeatTimeout, cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED, retry: MODEL_STEP_RETRY },
    /** The model step on the workspace's host (its routing sets the cancellation type). */
    modelOnHost: { startToCloseTimeout: '20m', heartbeatTimeout, retry: MODEL_STEP_RETRY },
    /** Clone, re-materialise and fork copy: on the shared queue (whoever takes a clone becomes the host), heartbeating. */
    placing: { startToCloseTimeout: '5m', heartbeatTimeout: Math.max(heartbeatTimeout, 10_000), retry: retry(5) },
    /** The workspace and the first messages (and turn 0's checkpoint, unless made alongside the first model step). */
    init: { startToCloseTimeout: '5m', heartbeatTimeout, retry: retry(10) },
    /** Turn 0's checkpoint made alongside the first model step. */
    turnZeroCheckpoint: { startToCloseTimeout: '10m', heartbeatTimeout, retry: retry(10) },
    /** Setup: its own limit, plus the cache's copies and (`baseline`) the baseline verify. */
    setup: (baseline: boolean) => ({
      startToCloseTimeout: (config.setupTimeoutMs ?? 20 * 60_000) + (baseline ? 35 : 5) * 60_000,
      heartbeatTimeout,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: retry(3),
    }),
    /** The repository's check at attempt_completion. */
    verify: { startToCloseTimeout: '35m', heartbeatTimeout, retry: retry(3) },
    /** The workspace's Stop hooks. */
    stopHooks: { startToCloseTimeout: '15m', heartbeatTimeout, retry: retry(3) },
    /** One tool call, within the tool's own timeout. */
    tool: (startToCloseTimeout: number) => ({
      startToCloseTimeout,
      heartbeatTimeout,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: retry(5),
    }),
    /** An operator's rollback. */
    rollback: { startToCloseTimeout: '10m', heartbeatTimeout, retry: retry(5) },
  } satisfies Record<string, ActivityOptions | ((...args: never[]) => ActivityOptions)>;
}

export type SessionStepOptions = ReturnType<typeof sessionStepOptions>;
