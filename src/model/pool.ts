// Fleet-wide provider pools: the concurrency gate every model call passes before its HTTP request.
// A pool is where a provider's limits apply (an account or endpoint). Its state is in PostgreSQL
// (`pools`, `pool_leases`, `pool_waiters`, `pool_events`; migration 7), never in per-process
// counters, so the limit holds across every worker; and when that state cannot be read, no call
// goes out (the gate fails closed) and the caller waits until it can.
//
// A call takes a lease (agentrun_pool_acquire: under the pool's advisory lock, granted while the
// pool is not paused, holds fewer leases than its limit, is under its rpm, and no better waiter is
// in line: lower priority key, then the tenant holding fewer streams for its weight, then the
// oldest). Held leases are renewed while the call streams; a killed worker's lapse within the lease
// time. A refusal (429, 529, …) pauses the pool for every worker until the provider's retry-after
// and, for a pool without a configured limit, decreases its adaptive limit by a quarter (and to the
// streams the provider admitted); a call that succeeded while the limit was binding raises it by one
// per limit's worth of calls, by one per call until the first refusal (AIMD with a slow start). In
// the slow start a call raises the limit as soon as the provider admits its stream (its response
// headers), not when the answer ends: the limit doubles each time-to-headers, not each whole answer
// (40 conversations started at once on a new pool waited three answers, 15 s, for their first turn).
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { userModel } from './models.js';
import { rateLimited } from './errors.js';
import { rateLimitResetMs } from './pool-headers.js';
import { DEFAULT_TENANT, priorityKey, type PriorityName } from './pool-names.js';
import { gauge, inc } from '../metrics.js';
import { log } from '../log.js';
import { migrate } from '../store/migrations.js';
import { asTime, FOREVER, POOL_NAME } from '../store/pool-admin.js';
import type { Store } from '../store/index.js';

/** How long a lease lives without renewal (AGENTRUN_POOL_LEASE, ms): a killed worker's slots come back after it. */
function leaseMsFromEnv(): number {
  const n = Number(process.env.AGENTRUN_POOL_LEASE_MS);
  return Number.isInteger(n) && n >= 1000 ? n : 30_000;
}

/** A pause shorter than this is waited out inside the call; a longer one ends the step so the workflow waits on a timer. */
const PAUSE_WAITED_IN_CALL_MS = 2_000;
/**
 * A call waits this long for a slot inside the activity (refusals included), then the workflow waits
 * on a timer and asks again, its place in line kept: a long wait costs a few history events a minute.
 */
export const MAX_WAIT_IN_CALL_MS = 60_000;
/** A refusal without retry-after pauses the pool this long. */
const DEFAULT_REFUSAL_PAUSE_MS = 1_000;

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
       (SELECT pg_notify('agentrun_pool', $2) WHERE EXISTS (SELECT 1 FROM pool_waiters w WHERE w.pool = $2 AND w.expires_at > now())), ${ASYNC_COMMIT}`;

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
       (SELECT pg_notify('agentrun_pool', $1) WHERE EXISTS (SELECT 1 FROM u) AND EXISTS (SELECT 1 FROM pool_waiters w WHERE w.pool = $1 AND w.expires_at > now())), ${ASYNC_COMMIT}`;

export interface PoolCall {
  pool: string;
  /** Stable across retries of the same call (conversation, seq, segment, purpose): its place in line. */
  waiterId: string;
  tenant: string;
  priority: number;
  heartbeat(details?: unknown): void;
  signal?: AbortSignal;
  /** Wait inside the call until then at most (default: a minute from now), then leave the wait to the workflow. */
  deadline?: number;
}

export interface Lease {
  id: string;
  pool: string;
  /** The pool's limit was reached with this lease: a success then raises an adaptive limit. */
  binding: boolean;
  /** The limit was raised already when the provider admitted the call (admitted()). */
  raised?: boolean;
}

/** What the pool answered when it did not grant. */
interface Refusal {
  why: string;
  waitUntil?: Date;
  limit: number;
  held: number;
}

/**
 * The pool of a model: `AGENTRUN_POOLS` (`gpt-4o*=openai-main,claude-*=anthropic-main`), then the
 * models table's `pool`, else one pool per provider base URL (its host).
 */
export function poolFor(model: string, baseUrl: string | undefined): string {
  const name = model.trim().toLowerCase();
  for (const [pattern, pool] of poolMap()) if (globMatch(pattern, name)) return pool;
  const entry = userModel(model);
  if (entry?.pool) return entry.pool;
  if (!baseUrl) return 'api.openai.com';
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}

