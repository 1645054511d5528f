// Waiting for a refusing provider (src/model/pool-wait.ts): the model step ended with ProviderWait,
// and the session waits on a durable timer, then schedules the step again with fresh attempts.
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { ModelErrorType } from '../../src/model/error-types.js';
import type { ProviderWaitDetails } from '../../src/model/pool-wait.js';

export interface ProviderWait extends ProviderWaitDetails {
  message: string;
}

export function providerWaitOf(err: unknown): ProviderWait | undefined {
  const f = err instanceof ActivityFailure ? err.cause : err;
  if (!(f instanceof ApplicationFailure) || f.type !== ModelErrorType.ProviderWait) return undefined;
  const d = (f.details?.[0] ?? {}) as Partial<ProviderWaitDetails>;
  return {
    message: f.message,
    delayMs: typeof d.delayMs === 'number' ? d.delayMs : 0,
    named: d.named === true,
    pool: d.pool,
    attempt: typeof d.attempt === 'number' ? d.attempt : 0,
  };
}

/**
 * How long to wait before asking again: the named delay plus up to a tenth more (so a fleet's
 * conversations do not all come back in the same instant); without one, a capped backoff over the
 * waits in a row. Math.random is seeded per workflow, so replays wait the same.
 */
export function providerWaitMs(w: ProviderWait, inARow: number): number {
  const base = w.named ? w.delayMs : Math.max(w.delayMs, Math.min(30_000, 1_000 * 2 ** Math.min(inARow, 5)));
  return Math.max(250, Math.round(base * (1 + Math.random() * 0.1) + Math.random() * 250));
}
