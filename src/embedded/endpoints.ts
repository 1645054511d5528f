// Which Temporal server and PostgreSQL to use: environment → a running `agentrun dev` of the same
// AGENTRUN_HOME → embedded servers started for this process (when the caller allows it).
import { externalTemporalTls } from '../runtime/tls.js';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import pg from 'pg';
import { postgresError, redactUrl } from '../store/store.js';
import { readJson, writeJson } from './files.js';
import { agentrunHome } from '../runtime/home.js';
import { pidAlive, portAnswers, splitHostPort } from './net.js';
import { startEmbeddedPostgres } from './postgres.js';
import { startTemporalDevServer } from './temporal.js';

export interface Endpoints {
  temporalAddress: string;
  namespace: string;
  databaseUrl: string;
  uiUrl?: string;
  /** True when at least one of the servers is an embedded one (dev.json or started here). */
  embedded: boolean;
}

export type DevState = Endpoints & { pid: number };

const DEV_FILE = 'dev.json';
/**
 * The embedded servers a foreground command (`run`, `batch`, …) started for its own duration,
 * published like dev.json so that `pending`, `list`, `inspect` and `approve` from a second terminal
 * use them instead of failing to start their own (the data directory is in use).
 */
export const EMBEDDED_FILE = 'embedded.json';

/** The servers of a running `agentrun dev`, or null if none is running (dead pid, ports silent). */
export async function readDevState(home: string, file = DEV_FILE): Promise<DevState | null> {
  const s = await readJson<DevState>(path.join(home, file));
  if (!s || typeof s.temporalAddress !== 'string' || typeof s.databaseUrl !== 'string' || !pidAlive(s.pid)) return null;
  const t = splitHostPort(s.temporalAddress, 7233);
  let d: { host: string; port: number };
  try {
    d = dbHostPort(s.databaseUrl);
  } catch {
    return null;
  }
  const [tOk, dOk] = await Promise.all([portAnswers(t.host, t.port), portAnswers(d.host, d.port)]);
  if (!tOk || !dOk) return null;
  return { ...s, namespace: s.namespace || 'default' };
}

/** Written by `agentrun dev` (0600: the database URL carries the embedded server's password). */
export async function writeDevState(home: string, e: DevState): Promise<void> {
  await writeJson(path.join(home, DEV_FILE), e, 0o600);
}

/**
 * Each of TEMPORAL_ADDRESS and DATABASE_URL wins on its own; what is still missing comes from a
 * running `agentrun dev`, else (startIfMissing) from embedded servers this call starts and stop()
 * stops, else a one-line error says what to do.
 */
export async function resolveEndpoints(opts: { home?: string; startIfMissing?: boolean } = {}): Promise<{ endpoints: Endpoints; stop(): Promise<void> }> {
  const home = opts.home ?? agentrunHome();
  let temporalAddress = process.env.TEMPORAL_ADDRESS?.trim() || undefined;
  let databaseUrl = process.env.DATABASE_URL?.trim() || undefined;
  let namespace = process.env.TEMPORAL_NAMESPACE?.trim() || undefined;
  let uiUrl: string | undefined;
  let embedded = false;
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    // Reverse order; each stop is independent, so one failure must not keep the other running.
    const results = await Promise.allSettled(stops.reverse().map((s) => s()));
    stops.length = 0;
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  };

  if (!temporalAddress || !databaseUrl) {
    const dev = (await readDevState(home)) ?? (await readDevState(home, EMBEDDED_FILE));
    if (dev) {
      if (!temporalAddress) {
        temporalAddress = dev.temporalAddress;
        uiUrl = dev.uiUrl;
        namespace ??= dev.namespace;
      }
      databaseUrl ??= dev.databaseUrl;
      embedded = true;
    }
  }

  if ((!temporalAddress || !databaseUrl) && opts.startIfMissing) {
    try {
      const [t, d] = await Promise.all([
        temporalAddress ? undefined : startTemporalDevServer(home, { namespace }).then((s) => (stops.push(s.stop), s)),
        databaseUrl ? undefined : startEmbeddedPostgres(home).then((s) => (stops.push(s.stop), s)),
      ]);
      if (t) {
        temporalAddress = t.address;
        uiUrl = t.uiUrl;
      }
      if (d) databaseUrl = d.databaseUrl;
      embedded = true;
      const published = path.join(home, EMBEDDED_FILE);
      await writeJson(published, { temporalAddress, namespace: namespace ?? 'default', databaseUrl, ...(uiUrl && { uiUrl }), embedded, pid: process.pid });
      // Withdrawn as the servers stop (only if still ours): nobody is sent to servers that are gone.
      stops.push(async () => {
        if ((await readJson<DevState>(published))?.pid === process.pid) await rm(published, { force: true });
      });
    } catch (err) {
      await stop().catch(() => undefined);
      throw err;
    }
  }

  if (!temporalAddress) throw new Error('no Temporal server: set TEMPORAL_ADDRESS or run `agentrun dev`');
  if (!databaseUrl) throw new Error('no PostgreSQL: set DATABASE_URL or run `agentrun dev`');
  return {
    endpoints: { temporalAddress, namespace: namespace ?? 'default', databaseUrl, ...(uiUrl && { uiUrl }), embedded },
    stop,
  };
}

/** Both servers answer (and the namespace exists), else a one-line error naming the address and what to do. */
export async function checkReachable(e: Endpoints, timeoutMs = 5_000): Promise<void> {
  // Both checks end (and close their connections) before the first failure is reported: a caller
  // that stops the servers on failure must not find a check still connected.
  const [temporal, postgres] = await Promise.allSettled([checkTemporal(e, timeoutMs), checkPostgres(e.databaseUrl, timeoutMs)]);
  if (temporal.status === 'rejected') throw temporal.reason;
  if (postgres.status === 'rejected') throw postgres.reason;
}

async function checkTemporal(e: Endpoints, timeoutMs: number): Promise<void> {
  const hint = e.embedded ? 'is `agentrun dev` still running?' : 'check TEMPORAL_ADDRESS, or unset it to use the embedded server (`agentrun dev`)';
  let connection: Connection;
  try {
    connection = await Connection.connect({ address: e.temporalAddress, connectTimeout: timeoutMs, ...externalTemporalTls() });
  } catch (err) {
    throw new Error(`cannot reach Temporal at ${e.temporalAddress}: ${firstLine(err)}; ${hint}`, { cause: err });
  }
  try {
    await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.describeNamespace({ namespace: e.namespace }));
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === 5 /* NOT_FOUND */) {
      throw new Error(
        `Temporal at ${e.temporalAddress} has no namespace "${e.namespace}": create it (temporal operator namespace create ${e.namespace}) or set TEMPORAL_NAMESPACE`,
        { cause: err },
      );
    }
    throw new Error(`Temporal at ${e.temporalAddress} does not answer: ${firstLine(err)}; ${hint}`, { cause: err });
  } finally {
    await connection.close().catch(() => undefined);
  }
}

async function checkPostgres(databaseUrl: string, timeoutMs: number): Promise<void> {
  const c = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: timeoutMs });
  // A server going away while the connection is idle (57P01) is an 'error' event, not a rejection: never an uncaught one.
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query('SELECT 1');
  } catch (err) {
    throw postgresError(err, databaseUrl);
  } finally {
    await c.end().catch(() => undefined);
  }
}

function dbHostPort(url: string): { host: string; port: number } {
  try {
    const u = new URL(url);
    return { host: u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1', port: u.port ? Number(u.port) : 5432 };
  } catch {
    throw new Error(`invalid database URL ${redactUrl(url)}`);
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();
}
