// The provider pools' leases in PostgreSQL (`pools`, `pool_leases`, `pool_waiters`, `pool_events`;
// migration 7): the statements the gate (src/model/pool.ts) runs on every model call to take, renew
// and give back a slot, and the LISTEN that wakes its waiters. When a call takes and releases a slot
// is the model's business; how the fleet-wide state moves is here.
import pg from 'pg';
import { migrate } from './migrations.js';
import { asTime, POOL_CHANNEL } from './pool-admin.js';

/**
 * The gate's writes commit without waiting for the WAL to reach disk (in that transaction only):
 * the flush was most of a call's overhead (a few ms per commit here). What a PostgreSQL crash can
 * lose is the last fraction of a second of leases and releases, which are soft state: a lost lease
 * lets at most the calls granted in that moment run beside the limit until they end; a lost release
 * lapses at its expiry. The store's other writes keep synchronous commits.
 */
const ASYNC_COMMIT = "set_config('synchronous_commit', 'off', true)";

/**
 * The fast path (migration 13): the pool is not paused, has no rpm, the tenant no rpm of its own,
 * the pool holds fewer live leases than its
 * limit, every one on a slot below it, and nobody else waits: take a free slot (a random one, so
 * callers at once rarely pick the same; with n held, one of the first n+1 is free, so it looks at a
 * few more than that, not the whole limit) in this one statement. A caller that picked the slot another
 * took a moment earlier gets no row from the insert and takes the locked path
 * (agentrun_pool_acquire), as does every call the fast path does not fit.
 */
const FAST_ACQUIRE = `
WITH p AS (
  SELECT coalesce(concurrency::double precision, floor(adaptive_limit)) AS lim FROM pools
  WHERE pool = $1 AND (paused_until IS NULL OR paused_until <= now()) AND rpm IS NULL
),
live AS (SELECT slot FROM pool_leases WHERE pool = $1 AND expires_at > now()),
free AS (
  SELECT s FROM p, generate_series(0, least(greatest(1, p.lim)::integer, (SELECT count(*) FROM live)::integer + 8) - 1) s
  WHERE (SELECT count(*) FROM live) < p.lim
    AND NOT EXISTS (SELECT 1 FROM live WHERE live.slot IS NULL OR live.slot >= p.lim)
    AND NOT EXISTS (SELECT 1 FROM pool_waiters w WHERE w.pool = $1 AND w.expires_at > now() AND w.waiter_id <> $2)
    AND NOT EXISTS (SELECT 1 FROM tenant_limits t WHERE t.tenant = $5)
    AND NOT EXISTS (SELECT 1 FROM live WHERE live.slot = s)
  ORDER BY random() LIMIT 1
),
ins AS (
  INSERT INTO pool_leases (lease_id, pool, worker_id, tenant, priority, expires_at, slot)
    SELECT $3, $1, $4, $5, $6::integer, now() + make_interval(secs => $7::integer / 1000.0), s FROM free
  ON CONFLICT (pool, slot) DO UPDATE SET lease_id = excluded.lease_id, worker_id = excluded.worker_id, tenant = excluded.tenant,
    priority = excluded.priority, acquired_at = now(), expires_at = excluded.expires_at
    WHERE pool_leases.expires_at <= now()
  RETURNING slot
),
e AS (INSERT INTO pool_events (pool, kind, tenant) SELECT $1, 'call', $5 FROM ins)
SELECT (SELECT slot FROM ins) AS slot, (SELECT lim FROM p) AS pool_limit, (SELECT count(*) FROM live) AS held, ${ASYNC_COMMIT}`;

/**
 * Give a slot back, in one prepared statement: the lease goes; an adaptive limit that was binding
 * (when the call was granted, or now: a grant without the lock cannot see the grants beside it)
 * rises; rate-limit headers that say the provider's limit is spent pause the pool until it resets;
 * waiters, if any, are told.
 */