export function poolMap(env = process.env.AGENTRUN_POOLS ?? ''): [string, string][] {
  const out: [string, string][] = [];
  for (const part of env.split(',')) {
    if (!part.trim()) continue;
    const eq = part.indexOf('=');
    const pattern = part.slice(0, eq).trim().toLowerCase();
    const pool = part.slice(eq + 1).trim();
    if (eq <= 0 || !pattern || !POOL_NAME.test(pool))
      throw new Error(`AGENTRUN_POOLS: expected MODEL-PATTERN=POOL[,…] (e.g. gpt-4o*=openai-main), got "${part.trim()}"`);
    out.push([pattern, pool]);
  }
  return out;
}

export function globMatch(pattern: string, name: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  return re.test(name);
}

export function callIdentity(config: { tenant?: string; priority?: PriorityName }): { tenant: string; priority: number } {
  return { tenant: config.tenant ?? DEFAULT_TENANT, priority: priorityKey(config.priority) };
}

export class PoolGate {
  private readonly held = new Map<string, Lease>();
  private readonly waiting = new Map<string, Set<() => void>>();
  private renewTimer?: NodeJS.Timeout;
  private listener?: Promise<pg.Client | undefined>;
  readonly workerId = `${hostname()}:${process.pid}`;

  private prepared?: Promise<void>;

  constructor(
    readonly db: pg.Pool,
    readonly leaseMs = leaseMsFromEnv(),
    /** Brings a separate pool database's schema up to date before the first call (AGENTRUN_POOL_DATABASE_URL). */
    private readonly prepare?: (db: pg.Pool) => Promise<void>,
  ) {}

  /** Wait for a slot of the pool: heartbeating, fail closed on store faults, bounded (then a rate-limit failure the workflow waits on). */
  async acquire(call: PoolCall): Promise<Lease> {
    const deadline = call.deadline ?? Date.now() + MAX_WAIT_IN_CALL_MS;
    const leaseId = `${this.workerId}:${randomBytes(6).toString('hex')}`;
    let waited = false;
    let storeFaults = 0;
    for (;;) {
      if (call.signal?.aborted) throw call.signal.reason ?? new Error('cancelled while waiting for a provider slot');
      let refusal: Refusal;
      let storeFault: Error | undefined;
      try {
        const r = await this.tryAcquire(call, leaseId, !waited && storeFaults === 0);
        if ('lease' in r) {
          if (waited) this.setWaiting(call.pool, -1);
          this.hold(r.lease);
          return r.lease;
        }
        refusal = r;
      } catch (err) {
        storeFault = err as Error;
        storeFaults++;
        refusal = { why: 'store', limit: 0, held: 0 };
      }
      if (!waited) {
        waited = true;
        this.setWaiting(call.pool, +1);
      }
      const leave = () => this.setWaiting(call.pool, -1);
      call.heartbeat({ waitingForPool: call.pool, why: refusal.why });
      const pauseLeft = refusal.waitUntil ? refusal.waitUntil.getTime() - Date.now() : 0;
      if (refusal.why !== 'full' && refusal.why !== 'queued' && refusal.why !== 'store' && pauseLeft > PAUSE_WAITED_IN_CALL_MS) {
        leave();
        const until = refusal.waitUntil!;
        if (refusal.why === 'tenant rpm')
          throw rateLimited(`tenant ${call.tenant} has made its requests per minute; its next call goes at ${until.toISOString()}`, pauseLeft, {
            pool: call.pool,
          });
        const by = refusal.why === 'rpm' ? 'its rpm limit' : refusal.why;
        // An operator's pause has no end: the workflow looks again every half minute.
        const forever = until.getTime() >= FOREVER;
        throw rateLimited(
          `pool ${call.pool} is paused until ${forever ? 'resumed' : until.toISOString()} (by ${by})`,
          forever ? 30_000 : pauseLeft,
          { pool: call.pool },
          // Only a provider's refusal is the provider asking; an operator's pause ends with `pool resume`, which wakes its waiters.
          by.startsWith('the provider') ? 'as the provider asked' : `or as soon as the pool is resumed (agentrun pool resume ${call.pool})`,
        );
      }
      if (Date.now() >= deadline) {
        leave();
        if (storeFault) {
          log.warn({ pool: call.pool, err: storeFault.message }, 'provider pool store unreachable: no model call goes out until it answers');
          throw rateLimited(`the provider pool's store is unreachable (${storeFault.message}); no model call goes out until it answers`, 1000, {
            pool: call.pool,
          });
        }
        throw rateLimited(`pool ${call.pool} is full (${refusal.held} of ${refusal.limit} streams in flight fleet-wide)`, 0, { pool: call.pool });
      }
      await this.nap(call.pool, storeFault ? 1000 : pauseLeft > 0 ? Math.min(pauseLeft, 500) : 250, call.signal);
    }
  }

