// A refusal for now, at the model step's edge: the workflow waits for the provider itself, so a
// rate-limit failure leaves the step as a non-retryable ProviderWait with the
// delay the provider or the pool named, and the workflow waits on a durable timer and schedules the
// step again. So a refusal, however long it lasts, never spends one of the step's attempts, and the
// conversation's status says what it waits for.
import { ApplicationFailure } from '@temporalio/common';
import { ModelErrorType } from './error-types.js';

export interface ProviderWaitDetails {
  /** How long the provider or the pool asked to wait; 0: ask again soon. */
  delayMs: number;
  /** The provider named the delay (retry-after, a pause): no backoff of its own on top. */
  named: boolean;
  pool?: string;
  /** The step's attempt when it ended so (its earlier waits included): the next schedule numbers its attempts on from there. */
  attempt: number;
}

/**
 * `all`: every refusal waits in the workflow; `'pool'`: only its pool's (a scripted model's own
 * refusals keep the retries its script counts on; the rehearsal pool it goes through waits as a provider's would).
 */
export async function providerWaits<R>(which: 'all' | 'pool', attempt: number, step: () => Promise<R>): Promise<R> {
  try {
    return await step();
  } catch (err) {
    if (!(err instanceof ApplicationFailure) || err.type !== ModelErrorType.RateLimited) throw err;
    const delay = typeof err.nextRetryDelay === 'number' ? err.nextRetryDelay : undefined;
    const pool = (err.details?.[0] as { pool?: string } | undefined)?.pool;
    if (which === 'pool' && !pool) throw err;
    const details: ProviderWaitDetails = { delayMs: delay ?? 0, named: delay !== undefined, attempt, ...(pool ? { pool } : {}) };
    throw ApplicationFailure.create({ message: err.message, type: ModelErrorType.ProviderWait, nonRetryable: true, details: [details] });
  }
}
