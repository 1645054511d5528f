// The repository's environment: setup commands (with the network, through the egress proxy) run
// before turn 1, their outputs restored from the dependency cache when the key matches, and the
// repository's check (verify, network off) run when the model says it is done. Both run in the
// command sandbox like execute_command (src/sandbox/run.ts), as the sandbox user for a root worker.
import { refusalNote, runSandboxed, TAIL_BYTES, type SandboxSettings } from '../sandbox/index.js';
import { handToSandbox } from '../sandbox/owner.js';
import type { ConnectionRecord } from '../sandbox/proxy.js';
import type { SetupEnd } from '../types.js';
import { DEFAULT_CACHE_DIRS, cacheKey, entriesOf, newDirectories, scanWorkspace, untrackedIn, type CacheStore, type StartingTree } from './cache.js';
import { setupCommands, type LoadedSettings } from '../extensions/settings.js';

/** Setup output streamed as events at most (a noisy install goes on; the rest is counted, not stored). */
export const STREAMED_BYTES = 1024 * 1024;
/** Verify's time limit. */
export const VERIFY_TIMEOUT_SEC = 30 * 60;

/** What a conversation's environment is: the flags, else the repository's settings (unless the operator forbids them), else the operator's. */
export interface EnvironmentPlan {
  setup?: string[];
  /** Run after setup on every job, after a cache hit too. */
  maintenance?: string[];
  verify?: string;
  cache?: string[];
  /** Setup's network (`on` when nothing names one). */
  setupNetwork: string;
  /** Where each came from, for `inspect`. */
  source: { setup?: 'flag' | 'repository' | 'operator'; verify?: 'flag' | 'repository' | 'operator' };
}

export function environmentPlan(
  config: { setup?: string[]; maintenance?: string[]; verify?: string; cache?: string[]; setupNetwork?: string },
  settings: LoadedSettings,
): EnvironmentPlan {
  const repoAllowed = settings.operator.repositorySetup !== false;
  const repoSetup = repoAllowed ? setupCommands(settings.workspace) : undefined;
  const opSetup = setupCommands(settings.operator);
  const setup = config.setup ?? repoSetup ?? opSetup;
  const maintenance =
    config.maintenance ?? (repoAllowed ? setupCommands(settings.workspace, 'maintenance') : undefined) ?? setupCommands(settings.operator, 'maintenance');
  const verify = config.verify ?? (repoAllowed ? settings.workspace.verify : undefined) ?? settings.operator.verify;
  const cache = config.cache ?? (repoAllowed ? settings.workspace.cache : undefined) ?? settings.operator.cache;
  const setupNetwork = config.setupNetwork ?? (repoAllowed ? settings.workspace.setupNetwork : undefined) ?? settings.operator.setupNetwork ?? 'on';
  return {
    setupNetwork,
    ...(setup?.length ? { setup } : {}),
    ...(maintenance?.length ? { maintenance } : {}),
    ...(verify ? { verify } : {}),
    ...(cache ? { cache } : {}),
    source: {
      ...(setup?.length ? { setup: config.setup ? 'flag' : repoSetup ? 'repository' : 'operator' } : {}),
      ...(verify ? { verify: config.verify ? 'flag' : repoAllowed && settings.workspace.verify ? 'repository' : 'operator' } : {}),
    },
  } as EnvironmentPlan;
}

export interface SetupOutcome extends SetupEnd {
  /** How many setup commands there were. */
  commands: number;
  /** How many maintenance commands ran (after setup or the cache's restore). */
  maintenance?: number;
}

export interface SetupRunOptions {
  repo: string;
  workspace: string;
  commands: string[];
  /** Run after the commands or the cache's restore, every job; never cached. */
  maintenance?: string[];
  cacheDirs?: string[];
  settings: SandboxSettings;
  timeoutMs: number;
  cache?: CacheStore;
  baseEnv?: NodeJS.ProcessEnv;
  onOutput?: (text: string) => void;
  heartbeat?: () => void;
  signal?: AbortSignal;
  recordConnection?: (r: ConnectionRecord) => void;
  /** The conversation's tenant (its egress proxy cap). */
  tenant?: string;
  /** The cache key (default: computed from the workspace as it is now). */
  key?: string;
  /** Keep what setup made in the cache (default true). */
  save?: boolean;
  /** Told when the cache could not be used (logged by the caller). */
  onCacheProblem?: (what: string, err: unknown) => void;
  /** The job's starting checkpoint: nested dependency directories in it are the repository's, never cached. Absent: none is cached. */
  startingTree?: StartingTree;
}

/** Each directory once, and none inside another of the list (a copy of the outer one holds it). */
function cachedDirs(dirs: string[]): string[] {
  const unique = [...new Set(dirs)];
  return unique.filter((d) => !unique.some((o) => o !== d && d.startsWith(`${o}/`)));
}

type CommandsFailed = Pick<SetupOutcome, 'exitCode' | 'reason' | 'tail'>;

