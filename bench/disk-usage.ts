// What a workspace host spends measuring a workspace's size for `list` (src/workspace/host.ts
// recordWorkspaceUsage, src/workspace/gc.ts diskUsage), on a generated tree: one walk, and the
// walks made over a run of checkpointed turns (each checkpointed turn asks for a measure).
// Run: DATABASE_URL=postgres://… npx tsx bench/disk-usage.ts
//   (BENCH_DU_FILES=50000 BENCH_DU_MB=1000 BENCH_DU_TURNS=40 BENCH_DU_TURN_MS=500 by default)
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../src/store/index.js';
import { benchStore } from './harness.js';
import { diskUsage } from '../src/workspace/gc.js';
import { recordWorkspaceUsage } from '../src/workspace/host.js';

const FILES = Number(process.env.BENCH_DU_FILES ?? 50_000);
const MB = Number(process.env.BENCH_DU_MB ?? 1000);
const TURNS = Number(process.env.BENCH_DU_TURNS ?? 40);
const TURN_MS = Number(process.env.BENCH_DU_TURN_MS ?? 500);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const { store, drop } = await benchStore('bench_du');
  const root = await mkdtemp(join(tmpdir(), 'agentrun-bench-du-'));
  const ws = join(root, 'ws');
  try {
    const per = Math.round((MB * 1e6) / FILES);
    const chunk = Buffer.alloc(per, 'x');
    for (let i = 0; i < FILES; i++) {
      const dir = join(ws, `pkg${i % 200}`, `mod${i % 7}`);
      if (i < 1400) await mkdir(dir, { recursive: true });
      await writeFile(join(dir, `file${i}.ts`), chunk);
    }
    console.log(`machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}`);
    const walks: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      bytes = await diskUsage(ws);
      walks.push(performance.now() - t);
    }
    console.log(
      `one walk of ${FILES} files (${(bytes / 1e6).toFixed(0)} MB): median ${median(walks).toFixed(0)} ms, min ${Math.min(...walks).toFixed(0)} ms of 5 (warm cache)`,
    );

    // A conversation checkpointing a turn every TURN_MS: each asks for a measure.
    let measures = 0;
    const counting = Object.create(store, {
      putWorkspaceUsage: {
        value: async (...args: Parameters<Store['putWorkspaceUsage']>) => {
          if (args[1].diskBytes !== undefined) measures++;
          return store.putWorkspaceUsage(...args);
        },
      },
    }) as Store;
    const cpu = process.cpuUsage();
    const t = performance.now();
    for (let i = 0; i < TURNS; i++) {
      recordWorkspaceUsage(counting, 'bench', ws);
      await sleep(TURN_MS);
    }
    const wall = performance.now() - t;
    const used = process.cpuUsage(cpu);
    console.log(
      `${TURNS} checkpointed turns, one every ${TURN_MS} ms (${(wall / 1000).toFixed(1)} s): ${measures} walks, host CPU ${((used.user + used.system) / 1000).toFixed(0)} ms (${((used.user + used.system) / 1000 / TURNS).toFixed(0)} ms/turn)`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
    await drop();
  }
  process.exit(0);
}

void main();
