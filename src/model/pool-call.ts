// A model call through its provider pool (src/model/pool.ts): the slot is taken before the HTTP
// request and given back after it, with what the provider said (a refusal pauses the pool; rate-limit
// headers on a success may too). Scripted and recorded models are local: they pass ungated unless
// AGENTRUN_POOLS names a pool for them (a rehearsal of the pools).
import { ApplicationFailure } from '@temporalio/common';
import type { RunConfig } from '../config.js';
import type { Store } from '../store/index.js';
import { timedWait } from '../metrics.js';
import { ModelErrorType } from './error-types.js';
import { callIdentity, gateFor, globMatch, MAX_WAIT_IN_CALL_MS, poolFor, poolMap } from './pool.js';

export interface PoolCallInput {
  store: Store;
  config: Pick<RunConfig, 'model' | 'tenant' | 'priority'>;
  /** The resolved model: scripted ones are gated only in a rehearsal pool; its base URL names the default pool. */
  model: { scripted: boolean; baseUrl?: string };
  /** Names the call's place in line, the same for every retry of it. */
  place: string;
  heartbeat(details?: unknown): void;
  signal?: AbortSignal;
}

/**
 * A scripted or recorded model's pool: only one AGENTRUN_POOLS names for it (`scripted:*=rehearsal`),
 * so that pools, their pauses, limits and priorities can be rehearsed without a provider; else none.
 */
function rehearsalPool(model: string): string | undefined {
  const name = model.trim().toLowerCase();
  return poolMap().find(([pattern]) => globMatch(pattern, name))?.[1];
}

export async function throughPool<T>(input: PoolCallInput, call: (onHeaders: (h: Headers) => void) => Promise<T>): Promise<T> {
  const pool = input.model.scripted ? rehearsalPool(input.config.model) : poolFor(input.config.model, input.model.baseUrl);
  if (pool === undefined) return call(() => {});
  const gate = gateFor(input.store);
  const deadline = Date.now() + MAX_WAIT_IN_CALL_MS;
  for (;;) {
    const lease = await timedWait(
      'a provider pool slot',
      gate.acquire({
        pool,
        waiterId: input.place,
        ...callIdentity(input.config),
        heartbeat: input.heartbeat,
        signal: input.signal,
        deadline,
      }),
    );
    let headers: Headers | undefined;
    let result: T;
    try {
      result = await call((h) => {
        headers = h;
        void gate.admitted(lease);
      });
    } catch (err) {
      const refused = err instanceof ApplicationFailure && err.type === ModelErrorType.RateLimited;
      const retryAfterMs = refused ? delayMs(err.nextRetryDelay) : undefined;
      await gate.release(lease, refused ? { refused: { retryAfterMs } } : {});
      // Refused before the answer started (nothing streamed): the gate waits out the pause this
      // refusal set, inside the call while that is short; a longer wait is the workflow's.
      if (refused && headers === undefined && Date.now() + (retryAfterMs ?? 0) < deadline) {
        input.heartbeat({ refusedBy: pool });
        continue;
      }
      throw err;
    }
    // Not waited for: the answer is here, and the store hears of the free slot a moment later
    // (waiters are woken by its notify; a lost release lapses at the lease's expiry).
    void gate.release(lease, { headers });
    return result;
  }
}

function delayMs(d: unknown): number | undefined {
  return typeof d === 'number' ? d : undefined;
}
