// What operators do with provider pools (`agentrun pool …`, `agentrun tenant weight set`, doctor):
// set a pool's limits, read its state fleet-wide, pause and resume it. The gate (src/model/pool.ts) reads
// the same rows on every call, so a change applies to every worker at its next call.
import type pg from 'pg';

/** A pool's name: what `AGENTRUN_POOLS` and `agentrun pool set` accept. */
export const POOL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

/** The channel a release or a resume notifies with the pool's name, to wake the calls waiting for it. */
export const POOL_CHANNEL = 'agentrun_pool';

/** PostgreSQL's `infinity` (an operator's pause), as node-postgres hands it over. */
export const FOREVER = 8.64e15;
export function asTime(v: Date | string | number | null | undefined): Date | undefined {
  if (v === null || v === undefined) return undefined;
  if (v === 'infinity' || v === Infinity) return new Date(FOREVER);
  const d = v instanceof Date ? v : new Date(v);
  return Number.isNaN(d.getTime()) ? new Date(FOREVER) : d;
}

export class PoolInputError extends Error {}

export interface PoolState {
  pool: string;
  /** The configured limit; undefined: adaptive (AIMD from the provider's answers). */
  concurrency?: number;
  rpm?: number;
  /** The limit in force: the configured one, else the adaptive one. */
  limit: number;
  adaptive: boolean;
  /** Leases held across the fleet now. */
  inFlight: number;
  /** Calls waiting for a slot now. */
  backlog: number;
  pausedUntil?: string;
  pausedBy?: string;
  refusals10m: number;
  calls10m: number;
}

export function checkPoolName(name: string): string {
  if (!POOL_NAME.test(name)) throw new PoolInputError(`invalid pool name "${name}": letters, digits and ._:/- (at most 128), starting with a letter or digit`);
  return name;
}

export async function setPool(db: pg.Pool, name: string, limits: { concurrency?: number | 'adaptive'; rpm?: number | 'none' }): Promise<void> {
  checkPoolName(name);
  const c = limits.concurrency;
  const r = limits.rpm;
  await db.query(
    `INSERT INTO pools (pool, concurrency, rpm) VALUES ($1, $2, $3)
     ON CONFLICT (pool) DO UPDATE SET
       concurrency = CASE WHEN $4::boolean THEN excluded.concurrency ELSE pools.concurrency END,
       rpm = CASE WHEN $5::boolean THEN excluded.rpm ELSE pools.rpm END,
       updated_at = now()`,
    [name, typeof c === 'number' ? c : null, typeof r === 'number' ? r : null, c !== undefined, r !== undefined],
  );
}

/** The ids of the callers in line for any pool now (`conversation:seq:segment:purpose`). */
export async function waitersInLine(db: pg.Pool): Promise<string[]> {
  const { rows } = await db.query<{ waiter_id: string }>('SELECT waiter_id FROM pool_waiters WHERE expires_at > now()');
  return rows.map((r) => r.waiter_id);
}

export async function poolStates(db: pg.Pool, name?: string): Promise<PoolState[]> {
  const { rows } = await db.query<{
    pool: string;
    concurrency: number | null;
    rpm: number | null;
    adaptive_limit: number;
    paused_until: Date | string | number | null;
    paused_by: string | null;
    in_flight: string;
    backlog: string;
    refusals: string;
    calls: string;
  }>(
    `SELECT p.pool, p.concurrency, p.rpm, p.adaptive_limit, p.paused_by,
            CASE WHEN p.paused_until > now() THEN p.paused_until END AS paused_until,
            (SELECT count(*) FROM pool_leases l WHERE l.pool = p.pool AND l.expires_at > now()) AS in_flight,
            (SELECT count(*) FROM pool_waiters w WHERE w.pool = p.pool AND w.expires_at > now()) AS backlog,
            (SELECT count(*) FROM pool_events e WHERE e.pool = p.pool AND e.kind = '429' AND e.at > now() - interval '10 minutes') AS refusals,
            (SELECT count(*) FROM pool_events e WHERE e.pool = p.pool AND e.kind = 'call' AND e.at > now() - interval '10 minutes') AS calls
     FROM pools p WHERE $1::text IS NULL OR p.pool = $1 ORDER BY p.pool`,
    [name ?? null],
  );
  return rows.map((r) => {
    const paused = asTime(r.paused_until);
    return {
      pool: r.pool,
      ...(r.concurrency !== null ? { concurrency: r.concurrency } : {}),
      ...(r.rpm !== null ? { rpm: r.rpm } : {}),
      limit: r.concurrency ?? Math.floor(r.adaptive_limit),
      adaptive: r.concurrency === null,
      inFlight: Number(r.in_flight),
      backlog: Number(r.backlog),
      ...(paused ? { pausedUntil: paused.getTime() >= 8.64e15 ? 'resumed' : paused.toISOString(), pausedBy: r.paused_by ?? undefined } : {}),
      refusals10m: Number(r.refusals),
      calls10m: Number(r.calls),
    };
  });
}

