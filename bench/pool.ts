// Provider pools on the real path: N jobs × M model calls against a provider (its own process,
// test/helpers/limited-provider.mjs) that admits K streams at once and answers 429 beyond that,
// each answer taking T ms; the worker is `agentrun worker` (the built CLI in its own process).
// Reported per scenario (a pool configured to K, then no pool configured: adaptive):
//   - the makespan against the ideal N·M/K × T (goal ≤ 1.25×), and against that ideal plus one
//     conversation alone's orchestration (workflow start, placement, turn-0 checkpoint, turns),
//     which no pool can hide;
//   - the 429s per job (goal ≤ 0.1 configured, ≤ 1 adaptive);
//   - the most streams the provider saw at once.
// And the overhead the gate adds to one call with no contention: acquire + release, p50 and p95
// over BENCH_OVERHEAD_CALLS calls on an idle pool, against the same PostgreSQL (goal ≤ 5 ms p50).
// Run: npm run build && npx tsx bench/pool.ts
// Measured 2026-11-27 16:51 UTC, same settings, load average ~5:
//   one job alone 4.4 s (2.4 s orchestration)
//   configured: 9/9, makespan 9.0 s = 1.51× ideal, 1.07× ideal + orchestration, 0.00 429s/job, ≤ 3 at once
//   adaptive:   9/9, makespan 8.9 s = 1.49× ideal, 1.06× ideal + orchestration, 0.33 429s/job, ≤ 3 at once
//   gate overhead p50 (p95): now as the call sees it 1.31 ms (2.25), release awaited too 1.96 ms (4.65),
//   before 3.54 ms (8.11); one round trip 0.27 ms. The ≤ 5 ms goal holds; ≤ 1.25× holds against the
//   ideal plus one job's orchestration, not against the bare ideal at N=9.
// Measured 2026-11-27 16:30 UTC, BENCH_JOBS=9 BENCH_CALLS=2 BENCH_STREAMS=3 BENCH_CALL_MS=1000 (ideal
// 6.0 s), on 2 cores shared with seven other engineers' test runs (load average 30–34):
//   one job alone 14.2 s (12.2 s of it orchestration: start, placement, turn-0 checkpoint, turns)
//   configured: 9/9 completed, makespan 36.9 s = 6.15× ideal, 2.02× ideal + one job's orchestration,
//               0.00 429s/job, at most 3 streams at once
//   adaptive:   9/9 completed, makespan 31.7 s = 5.28× ideal, 1.74× ideal + orchestration, 0.11 429s/job
//   gate overhead per call, no contention, 200 calls each in turns with the gate as it was before:
//     now, as the call sees it (acquire; the release is sent, not waited for): p50 7.15 ms, p95 25.3 ms
//     now, release awaited too: p50 15.5 ms; before (locked function, release awaited): p50 30.3 ms
//     one PostgreSQL round trip (SELECT 1) meanwhile: p50 3.0 ms
//   So the call's overhead went from 10 round trips' worth to 2.4 (4.2× less); the ≤ 5 ms goal holds
//   where a round trip costs ≤ 2 ms. At a quieter moment (load ~14), a loop of the same gate calls gave
//   acquire + release awaited 3.6 ms p50 against a 0.45 ms round trip. The makespans at this
//   load are orchestration, not the pool.
// Earlier runs (before the fast path, load 14–16): configured 1.24×, adaptive 0.80× of ideal +
// orchestration, 0.00 and 0.22 429s/job, gate overhead p50 6.5 ms (17.7 ms before the first fast path).
// Settings: BENCH_JOBS (N, 12), BENCH_CALLS (M, 3), BENCH_STREAMS (K, 3), BENCH_CALL_MS (T, 1000),
// BENCH_OVERHEAD_CALLS (200).
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WORKFLOW_TYPE } from '../workflows/api.js';

const N = Number(process.env.BENCH_JOBS ?? 12);
const M = Number(process.env.BENCH_CALLS ?? 3);
const K = Number(process.env.BENCH_STREAMS ?? 3);
const T = Number(process.env.BENCH_CALL_MS ?? 1000);
const OVERHEAD_CALLS = Number(process.env.BENCH_OVERHEAD_CALLS ?? 200);

