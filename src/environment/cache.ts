// The dependency cache: what setup produced (node_modules, .venv …), kept per host under
// AGENTRUN_CACHE_DIR (default AGENTRUN_HOME/cache; a shared volume works too), keyed by the
// repository, the hashes of its lockfiles and manifests, the setup commands, the cached
// directories and the platform. The next job with the same key copies it back instead of
// running setup. Copies are copy-on-write where the filesystem can (cp --reflink=auto), full
// copies elsewhere; never hard links, which would let one job's edit change every later job's files.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { chownTreeSync, runningAsRoot } from '../workspace/owner.js';
import { KEY_FILES, NESTED_CACHE_DIRS, NESTED_DEPTH } from './cache-key.js';

const exec = promisify(execFile);

/** Directories never walked for key files or nested dependency directories: git's, and what installs make. */
const NOT_WALKED = new Set(['.git', '.venv', 'vendor', '.agentrun']);
/** Directories looked at by one walk at most: a huge tree is keyed by what was seen so far, never walked for minutes. */
const MAX_WALKED = 20_000;

export interface WorkspaceScan {
  /** Key files (lockfiles, manifests) by path relative to the workspace, the root's first. */
  keyFiles: string[];
  /** Dependency directories below the root (packages/a/node_modules), relative, not tracked by git. */
  nested: string[];
}

/**
 * Key files and nested dependency directories of a workspace, down to NESTED_DEPTH, never
 * following symbolic links (a link out of the workspace is not its content) nor entering
 * dependency directories (a package's own node_modules is part of its parent's).
 */
export async function scanWorkspace(workspace: string): Promise<WorkspaceScan> {
  const keyFiles: string[] = [];
  const nested: string[] = [];
  let walked = 0;
  let level = [''];
  for (let depth = 0; depth < NESTED_DEPTH && level.length; depth++) {
    const next: string[] = [];
    for (const rel of level) {
      if (++walked > MAX_WALKED) break;
      const entries = await readdir(path.join(workspace, rel), { withFileTypes: true }).catch(() => []);
      for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const p = rel ? `${rel}/${e.name}` : e.name;
        if (e.isFile() && KEY_FILES.some((re) => re.test(e.name))) keyFiles.push(p);
        if (!e.isDirectory() || NOT_WALKED.has(e.name)) continue;
        if (NESTED_CACHE_DIRS.includes(e.name)) {
          if (rel) nested.push(p);
        } else next.push(p);
      }
    }
    level = next;
  }
  return { keyFiles, nested: await untracked(workspace, nested.sort()) };
}

/** Those of `dirs` that hold no file tracked by git (a committed vendor tree is the repository's, not setup's). */
async function untracked(workspace: string, dirs: string[]): Promise<string[]> {
  if (!dirs.length || !existsSync(path.join(workspace, '.git'))) return dirs;
  try {
    const { stdout } = await exec('git', ['-C', workspace, 'ls-files', '-z', '--', ...dirs], { maxBuffer: 64 * 1024 * 1024 });
    const tracked = stdout.split('\0').filter(Boolean);
    return dirs.filter((d) => !tracked.some((f) => f.startsWith(`${d}/`)));
  } catch {
    return dirs;
  }
}

export { DEFAULT_CACHE_DIRS } from './cache-key.js';

/** Where this host keeps caches. */
export function cacheRoot(home: string, env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.AGENTRUN_CACHE_DIR?.trim();
  return dir ? path.resolve(dir) : path.join(home, 'cache');
}

export interface CacheKeyInput {
  /** The repository's URL (repository jobs) or the workspace's path. */
  repo: string;
  workspace: string;
  commands: string[];
  /** Directories asked for with `--cache`; absent: the defaults that exist after setup. */
  dirs?: string[];
}

export interface CacheKey {
  key: string;
  /** The files that went into it, name → sha256 (shown by `inspect`). */
  files: Record<string, string>;
}

export async function cacheKey(input: CacheKeyInput): Promise<CacheKey> {
  const files: Record<string, string> = {};
  // The root's lockfiles and those of the packages below it (a monorepo's packages/a/package-lock.json).
  for (const n of (await scanWorkspace(input.workspace)).keyFiles) {
    files[n] = createHash('sha256')
      .update(await readFile(path.join(input.workspace, n)))
      .digest('hex');
  }
  const h = createHash('sha256');
  h.update(
    JSON.stringify({ v: 1, repo: input.repo, commands: input.commands, dirs: input.dirs ?? null, files, platform: `${process.platform}-${process.arch}` }),
  );
  return { key: h.digest('hex').slice(0, 32), files };
}

export interface CacheMeta {
  key: string;
  repo: string;
  commands: string[];
  dirs: string[];
  files: Record<string, string>;
  bytes: number;
  entries: number;
  createdAt: string;
  /** Owner of the saved files, so a restore into a workspace of the same owner skips the ownership walk. */
  uid: number;
  gid: number;
}

/**
 * Where caches are kept. This host's directory now; an object store (S3, GCS) would be another
 * implementation of the same two calls, packing the directories into one archive per key
 * (docs/decisions.md).
 */