const RELEASE = `
WITH d AS (DELETE FROM pool_leases WHERE lease_id = $1 RETURNING pool),
     u AS (UPDATE pools SET adaptive_limit = least(1000, adaptive_limit + CASE WHEN last_decrease_at IS NULL THEN 1 ELSE 1.0 / greatest(adaptive_limit, 1) END),
                            updated_at = now()
           WHERE pool = $2 AND concurrency IS NULL AND NOT $5::boolean
             AND ($3::boolean OR (SELECT count(*) FROM pool_leases l WHERE l.pool = $2 AND l.expires_at > now()) >= floor(adaptive_limit))
           RETURNING 1),
     p AS (UPDATE pools SET paused_until = greatest(coalesce(paused_until, now()), now() + make_interval(secs => $4::double precision / 1000)),
                            paused_by = 'the provider (limit exhausted)', updated_at = now()
           WHERE pool = $2 AND $4::double precision IS NOT NULL AND coalesce(paused_until, now()) <> 'infinity' RETURNING 1)
SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM u), (SELECT count(*) FROM p),
       (SELECT pg_notify('${POOL_CHANNEL}', $2) WHERE EXISTS (SELECT 1 FROM pool_waiters w WHERE w.pool = $2 AND w.expires_at > now())), ${ASYNC_COMMIT}`;

/**
 * The provider admitted a stream while the pool is in its slow start (no refusal yet) and its limit
 * binds (at the grant, or now): the limit rises by one at once, and waiters are told. The call's
 * release then raises nothing more.
 */
const ADMITTED = `
WITH u AS (UPDATE pools SET adaptive_limit = least(1000, adaptive_limit + 1), updated_at = now()
           WHERE pool = $1 AND concurrency IS NULL AND last_decrease_at IS NULL
             AND ($2::boolean OR (SELECT count(*) FROM pool_leases l WHERE l.pool = $1 AND l.expires_at > now()) >= floor(adaptive_limit))
           RETURNING 1)
SELECT (SELECT count(*) FROM u)::int AS raised,
       (SELECT pg_notify('${POOL_CHANNEL}', $1) WHERE EXISTS (SELECT 1 FROM u) AND EXISTS (SELECT 1 FROM pool_waiters w WHERE w.pool = $1 AND w.expires_at > now())), ${ASYNC_COMMIT}`;

/**
 * A refusal: the lease goes, the pool pauses for every worker, and an adaptive limit decreases by a
 * quarter once per pause (the refusals of one burst are one signal), never above the streams still
 * in flight, which the provider admitted.
 */
const REFUSED = `
WITH d AS (DELETE FROM pool_leases WHERE lease_id = $1 RETURNING pool),
     held AS (SELECT count(*) AS n FROM pool_leases WHERE pool = $2 AND expires_at > now() AND lease_id <> $1),
     e AS (INSERT INTO pool_events (pool, kind) VALUES ($2, '429') RETURNING 1),
     u AS (UPDATE pools SET
             adaptive_limit = greatest(1, least((SELECT n FROM held),
               CASE WHEN last_decrease_at IS NULL OR last_decrease_at < now() - make_interval(secs => greatest(1, $3::double precision / 1000))
                    THEN adaptive_limit * 0.75 ELSE adaptive_limit END)),
             last_decrease_at = CASE WHEN last_decrease_at IS NULL OR last_decrease_at < now() - make_interval(secs => greatest(1, $3::double precision / 1000))
                                     THEN now() ELSE last_decrease_at END,
             paused_by = CASE WHEN paused_until = 'infinity' THEN paused_by ELSE 'the provider (429)' END,
             paused_until = greatest(coalesce(paused_until, now()), now() + make_interval(secs => $3::double precision / 1000)),
             updated_at = now()
           WHERE pool = $2 RETURNING 1)
SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM e), (SELECT count(*) FROM u), ${ASYNC_COMMIT}`;

/** One call asking for a slot of a pool. */
export interface LeaseRequest {
  pool: string;
  /** Its place in line, the same across retries of the call. */
  waiterId: string;
  leaseId: string;
  workerId: string;
  tenant: string;
  priority: number;
  leaseMs: number;
}

/** A slot taken: `binding` when the pool's limit was reached with it. */
export interface Granted {
  binding: boolean;
}

/** What the pool answered when it did not grant. */
export interface Refusal {
  why: string;
  waitUntil?: Date;
  limit: number;
  held: number;
}

const args = (r: LeaseRequest) => [r.pool, r.waiterId, r.leaseId, r.workerId, r.tenant, r.priority, r.leaseMs];

/** The fast path without a lock: a free slot while nobody waits; undefined when it does not fit (take the locked path). */
export async function takeFreeSlot(db: pg.Pool, req: LeaseRequest): Promise<Granted | undefined> {
  const { rows } = await db.query<{ slot: number | null; pool_limit: number | null; held: string | null }>({
    name: 'agentrun-pool-fast',
    text: FAST_ACQUIRE,
    values: args(req),
  });
  const r = rows[0];
  return r && r.slot !== null && r.pool_limit !== null ? { binding: Number(r.held) + 1 >= r.pool_limit } : undefined;
}

