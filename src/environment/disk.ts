// The disk a host's jobs use stays bounded without an operator: a finished job's workspace goes
// as its `--keep-workspace` policy says (at once once its branch is safely pushed, or after
// AGENTRUN_KEEP_WORKSPACE_FOR), and the dependency caches stay under AGENTRUN_CACHE_MAX_SIZE, the
// least recently restored out first. Each worker runs this every AGENTRUN_GC_INTERVAL on its own
// workspaces and caches; `agentrun gc` (a CronJob in infra/k8s) does the store's part.
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { RunConfig } from '../config.js';
import { durationSettingFromEnv, type DurationRange } from '../duration.js';
import { log } from '../log.js';
import type { Store } from '../store/index.js';
import type { ConversationRow } from '../store/types.js';
import { privateGitDir } from '../workspace/checkpoint.js';
import { diskUsage } from '../workspace/gc.js';
import { workspaceDir, workspacesDir } from '../workspace/host.js';
import { cacheRoot, gcCaches, type CacheGcEntry } from './cache.js';

type KeepWorkspace = NonNullable<RunConfig['keepWorkspace']>;
/** A job that names no policy: a failed job's workspace is kept for a look, a pushed one goes. */
const DEFAULT_KEEP_WORKSPACE: KeepWorkspace = 'failed';

export interface DiskLimits {
  /** How long a kept workspace stays after its job finished. */
  keepForMs: number;
  /** The dependency caches of this host together, in bytes. */
  cacheMaxBytes: number;
  /** Between two passes of a worker; 0: never (gc by hand or by a CronJob). */
  intervalMs: number;
}

const DEFAULT_DISK_LIMITS: DiskLimits = { keepForMs: 3 * 24 * 3600_000, cacheMaxBytes: 20 * 1024 ** 3, intervalMs: 10 * 60_000 };

const KEEP_FOR: DurationRange = { minMs: 0, maxMs: 365 * 24 * 3600_000, example: '3d' };
const INTERVAL: DurationRange = { minMs: 0, maxMs: 24 * 3600_000, example: '10m' };

/** `20G`, `500M`, `1.5T`, `1048576` (binary units), as bytes; a one-line error naming `source` otherwise. */
function parseByteSize(text: string, source: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$/i.exec(text);
  if (!m) throw new Error(`${source}: expected a size such as 20G, 500M or 1T, got ${JSON.stringify(text)}`);
  const unit = 1024 ** ' kmgt'.indexOf((m[2] || ' ').toLowerCase());
  return Math.floor(Number(m[1]) * unit);
}

/** The worker's limits: AGENTRUN_KEEP_WORKSPACE_FOR, AGENTRUN_CACHE_MAX_SIZE, AGENTRUN_GC_INTERVAL, else the defaults. */
export function diskLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): DiskLimits {
  const size = env.AGENTRUN_CACHE_MAX_SIZE?.trim();
  return {
    keepForMs: durationSettingFromEnv(env, 'AGENTRUN_KEEP_WORKSPACE_FOR', KEEP_FOR) ?? DEFAULT_DISK_LIMITS.keepForMs,
    cacheMaxBytes: size ? parseByteSize(size, 'AGENTRUN_CACHE_MAX_SIZE') : DEFAULT_DISK_LIMITS.cacheMaxBytes,
    intervalMs: durationSettingFromEnv(env, 'AGENTRUN_GC_INTERVAL', INTERVAL) ?? DEFAULT_DISK_LIMITS.intervalMs,
  };
}

/** Whether the branch a finished job was to push is on its remote: the last result branch it recorded says pushed. */
async function branchPushed(store: Store, conversationId: string): Promise<boolean> {
  const { rows } = await store.pool.query<{ pushed: boolean | null }>(
    `SELECT (event->>'pushed')::boolean AS pushed FROM stream WHERE conversation_id = $1 AND event->>'type' = 'result_branch' ORDER BY id DESC LIMIT 1`,
    [conversationId],
  );
  return rows[0]?.pushed === true;
}

/**
 * Whether a finished job's workspace goes now. `never`: at once. `failed` (the default): at once
 * when the job completed and nothing of it lives only there (its branch pushed, or a job that was
 * not to push a branch); else after `keepForMs`. `always`: after `keepForMs`.
 */
async function workspaceGoes(store: Store, c: ConversationRow, keepForMs: number, now = Date.now()): Promise<boolean> {
  if (!c.finishedAt) return false;
  const config = (c.config ?? {}) as { keepWorkspace?: KeepWorkspace; repo?: string; push?: boolean };
  const policy = config.keepWorkspace ?? DEFAULT_KEEP_WORKSPACE;
  if (policy === 'never') return true;
  if (now - c.finishedAt.getTime() >= keepForMs) return true;
  if (policy === 'always' || c.status !== 'completed') return false;
  // A repository job's result is its branch: only once it is on the remote is the workspace spare.
  if (config.repo !== undefined && config.push) return branchPushed(store, c.id);
  return config.repo === undefined;
}

export interface DiskPass {
  /** Workspaces removed (conversation ids). */
  workspaces: string[];
  /** Caches removed: unused past the age limit (when given) or pushed out by the size limit. */
  caches: CacheGcEntry[];
  /** What the caches use after the pass. */
  cacheBytes: number;
}

