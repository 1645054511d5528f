// Shared set-up for benchmarks: a Temporal dev server and PostgreSQL (DATABASE_URL, the local
// server, or embedded), a fresh schema, and the worker a user runs: `agentrun worker` (the built
// CLI, bin/agentrun.js) in its own process, with its host queue, sandbox, checkpoints and
// placement, on its own task queue.
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import YAML from 'yaml';
import { startEmbeddedPostgres } from '../src/embedded/postgres.js';
import { startTemporalDevServer, type TemporalDevOptions } from '../src/embedded/temporal.js';
import { Store } from '../src/store/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'bin', 'agentrun.js');
const PROBE = join(ROOT, 'bench', 'probe.mjs');
// The workers a bench starts inherit this: they run the bench's scripted models (benchScript writes
// them under the temporary directory), which a worker refuses unless told where they may be.
process.env.AGENTRUN_SCRIPTS_DIR ??= tmpdir();

export interface BenchEnv {
  client: Client;
  /** The bench's own store (reads streams and rows); the worker has its own pool in its process. */
  store: Store;
  /** The `agentrun worker` of benchEnv() (none with `{ worker: false }`). */
  worker?: CliWorker;
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
export async function benchServers(home: string, opts: Pick<TemporalDevOptions, 'metricsPort'> = {}) {
  const temporal = await startTemporalDevServer(home, { headless: true, ...opts });
  let databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  let embedded: { stop(): Promise<void> } | undefined;
  if (!(await reachable(databaseUrl))) {
    const e = await startEmbeddedPostgres(home);
    embedded = e;
    databaseUrl = e.databaseUrl;
  }
  return { temporal, databaseUrl, embedded };
}

/** An `agentrun worker` process of the bench. */
export interface CliWorker {
  child: ChildProcess;
  pid: number;
  hostId: string;
  /** Its AGENTRUN_WORKSPACES (clones of repository jobs). */
  workspaces: string;
  /** The main thread's event loop so far (bench/probe.mjs): cumulative busy and idle ms, and the delay percentiles since the last resetDelay(). */
  probe():
    | { active: number; idle: number; delayP50Ms: number; delayP99Ms: number; delayMaxMs: number; waits: Record<string, { seconds: number; count: number }> }
    | undefined;
  /** Restart the event-loop delay histogram (within a second: the probe's period). */
  resetDelay(): void;
  output(): string;
  /** SIGTERM (a graceful stop, as a pod's) and wait for the exit. */
  stop(): Promise<void>;
}

/** dist/ must hold the current sources: the bench runs the built CLI, as a user does. */
function assertBuilt(): void {
  const built = join(ROOT, 'dist', 'workflow-bundle.js');
  if (!existsSync(built)) throw new Error('bench: dist/ is missing: run `npm run build` first (the benches run the built `agentrun worker`)');
  const builtAt = statSync(built).mtimeMs;
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((m, e) => {
      const p = join(dir, e.name);
      if (e.isDirectory()) return Math.max(m, newest(p));
      return e.name.endsWith('.ts') ? Math.max(m, statSync(p).mtimeMs) : m;
    }, 0);
  const changed = ['src', 'worker', 'activities', 'workflows'].find((d) => newest(join(ROOT, d)) > builtAt);
  if (changed) throw new Error(`bench: ${changed}/ changed after the last build: run \`npm run build\` first (the benches run the built \`agentrun worker\`)`);
}

/**
 * `agentrun worker --task-queue QUEUE` (bin/agentrun.js, the compiled CLI) against the bench's
 * servers and schema, with the CLI's defaults otherwise (log level, sandbox, activity slots, pool,
 * metrics). `env` adds to its environment (AGENTRUN_HOST_ID is set to `hostId`). BENCH_CPU_PROF=DIR
 * writes a V8 CPU profile of the worker there when it exits; BENCH_NODE_FLAGS adds flags to its node; BENCH_AGENTRUN_CLI=…/bin/agentrun.js
 * runs another built checkout's worker instead.
 */
export async function startCliWorker(
  servers: Pick<BenchEnv, 'temporalAddress' | 'databaseUrl' | 'schema' | 'home'>,
  taskQueue: string,
  hostId: string,
  env: NodeJS.ProcessEnv = {},
): Promise<CliWorker> {
  assertBuilt();
  const workspaces = await mkdtemp(join(tmpdir(), `agentrun-bench-${hostId}-`));
  const probeFile = join(workspaces, '.probe.json');
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  // BENCH_NODE_FLAGS: more flags for the worker's node (e.g. --perf-basic-prof, for `perf record -p` to name JavaScript frames).
  const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const { AGENTRUN_LOG_LEVEL: _level, ...inherited } = process.env;
  // BENCH_AGENTRUN_CLI: another built checkout's CLI (a before/after comparison on the same servers).
  const cli = process.env.BENCH_AGENTRUN_CLI?.trim() || CLI;
  const child = spawn(process.execPath, [...prof, ...nodeFlags, '--import', PROBE, cli, 'worker', '--task-queue', taskQueue], {
    cwd: ROOT,
    env: {
      ...inherited,
      TEMPORAL_ADDRESS: servers.temporalAddress,
      DATABASE_URL: servers.databaseUrl,
      AGENTRUN_DB_SCHEMA: servers.schema,
      AGENTRUN_HOME: servers.home,
      AGENTRUN_HOST_ID: hostId,
      AGENTRUN_WORKSPACES: workspaces,
      BENCH_PROBE_FILE: probeFile,
      ...(process.env.BENCH_PG_POOL ? { AGENTRUN_DB_POOL: process.env.BENCH_PG_POOL } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The worker logs at info (the CLI's default) to stderr; keep the tail for an error message.
  let out = '';
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const keep = (d: Buffer) => {
    out = (out + String(d)).slice(-20_000);
    if (out.includes('"worker started"')) started();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ready,
      exited.then(() => {
        throw new Error(`agentrun worker ${hostId} exited (${child.exitCode ?? child.signalCode}) before it started:\n${out}`);
      }),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`agentrun worker ${hostId} did not start in 120 s:\n${out}`)), 120_000))),
    ]);
  } catch (err) {
    child.kill('SIGKILL');
    await rm(workspaces, { recursive: true, force: true });
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return {
    child,
    pid: child.pid!,
    hostId,
    workspaces,
    probe() {
      try {
        return JSON.parse(readFileSync(probeFile, 'utf8'));
      } catch {
        return undefined;
      }
    },
    resetDelay: () => writeFileSync(`${probeFile}.reset`, ''),
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(workspaces, { recursive: true, force: true });
    },
  };
}

