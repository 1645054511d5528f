// Connect a CLI command to Temporal and the store: external servers from the environment,
// a running `agentrun dev` of the same AGENTRUN_HOME, or (for `run`) embedded ones started now.
import { Client, Connection } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { agentrunHome } from '../runtime/home.js';
import { externalTemporalTls, type TemporalTlsOptions } from '../runtime/tls.js';
import { resolveEndpoints, type Endpoints } from '../embedded/endpoints.js';
import { hasSearchAttributes } from '../client/conversations.js';
import { Store } from '../store/index.js';
import { DEFAULT_TASK_QUEUE } from '../../workflows/api.js';
import { asBadInput, CliError } from './errors.js';
import { flushTracing } from '../tracing/index.js';
import { stopOnSignal } from './stop-signals.js';
import { allowedEnv } from '../sandbox/env.js';
import { stickyQueueTimeoutFromEnv } from '../runtime/sticky-queue.js';
import { shutdownGraceFromEnv } from '../runtime/shutdown-grace.js';
import { parseRepositoryExtensions, REPOSITORY_EXTENSIONS_ENV, repositoryExtensionsFromEnv } from '../extensions/switch.js';

/** The names a worker of this process lets `--env` pass: `--allow-env`, else AGENTRUN_ALLOW_ENV; a bad name is bad input. */
export function workerAllowedEnv(given?: string[]): string[] {
  try {
    return allowedEnv(given);
  } catch (err) {
    throw new CliError(given ? (err as Error).message : `AGENTRUN_ALLOW_ENV: ${(err as Error).message}`);
  }
}

/**
 * `--repository-extensions off|on` for the worker of this process (it sets AGENTRUN_REPOSITORY_EXTENSIONS,
 * which the worker reads); a bad flag or variable is bad input.
 */
export function applyRepositoryExtensions(flag: string | undefined): void {
  if (flag !== undefined) {
    asBadInput(() => parseRepositoryExtensions(flag, '--repository-extensions'));
    process.env[REPOSITORY_EXTENSIONS_ENV] = flag.trim().toLowerCase();
  }
  asBadInput(() => repositoryExtensionsFromEnv());
}

/** The worker's workspace-usage interval (AGENTRUN_WORKSPACE_USAGE_INTERVAL); a bad one is bad input. */
export async function checkUsageInterval(): Promise<void> {
  const { usageIntervalFromEnv } = await import('../workspace/host.js');
  asBadInput(() => usageIntervalFromEnv());
}

/** AGENTRUN_STICKY_QUEUE_TIMEOUT (`agentrun worker --sticky-queue-timeout` sets it) in ms; a bad value is bad input. */
export const workerStickyQueueTimeout = (): number | undefined => asBadInput(() => stickyQueueTimeoutFromEnv());

/** AGENTRUN_SHUTDOWN_GRACE (`agentrun worker --shutdown-grace` sets it) in ms; a bad value is bad input. */
export const workerShutdownGrace = (): number | undefined => asBadInput(() => shutdownGraceFromEnv());

export interface Session {
  endpoints: Endpoints;
  client: Client;
  store: Store;
  home: string;
  taskQueue: string;
  /** Whether the namespace has agentrun's search attributes (workflows only upsert them then). */
  searchAttributes: boolean;
  /** Start a worker in this process; it runs until close(). */
  startWorker(opts?: {
    maxConcurrentActivities?: number;
    /** `--allow-env` (default: AGENTRUN_ALLOW_ENV). */
    allowEnv?: string[];
    deployment?: { name: string; buildId: string; behavior: 'PINNED' | 'AUTO_UPGRADE' };
    /** `--sticky-queue-timeout` (default: AGENTRUN_STICKY_QUEUE_TIMEOUT, else Temporal's 10 s). */
    stickyQueueTimeoutMs?: number;
    /** `--shutdown-grace` (default: AGENTRUN_SHUTDOWN_GRACE, else 30 s). */
    shutdownGraceMs?: number;
  }): Promise<Worker>;
  close(): Promise<void>;
}

/**
 * A signal that comes while the session opens or runs, to a command that does not wait on it
 * itself, still stops the servers the session started (the opening ends first, so none is missed).
 */
export async function openSession(opts: { startIfMissing?: boolean; taskQueue?: string } = {}): Promise<Session> {
  const opening = connectSession(opts);
  const forget = stopOnSignal(async () => (await opening.catch(() => undefined))?.close());
  const session = await opening.catch((err: unknown) => {
    forget();
    throw err;
  });
  const close = session.close;
  let closing: Promise<void> | undefined;
  session.close = () => {
    forget();
    closing ??= close();
    return closing;
  };
  return session;
}

