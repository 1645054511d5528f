// What a conversation asks of the command sandbox. Free of Node APIs: the workflow imports
// the types through src/config.ts.
import type { NetworkMode } from './network.js';

export const SANDBOX_POLICIES = ['workspace-write', 'read-only', 'off'] as const;
export type SandboxPolicy = (typeof SANDBOX_POLICIES)[number];
export type { NetworkMode } from './network.js';

/**
 * Where every job's workspace is inside the command sandbox, whatever its path on the host: paths
 * written at setup (an editable install's .pth, a virtual environment's scripts) hold for every
 * later job that gets them from the dependency cache, and the model sees one working directory.
 */
export const SANDBOX_WORKSPACE = '/workspace';

/** The workspace's path as commands see it: the fixed one in the sandbox, the host's own unconfined. */
export function commandWorkspace(policy: SandboxPolicy, hostWorkspace: string): string {
  return policy === 'off' ? hostWorkspace : SANDBOX_WORKSPACE;
}

/** A name `--env` accepts: a plain variable name. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The worker's own variables: its model key, its database, its Temporal connection and agentrun's
 * settings. No operator list lets a conversation pass them (a prompt injection asking for
 * `--env DATABASE_URL` would take the store of every conversation).
 */
const NEVER_PASSED: [RegExp, string][] = [
  [/^OPENAI_API_KEY$/, "the worker's model provider key"],
  [/^DATABASE_URL$|^PG[A-Z]+$/, "the worker's database"],
  [/^TEMPORAL_/, "the worker's Temporal connection"],
  [/^AGENTRUN_/, "agentrun's own settings"],
];

/** Why `name` is never passed to commands, or undefined when an operator may allow it. */
export function neverPassed(name: string): string | undefined {
  return NEVER_PASSED.find(([re]) => re.test(name))?.[1];
}

/**
 * The one line that refuses a conversation's `--env` names, or undefined when all pass: the
 * worker's own names always, and with `allowed` (the worker's `--allow-env`) every name not in it.
 */
export function envRefusal(names: readonly string[], allowed?: readonly string[]): string | undefined {
  for (const name of names) {
    const own = neverPassed(name);
    if (own) return `--env ${name}: commands never get ${name} (${own}); pass a variable of their own instead`;
    if (allowed && !allowed.includes(name)) return `--env ${name}: this worker does not pass ${name} to commands; start the worker with --allow-env ${name}`;
  }
  return undefined;
}

/**
 * The one line refusing a conversation's `sandbox: off` on a worker that does not run commands
 * unconfined (started without `--sandbox off` or `--allow-unsandboxed`), else undefined.
 */
export function unsandboxedRefusal(sandbox: string | undefined, allowed: boolean): string | undefined {
  if (sandbox !== 'off' || allowed) return undefined;
  return '--sandbox off: this worker does not run commands unconfined (they would run as the worker, with its files, secrets and network); its operator may allow it with `agentrun worker --allow-unsandboxed` (AGENTRUN_ALLOW_UNSANDBOXED=1), a trust decision, or use the default sandbox';
}

/** The sandbox settings one command runs under. */
export interface SandboxSettings {
  policy: SandboxPolicy;
  network: NetworkMode;
  /** Names of worker environment variables passed through to commands (`--env NAME`). */
  env: string[];
  /** The names this worker lets `env` pass (`agentrun worker --allow-env`); absent: none. */
  allowedEnv?: readonly string[];
  /** AGENTRUN_HOME of the worker: hidden from commands. */
  home?: string;
}

export const DEFAULT_SANDBOX: SandboxSettings = { policy: 'workspace-write', network: 'off', env: [] };

/**
 * The policy a conversation's commands run under: plan mode never writes, so a
 * `workspace-write` conversation in plan mode gets `read-only`; `off` stays off (asked for explicitly).
 */
export function effectiveSandbox(
  config: { sandbox?: SandboxPolicy; network?: NetworkMode; env?: string[]; planMode?: boolean },
  home?: string,
  allowedEnv?: readonly string[],
): SandboxSettings {
  const asked = config.sandbox ?? DEFAULT_SANDBOX.policy;
  const policy: SandboxPolicy = config.planMode && asked === 'workspace-write' ? 'read-only' : asked;
  return { policy, network: config.network ?? 'off', env: config.env ?? [], ...(home ? { home } : {}), ...(allowedEnv ? { allowedEnv } : {}) };
}
