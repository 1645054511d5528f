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
// Measured 2026-11-27, BENCH_JOBS=9 BENCH_CALLS=2 BENCH_STREAMS=3 BENCH_CALL_MS=1000 (ideal 6.0 s), on
// 2 cores shared with seven other engineers' test runs (load average 14–16):
//   one job alone 8.6 s (6.6 s of it orchestration: start, placement, turn-0 checkpoint, turns)
//   configured: 9/9 completed, makespan 15.6 s = 2.60× ideal, 1.24× ideal + one job's orchestration,
//               0.00 429s/job, at most 3 streams at once
//   adaptive:   9/9 completed, makespan 10.1 s = 1.68× ideal, 0.80× ideal + orchestration, 0.22 429s/job
//   gate overhead per call (acquire + release, no contention): p50 6.5 ms, p95 14.5 ms (17.7 ms p50
//   before the gate's fast path). At this load the ≤ 1.25× and ≤ 5 ms goals are not shown met: the
//   makespan is dominated by orchestration at N=9, and one PostgreSQL round trip costs milliseconds.
// An earlier run (before the fast path; same settings): configured 1.40×, adaptive 1.12× of ideal +
// orchestration, 0.00 and 0.11 429s/job.
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
const { setPool } = await import('../src/model/pool-admin.js');
const { PoolGate } = await import('../src/model/pool.js');

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

  // The gate alone, with no contention: acquire + release on an idle pool.
  const gate = new PoolGate(env.store.pool);
  await setPool(env.store.pool, 'bench-overhead', { concurrency: 1000 });
  const ms: number[] = [];
  for (let i = 0; i < OVERHEAD_CALLS; i++) {
    const t = performance.now();
    const lease = await gate.acquire({ pool: 'bench-overhead', waiterId: `w${i}`, tenant: 'default', priority: 3, heartbeat: () => {} });
    await gate.release(lease, {});
    ms.push(performance.now() - t);
  }
  await gate.close();
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
  console.log(
    `gate overhead per call, no contention (${OVERHEAD_CALLS} calls): p50 ${quantile(ms, 0.5).toFixed(2)} ms, p95 ${quantile(ms, 0.95).toFixed(2)} ms (one PostgreSQL round trip here now: p50 ${quantile(rtt, 0.5).toFixed(2)} ms)`,
  );
} finally {
  await env.close();
  provider.kill('SIGTERM');
}
