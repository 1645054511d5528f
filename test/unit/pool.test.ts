// The provider pool gate against the real PostgreSQL: two gates stand for two workers sharing one
// pool; the limit holds across them, a lapsed lease comes back, a refusal pauses the pool for both,
// waiters are served by priority and then across tenants, and the headers a provider sends are read.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/index.js';
import { PoolGate, poolFor, poolMap, type Lease } from '../../src/model/pool.js';
import { knownPool, pausePool, poolStates, resumePool, setPool, setTenantRpm, setTenantWeights } from '../../src/store/pool-admin.js';
import { parseTenantRpm, parseTenantWeights } from '../../src/cli/pools.js';
import { rateLimitResetMs, resetDurationMs } from '../../src/model/pool-headers.js';
import { toModelFailure } from '../../src/model/errors.js';
import { APIError } from 'openai';
import { until } from '../helpers/fleet.js';
import { DATABASE_URL, dropSchema, freshSchemaName } from '../helpers/store-schema.js';

const SCHEMA = freshSchemaName('t_pool');

let store: Store;
let a: PoolGate;
let b: PoolGate;
const noBeat = () => {};
const call = (pool: string, over: Partial<{ tenant: string; priority: number; waiterId: string; deadline: number }> = {}) => ({
  pool,
  waiterId: over.waiterId ?? randomUUID(),
  tenant: over.tenant ?? 'default',
  priority: over.priority ?? 3,
  heartbeat: noBeat,
  deadline: over.deadline,
});

beforeAll(async () => {
  store = await Store.connect(DATABASE_URL, { schema: SCHEMA });
  a = new PoolGate(store.pool, 1500);
  b = new PoolGate(store.pool, 1500);
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await store?.close();
  await dropSchema(SCHEMA);
});

