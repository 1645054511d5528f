// A tenant's weight (`agentrun tenant weight set`), read by the model step so the next step carries
// it to Temporal as the fairness weight. Cached a few seconds per process; a store fault gives no
// weight (Temporal's default of 1, or the queue's override), never a failed step.
import type { Store } from '../store/index.js';
import { DEFAULT_TENANT } from './pool-names.js';
import { gateFor } from './pool.js';
import { tenantWeightOf } from '../store/pool-leases.js';

const CACHE_MS = 5_000;
const cache = new Map<string, { weight: number | undefined; at: number }>();

export async function tenantWeight(store: Store, tenant = DEFAULT_TENANT): Promise<number | undefined> {
  const hit = cache.get(tenant);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.weight;
  try {
    const weight = await tenantWeightOf(await gateFor(store).database(), tenant);
    cache.set(tenant, { weight, at: Date.now() });
    return weight;
  } catch {
    return hit?.weight;
  }
}