/** Run `commands` in the sandbox one after another until one fails; `what` names them in a failure. */
async function runCommands(
  o: SetupRunOptions,
  commands: string[],
  what: 'setup' | 'maintenance',
  deadline: number,
): Promise<{ tail: string; failed?: CommandsFailed }> {
  let tail = '';
  for (const [i, command] of commands.entries()) {
    const left = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
    o.onOutput?.(`$ ${command.length > 500 ? `${command.slice(0, 500)}…` : command}\n`);
    const r = await runSandboxed({
      command,
      workspace: o.workspace,
      settings: o.settings,
      timeoutSec: left,
      ...(o.baseEnv ? { baseEnv: o.baseEnv } : {}),
      ...(o.onOutput ? { onOutput: o.onOutput } : {}),
      ...(o.heartbeat ? { heartbeat: o.heartbeat } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.recordConnection ? { recordConnection: o.recordConnection } : {}),
      ...(o.tenant ? { tenant: o.tenant } : {}),
    });
    // What the proxy refused is the likely cause of a failed install: say so in the log and its tail.
    const refused = refusalNote(`--setup-network ${o.settings.network}`, r.refusals);
    if (refused) o.onOutput?.(`${refused.slice(1)}\n`);
    tail = (tail + r.tail + refused).slice(-TAIL_BYTES);
    const ok = r.exitCode === 0 && !r.timedOut && !r.cancelled && !r.spawnError;
    if (ok) continue;
    const which =
      commands.length > 1 ? ` at ${what === 'setup' ? '' : 'maintenance '}command ${i + 1} of ${commands.length}` : what === 'setup' ? '' : ' at maintenance';
    const reason = r.timedOut
      ? `setup timed out after ${Math.round(o.timeoutMs / 1000)} s${which}`
      : r.spawnError
        ? `setup could not start: ${r.spawnError}`
        : r.exitCode === null
          ? `setup failed (killed by ${r.signal ?? 'a signal'})${which}`
          : `setup failed (exit ${r.exitCode})${which}`;
    return { tail, failed: { exitCode: r.exitCode, reason, tail } };
  }
  return { tail };
}

/**
 * Restore setup's outputs from the cache, or run the commands (and keep their outputs); then the
 * maintenance commands, every time: what the cache does not hold is made again, so a job after a
 * cache hit starts on the tree a cold job would.
 */
export async function runSetup(o: SetupRunOptions): Promise<SetupOutcome> {
  const started = Date.now();
  const deadline = started + o.timeoutMs;
  const maintenance = o.maintenance ?? [];
  const counts = { commands: o.commands.length, ...(maintenance.length ? { maintenance: maintenance.length } : {}) };
  const key = o.key ?? (await cacheKey({ repo: o.repo, workspace: o.workspace, commands: o.commands, ...(o.cacheDirs ? { dirs: o.cacheDirs } : {}) })).key;
  // Restored files are the sandbox user's, like the rest of the workspace (root worker).
  if (o.settings.policy !== 'off') handToSandbox(o.workspace);
  /** After setup or the restore: the maintenance commands, then the outcome. */
  const finish = async (done: Omit<SetupOutcome, 'ms' | 'commands' | 'maintenance'>): Promise<SetupOutcome> => {
    const m = await runCommands(o, maintenance, 'maintenance', deadline);
    const tail = ((done.tail ?? '') + m.tail).slice(-TAIL_BYTES);
    if (m.failed) return { ...done, ok: false, ...m.failed, tail, ms: Date.now() - started, ...counts };
    return { ...done, ...(done.tail !== undefined || m.tail ? { tail } : {}), ms: Date.now() - started, ...counts };
  };
  if (o.cache && o.commands.length) {
    try {
      const hit = await o.cache.get(key, o.workspace);
      if (hit) {
        o.onOutput?.(
          `[agentrun: restored ${hit.dirs.join(', ')} from the cache (key ${key.slice(0, 12)}); setup did not run${maintenance.length ? '; maintenance runs' : ''}]\n`,
        );
        return finish({ ok: true, cached: true, key, dirs: hit.dirs });
      }
    } catch (err) {
      // A cache removed under us, a full disk: setup runs as if there were none.
      o.onCacheProblem?.('restoring the cache', err);
    }
  }
  const saving = o.cache && o.save !== false && o.commands.length > 0;
  const before = saving ? await entriesOf(o.workspace) : undefined;
  const setup = await runCommands(o, o.commands, 'setup', deadline);
  if (setup.failed) return { ok: false, ms: Date.now() - started, cached: false, key, ...setup.failed, ...counts };
  let dirs: string[] | undefined;
  if (o.cache && saving && before) {
    try {
      const saved = await o.cache.put(
        key,
        o.workspace,
        { key, repo: o.repo, commands: o.commands, files: (await cacheKey({ ...o, dirs: o.cacheDirs })).files },
        // Named with --cache: those; else the usual ones and the packages' own (packages/a/node_modules);
        // and the other directories setup made (an editable install's egg-info): a hit restores them all.
        cachedDirs([
          ...(o.cacheDirs ?? [...DEFAULT_CACHE_DIRS, ...(o.startingTree ? await untrackedIn(o.startingTree, (await scanWorkspace(o.workspace)).nested) : [])]),
          ...(o.startingTree ? await untrackedIn(o.startingTree, newDirectories(before, await entriesOf(o.workspace))) : []),
        ]),
      );
      dirs = saved?.dirs;
    } catch (err) {
      o.onCacheProblem?.('saving the cache', err);
    }
  }
  return finish({ ok: true, cached: false, key, tail: setup.tail, ...(dirs ? { dirs } : {}) });
}