/** Finished jobs' workspaces under `dir` that their policy lets go; unknown names stay (another schema's, or mid-clone). */
export async function removeSpareWorkspaces(store: Store, dir: string, home: string, keepForMs: number, now = Date.now()): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const removed: string[] = [];
  for (const name of await readdir(dir)) if (await removeIfSpare(store, dir, home, name, keepForMs, now)) removed.push(name);
  return removed;
}

/** The workspace `name` under `dir`, with its checkpoints' private repository, if its job's policy lets it go now. Whether it went. */
async function removeIfSpare(store: Store, dir: string, home: string, name: string, keepForMs: number, now = Date.now()): Promise<boolean> {
  const c = await store.getConversation(name);
  if (!c || !(await workspaceGoes(store, c, keepForMs, now))) return false;
  await rm(join(dir, name), { recursive: true, force: true });
  await rm(privateGitDir(home, join(dir, name)), { recursive: true, force: true });
  return true;
}

/**
 * A job whose branch was just pushed: its workspace goes as soon as the job is recorded finished
 * (its end follows the push at once), if its policy lets it go then, not at the next pass. Only a
 * workspace agentrun made (the job's directory under the workspaces directory). Watches the store
 * for at most `waitMs`; a job not finished by then is left to the passes. Whether it went.
 */
export function releaseWhenFinished(
  store: Store,
  home: string,
  conversationId: string,
  workspace: string,
  opts: { keepForMs?: number; waitMs?: number; everyMs?: number } = {},
): Promise<boolean> {
  const release = releaseOnce(store, home, conversationId, workspace, opts).finally(() => releasing.delete(release));
  releasing.add(release);
  return release;
}

/** Releases under way in this process: a worker that stops lets them end first (releasesEnded). */
const releasing = new Set<Promise<boolean>>();

/** The releases under way, ended (their jobs end at once after the push), or `timeoutMs` passed. */
async function releasesEnded(timeoutMs = 5000): Promise<void> {
  if (!releasing.size) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled([...releasing]), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
  clearTimeout(timer);
}

async function releaseOnce(
  store: Store,
  home: string,
  conversationId: string,
  workspace: string,
  opts: { keepForMs?: number; waitMs?: number; everyMs?: number },
): Promise<boolean> {
  const dir = workspacesDir(home);
  if (resolve(workspace) !== workspaceDir(home, conversationId)) return false;
  const keepForMs = opts.keepForMs ?? diskLimitsFromEnv().keepForMs;
  for (const end = Date.now() + (opts.waitMs ?? 10 * 60_000); Date.now() < end; await new Promise((r) => setTimeout(r, opts.everyMs ?? 500))) {
    if ((await store.getConversation(conversationId))?.finishedAt) return removeIfSpare(store, dir, home, basename(workspace), keepForMs);
  }
  return false;
}

/** One pass over this host's workspaces and caches. */
async function keepDiskBounded(store: Store, home: string, limits: DiskLimits, now = Date.now()): Promise<DiskPass> {
  const workspaces = await removeSpareWorkspaces(store, workspacesDir(home), home, limits.keepForMs, now);
  const { removed, bytes } = await gcCaches(cacheRoot(home), { maxBytes: limits.cacheMaxBytes, now });
  return { workspaces, caches: removed, cacheBytes: bytes };
}

/** What `doctor` shows: the bytes of this host's workspaces and caches, beside the cache's limit. */
export async function diskReport(
  home: string,
  limits: DiskLimits = diskLimitsFromEnv(),
): Promise<{ workspaces: number; caches: number; cacheMaxBytes: number }> {
  const size = async (d: string) => (existsSync(d) ? diskUsage(d) : 0);
  return { workspaces: await size(workspacesDir(home)), caches: await size(cacheRoot(home)), cacheMaxBytes: limits.cacheMaxBytes };
}

/**
 * A worker's own gc: a pass now and every `intervalMs` (never two at once); errors are logged, the
 * next pass tries again. `stop` ends it (the worker's shutdown): the pass under way and this process's
 * releases of just-pushed jobs' workspaces end first, so a `run` that exits leaves none behind.
 */
export function startDiskKeeper(
  store: Store,
  home: string,
  limits: DiskLimits = diskLimitsFromEnv(),
): { stop(): Promise<void>; pass(): Promise<DiskPass | undefined> } {
  let running: Promise<DiskPass | undefined> | undefined;
  const pass = () =>
    (running ??= keepDiskBounded(store, home, limits)
      .then((r) => {
        if (r.workspaces.length || r.caches.length)
          log.info({ workspaces: r.workspaces.length, caches: r.caches.length, cacheBytes: r.cacheBytes }, 'removed spare workspaces and caches');
        return r;
      })
      .catch((err: unknown) => (log.warn({ err: (err as Error).message }, 'disk clean-up failed; the next pass tries again'), undefined))
      .finally(() => (running = undefined)));
  void pass();
  const timer = limits.intervalMs > 0 ? setInterval(() => void pass(), limits.intervalMs) : undefined;
  timer?.unref();
  const stop = async () => {
    clearInterval(timer);
    await running;
    await releasesEnded();
  };
  return { stop, pass };
}
