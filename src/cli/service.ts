// Long-running commands: `agentrun worker` (health, metrics, graceful SIGTERM) and
// `agentrun dev` (embedded Temporal dev server + PostgreSQL + a worker).
import { handOverConversations } from '../../worker/drain.js';
import { hostId, hostIncarnation } from '../workspace/host.js';
import { createServer, type Server } from 'node:http';
import { agentrunHome } from '../runtime/home.js';
import { readDevState, writeDevState } from '../embedded/endpoints.js';
import { redactUrl } from '../store/store.js';
import { startEmbeddedPostgres } from '../embedded/postgres.js';
import { startTemporalDevServer } from '../embedded/temporal.js';
import { isPortFree, pickPort } from '../embedded/net.js';
import { currentLogFile, log } from '../log.js';
import { renderMetrics } from '../metrics.js';
import { CliError, EXIT } from './errors.js';
import { openSession, startOwnWorker } from './session.js';
import { startDevUi } from './ui.js';
import { exitCodeForSignal, whenStopped, type StopSignal } from './stop-signals.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_WORKER_DB_POOL } from '../runtime/capacity.js';

/** The worker drains on SIGTERM (its conversations move to other hosts) and stops on SIGINT. */
function untilWorkerSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

/** /healthz and /metrics (agentrun's counters, then the Temporal runtime's). */
function metricsServer(port: number, healthy: () => boolean, runtimeMetricsPort: number, host: string): Promise<Server> {
  const server = createServer(async (req, res) => {
    if (req.url === '/healthz') {
      const ok = healthy();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ ok }));
    } else if (req.url === '/metrics') {
      let runtime = '';
      try {
        runtime = await (await fetch(`http://127.0.0.1:${runtimeMetricsPort}/metrics`)).text();
      } catch {
        // runtime metrics not up yet
      }
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(renderMetrics() + runtime);
    } else res.writeHead(404).end();
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err) => reject(new CliError(`cannot serve metrics on port ${port}: ${err.message}; choose another --metrics-port or 0`)));
    server.listen(port, host, () => resolve(server));
  });
}

export async function workerCommand(flags: {
  taskQueue: string;
  metricsPort: string;
  metricsPortGiven?: boolean;
  metricsHost?: string;
  maxActivities: string;
  deployment?: string;
  buildId?: string;
  allowEnv?: string[];
  stickyQueueTimeoutMs?: number;
  shutdownGraceMs?: number;
  json?: boolean;
}): Promise<number> {
  let port = Number(flags.metricsPort);
  if (!Number.isInteger(port) || port < 0) throw new CliError(`--metrics-port must be a port number, got "${flags.metricsPort}"`);
  const maxActivities = Number(flags.maxActivities);
  if (!Number.isInteger(maxActivities) || maxActivities <= 0)
    throw new CliError(`--max-activities must be a positive whole number, got "${flags.maxActivities}"`);
  // A second worker on the host finds the default port taken: it takes a free one (a port the
  // user asked for is theirs to fix, and metricsServer says so).
  if (port > 0 && !flags.metricsPortGiven && !(await isPortFree(port, '0.0.0.0'))) {
    const free = await pickPort();
    log.warn({ metricsPort: free }, `metrics port ${port} is in use (another worker?): serving /metrics and /healthz on ${free}`);
    port = free;
  }
  const runtimePort = port > 0 ? await pickPort(port + 1) : 0;
  const { installRuntime } = await import('../../worker/index.js');
  installRuntime(runtimePort > 0 ? { metricsBind: `127.0.0.1:${runtimePort}` } : {});
  process.env.AGENTRUN_DB_POOL ??= String(DEFAULT_WORKER_DB_POOL);
  const session = await openSession({ taskQueue: flags.taskQueue });
  // Worker Versioning (docs/deploy.md): this worker is one build of the deployment; conversations
  // stay on the build they started on (PINNED, docs/decisions.md).
  const deployment = flags.deployment
    ? { name: flags.deployment, buildId: flags.buildId ?? (await import('./version.js')).buildId(), behavior: 'PINNED' as const }
    : undefined;
  if (deployment && !/^[\w-]+$/.test(deployment.name)) throw new CliError(`--deployment must use letters, digits, - and _ (no dots), got "${deployment.name}"`);
  const worker = await session.startWorker({
    maxConcurrentActivities: maxActivities,
    deployment,
    allowEnv: flags.allowEnv,
    stickyQueueTimeoutMs: flags.stickyQueueTimeoutMs,
    shutdownGraceMs: flags.shutdownGraceMs,
  });
  // Loopback unless --metrics-host says otherwise (a pod's probes and scraper set 0.0.0.0).
  const server = port > 0 ? await metricsServer(port, () => worker.getState() === 'RUNNING', runtimePort, flags.metricsHost ?? '127.0.0.1') : undefined;
  log.info(
    {
      taskQueue: flags.taskQueue,
      host: hostId(),
      incarnation: hostIncarnation(),
      temporal: session.endpoints.temporalAddress,
      metricsPort: port || undefined,
      deployment,
      allowEnv: flags.allowEnv,
      stickyQueueTimeoutMs: flags.stickyQueueTimeoutMs,
      shutdownGraceMs: flags.shutdownGraceMs,
    },
    'worker started',
  );
  // The first build of a new deployment makes itself current; later builds wait for the rollout to promote them.
  if (deployment) void (await import('../runtime/deployment.js')).adoptAsFirstVersion(session.client, deployment, log);
  const signal = await untilWorkerSignal();
  log.info({ signal }, 'worker shutting down: no new tasks; running activities get the grace period');
  await session.close();
  // Stopped polling: conversations whose workspaces this host holds move to other hosts now.
  if (signal === 'SIGTERM')
    await handOverConversations({ address: session.endpoints.temporalAddress, namespace: session.endpoints.namespace, hostId: hostId() }).catch((err) =>
      log.error({ err: (err as Error).message }, 'hand-over failed'),
    );
  server?.close();
  log.info('worker stopped');
  return EXIT.completed;
}