  /** The pools' database, its schema up to date. */
  async database(): Promise<pg.Pool> {
    if (this.prepare) {
      this.prepared ??= this.prepare(this.db).catch((err: unknown) => {
        this.prepared = undefined;
        throw err;
      });
      await this.prepared;
    }
    return this.db;
  }

  private async tryAcquire(call: PoolCall, leaseId: string, first: boolean): Promise<{ lease: Lease } | Refusal> {
    await this.database();
    if (first) {
      // One prepared statement, no lock: a free slot while nobody waits (migration 13).
      const { rows } = await this.db.query<{ slot: number | null; pool_limit: number | null; held: string | null }>({
        name: 'agentrun-pool-fast',
        text: FAST_ACQUIRE,
        values: [call.pool, call.waiterId, leaseId, this.workerId, call.tenant, call.priority, this.leaseMs],
      });
      const r = rows[0];
      if (r && r.slot !== null && r.pool_limit !== null) return { lease: { id: leaseId, pool: call.pool, binding: Number(r.held) + 1 >= r.pool_limit } };
    }
    const { rows } = await this.db.query<{ granted: boolean; wait_until: Date | string | number | null; pool_limit: number; held: string; why: string }>(
      'SELECT * FROM agentrun_pool_acquire($1, $2, $3, $4, $5, $6, $7)',
      [call.pool, call.waiterId, leaseId, this.workerId, call.tenant, call.priority, this.leaseMs],
    );
    const r = rows[0]!;
    const held = Number(r.held);
    if (r.granted) return { lease: { id: leaseId, pool: call.pool, binding: held >= r.pool_limit } };
    return { why: r.why, waitUntil: asTime(r.wait_until), limit: r.pool_limit, held };
  }

  /**
   * Give the slot back. `refusedAfterMs`: the provider refused (a number, or null without a
   * retry-after): the pool pauses for every worker and an adaptive limit decreases. `headers`: a
   * success's headers, read for an exhausted limit (pause until it resets).
   */
  release(lease: Lease, outcome: { refused?: { retryAfterMs?: number }; headers?: unknown } = {}): Promise<void> {
    const done = this.releasing(lease, outcome);
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
    return done;
  }

  /** Releases still on their way to the store (a successful call does not wait for its own). */
  private readonly pending = new Set<Promise<void>>();

  private async releasing(lease: Lease, outcome: { refused?: { retryAfterMs?: number }; headers?: unknown }): Promise<void> {
    this.held.delete(lease.id);
    gauge('agentrun_pool_in_flight', { pool: lease.pool }, this.count(lease.pool));
    try {
      if (outcome.refused) {
        await this.refused(lease, outcome.refused.retryAfterMs);
      } else {
        const reset = outcome.headers ? rateLimitResetMs(outcome.headers) : undefined;
        await this.db.query({
          name: 'agentrun-pool-release',
          text: RELEASE,
          values: [lease.id, lease.pool, lease.binding, reset ?? null, lease.raised === true],
        });
        if (reset !== undefined) this.recordPause(lease.pool, reset);
      }
    } catch (err) {
      // The lease lapses on its own (expires_at); nothing else is lost.
      log.warn({ pool: lease.pool, err: (err as Error).message }, 'could not release a provider pool lease; it lapses at its expiry');
    }
    this.wake(lease.pool);
  }

  /**
   * The provider admitted the call's stream (its response headers came). When the limit may bind
   * (the lease found it reached, or calls of this process wait), a pool in its slow start rises
   * now (ADMITTED). Not waited for by the call; a failure leaves the raise to the release.
   */
  async admitted(lease: Lease): Promise<void> {
    if (!lease.binding && !this.waitingCount.get(lease.pool)) return;
    try {
      const { rows } = await this.db.query<{ raised: number }>({ name: 'agentrun-pool-admitted', text: ADMITTED, values: [lease.pool, lease.binding] });
      if (!rows[0]?.raised) return;
      lease.raised = true;
      this.wake(lease.pool);
    } catch (err) {
      log.warn({ pool: lease.pool, err: (err as Error).message }, 'could not raise a provider pool limit at admission; the release does');
    }
  }