interface Stats {
  byModel: Record<string, { served: number; refused: number; max: number }>;
}

const provider = spawn(process.execPath, [fileURLToPath(new URL('../test/helpers/limited-provider.mjs', import.meta.url))], {
  env: { ...process.env, LIMIT: String(K), DELAY_MS: String(T), RETRY_AFTER: '1', CALLS: String(M) },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const port = await new Promise<string>((resolve) =>
  provider.stdout!.on('data', (d) => {
    const m = /listening (\d+)/.exec(String(d));
    if (m) resolve(m[1]!);
  }),
);
const providerUrl = `http://127.0.0.1:${port}`;
const stats = async () => (await (await fetch(`${providerUrl}/stats`)).json()) as Stats;

const { benchEnv, benchRepo, quantile } = await import('./harness.js');
const { runConfigSchema } = await import('../src/config.js');
const { setPool } = await import('../src/store/pool-admin.js');
const { PoolGate } = await import('../src/model/pool.js');
const { MIGRATIONS, migrate } = await import('../src/store/migrations.js');
const { default: pg } = await import('pg');

/** The gate's call before its fast path: the locked acquire function, then the release, awaited. */
async function baselineCall(db: import('pg').Pool, waiterId: string): Promise<void> {
  const leaseId = `bench:${waiterId}`;
  const { rows } = await db.query<{ granted: boolean }>('SELECT * FROM agentrun_pool_acquire($1, $2, $3, $4, $5, $6, $7)', [
    'bench-overhead',
    waiterId,
    leaseId,
    'bench',
    'default',
    3,
    30_000,
  ]);
  if (!rows[0]?.granted) throw new Error('the baseline gate did not grant on an idle pool');
  await db.query(
    `WITH d AS (DELETE FROM pool_leases WHERE lease_id = $1 RETURNING pool),
          u AS (UPDATE pools SET adaptive_limit = least(1000, adaptive_limit + CASE WHEN last_decrease_at IS NULL THEN 1 ELSE 1.0 / greatest(adaptive_limit, 1) END),
                                 updated_at = now()
                WHERE pool = $2 AND $3::boolean AND concurrency IS NULL RETURNING 1),
          p AS (UPDATE pools SET paused_until = greatest(coalesce(paused_until, now()), now() + make_interval(secs => $4::double precision / 1000)),
                                 paused_by = 'the provider (limit exhausted)', updated_at = now()
                WHERE pool = $2 AND $4::double precision IS NOT NULL AND coalesce(paused_until, now()) <> 'infinity' RETURNING 1)
     SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM u), (SELECT count(*) FROM p),
            (SELECT pg_notify('agentrun_pool', $2) WHERE EXISTS (SELECT 1 FROM pool_waiters w WHERE w.pool = $2 AND w.expires_at > now()))`,
    [leaseId, 'bench-overhead', false, null],
  );
}

const env = await benchEnv({
  workerEnv: {
    OPENAI_API_KEY: 'bench-key',
    OPENAI_BASE_URL: `${providerUrl}/v1`,
    AGENTRUN_POOLS: 'bench-configured*=bench-configured',
  },
});

async function scenario(model: string, jobs: number) {
  const config = runConfigSchema.parse({ model, maxTurns: M + 2, approval: 'never' });
  const workspaces = await Promise.all(Array.from({ length: jobs }, () => benchRepo({ 'README.md': 'bench\n' })));
  const t0 = performance.now();
  const handles = await Promise.all(
    workspaces.map((workspace, i) =>
      env.client.workflow.start(WORKFLOW_TYPE, {
        workflowId: `pool-bench-${model}-${i}-${Date.now()}`,
        taskQueue: env.taskQueue,
        args: [{ task: `pool bench job ${i}`, workspace, config }],
      }),
    ),
  );
  const results = (await Promise.all(handles.map((h) => h.result()))) as { status: string }[];
  const makespan = performance.now() - t0;
  const s = (await stats()).byModel[model]!;
  return { makespan, completed: results.filter((r) => r.status === 'completed').length, refused: s.refused, served: s.served, max: s.max };
}

try {
  // One conversation alone: what orchestration adds to M calls of T ms, which no pool can hide.
  const alone = await scenario('bench-alone', 1);
  await setPool(env.store.pool, 'bench-configured', { concurrency: K });
  const configured = await scenario('bench-configured', N);
  const adaptive = await scenario('bench-adaptive', N);

  // The gate alone, with no contention: acquire + release on an idle pool, against the gate as it
  // was before its fast path (the locked function of migration 7, the release awaited, both
  // committing synchronously), in a schema of its own migrated that far, call by call in turns so
  // both see the same load.
  const gate = new PoolGate(env.store.pool);
  await setPool(env.store.pool, 'bench-overhead', { concurrency: 1000 });
  const baselineSchema = `${env.store.schema}_before`;
  const baselineDb = new pg.Pool({ connectionString: env.databaseUrl, options: `-c search_path=${baselineSchema}`, max: 4 });
  {
    const c = await baselineDb.connect();
    await migrate(
      c,
      baselineSchema,
      MIGRATIONS.filter((m) => m.version <= 7),
    );
    c.release();
  }
  await setPool(baselineDb, 'bench-overhead', { concurrency: 1000 });
  const before: number[] = [];
  const visible: number[] = [];
  const withRelease: number[] = [];
  for (let i = 0; i < OVERHEAD_CALLS; i++) {
    let t = performance.now();
    await baselineCall(baselineDb, `b${i}`);
    before.push(performance.now() - t);
    t = performance.now();
    const lease = await gate.acquire({ pool: 'bench-overhead', waiterId: `w${i}`, tenant: 'default', priority: 3, heartbeat: () => {} });
    // As the model call does: it goes on once the release is sent, not when it is done.
    const released = gate.release(lease, {});
    visible.push(performance.now() - t);
    await released;
    withRelease.push(performance.now() - t);
  }
  await gate.close();
  await baselineDb.query(`DROP SCHEMA ${baselineSchema} CASCADE`);
  await baselineDb.end();
  // For scale: one round trip to the same PostgreSQL on this machine now.
  const rtt: number[] = [];
  for (let i = 0; i < OVERHEAD_CALLS; i++) {
    const t = performance.now();
    await env.store.pool.query('SELECT 1');
    rtt.push(performance.now() - t);
  }

  const ideal = ((N * M) / K) * T;
  const orchestration = Math.max(0, alone.makespan - M * T);
  console.log(`\nProvider pools: ${N} jobs × ${M} calls, the provider admits ${K} streams, each call ${T} ms (ideal ${(ideal / 1000).toFixed(1)} s)`);
  console.log(`one job alone: ${(alone.makespan / 1000).toFixed(1)} s (orchestration beyond its calls: ${(orchestration / 1000).toFixed(1)} s)`);
  for (const [name, r] of [
    ['configured (pool set --concurrency K)', configured],
    ['adaptive (no pool configured)', adaptive],
  ] as const) {
    console.log(
      `${name.padEnd(40)} completed ${r.completed}/${N}  makespan ${(r.makespan / 1000).toFixed(1)} s = ${(r.makespan / ideal).toFixed(2)}× ideal, ` +
        `${(r.makespan / (ideal + orchestration)).toFixed(2)}× ideal + one job's orchestration  429s/job ${(r.refused / N).toFixed(2)}  most at once ${r.max}`,
    );
  }
  const p = (a: number[]) => `p50 ${quantile(a, 0.5).toFixed(2)} ms, p95 ${quantile(a, 0.95).toFixed(2)} ms`;
  console.log(`gate overhead per call, no contention (${OVERHEAD_CALLS} calls each, in turns):`);
  console.log(`  now, as the call sees it (acquire, release sent): ${p(visible)}`);
  console.log(`  now, release awaited too:                         ${p(withRelease)}`);
  console.log(`  before (locked function, release awaited):        ${p(before)}`);
  console.log(`  one PostgreSQL round trip (SELECT 1):              ${p(rtt)}`);
} finally {
  await env.close();
  provider.kill('SIGTERM');
}