/**
 * The servers, a schema, a client, and (unless `worker: false`) one `agentrun worker` on a task
 * queue of its own. `workerEnv` adds to the worker's environment (OPENAI_BASE_URL …).
 */
export async function benchEnv(opts: { worker?: boolean; workerEnv?: NodeJS.ProcessEnv } = {}): Promise<BenchEnv> {
  process.env.AGENTRUN_LOG_LEVEL ??= 'warn';
  const home = await mkdtemp(join(tmpdir(), 'agentrun-bench-'));
  const { temporal, databaseUrl, embedded } = await benchServers(home);
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  // The bench's own reads; the first connection creates the schema before the worker starts.
  const stopServers = async () => {
    await temporal.stop();
    await embedded?.stop();
    await rm(home, { recursive: true, force: true });
  };
  const store = await Store.connect(databaseUrl, { schema, max: 4 }).catch(async (err) => {
    await stopServers();
    throw err;
  });
  const taskQueue = `bench-${randomBytes(4).toString('hex')}`;
  const servers = { temporalAddress: temporal.address, databaseUrl, schema, home };
  let worker: CliWorker | undefined;
  try {
    if (opts.worker !== false) worker = await startCliWorker(servers, taskQueue, `bench-${randomBytes(3).toString('hex')}`, opts.workerEnv);
  } catch (err) {
    await store.pool.query(`drop schema ${schema} cascade`).catch(() => {});
    await store.close();
    await stopServers();
    throw err;
  }
  const connection = await Connection.connect({ address: temporal.address });
  return {
    client: new Client({ connection }),
    store,
    worker,
    taskQueue,
    ...servers,
    async close() {
      const step = (name: string) => process.env.BENCH_DEBUG && console.error(`close: ${name}`);
      step('worker');
      await worker?.stop();
      step('connections');
      await connection.close();
      step('schema');
      await store.pool.query(`drop schema ${schema} cascade`);
      await store.close();
      step('temporal');
      await stopServers();
      await removeBenchDirs();
      step('done');
    },
  };
}

/** Temporary directories of a bench (workspaces, scripts, repositories): benchEnv's close() removes them. */
const benchDirs: string[] = [];

/** A temporary directory removed by benchEnv's close() (or by removeBenchDirs). */
export async function benchDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  benchDirs.push(dir);
  return dir;
}

export async function removeBenchDirs(): Promise<void> {
  await Promise.all(benchDirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

export async function benchRepo(files: Record<string, string> = {}): Promise<string> {
  const dir = await benchDir('agentrun-bench-ws-');
  for (const [p, c] of Object.entries(files)) await writeFile(join(dir, p), c);
  execFileSync('git', ['init', '-q'], { cwd: dir });
  return dir;
}

export async function benchScript(script: unknown): Promise<string> {
  const dir = await benchDir('agentrun-bench-script-');
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

/** A Store on DATABASE_URL (else the local server) in a schema of its own, for benches without Temporal; `drop` closes it and removes the schema. */
export async function benchStore(prefix: string): Promise<{ store: Store; drop: () => Promise<void> }> {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `${prefix}_${process.pid}`;
  const store = await Store.connect(url, { schema });
  const drop = async () => {
    await store.close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  };
  return { store, drop };
}