export interface CacheStore {
  /** Copy the directories kept under `key` into `workspace`; undefined when there is no such cache. */
  get(key: string, workspace: string): Promise<CacheMeta | undefined>;
  /** Keep `dirs` of `workspace` under `key` (a second put of the same key keeps the first). */
  put(
    key: string,
    workspace: string,
    meta: Omit<CacheMeta, 'bytes' | 'entries' | 'createdAt' | 'uid' | 'gid' | 'dirs'>,
    dirs: string[],
  ): Promise<CacheMeta | undefined>;
}

async function copyTree(from: string, to: string): Promise<void> {
  await mkdir(path.dirname(to), { recursive: true });
  // -a keeps modes, times, owners and symlinks as symlinks; reflink where the filesystem can.
  await exec('cp', ['-a', '--reflink=auto', from, to], { maxBuffer: 1024 * 1024 });
}

function treeSize(dir: string): { bytes: number; entries: number } {
  let bytes = 0;
  let entries = 0;
  const walk = (p: string) => {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) return;
    entries++;
    bytes += st.isFile() ? st.size : 0;
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(path.join(p, n));
  };
  walk(dir);
  return { bytes, entries };
}

export class DirectoryCache implements CacheStore {
  constructor(readonly root: string) {}

  private entry(key: string): string {
    if (!/^[0-9a-f]{8,64}$/.test(key)) throw new Error(`not a cache key: ${key}`);
    return path.join(this.root, key);
  }

  async get(key: string, workspace: string): Promise<CacheMeta | undefined> {
    const dir = this.entry(key);
    let meta: CacheMeta;
    try {
      meta = JSON.parse(await readFile(path.join(dir, 'meta.json'), 'utf8')) as CacheMeta;
    } catch {
      return undefined;
    }
    const now = new Date();
    // Last use, for `gc --older-than`.
    await utimes(path.join(dir, 'meta.json'), now, now).catch(() => undefined);
    const ws = await stat(workspace);
    for (const d of meta.dirs) {
      const target = path.join(workspace, d);
      await rm(target, { recursive: true, force: true });
      await copyTree(path.join(dir, 'dirs', d), target);
      // A root worker's workspace belongs to the sandbox user: so must what is restored into it.
      if (runningAsRoot() && (meta.uid !== ws.uid || meta.gid !== ws.gid)) chownTreeSync(target, ws.uid, ws.gid);
    }
    return meta;
  }

  async put(key: string, workspace: string, base: Omit<CacheMeta, 'bytes' | 'entries' | 'createdAt' | 'uid' | 'gid' | 'dirs'>, dirs: string[]) {
    const final = this.entry(key);
    if (existsSync(path.join(final, 'meta.json'))) return undefined;
    const present = dirs.filter((d) => lstatSync(path.join(workspace, d), { throwIfNoEntry: false })?.isDirectory());
    if (!present.length) return undefined;
    // Built beside the final name and renamed into place: a reader never sees half a cache.
    const tmp = path.join(this.root, `.tmp-${key}-${randomBytes(4).toString('hex')}`);
    await mkdir(path.join(tmp, 'dirs'), { recursive: true });
    try {
      let bytes = 0;
      let entries = 0;
      for (const d of present) {
        await copyTree(path.join(workspace, d), path.join(tmp, 'dirs', d));
        const size = treeSize(path.join(tmp, 'dirs', d));
        bytes += size.bytes;
        entries += size.entries;
      }
      const owner = await stat(path.join(workspace, present[0]!));
      const meta: CacheMeta = { ...base, dirs: present, bytes, entries, createdAt: new Date().toISOString(), uid: owner.uid, gid: owner.gid };
      await writeFile(path.join(tmp, 'meta.json'), JSON.stringify(meta, null, 2));
      try {
        await rename(tmp, final);
      } catch (err) {
        // Another job of the same key saved it first: keep that one.
        if (['ENOTEMPTY', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? '')) return undefined;
        throw err;
      }
      return meta;
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }
}

export interface CacheGcEntry {
  key: string;
  repo: string;
  bytes: number;
  lastUsed: string;
}

/** Remove the caches not used for `olderThanMs` (and half-written ones left by a crash); what was removed. */
export async function gcCaches(root: string, olderThanMs: number, dryRun = false, now = Date.now()): Promise<CacheGcEntry[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return [];
  }
  const removed: CacheGcEntry[] = [];
  for (const name of names) {
    const dir = path.join(root, name);
    const metaFile = path.join(dir, 'meta.json');
    const st = await stat(existsSync(metaFile) ? metaFile : dir).catch(() => undefined);
    if (!st || now - st.mtimeMs < olderThanMs) continue;
    let meta: Partial<CacheMeta> = {};
    try {
      meta = JSON.parse(await readFile(metaFile, 'utf8')) as CacheMeta;
    } catch {
      // a half-written cache (a crash during save): removed like an old one
    }
    removed.push({ key: name, repo: meta.repo ?? '', bytes: meta.bytes ?? 0, lastUsed: st.mtime.toISOString() });
    if (dryRun) continue;
    // Renamed first, so a job that starts restoring it now finds no cache rather than half of one.
    const trash = path.join(root, `.gc-${name}-${randomBytes(4).toString('hex')}`);
    await rename(dir, trash).catch(() => undefined);
    await rm(trash, { recursive: true, force: true });
  }
  return removed;
}
