// The dependency cache: what setup produced (node_modules, .venv …), kept per host under
// AGENTRUN_CACHE_DIR (default AGENTRUN_HOME/cache; a shared volume works too), keyed by the
// repository, the hashes of its lockfiles and manifests, the setup commands, the cached
// directories and the platform. The next job with the same key copies it back instead of
// running setup. Copies are copy-on-write where the filesystem can (cp --reflink=auto), full
// copies elsewhere; never hard links, which would let one job's edit change every later job's files.
//
// The workspace is the agent's: the worker never copies from or into it by a path the agent could
// have turned into a link. Saving and restoring run in the command sandbox (the workspace and the
// cache entry bound into it, nothing else of the host), never through a link in any component,
// and a restore builds the directory fresh beside its place and renames it in. Which nested
// dependency directories are the repository's own (committed) is read from the conversation's
// starting checkpoint in its private repository, never from git on the workspace's own .git.
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tenantOf } from '../runtime/tenant.js';
import { commandWorkspace, DEFAULT_SANDBOX, type SandboxSettings } from '../sandbox/policy.js';
import { sandboxUser } from '../sandbox/owner.js';
import { startCommand } from '../sandbox/spawn.js';
import { git } from '../workspace/git.js';
import { KEY_FILES, NESTED_CACHE_DIRS, NESTED_DEPTH } from './cache-key.js';
import { cacheDirRefusal } from '../workspace/setup-created.js';

/** Directories never walked for key files or nested dependency directories: git's, and what installs make. */
const NOT_WALKED = new Set(['.git', '.venv', 'vendor', '.agentrun']);
/** Directories looked at by one walk at most: a huge tree is keyed by what was seen so far, never walked for minutes. */
const MAX_WALKED = 20_000;

export interface WorkspaceScan {
  /** Key files (lockfiles, manifests) by path relative to the workspace, the root's first. */
  keyFiles: string[];
  /** Dependency directories below the root (packages/a/node_modules), relative (committed ones too: see `untrackedIn`). */
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
  return { keyFiles, nested: nested.sort() };
}

/**
 * The entries of a workspace down to NESTED_DEPTH (relative path → whether it is a directory),
 * not following links nor entering .git or dependency directories: listed before and after setup,
 * the directories that are new as a whole are what setup made (an editable install's egg-info, a
 * build directory), kept by the cache with the dependencies so that a job after a hit has the
 * tree a cold job has.
 */