  private async refused(lease: Lease, retryAfterMs: number | undefined): Promise<void> {
    const pauseMs = retryAfterMs ?? DEFAULT_REFUSAL_PAUSE_MS;
    inc('agentrun_pool_refusals_total', { pool: lease.pool });
    this.recordPause(lease.pool, pauseMs);
    // Decrease: by a quarter once per pause (the refusals of one burst are one signal), and never
    // above the streams still in flight, which the provider admitted.
    await this.db.query(
      `WITH d AS (DELETE FROM pool_leases WHERE lease_id = $1 RETURNING pool),
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
       SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM e), (SELECT count(*) FROM u), ${ASYNC_COMMIT}`,
      [lease.id, lease.pool, pauseMs],
    );
  }

  private recordPause(pool: string, ms: number): void {
    inc('agentrun_pool_pause_seconds_total', { pool }, ms / 1000);
  }

  private hold(lease: Lease): void {
    this.held.set(lease.id, lease);
    gauge('agentrun_pool_in_flight', { pool: lease.pool }, this.count(lease.pool));
    this.renewTimer ??= setInterval(() => void this.renew(), Math.max(300, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref();
  }

  private count(pool: string): number {
    let n = 0;
    for (const l of this.held.values()) if (l.pool === pool) n++;
    return n;
  }

  private waitingCount = new Map<string, number>();
  private setWaiting(pool: string, by: number): void {
    const n = (this.waitingCount.get(pool) ?? 0) + by;
    this.waitingCount.set(pool, n);
    gauge('agentrun_pool_waiting', { pool }, n);
  }

  /** Leases held by this process live on while their calls stream. */
  private async renew(): Promise<void> {
    if (this.held.size === 0) {
      clearInterval(this.renewTimer);
      this.renewTimer = undefined;
      return;
    }
    try {
      await this.db.query(
        `WITH u AS (UPDATE pool_leases SET expires_at = now() + make_interval(secs => $2::double precision / 1000) WHERE lease_id = ANY($1) RETURNING 1)
         SELECT (SELECT count(*) FROM u), ${ASYNC_COMMIT}`,
        [[...this.held.keys()], this.leaseMs],
      );
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'could not renew provider pool leases; they lapse unless a later renewal succeeds');
    }
  }

  /** Sleep until `ms` passed or a lease of the pool was released (here, or anywhere: LISTEN agentrun_pool). */
  private async nap(pool: string, ms: number, signal?: AbortSignal): Promise<void> {
    void this.listen();
    await new Promise<void>((resolve) => {
      const set = this.waiting.get(pool) ?? new Set();
      this.waiting.set(pool, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private wake(pool: string): void {
    for (const w of [...(this.waiting.get(pool) ?? [])]) w();
  }

  /** One LISTEN connection per gate, outside the pool (it is held for good). */
  private listen(): Promise<pg.Client | undefined> {
    this.listener ??= (async () => {
      const c = new pg.Client({ ...(this.db as unknown as { options: pg.ClientConfig }).options, application_name: 'agentrun-pools' });
      try {
        c.on('notification', (n) => n.payload && this.wake(n.payload));
        c.on('error', () => {
          void c.end().catch(() => undefined);
          this.listener = undefined;
        });
        await c.connect();
        await c.query('LISTEN agentrun_pool');
        return c;
      } catch {
        void c.end().catch(() => undefined);
        // Polling still wakes the waiters; a later nap tries again.
        setTimeout(() => (this.listener = undefined), 1000).unref();
        return undefined;
      }
    })();
    return this.listener;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pending]);
    clearInterval(this.renewTimer);
    const c = await this.listener;
    await c?.end().catch(() => undefined);
  }
}

const gates = new WeakMap<Store, PoolGate>();

/**
 * The gate of this process over the store's database, or over AGENTRUN_POOL_DATABASE_URL when set:
 * one pool database for several deployments that share a provider account.
 */
export function gateFor(store: Store): PoolGate {
  let gate = gates.get(store);
  if (!gate) {
    const url = process.env.AGENTRUN_POOL_DATABASE_URL;
    if (url) {
      const db = new pg.Pool({ connectionString: url, options: `-c search_path=${store.schema}`, connectionTimeoutMillis: 2_000, max: 4 });
      db.on('error', (err) => log.warn({ err: err.message }, 'provider pool database: idle client error'));
      gate = new PoolGate(db, leaseMsFromEnv(), async (d) => {
        const c = await d.connect();
        try {
          await migrate(c, store.schema);
        } finally {
          c.release();
        }
      });
    } else {
      gate = new PoolGate(store.pool);
    }
    gates.set(store, gate);
  }
  return gate;
}