async function connectSession(opts: { startIfMissing?: boolean; taskQueue?: string }): Promise<Session> {
  const home = agentrunHome();
  let resolved: Awaited<ReturnType<typeof resolveEndpoints>>;
  try {
    resolved = await resolveEndpoints({ home, startIfMissing: opts.startIfMissing });
  } catch (err) {
    throw new CliError(`${(err as Error).message} (\`agentrun doctor\` checks the setup)`);
  }
  const { endpoints } = resolved;
  let tls: TemporalTlsOptions;
  try {
    tls = externalTemporalTls();
  } catch (err) {
    await resolved.stop();
    throw new CliError((err as Error).message);
  }
  // Temporal and PostgreSQL are independent: connect to both at once (a CLI command pays the
  // slower of the two, not their sum). A Temporal failure is reported first, as before.
  const temporalSide = Connection.connect({ address: endpoints.temporalAddress, connectTimeout: '10s', ...tls }).then(async (c) => ({
    connection: c,
    searchAttributes: await hasSearchAttributes(c, endpoints.namespace),
  }));
  // A worker's pool is as large as its activity slots (a smaller one queues store work behind them).
  const storeSide = Store.connect(endpoints.databaseUrl, { schema: process.env.AGENTRUN_DB_SCHEMA, max: Number(process.env.AGENTRUN_DB_POOL) || 10 });
  const [t, s] = await Promise.allSettled([temporalSide, storeSide]);
  if (t.status === 'rejected' || s.status === 'rejected') {
    if (t.status === 'fulfilled') await t.value.connection.close().catch(() => {});
    if (s.status === 'fulfilled') await s.value.close().catch(() => {});
    await resolved.stop();
    if (t.status === 'rejected') {
      throw new CliError(
        `cannot reach Temporal at ${endpoints.temporalAddress}: ${(t.reason as Error).message}; check TEMPORAL_ADDRESS or start \`agentrun dev\` (\`agentrun doctor\` checks the setup)`,
      );
    }
    throw new CliError(((s as PromiseRejectedResult).reason as Error).message);
  }
  const { connection, searchAttributes } = t.value;
  const store = s.value;
  const client = new Client({ connection, namespace: endpoints.namespace });
  const workers: { worker: Worker; running: Promise<void> }[] = [];
  const nativeConnections: NativeConnection[] = [];
  /** The disk keeper of this process's worker (every worker has one: `agentrun worker`, `run`, `dev`). */
  let diskKeeper: { stop(): Promise<void> } | undefined;
  const taskQueue = opts.taskQueue ?? process.env.AGENTRUN_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;
  return {
    endpoints,
    client,
    store,
    home,
    taskQueue,
    searchAttributes,
    async startWorker(opts = {}) {
      // Only commands that run a worker load it (and its native runtime and bundler).
      const [{ NativeConnection }, { createWorker, createHostWorker, installRuntime }, { WorkerExtensions }] = await Promise.all([
        import('@temporalio/worker'),
        import('../../worker/index.js'),
        import('../extensions/worker.js'),
      ]);
      installRuntime();
      // `agentrun run` and `dev` start one too: AGENTRUN_ALLOW_ENV, AGENTRUN_WORKSPACE_USAGE_INTERVAL,
      // AGENTRUN_STICKY_QUEUE_TIMEOUT and AGENTRUN_SHUTDOWN_GRACE are theirs.
      await checkUsageInterval();
      applyRepositoryExtensions(undefined);
      const { shutdownGraceMs, ...given } = opts;
      const grace = shutdownGraceMs ?? workerShutdownGrace();
      const settings = {
        ...given,
        allowEnv: given.allowEnv ?? workerAllowedEnv(),
        stickyQueueTimeoutMs: given.stickyQueueTimeoutMs ?? workerStickyQueueTimeout(),
        ...(grace !== undefined ? { shutdownGraceTime: grace } : {}),
      };
      // Finished jobs' workspaces as their --keep-workspace says, caches under their size limit: now and every AGENTRUN_GC_INTERVAL.
      const disk = await import('../environment/disk.js');
      try {
        diskKeeper ??= disk.startDiskKeeper(store, home, disk.diskLimitsFromEnv());
      } catch (err) {
        throw new CliError((err as Error).message);
      }
      const nc = await NativeConnection.connect({ address: endpoints.temporalAddress, ...tls });
      nativeConnections.push(nc);
      // settings.json (MCP servers, hooks) of AGENTRUN_HOME and of each workspace.
      const extensions = new WorkerExtensions({ home });
      const worker = await createWorker({ connection: nc, namespace: endpoints.namespace, taskQueue, store, home, extensions, ...settings });
      workers.push({ worker, running: worker.run().finally(() => extensions.close()) });
      // This process is also a workspace host: it polls its own host queue (repository jobs).
      const hostWorker = await createHostWorker({ connection: nc, namespace: endpoints.namespace, taskQueue, store, home, extensions, ...settings });
      workers.push({ worker: hostWorker, running: hostWorker.run() });
      return worker;
    },
    async close() {
      for (const { worker, running } of workers) {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running.catch(() => {});
      }
      if (workers.length) await (await import('../runtime/launcher.js')).stopLauncher();
      // A job that just pushed its branch: its workspace goes before the process does.
      await diskKeeper?.stop();
      await flushTracing(); // the last spans of an in-process worker, before the CLI exits
      for (const nc of nativeConnections) await nc.close().catch(() => {});
      await connection.close().catch(() => {});
      await store.close().catch(() => {});
      await resolved.stop();
    },
  };
}

/**
 * The worker of `run` and `dev`, a person's own: it serves scripted and recorded models from
 * anywhere (the quickstart runs on one), unless AGENTRUN_SCRIPTS_DIR / AGENTRUN_RECORDED_MODELS say
 * otherwise. `agentrun worker` serves them only as those settings say.
 */
export async function startOwnWorker(session: Session): Promise<void> {
  const { allowTestModels, testModelsFromEnv } = await import('../model/scripted/allowed.js');
  const given = testModelsFromEnv();
  allowTestModels({
    scriptsDirs: process.env.AGENTRUN_SCRIPTS_DIR?.trim() ? given.scriptsDirs : ['/'],
    recorded: process.env.AGENTRUN_RECORDED_MODELS?.trim() ? given.recorded : true,
  });
  await session.startWorker();
}