export async function devCommand(flags: { worker: boolean; port?: string; uiPort?: string; json?: boolean }): Promise<number> {
  const home = agentrunHome();
  if (await readDevState(home)) throw new CliError(`agentrun dev is already running for ${home} (see ${join(home, 'dev.json')})`);
  const port = flags.port === undefined ? undefined : Number(flags.port);
  const uiPort = flags.uiPort === undefined ? undefined : Number(flags.uiPort);
  for (const [flag, v] of [
    ['--port', port],
    ['--ui-port', uiPort],
  ] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v <= 0 || v > 65535)) throw new CliError(`${flag} must be a port number`);
  }
  // Claimed before anything starts: a signal during the start stops what has started once it is up.
  const stop = whenStopped();
  try {
    return await devUntilStopped(home, flags, { port, uiPort }, stop.signal);
  } finally {
    stop.release();
  }
}

async function devUntilStopped(
  home: string,
  flags: { worker: boolean; json?: boolean },
  ports: { port?: number; uiPort?: number },
  stopped: Promise<StopSignal>,
): Promise<number> {
  const { port, uiPort } = ports;
  // DATABASE_URL, when set, is the database of every command and of this worker: dev.json must name the same one.
  const externalDb = process.env.DATABASE_URL?.trim() || undefined;
  const pg = externalDb ? { databaseUrl: externalDb, stop: async () => {} } : await startEmbeddedPostgres(home);
  let temporal: Awaited<ReturnType<typeof startTemporalDevServer>>;
  try {
    // Ports the user gave must be free; otherwise the previous ones, else 7233/8233, else free ones (the banner says which).
    temporal = await startTemporalDevServer(home, { port, uiPort });
  } catch (err) {
    await pg.stop();
    throw new CliError(`cannot start the Temporal dev server: ${(err as Error).message}`);
  }
  const endpoints = { temporalAddress: temporal.address, namespace: 'default', databaseUrl: pg.databaseUrl, uiUrl: temporal.uiUrl, embedded: true };
  await writeDevState(home, { ...endpoints, pid: process.pid });
  const session = flags.worker ? await openSession({}) : undefined;
  if (session) await startOwnWorker(session);
  const uiSession = session ?? (await openSession({}));
  const ui = await startDevUi(uiSession);
  // The password stays in dev.json (0600); what is printed is masked.
  const info = {
    temporalAddress: endpoints.temporalAddress,
    databaseUrl: redactUrl(endpoints.databaseUrl),
    uiUrl: endpoints.uiUrl,
    uiPage: ui.url,
    worker: flags.worker,
    home,
  };
  const logs = currentLogFile();
  if (flags.json) process.stdout.write(JSON.stringify(info) + '\n');
  else
    process.stdout.write(
      `agentrun dev is up\n  Temporal:    ${info.temporalAddress}\n  Temporal UI: ${info.uiUrl}\n  agentrun UI: ${info.uiPage}\n  PostgreSQL:  ${info.databaseUrl}\n  worker:      ${flags.worker ? 'running' : 'off'}\n${logs ? `  logs:        ${logs}\n` : ''}Ctrl-C, SIGTERM or SIGHUP stops it.\n`,
    );
  const signal = await stopped;
  await ui.close();
  if (!session) await uiSession.close();
  await session?.close();
  await rm(join(home, 'dev.json'), { force: true });
  await temporal.stop();
  await pg.stop();
  if (!flags.json) process.stdout.write(`${signal}: agentrun dev stopped its servers${flags.worker ? ' and its worker' : ''}\n`);
  return exitCodeForSignal(signal);
}