/**
 * The locked path (agentrun_pool_acquire): under the pool's advisory lock, granted while the pool is
 * not paused, holds fewer leases than its limit, is under its rpm, and no better waiter is in line;
 * otherwise the caller's place in line is kept and the reason returned.
 */
export async function acquireLease(db: pg.Pool, req: LeaseRequest): Promise<Granted | Refusal> {
  const { rows } = await db.query<{ granted: boolean; wait_until: Date | string | number | null; pool_limit: number; held: string; why: string }>(
    'SELECT * FROM agentrun_pool_acquire($1, $2, $3, $4, $5, $6, $7)',
    args(req),
  );
  const r = rows[0]!;
  const held = Number(r.held);
  if (r.granted) return { binding: held >= r.pool_limit };
  return { why: r.why, waitUntil: asTime(r.wait_until), limit: r.pool_limit, held };
}

/** Give a slot back after a call the provider answered; `resetMs`: its headers said the limit is spent until then. */
export async function releaseLease(
  db: pg.Pool,
  lease: { id: string; pool: string; binding: boolean; raised?: boolean },
  resetMs: number | undefined,
): Promise<void> {
  await db.query({ name: 'agentrun-pool-release', text: RELEASE, values: [lease.id, lease.pool, lease.binding, resetMs ?? null, lease.raised === true] });
}

/** Raise a pool in its slow start when the provider admitted a stream (ADMITTED): whether it rose. */
export async function admitLease(db: pg.Pool, lease: { pool: string; binding: boolean }): Promise<boolean> {
  const { rows } = await db.query<{ raised: number }>({ name: 'agentrun-pool-admitted', text: ADMITTED, values: [lease.pool, lease.binding] });
  return Boolean(rows[0]?.raised);
}

/** Give a slot back after the provider refused the call: the pool pauses `pauseMs` for every worker. */
export async function refuseLease(db: pg.Pool, lease: { id: string; pool: string }, pauseMs: number): Promise<void> {
  await db.query(REFUSED, [lease.id, lease.pool, pauseMs]);
}

/** Leases held by a live process live `leaseMs` longer. */
export async function renewLeases(db: pg.Pool, leaseIds: string[], leaseMs: number): Promise<void> {
  await db.query(
    `WITH u AS (UPDATE pool_leases SET expires_at = now() + make_interval(secs => $2::double precision / 1000) WHERE lease_id = ANY($1) RETURNING 1)
     SELECT (SELECT count(*) FROM u), ${ASYNC_COMMIT}`,
    [leaseIds, leaseMs],
  );
}

/** A tenant's weight (`agentrun tenant weight set`), or undefined when unset. */
export async function tenantWeightOf(db: pg.Pool, tenant: string): Promise<number | undefined> {
  const { rows } = await db.query<{ weight: number }>('SELECT weight FROM tenant_weights WHERE tenant = $1', [tenant]);
  return rows[0]?.weight;
}

/**
 * A dedicated connection (outside the pool: it is held for good) that calls `wake` with a pool's name
 * when a lease of it is released anywhere, and `lost` when the connection breaks. Rejects when it
 * cannot connect.
 */
export async function listenForReleases(db: pg.Pool, wake: (pool: string) => void, lost: () => void): Promise<{ close(): Promise<void> }> {
  const c = new pg.Client({ ...(db as unknown as { options: pg.ClientConfig }).options, application_name: 'agentrun-pools' });
  const close = () => c.end().catch(() => undefined);
  try {
    c.on('notification', (n) => n.payload && wake(n.payload));
    c.on('error', () => {
      void close();
      lost();
    });
    await c.connect();
    await c.query(`LISTEN ${POOL_CHANNEL}`);
    return { close };
  } catch (err) {
    void close();
    throw err;
  }
}

/**
 * A separate pools database (AGENTRUN_POOL_DATABASE_URL: one for several deployments that share a
 * provider account), in the store's schema, and what brings its schema up to date before first use.
 */
export function poolDatabase(url: string, schema: string, onIdleError: (err: Error) => void): { db: pg.Pool; prepare: (db: pg.Pool) => Promise<void> } {
  const db = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, connectionTimeoutMillis: 2_000, max: 4 });
  db.on('error', onIdleError);
  const prepare = async (d: pg.Pool) => {
    const c = await d.connect();
    try {
      await migrate(c, schema);
    } finally {
      c.release();
    }
  };
  return { db, prepare };
}
