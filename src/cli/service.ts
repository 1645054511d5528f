// Long-running commands: `agentrun worker` (health, metrics, graceful SIGTERM) and
// `agentrun dev` (embedded Temporal dev server + PostgreSQL + a worker).
import { installRuntime } from '../../worker/index.js';
import { createServer, type Server } from 'node:http';
import { agentrunHome } from '../infra/home.js';
import { readDevState, writeDevState } from '../infra/endpoints.js';
import { startEmbeddedPostgres } from '../infra/postgres.js';
import { startTemporalDevServer } from '../infra/temporal.js';
import { log } from '../log.js';
import { renderMetrics } from '../metrics.js';
import { CliError, EXIT } from './errors.js';
import { openSession } from './session.js';
import { startDevUi } from '../ui/command.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

/** /healthz and /metrics (agentrun's counters, then the Temporal runtime's). */
function metricsServer(port: number, healthy: () => boolean, runtimeMetricsPort: number): Promise<Server> {
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
    server.listen(port, '0.0.0.0', () => resolve(server));
  });
}

export async function workerCommand(flags: { taskQueue: string; metricsPort: string; maxActivities: string; json?: boolean }): Promise<number> {
  const port = Number(flags.metricsPort);
  if (!Number.isInteger(port) || port < 0) throw new CliError(`--metrics-port must be a port number, got "${flags.metricsPort}"`);
  const maxActivities = Number(flags.maxActivities);
  if (!Number.isInteger(maxActivities) || maxActivities <= 0) throw new CliError(`--max-activities must be a positive whole number, got "${flags.maxActivities}"`);
  installRuntime(port > 0 ? { metricsBind: `127.0.0.1:${port + 1}` } : {});
  const session = await openSession({ taskQueue: flags.taskQueue });
  const worker = await session.startWorker({ maxConcurrentActivities: maxActivities });
  const server = port > 0 ? await metricsServer(port, () => worker.getState() === 'RUNNING', port + 1) : undefined;
  log.info({ taskQueue: flags.taskQueue, temporal: session.endpoints.temporalAddress, metricsPort: port || undefined }, 'worker started');
  const signal = await untilSignal();
  log.info({ signal }, 'worker shutting down: no new tasks; running activities get the grace period');
  await session.close();
  server?.close();
  log.info('worker stopped');
  return EXIT.completed;
}

export async function devCommand(flags: { worker: boolean; port: string; uiPort: string; json?: boolean }): Promise<number> {
  const home = agentrunHome();
  if (await readDevState(home)) throw new CliError(`agentrun dev is already running for ${home} (see ${join(home, 'dev.json')})`);
  const pg = await startEmbeddedPostgres(home);
  let temporal: Awaited<ReturnType<typeof startTemporalDevServer>>;
  try {
    temporal = await startTemporalDevServer(home, { port: Number(flags.port), uiPort: Number(flags.uiPort) });
  } catch (err) {
    await pg.stop();
    throw new CliError(`cannot start the Temporal dev server: ${(err as Error).message}`);
  }
  const endpoints = { temporalAddress: temporal.address, namespace: 'default', databaseUrl: pg.databaseUrl, uiUrl: temporal.uiUrl, embedded: true };
  await writeDevState(home, { ...endpoints, pid: process.pid });
  const session = flags.worker ? await openSession({}) : undefined;
  if (session) await session.startWorker();
  const uiSession = session ?? (await openSession({}));
  const ui = await startDevUi(uiSession);
  const info = { temporalAddress: endpoints.temporalAddress, databaseUrl: endpoints.databaseUrl, uiUrl: endpoints.uiUrl, uiPage: ui.url, worker: flags.worker, home };
  if (flags.json) process.stdout.write(JSON.stringify(info) + '\n');
  else process.stdout.write(`agentrun dev is up\n  Temporal:    ${info.temporalAddress}\n  Temporal UI: ${info.uiUrl}\n  agentrun UI: ${info.uiPage}\n  PostgreSQL:  ${info.databaseUrl}\n  worker:      ${flags.worker ? 'running' : 'off'}\nCtrl-C stops it.\n`);
  await untilSignal();
  await ui.close();
  if (!session) await uiSession.close();
  await session?.close();
  await rm(join(home, 'dev.json'), { force: true });
  await temporal.stop();
  await pg.stop();
  return EXIT.completed;
}
