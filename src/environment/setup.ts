// The repository's environment: setup commands (with the network, through the egress proxy) run
// before turn 1, their outputs restored from the dependency cache when the key matches, and the
// repository's check (verify, network off) run when the model says it is done. Both run in the
// command sandbox like execute_command (src/sandbox/run.ts), as the sandbox user for a root worker.
import { refusalNote, runSandboxed, TAIL_BYTES, type SandboxSettings } from '../sandbox/index.js';
import { handToSandbox } from '../sandbox/owner.js';
import type { ConnectionRecord } from '../sandbox/proxy.js';
import type { SetupEnd } from '../types.js';
import { DEFAULT_CACHE_DIRS, cacheKey, scanWorkspace, untrackedIn, type CacheStore, type StartingTree } from './cache.js';
import { setupCommands, type LoadedSettings } from '../extensions/settings.js';

/** Setup output streamed as events at most (a noisy install goes on; the rest is counted, not stored). */
export const STREAMED_BYTES = 1024 * 1024;
/** Verify's time limit. */
export const VERIFY_TIMEOUT_SEC = 30 * 60;

/** What a conversation's environment is: the flags, else the repository's settings (unless the operator forbids them), else the operator's. */
export interface EnvironmentPlan {
  setup?: string[];
  verify?: string;
  cache?: string[];
  /** Setup's network (`on` when nothing names one). */
  setupNetwork: string;
  /** Where each came from, for `inspect`. */
  source: { setup?: 'flag' | 'repository' | 'operator'; verify?: 'flag' | 'repository' | 'operator' };
}

export function environmentPlan(
  config: { setup?: string[]; verify?: string; cache?: string[]; setupNetwork?: string },
  settings: LoadedSettings,
): EnvironmentPlan {
  const repoAllowed = settings.operator.repositorySetup !== false;
  const repoSetup = repoAllowed ? setupCommands(settings.workspace) : undefined;
  const opSetup = setupCommands(settings.operator);
  const setup = config.setup ?? repoSetup ?? opSetup;
  const verify = config.verify ?? (repoAllowed ? settings.workspace.verify : undefined) ?? settings.operator.verify;
  const cache = config.cache ?? (repoAllowed ? settings.workspace.cache : undefined) ?? settings.operator.cache;
  const setupNetwork = config.setupNetwork ?? (repoAllowed ? settings.workspace.setupNetwork : undefined) ?? settings.operator.setupNetwork ?? 'on';
  return {
    setupNetwork,
    ...(setup?.length ? { setup } : {}),
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
}

export interface SetupRunOptions {
  repo: string;
  workspace: string;
  commands: string[];
  cacheDirs?: string[];
  settings: SandboxSettings;
  timeoutMs: number;
  cache?: CacheStore;
  baseEnv?: NodeJS.ProcessEnv;
  onOutput?: (text: string) => void;
  heartbeat?: () => void;
  signal?: AbortSignal;
  recordConnection?: (r: ConnectionRecord) => void;
  /** The cache key (default: computed from the workspace as it is now). */
  key?: string;
  /** Keep what setup made in the cache (default true). */
  save?: boolean;
  /** Told when the cache could not be used (logged by the caller). */
  onCacheProblem?: (what: string, err: unknown) => void;
  /** The job's starting checkpoint: nested dependency directories in it are the repository's, never cached. Absent: none is cached. */
  startingTree?: StartingTree;
}

/** Restore setup's outputs from the cache, or run the commands (and keep their outputs). */
export async function runSetup(o: SetupRunOptions): Promise<SetupOutcome> {
  const started = Date.now();
  const key = o.key ?? (await cacheKey({ repo: o.repo, workspace: o.workspace, commands: o.commands, ...(o.cacheDirs ? { dirs: o.cacheDirs } : {}) })).key;
  // Restored files are the sandbox user's, like the rest of the workspace (root worker).
  if (o.settings.policy !== 'off') handToSandbox(o.workspace);
  if (o.cache) {
    try {
      const hit = await o.cache.get(key, o.workspace);
      if (hit) {
        o.onOutput?.(`[agentrun: restored ${hit.dirs.join(', ')} from the cache (key ${key.slice(0, 12)}); setup did not run]\n`);
        return { ok: true, ms: Date.now() - started, cached: true, key, commands: o.commands.length, dirs: hit.dirs };
      }
    } catch (err) {
      // A cache removed under us, a full disk: setup runs as if there were none.
      o.onCacheProblem?.('restoring the cache', err);
    }
  }
  const deadline = started + o.timeoutMs;
  let tail = '';
  for (const [i, command] of o.commands.entries()) {
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
    });
    // What the proxy refused is the likely cause of a failed install: say so in the log and its tail.
    const refused = refusalNote(`--setup-network ${o.settings.network}`, r.refusals);
    if (refused) o.onOutput?.(`${refused.slice(1)}\n`);
    tail = (tail + r.tail + refused).slice(-TAIL_BYTES);
    const ok = r.exitCode === 0 && !r.timedOut && !r.cancelled && !r.spawnError;
    if (ok) continue;
    const which = o.commands.length > 1 ? ` at command ${i + 1} of ${o.commands.length}` : '';
    const reason = r.timedOut
      ? `setup timed out after ${Math.round(o.timeoutMs / 1000)} s${which}`
      : r.spawnError
        ? `setup could not start: ${r.spawnError}`
        : r.exitCode === null
          ? `setup failed (killed by ${r.signal ?? 'a signal'})${which}`
          : `setup failed (exit ${r.exitCode})${which}`;
    return { ok: false, ms: Date.now() - started, cached: false, exitCode: r.exitCode, reason, tail, key, commands: o.commands.length };
  }
  let dirs: string[] | undefined;
  if (o.cache && o.save !== false) {
    try {
      const saved = await o.cache.put(
        key,
        o.workspace,
        { key, repo: o.repo, commands: o.commands, files: (await cacheKey({ ...o, dirs: o.cacheDirs })).files },
        // Named with --cache: those; else the usual ones and the packages' own (packages/a/node_modules).
        o.cacheDirs ?? [...DEFAULT_CACHE_DIRS, ...(o.startingTree ? await untrackedIn(o.startingTree, (await scanWorkspace(o.workspace)).nested) : [])],
      );
      dirs = saved?.dirs;
    } catch (err) {
      o.onCacheProblem?.('saving the cache', err);
    }
  }
  return { ok: true, ms: Date.now() - started, cached: false, key, tail, commands: o.commands.length, ...(dirs ? { dirs } : {}) };
}