export async function entriesOf(workspace: string): Promise<Map<string, boolean>> {
  const out = new Map<string, boolean>();
  let level = [''];
  for (let depth = 0; depth < NESTED_DEPTH && level.length && out.size < MAX_WALKED; depth++) {
    const next: string[] = [];
    for (const rel of level) {
      const entries = await readdir(path.join(workspace, rel), { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        if (e.name === '.git') continue;
        const p = rel ? `${rel}/${e.name}` : e.name;
        out.set(p, e.isDirectory());
        if (e.isDirectory() && !NOT_WALKED.has(e.name) && !NESTED_CACHE_DIRS.includes(e.name)) next.push(p);
      }
    }
    level = next;
  }
  return out;
}

/**
 * The outermost directories in `after` whose path held nothing in `before` (what setup made, as
 * whole directories): never one that replaced a file or a link of the tree.
 */
export function newDirectories(before: Map<string, boolean>, after: Map<string, boolean>): string[] {
  return [...after]
    .filter(([d, dir]) => dir && !before.has(d) && (!d.includes('/') || before.get(d.slice(0, d.lastIndexOf('/'))) === true))
    .map(([d]) => d)
    .sort();
}

/** The tree a job started from: a commit of the conversation's private checkpoint repository. */
export interface StartingTree {
  gitDir: string;
  commit: string;
}

/**
 * Those of `dirs` that hold no file of the starting tree (a committed vendor tree is the
 * repository's, not setup's), read from the private repository with agentrun's fixed git
 * configuration. A tree that cannot be read keeps none: nothing is cached that may be the repository's.
 */
export async function untrackedIn(tree: StartingTree, dirs: string[]): Promise<string[]> {
  if (!dirs.length) return dirs;
  try {
    const out = await git(['ls-tree', '-r', '-z', '--name-only', tree.commit, '--', ...dirs], { gitDir: tree.gitDir });
    const tracked = out.split('\0').filter(Boolean);
    // A path the tree holds as a file or a link is the repository's too.
    return dirs.filter((d) => !tracked.some((f) => f === d || f.startsWith(`${d}/`)));
  } catch {
    return [];
  }
}

export { DEFAULT_CACHE_DIRS } from './cache-key.js';

export { cacheRoot } from '../runtime/home.js';

export interface CacheKeyInput {
  /** The repository's URL (repository jobs) or the workspace's path. */
  repo: string;
  /** Whose job it is (default: this worker's, AGENTRUN_TENANT): another tenant never shares a cache. */
  tenant?: string;
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

/** Interpreters and package managers setup is likely to run, looked for where a command's PATH looks. */
const TOOLCHAIN = ['python3', 'node', 'npm', 'pip3', 'uv', 'poetry', 'ruby', 'go', 'cargo', 'java'];
const TOOLCHAIN_DIRS = ['/usr/local/bin', '/usr/bin', '/bin'];

/**
 * Which toolchain setup would find: each program's real path, size and time. An upgraded
 * interpreter makes a new key (a venv or a native module built for the old one would break).
 */
function toolchainStamp(): string[] {
  const out: string[] = [];
  for (const name of TOOLCHAIN)
    for (const dir of [...TOOLCHAIN_DIRS, ...(process.env.AGENTRUN_SANDBOX_PATHS ?? '').split(/[:,]/).filter((d) => d.startsWith('/'))]) {
      try {
        const real = realpathSync(path.join(dir, name));
        const st = statSync(real);
        out.push(`${name}=${real}:${st.size}:${Math.round(st.mtimeMs)}`);
        break;
      } catch {
        // not in this directory
      }
    }
  return out;
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
    JSON.stringify({
      // 4: a sandboxed job's workspace is at one fixed path, so what setup wrote there needs no moving.
      v: 4,
      tenant: input.tenant ?? tenantOf(),
      repo: input.repo,
      commands: input.commands,
      dirs: input.dirs ?? null,
      files,
      platform: `${process.platform}-${process.arch}`,
      toolchain: toolchainStamp(),
    }),
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
  /** The real path of the workspace it was saved from: a restored virtual environment's scripts are moved from it to their new place. */
  workspace?: string;
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
    meta: Omit<CacheMeta, 'bytes' | 'entries' | 'createdAt' | 'uid' | 'gid' | 'dirs' | 'workspace'>,
    dirs: string[],
  ): Promise<CacheMeta | undefined>;
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

/** Every directory of a cache is one inside the workspace, normalized (`a/b`), wherever it came from. */
function checkedCacheDirs(dirs: readonly string[]): string[] {
  return dirs.map((d) => {
    const refused = cacheDirRefusal(d);
    if (refused) throw new Error(`cache directory ${JSON.stringify(d)}: ${refused}`);
    return d
      .split('/')
      .filter((p) => p && p !== '.')
      .join('/');
  });
}

/** Where a cache entry is bound in the sandbox that copies it. */
const ENTRY_IN_SANDBOX = '/tmp/agentrun-cache';

/**
 * The copy, as one shell script run in the sandbox: `$1` the workspace, `$2` the entry's `dirs`,
 * the rest the directories. A directory is used only where its real path is the path itself (no
 * link in any component, so it cannot lead out of the workspace). Saving copies each into the
 * entry; restoring copies it into a fresh directory beside its place, moves what was there aside,
 * renames the fresh one in and removes the old. A restored Python virtual environment (a directory
 * holding pyvenv.cfg) names the workspace it was made in, in its console scripts' shebangs, its
 * activate scripts, pyvenv.cfg and an editable install's .pth, finder and direct_url.json: `$3`
 * that saved workspace's path (empty: the same path or unknown: always so in the sandbox, where
 * every workspace is at one path), `$4`/`$5` it and this workspace's path escaped for sed; only
 * regular text files directly in its bin, pyvenv.cfg and those of site-packages are rewritten,
 * never through a link. One line per directory done on
 * stdout, one per directory refused on stderr.
 */
const COPY_SCRIPT = {
  save: `ws="$1"; out="$2"; shift 2
for d in "$@"; do
  src="$ws/$d"
  [ -d "$src" ] && [ ! -L "$src" ] || continue
  if [ "$(realpath -e -- "$src" 2>/dev/null)" != "$src" ]; then echo "agentrun: cache directory $d goes through a symbolic link: not saved" >&2; continue; fi
  mkdir -p -- "$(dirname -- "$out/$d")" && cp -a --reflink=auto -- "$src" "$out/$d" && echo "saved $d"
done`,
  restore: `ws="$1"; from="$2"; saved="$3"; find="$4"; put="$5"; shift 5
for d in "$@"; do
  target="$ws/$d"; parent="$(dirname -- "$target")"
  [ -d "$from/$d" ] && [ ! -L "$from/$d" ] || continue
  mkdir -p -- "$parent" 2>/dev/null
  if [ "$(realpath -e -- "$parent" 2>/dev/null)" != "$parent" ]; then echo "agentrun: cache directory $d goes through a symbolic link: not restored" >&2; continue; fi
  fresh="$(mktemp -d -p "$parent" .agentrun-restore-XXXXXX)" || continue
  if ! cp -a --reflink=auto -- "$from/$d/." "$fresh/"; then rm -rf -- "$fresh"; continue; fi
  if [ -n "$saved" ] && [ -f "$fresh/pyvenv.cfg" ] && [ ! -L "$fresh/pyvenv.cfg" ]; then
    bin="$fresh/bin"; [ -d "$bin" ] && [ ! -L "$bin" ] || bin="$fresh/.agentrun-no-bin"
    sp="$fresh/lib"; [ -d "$sp" ] && [ ! -L "$sp" ] || sp="$fresh/.agentrun-no-lib"
    for f in "$fresh/pyvenv.cfg" "$bin"/* "$sp"/python*/site-packages/*.pth "$sp"/python*/site-packages/__editable__*.py "$sp"/python*/site-packages/*.dist-info/direct_url.json; do
      [ -f "$f" ] && [ ! -L "$f" ] && grep -qIF -- "$saved/" "$f" || continue
      sed -i -e "s|$find|$put|g" -- "$f" || { echo "agentrun: $d/\${f#"$fresh"/}: the saved workspace's path not rewritten" >&2; }
    done
  fi
  old=""
  if [ -e "$target" ] || [ -L "$target" ]; then old="$(mktemp -u -p "$parent" .agentrun-old-XXXXXX)"; mv -T -- "$target" "$old" || { rm -rf -- "$fresh"; continue; }; fi
  mv -T -- "$fresh" "$target" && echo "restored $d"
  [ -z "$old" ] || rm -rf -- "$old"
done`,
};

/** A literal string as a sed basic regular expression between `|` delimiters, and as its replacement. */
const sedPattern = (s: string) => s.replace(/[\\|.*[\]^$]/g, '\\$&');
const sedReplacement = (s: string) => s.replace(/[\\|&]/g, '\\$&');

const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** Copy `dirs` between the workspace and a cache entry in the sandbox; the directories done. */
async function copyInSandbox(
  mode: 'save' | 'restore',
  workspace: string,
  entry: string,
  dirs: string[],
  settings: SandboxSettings,
  savedFrom?: string,
): Promise<{ done: string[]; refused: string }> {
  // The workspace writable only for a restore; the entry only for a save; no network, no variables.
  const unconfined = settings.policy === 'off';
  // Compared with each directory's real path in the script: the workspace's own must be real.
  workspace = realpathSync(workspace);
  const sandbox: SandboxSettings = { ...settings, policy: unconfined ? 'off' : mode === 'save' ? 'read-only' : 'workspace-write', network: 'off', env: [] };
  const at = unconfined ? entry : ENTRY_IN_SANDBOX;
  // The workspace as the copy sees it: in the sandbox every job's is at the same path, so nothing moved.
  const seen = commandWorkspace(sandbox.policy, workspace);
  const moved = mode === 'restore' && savedFrom && savedFrom !== seen && !/\n/.test(savedFrom + seen);
  const rewrite = mode === 'save' ? [] : moved && savedFrom ? [savedFrom, sedPattern(`${savedFrom}/`), sedReplacement(`${seen}/`)] : ['', '', ''];
  const args = [seen, `${at}/dirs`, ...rewrite, ...dirs].map(quote).join(' ');
  const cmd = startCommand({
    command: `set -- ${args}\n${COPY_SCRIPT[mode]}`,
    workspace,
    settings: sandbox,
    timeoutSec: 30 * 60,
    ...(unconfined ? {} : { binds: [{ source: entry, dest: ENTRY_IN_SANDBOX, readOnly: mode === 'restore' }] }),
  });
  let out = '';
  let err = '';
  const code = await new Promise<number | null>((resolve) => {
    cmd.child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    cmd.child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    cmd.child.on('error', (e: Error) => {
      err += e.message;
      resolve(null);
    });
    cmd.child.on('close', (c: number | null) => resolve(c));
  });
  cmd.cleanup();
  if (code === null) throw new Error(`the cache could not be ${mode === 'save' ? 'saved' : 'restored'}: ${err.trim().split('\n').at(-1) ?? 'killed'}`);
  const prefix = mode === 'save' ? 'saved ' : 'restored ';
  const done = out
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .map((l) => l.slice(prefix.length));
  return { done, refused: err.trim() };
}

export class DirectoryCache implements CacheStore {
  /** `settings`: the sandbox the copies run in (the conversation's; `off` copies unconfined, as its commands run). */
  /** `maxBytes`: after a save, the least recently used caches go while all of them add up to more. */
  constructor(
    readonly root: string,
    private readonly settings: SandboxSettings = DEFAULT_SANDBOX,
    private readonly maxBytes?: number,
  ) {}

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
    // An entry's list is checked like any other: a cache written elsewhere (a shared volume) is input too.
    const dirs = checkedCacheDirs(meta.dirs);
    const now = new Date();
    // Last use, for `gc --older-than`.
    await utimes(path.join(dir, 'meta.json'), now, now).catch(() => undefined);
    const savedFrom = typeof meta.workspace === 'string' ? meta.workspace : undefined;
    const { done, refused } = await copyInSandbox('restore', workspace, dir, dirs, this.settings, savedFrom);
    if (done.length !== dirs.length) throw new Error(refused || `the cache restored ${done.length} of its ${dirs.length} directories`);
    return { ...meta, dirs };
  }

  async put(key: string, workspace: string, base: Omit<CacheMeta, 'bytes' | 'entries' | 'createdAt' | 'uid' | 'gid' | 'dirs' | 'workspace'>, dirs: string[]) {
    const final = this.entry(key);
    if (existsSync(path.join(final, 'meta.json'))) return undefined;
    const wanted = checkedCacheDirs(dirs);
    // Built beside the final name and renamed into place: a reader never sees half a cache.
    const tmp = path.join(this.root, `.tmp-${key}-${randomBytes(4).toString('hex')}`);
    await mkdir(path.join(tmp, 'dirs'), { recursive: true });
    try {
      // Written by the sandbox user, readable by the next job's.
      const user = this.settings.policy === 'off' ? undefined : sandboxUser();
      for (const d of [tmp, path.join(tmp, 'dirs')]) {
        chmodSync(d, 0o755);
        if (user) chownSync(d, user.uid, user.gid);
      }
      const { done } = await copyInSandbox('save', workspace, tmp, wanted, this.settings);
      const present = wanted.filter((d) => done.includes(d));
      if (!present.length) return undefined;
      let bytes = 0;
      let entries = 0;
      for (const d of present) {
        const size = treeSize(path.join(tmp, 'dirs', d));
        bytes += size.bytes;
        entries += size.entries;
      }
      const owner = lstatSync(path.join(tmp, 'dirs', present[0]!));
      const meta: CacheMeta = {
        ...base,
        dirs: present,
        bytes,
        entries,
        createdAt: new Date().toISOString(),
        uid: owner.uid,
        gid: owner.gid,
        workspace: commandWorkspace(this.settings.policy, realpathSync(workspace)),
      };
      // Exclusive: a name the copy made is never written through.
      await writeFile(path.join(tmp, 'meta.json'), JSON.stringify(meta, null, 2), { flag: 'wx' });
      try {
        await rename(tmp, final);
      } catch (err) {
        // Another job of the same key saved it first: keep that one.
        if (['ENOTEMPTY', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? '')) return undefined;
        throw err;
      }
      if (this.maxBytes !== undefined) await gcCaches(this.root, { maxBytes: this.maxBytes });
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

export interface CacheGcOptions {
  /** Remove the caches not restored or saved for this long (and half-written ones as old). */
  olderThanMs?: number;
  /** Then, while the rest add up to more than this, the least recently used. */
  maxBytes?: number;
  dryRun?: boolean;
  now?: number;
}

/**
 * The caches under `root` that are too old or, least recently used first, over the size limit:
 * what was removed (or would be, dry run), and the bytes of those left. Last use is meta.json's
 * time, which every restore touches.
 */
export async function gcCaches(root: string, o: CacheGcOptions): Promise<{ removed: CacheGcEntry[]; bytes: number }> {
  const now = o.now ?? Date.now();
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return { removed: [], bytes: 0 };
  }
  const entries: (CacheGcEntry & { mtimeMs: number; complete: boolean })[] = [];
  for (const name of names) {
    const dir = path.join(root, name);
    const metaFile = path.join(dir, 'meta.json');
    const complete = existsSync(metaFile);
    const st = await stat(complete ? metaFile : dir).catch(() => undefined);
    if (!st) continue;
    let meta: Partial<CacheMeta> = {};
    try {
      meta = JSON.parse(await readFile(metaFile, 'utf8')) as CacheMeta;
    } catch {
      // a half-written cache (a crash during save): removed once old, never counted as a cache
    }
    entries.push({ key: name, repo: meta.repo ?? '', bytes: meta.bytes ?? 0, lastUsed: st.mtime.toISOString(), mtimeMs: st.mtimeMs, complete });
  }
  // One being written now is young and incomplete: never removed by size, only by age.
  const old = (e: (typeof entries)[number]) => (o.olderThanMs !== undefined || !e.complete) && now - e.mtimeMs >= (o.olderThanMs ?? 24 * 3600_000);
  const gone = entries.filter(old);
  const kept = entries.filter((e) => e.complete && !old(e)).sort((a, b) => b.mtimeMs - a.mtimeMs);
  let bytes = 0;
  for (const e of kept) {
    if (o.maxBytes !== undefined && bytes + e.bytes > o.maxBytes) gone.push(e);
    else bytes += e.bytes;
  }
  if (!o.dryRun)
    for (const e of gone) {
      // Renamed first, so a job that starts restoring it now finds no cache rather than half of one.
      const trash = path.join(root, `.gc-${e.key}-${randomBytes(4).toString('hex')}`);
      await rename(path.join(root, e.key), trash).catch(() => undefined);
      await rm(trash, { recursive: true, force: true });
    }
  return { removed: gone.map(({ key, repo, bytes: b, lastUsed }) => ({ key, repo, bytes: b, lastUsed })), bytes };
}