/** A pool that exists (a call used it, or `pool set` made it); else an error naming the known ones. */
export async function knownPool(db: pg.Pool, name: string): Promise<void> {
  checkPoolName(name);
  const { rows } = await db.query<{ pool: string }>('SELECT pool FROM pools ORDER BY pool');
  if (rows.some((r) => r.pool === name)) return;
  const known = rows.map((r) => r.pool);
  throw new PoolInputError(
    `unknown pool "${name}"${known.length ? ` (known: ${known.join(', ')})` : ' (no pool yet)'}; create it with: agentrun pool set ${name} --concurrency N`,
  );
}

/** An operator's pause holds until resumed; a provider's refusal during it does not shorten it. */
export async function pausePool(db: pg.Pool, name: string): Promise<void> {
  await knownPool(db, name);
  await db.query(`UPDATE pools SET paused_until = 'infinity', paused_by = 'an operator (agentrun pool pause)', updated_at = now() WHERE pool = $1`, [name]);
}

export async function resumePool(db: pg.Pool, name: string): Promise<void> {
  await knownPool(db, name);
  await db.query(`UPDATE pools SET paused_until = NULL, paused_by = NULL, updated_at = now() WHERE pool = $1; `, [name]);
  await db.query('SELECT pg_notify($1, $2)', [POOL_CHANNEL, name]);
}

export async function setTenantWeights(db: pg.Pool, weights: Record<string, number>): Promise<void> {
  for (const [tenant, weight] of Object.entries(weights)) {
    await db.query('INSERT INTO tenant_weights (tenant, weight) VALUES ($1, $2) ON CONFLICT (tenant) DO UPDATE SET weight = excluded.weight', [tenant, weight]);
  }
}

export async function setTenantRpm(db: pg.Pool, limits: Record<string, number | null>): Promise<void> {
  for (const [tenant, rpm] of Object.entries(limits)) {
    if (rpm === null) await db.query('DELETE FROM tenant_limits WHERE tenant = $1', [tenant]);
    else await db.query('INSERT INTO tenant_limits (tenant, rpm) VALUES ($1, $2) ON CONFLICT (tenant) DO UPDATE SET rpm = excluded.rpm', [tenant, rpm]);
  }
}

/** A tenant the operator set a weight or a requests-per-minute limit for (`tenant show`). */
export interface TenantSetting {
  tenant: string;
  /** Its share of the pools while others wait (1 when unset). */
  weight: number;
  /** Model calls a minute across every pool; absent: no limit. */
  rpm?: number;
}

export async function tenantSettings(db: pg.Pool): Promise<TenantSetting[]> {
  const { rows } = await db.query<{ tenant: string; weight: number | null; rpm: number | null }>(
    `SELECT COALESCE(w.tenant, l.tenant) AS tenant, w.weight, l.rpm
     FROM tenant_weights w FULL OUTER JOIN tenant_limits l ON l.tenant = w.tenant ORDER BY 1`,
  );
  return rows.map((r) => ({ tenant: r.tenant, weight: r.weight ?? 1, ...(r.rpm !== null ? { rpm: r.rpm } : {}) }));
}
