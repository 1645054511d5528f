// What Temporal alone costs per turn on this machine: the smallest conversation (bench/floor/
// workflow.ts: per turn one activity that waits the model latency, one no-op tool activity; no
// PostgreSQL, no model server, no tools) on the same dev server and worker settings agentrun
// uses. N conversations start together; the median turn latency against N = 1 and the CPU per
// turn of the worker and the Temporal server show how many conversations the machine can carry
// before Temporal's own work queues up, whatever agentrun does per turn.
// Run: npx tsx bench/temporal-floor.ts
// Settings: BENCH_MODEL_LATENCY_MS (5000), BENCH_LEVELS (1,50,100,200), BENCH_TURNS (6).
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTemporalDevServer } from '../src/embedded/temporal.js';
import { installRuntime } from '../worker/index.js';

const LATENCY = Number(process.env.BENCH_MODEL_LATENCY_MS ?? 5000);
const LEVELS = (process.env.BENCH_LEVELS ?? '1,50,100,200').split(',').map(Number);
const TURNS = Number(process.env.BENCH_TURNS ?? 6);

/** utime + stime of a process, in ms (Linux). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

function temporalPids(home: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(home) && readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('temporal');
      } catch {
        return false;
      }
    })
    .map(Number);
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

installRuntime();
const home = await mkdtemp(join(tmpdir(), 'agentrun-floor-'));
const temporal = await startTemporalDevServer(home, { headless: true });
const nc = await NativeConnection.connect({ address: temporal.address });
const taskQueue = 'floor';
const worker = await Worker.create({
  connection: nc,
  taskQueue,
  workflowsPath: fileURLToPath(new URL('./floor/workflow.ts', import.meta.url)),
  activities: {
    model: async (latencyMs: number) => {
      await sleep(latencyMs);
      return 'call';
    },
    tool: async (call: string) => call,
  },
  maxConcurrentActivityTaskExecutions: 1000,
});
const running = worker.run();
const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
const serverPids = temporalPids(home);

console.log(`Temporal floor: ${TURNS} turns per conversation, model latency ${LATENCY} ms, levels ${LEVELS.join(', ')}`);
let base: { m: number; p95: number } | undefined;
for (const n of LEVELS) {
  const cpu0 = { worker: cpuMs(process.pid), temporal: serverPids.reduce((s, p) => s + cpuMs(p), 0) };
  const t0 = Date.now();
  const handles = await Promise.all(
    Array.from({ length: n }, (_, i) => client.workflow.start('floorConversation', { workflowId: `floor-${n}-${i}-${t0}`, taskQueue, args: [TURNS, LATENCY] })),
  );
  const results = (await Promise.all(handles.map((h) => h.result()))) as number[][];
  const wall = Date.now() - t0;
  const turns = results.flatMap((at) => at.slice(1).map((t, i) => t - at[i]!));
  const cpu = { worker: cpuMs(process.pid) - cpu0.worker, temporal: serverPids.reduce((s, p) => s + cpuMs(p), 0) - cpu0.temporal };
  const m = quantile(turns, 0.5);
  const p95 = quantile(turns, 0.95);
  base ??= { m, p95 };
  const overhead = (x: number) => (x - LATENCY).toFixed(0);
  console.log(
    `  N=${String(n).padStart(4)}: median turn ${m.toFixed(0)} ms (${(m / base.m).toFixed(3)}× N=1; ${overhead(m)} ms over the latency), ` +
      `p95 ${p95.toFixed(0)} ms (${(p95 / base.p95).toFixed(3)}× N=1), ` +
      `${(turns.length / (wall / 1000)).toFixed(1)} turns/s, CPU per turn: worker ${(cpu.worker / turns.length).toFixed(1)} ms, Temporal ${(cpu.temporal / turns.length).toFixed(1)} ms`,
  );
  console.log(
    JSON.stringify({
      bench: 'temporal-floor',
      n,
      latencyMs: LATENCY,
      medianTurnMs: m,
      p95TurnMs: p95,
      growth: m / base.m,
      p95Growth: p95 / base.p95,
      turns: turns.length,
      wallMs: wall,
      cpuMs: cpu,
    }),
  );
}
worker.shutdown();
await running;
await nc.close();
await temporal.stop();
await rm(home, { recursive: true, force: true });
process.exit(0);
