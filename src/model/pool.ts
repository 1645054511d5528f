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
// The statements that move that state are the store's (src/store/pool-leases.ts); when a call takes,
// waits for and gives back a slot is decided here.
import type pg from 'pg';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { userModel } from './models.js';
import { rateLimited } from './errors.js';
import { rateLimitResetMs } from './pool-headers.js';
import { DEFAULT_TENANT, priorityKey, type PriorityName } from './pool-names.js';
import { gauge, inc } from '../metrics.js';
import { log } from '../log.js';
import { FOREVER, POOL_NAME } from '../store/pool-admin.js';
import {
  acquireLease,
  admitLease,
  listenForReleases,
  poolDatabase,
  refuseLease,
  releaseLease,
  renewLeases,
  takeFreeSlot,
  type Refusal,
} from '../store/pool-leases.js';
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
  private listener?: Promise<{ close(): Promise<void> } | undefined>;
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
    const db = await this.database();
    const req = {
      pool: call.pool,
      waiterId: call.waiterId,
      leaseId,
      workerId: this.workerId,
      tenant: call.tenant,
      priority: call.priority,
      leaseMs: this.leaseMs,
    };
    // The first try takes the fast path (no lock) when it fits; a waiter asks under the lock, keeping its place.
    const r = (first ? await takeFreeSlot(db, req) : undefined) ?? (await acquireLease(db, req));
    return 'binding' in r ? { lease: { id: leaseId, pool: call.pool, binding: r.binding } } : r;
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
        await releaseLease(this.db, lease, reset);
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
   * now (admitLease). Not waited for by the call; a failure leaves the raise to the release.
   */
  async admitted(lease: Lease): Promise<void> {
    if (!lease.binding && !this.waitingCount.get(lease.pool)) return;
    try {
      if (!(await admitLease(this.db, lease))) return;
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
    await refuseLease(this.db, lease, pauseMs);
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
      await renewLeases(this.db, [...this.held.keys()], this.leaseMs);
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

  /** One LISTEN connection per gate: a release anywhere wakes this process's waiters of its pool. */
  private listen(): Promise<{ close(): Promise<void> } | undefined> {
    this.listener ??= listenForReleases(
      this.db,
      (pool) => this.wake(pool),
      () => (this.listener = undefined),
    ).catch(() => {
      // Polling still wakes the waiters; a later nap tries again.
      setTimeout(() => (this.listener = undefined), 1000).unref();
      return undefined;
    });
    return this.listener;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pending]);
    clearInterval(this.renewTimer);
    await (await this.listener)?.close();
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
      const { db, prepare } = poolDatabase(url, store.schema, (err) => log.warn({ err: err.message }, 'provider pool database: idle client error'));
      gate = new PoolGate(db, leaseMsFromEnv(), prepare);
    } else {
      gate = new PoolGate(store.pool);
    }
    gates.set(store, gate);
  }
  return gate;
}