describe('the gate', () => {
  it('holds a configured limit across gates (workers), and a released slot goes to a waiter', async () => {
    await setPool(store.pool, 'p-limit', { concurrency: 2 });
    const l1 = await a.acquire(call('p-limit'));
    const l2 = await b.acquire(call('p-limit'));
    let third: Lease | undefined;
    const waiting = a.acquire(call('p-limit')).then((l) => (third = l));
    await new Promise((r) => setTimeout(r, 400));
    expect(third).toBeUndefined();
    expect((await poolStates(store.pool, 'p-limit'))[0]).toMatchObject({ inFlight: 2, backlog: 1, limit: 2, adaptive: false });
    await b.release(l2);
    await waiting;
    expect(third).toBeDefined();
    await a.release(l1);
    await a.release(third!);
    expect((await poolStates(store.pool, 'p-limit'))[0]!.inFlight).toBe(0);
  });

  it("gives a lapsed lease's slot back after the lease time (a killed worker renews nothing)", async () => {
    await setPool(store.pool, 'p-lapse', { concurrency: 1 });
    // A gate that never renews: its process is gone.
    await store.pool.query(
      `INSERT INTO pool_leases (lease_id, pool, worker_id, tenant, priority, expires_at) VALUES ('dead', 'p-lapse', 'dead-worker', 'default', 3, now() + interval '1 second')`,
    );
    const started = Date.now();
    const lease = await a.acquire(call('p-lapse'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    await a.release(lease);
  });

  it('renews the leases it holds while the call runs', async () => {
    await setPool(store.pool, 'p-renew', { concurrency: 1 });
    const lease = await a.acquire(call('p-renew'));
    await new Promise((r) => setTimeout(r, 2500));
    // Still held (1.5 s lease, renewed every 0.5 s): another gate cannot take the one slot.
    await expect(b.acquire(call('p-renew', { deadline: Date.now() + 300 }))).rejects.toThrow(/pool p-renew is full \(1 of 1/);
    await a.release(lease);
  });

  it('pauses the pool for every gate after a refusal, until the retry-after; an operator pause holds until resumed', async () => {
    await setPool(store.pool, 'p-pause', { concurrency: 4 });
    const lease = await a.acquire(call('p-pause'));
    await a.release(lease, { refused: { retryAfterMs: 5000 } });
    const state = (await poolStates(store.pool, 'p-pause'))[0]!;
    expect(state.pausedBy).toBe('the provider (429)');
    expect(state.refusals10m).toBe(1);
    await expect(b.acquire(call('p-pause'))).rejects.toThrow(/pool p-pause is paused until .* \(by the provider \(429\)\)/);
    await resumePool(store.pool, 'p-pause');
    await b.release(await b.acquire(call('p-pause')));
    await pausePool(store.pool, 'p-pause');
    await expect(a.acquire(call('p-pause'))).rejects.toThrow(/paused until resumed \(by an operator/);
    await resumePool(store.pool, 'p-pause');
  });

  it('callers at once on the lock-free fast path never hold more slots than the limit, each on its own slot', async () => {
    await setPool(store.pool, 'p-burst', { concurrency: 3 });
    const live = async () =>
      (await store.pool.query<{ slot: number | null }>(`SELECT slot FROM pool_leases WHERE pool = 'p-burst' AND expires_at > now() ORDER BY slot`)).rows;
    const leases: [PoolGate, Lease][] = [];
    const calls = Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).acquire(call('p-burst')).then((l) => leases.push([i % 2 ? a : b, l])));
    await new Promise((r) => setTimeout(r, 500));
    expect((await live()).map((r) => r.slot)).toEqual([0, 1, 2]);
    // Each release lets one more in; the limit holds all along.
    let served = 0;
    while (served < 12) {
      const l = leases[served++];
      if (!l) {
        served--;
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      await l[0].release(l[1]);
      expect((await live()).length).toBeLessThanOrEqual(3);
    }
    await Promise.all(calls);
    expect(await live()).toEqual([]);
  });

  it('sends every call to the locked path while a lease granted before slots (none) is live', async () => {
    await setPool(store.pool, 'p-legacy', { concurrency: 1 });
    await store.pool.query(
      `INSERT INTO pool_leases (lease_id, pool, worker_id, tenant, priority, expires_at) VALUES ('legacy', 'p-legacy', 'old-worker', 'default', 3, now() + interval '30 seconds')`,
    );
    // The fast path does not count past it: the pool is full until it goes.
    await expect(a.acquire(call('p-legacy', { waiterId: 'legacy-waiter', deadline: Date.now() + 300 }))).rejects.toThrow(/pool p-legacy is full \(1 of 1/);
    await store.pool.query(`DELETE FROM pool_leases WHERE lease_id = 'legacy'`);
    // The same call again (its place in line kept, as the workflow asks again).
    const l = await a.acquire(call('p-legacy', { waiterId: 'legacy-waiter' }));
    await a.release(l);
  });

  it("holds a tenant to its requests per minute across pools, out of line: other tenants' calls go on", async () => {
    await setTenantRpm(store.pool, parseTenantRpm(['capped=2']));
    for (const pool of ['p-rpm-1', 'p-rpm-2']) await a.release(await a.acquire(call(pool, { tenant: 'capped' })));
    // The third call within the minute, in either pool, waits for the minute to pass: a wait the workflow takes over.
    await expect(b.acquire(call('p-rpm-1', { tenant: 'capped', waiterId: 'capped-3' }))).rejects.toThrow(
      /tenant capped has made its requests per minute; its next call goes at/,
    );
    expect((await store.pool.query(`SELECT count(*)::int AS n FROM pool_waiters WHERE waiter_id = 'capped-3'`)).rows[0].n).toBe(0);
    await a.release(await a.acquire(call('p-rpm-1', { tenant: 'other' })));
    // Lifted: it goes at once.
    await setTenantRpm(store.pool, parseTenantRpm(['capped=none']));
    await a.release(await a.acquire(call('p-rpm-1', { tenant: 'capped' })));
    expect(() => parseTenantRpm(['capped=0'])).toThrow(/at least 1, or none/);
    expect(() => parseTenantRpm(['capped'])).toThrow(/expected TENANT=RPM/);
  });

  it('adapts a pool without a configured limit: up while it binds, down on a refusal', async () => {
    const first = await Promise.all([1, 2, 3, 4].map(() => a.acquire(call('p-aimd'))));
    expect((await poolStates(store.pool, 'p-aimd'))[0]).toMatchObject({ adaptive: true, limit: 4 });
    for (const l of first) await a.release(l);
    // Slow start: each call that found the limit binding added one.
    expect((await poolStates(store.pool, 'p-aimd'))[0]!.limit).toBeGreaterThan(4);
    const held = await Promise.all([1, 2].map(() => a.acquire(call('p-aimd'))));
    const refused = await a.acquire(call('p-aimd'));
    await a.release(refused, { refused: {} });
    // Down to the two the provider admitted.
    expect((await poolStates(store.pool, 'p-aimd'))[0]!.limit).toBe(2);
    for (const l of held) await a.release(l);
  });

  it('in the slow start, raises the limit when the provider admits a call, not again at its release', async () => {
    const full = await Promise.all([1, 2, 3, 4].map(() => a.acquire(call('p-admit'))));
    // A fifth call waits: the pool holds its first limit, 4.
    const waiter = a.acquire(call('p-admit'));
    await until('the fifth call waits', async () => (await poolStates(store.pool, 'p-admit'))[0]?.backlog === 1);
    // An admitted stream of the full pool adds one at once, and the waiter goes while they stream.
    for (const l of full) await a.admitted(l);
    const raised = (await poolStates(store.pool, 'p-admit'))[0]!;
    expect(raised.adaptive).toBe(true);
    expect(raised.limit).toBeGreaterThan(4);
    const fifth = await waiter;
    for (const l of [...full, fifth]) await a.release(l);
    // Raised at admission, not again at the release; the fifth, never admitted, at its release if it found the limit reached.
    expect((await poolStates(store.pool, 'p-admit'))[0]!.limit).toBe(raised.limit + (fifth.binding ? 1 : 0));
    // A pool far from its limit spends no statement on an admission.
    const idle = await a.acquire(call('p-admit'));
    await a.admitted(idle);
    expect(idle.raised).toBeUndefined();
    await a.release(idle);
  });

  it('serves waiters by priority, then the tenant holding fewer slots for its weight', async () => {
    await setPool(store.pool, 'p-order', { concurrency: 1 });
    await setTenantWeights(store.pool, { heavy: 1 });
    const holder = await a.acquire(call('p-order', { tenant: 'heavy' }));
    const order: string[] = [];
    const wait = (name: string, c: ReturnType<typeof call>) =>
      a.acquire(c).then(async (l) => {
        order.push(name);
        await new Promise((r) => setTimeout(r, 50));
        await a.release(l);
      });
    const nightly = wait('nightly', call('p-order', { priority: 5, tenant: 'heavy' }));
    await new Promise((r) => setTimeout(r, 300));
    const heavy = wait('heavy-interactive', call('p-order', { priority: 2, tenant: 'heavy' }));
    await new Promise((r) => setTimeout(r, 300));
    const light = wait('light-interactive', call('p-order', { priority: 2, tenant: 'light' }));
    await new Promise((r) => setTimeout(r, 300));
    await a.release(holder);
    await Promise.all([nightly, heavy, light]);
    // Interactive first, then nightly; both interactive tenants hold none when served, so the older goes first.
    expect(order).toEqual(['heavy-interactive', 'light-interactive', 'nightly']);
  });

  it('fails closed: an unreachable store lets no call out, and the wait ends as a rate-limit wait', async () => {
    const dead = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 200 });
    const gate = new PoolGate(dead, 1500);
    await expect(gate.acquire(call('p-dead', { deadline: Date.now() + 1500 }))).rejects.toThrow(/store is unreachable.*no model call goes out/);
    await gate.close();
    await dead.end();
  });
});

describe('pools by name', () => {
  it('maps models to pools: AGENTRUN_POOLS, else the base URL host', () => {
    expect(poolMap('gpt-4o*=openai-main, claude-*=anthropic-main')).toEqual([
      ['gpt-4o*', 'openai-main'],
      ['claude-*', 'anthropic-main'],
    ]);
    expect(() => poolMap('nonsense')).toThrow(/AGENTRUN_POOLS: expected MODEL-PATTERN=POOL/);
    expect(poolFor('some-model', 'http://127.0.0.1:9999/v1')).toBe('127.0.0.1:9999');
    expect(poolFor('gpt-4o', undefined)).toBe('api.openai.com');
  });

  it('refuses an unknown pool and bad weights with one line', async () => {
    await expect(knownPool(store.pool, 'nope')).rejects.toThrow(/unknown pool "nope".*agentrun pool set nope --concurrency N/);
    expect(parseTenantWeights(['a=3', 'b=1'])).toEqual({ a: 3, b: 1 });
    expect(() => parseTenantWeights(['a=-1'])).toThrow(/weight of a must be a number from 0.001 to 1000/);
  });
});

describe('rate-limit headers', () => {
  it('reads OpenAI and Anthropic reset headers of an exhausted limit', () => {
    expect(resetDurationMs('6m0s')).toBe(360_000);
    expect(resetDurationMs('20ms')).toBe(20);
    expect(resetDurationMs('1.5')).toBe(1500);
    expect(rateLimitResetMs({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '2s' })).toBe(2000);
    expect(rateLimitResetMs({ 'x-ratelimit-remaining-requests': '5', 'x-ratelimit-reset-requests': '2s' })).toBeUndefined();
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(rateLimitResetMs({ 'anthropic-ratelimit-tokens-remaining': '0', 'anthropic-ratelimit-tokens-reset': '2026-01-01T00:00:07Z' }, now)).toBe(7000);
  });

  it('makes 429, 529, overloaded and a 5xx with retry-after a refusal; a plain 500 stays a server error', () => {
    const err = (status: number, headers: Record<string, string> = {}, message = 'x') => new APIError(status, { message }, message, new Headers(headers));
    expect(toModelFailure(err(429, { 'retry-after': '3' }), 'call').type).toBe('ModelRateLimited');
    expect(toModelFailure(err(429, { 'retry-after': '3' }), 'call').nextRetryDelay).toBe(3000);
    expect(toModelFailure(err(529), 'call').type).toBe('ModelRateLimited');
    expect(toModelFailure(err(503, { 'retry-after': '1' }), 'call').type).toBe('ModelRateLimited');
    expect(toModelFailure(err(500, {}, 'Overloaded'), 'call').type).toBe('ModelRateLimited');
    expect(toModelFailure(err(500), 'call').type).toBe('ModelServerError');
  });
});
