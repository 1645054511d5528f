// Shared set-up for benchmarks: a Temporal dev server and PostgreSQL (DATABASE_URL, the local
// server, or embedded), a worker on its own task queue, and a fresh schema.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import YAML from 'yaml';
import { DEFAULT_WORKER_DB_POOL } from '../src/infra/capacity.js';
import { startEmbeddedPostgres } from '../src/infra/postgres.js';
import { startTemporalDevServer } from '../src/infra/temporal.js';
import { Store } from '../src/store/index.js';
import { createWorker, installRuntime } from '../worker/index.js';

export interface BenchEnv {
  client: Client;
  store: Store;
  worker: Worker;
  taskQueue: string;
  home: string;
  /** Where the Temporal dev server listens (host:port), for a second client in another process. */
  temporalAddress: string;
  /** The PostgreSQL URL and the bench's schema, for a second Store (e.g. a watcher process). */
  databaseUrl: string;
  schema: string;
  close(): Promise<void>;
}

async function reachable(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

/** A Temporal dev server under `home`, and PostgreSQL: DATABASE_URL, else the local one, else embedded. */
export async function benchServers(home: string) {
  const temporal = await startTemporalDevServer(home, { headless: true });
  let databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  let embedded: { stop(): Promise<void> } | undefined;
  if (!(await reachable(databaseUrl))) {
    const e = await startEmbeddedPostgres(home);
    embedded = e;
    databaseUrl = e.databaseUrl;
  }
  return { temporal, databaseUrl, embedded };
}

export async function benchEnv(): Promise<BenchEnv> {
  process.env.AGENTRUN_LOG_LEVEL ??= 'warn';
  installRuntime();
  const home = await mkdtemp(join(tmpdir(), 'agentrun-bench-'));
  const { temporal, databaseUrl, embedded } = await benchServers(home);
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  // BENCH_PG_POOL: the worker's PostgreSQL pool (default: a worker's, src/infra/capacity.ts).
  const store = await Store.connect(databaseUrl, { schema, max: Number(process.env.BENCH_PG_POOL) || DEFAULT_WORKER_DB_POOL });
  const nc = await NativeConnection.connect({ address: temporal.address });
  const taskQueue = `bench-${randomBytes(4).toString('hex')}`;
  const worker = await createWorker({ connection: nc, taskQueue, store, home });
  const running = worker.run();
  const connection = await Connection.connect({ address: temporal.address });
  return {
    client: new Client({ connection }),
    store,
    worker,
    taskQueue,
    home,
    temporalAddress: temporal.address,
    databaseUrl,
    schema,
    async close() {
      const step = (name: string) => process.env.BENCH_DEBUG && console.error(`close: ${name}`);
      step('worker');
      worker.shutdown();
      await running;
      step('connections');
      await nc.close();
      await connection.close();
      step('schema');
      await store.pool.query(`drop schema ${schema} cascade`);
      await store.close();
      step('temporal');
      await temporal.stop();
      await embedded?.stop();
      await rm(home, { recursive: true, force: true });
      step('done');
    },
  };
}

export async function benchRepo(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrun-bench-ws-'));
  for (const [p, c] of Object.entries(files)) await writeFile(join(dir, p), c);
  execFileSync('git', ['init', '-q'], { cwd: dir });
  return dir;
}

export async function benchScript(script: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrun-bench-script-'));
  const file = join(dir, 'script.yaml');
  await writeFile(file, YAML.stringify(script));
  return `scripted:${file}`;
}

/** The q-quantile (0…1) of xs by nearest rank; NaN when empty. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}
