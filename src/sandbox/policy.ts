// What a conversation asks of the command sandbox. Free of Node APIs: the workflow imports
// the types through src/config.ts.

export const SANDBOX_POLICIES = ['workspace-write', 'read-only', 'off'] as const;
export type SandboxPolicy = (typeof SANDBOX_POLICIES)[number];
export const NETWORK_MODES = ['off', 'on'] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

/** A name `--env` accepts: a plain variable name. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The sandbox settings one command runs under. */
export interface SandboxSettings {
  policy: SandboxPolicy;
  network: NetworkMode;
  /** Names of worker environment variables passed through to commands (`--env NAME`). */
  env: string[];
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
): SandboxSettings {
  const asked = config.sandbox ?? DEFAULT_SANDBOX.policy;
  const policy: SandboxPolicy = config.planMode && asked === 'workspace-write' ? 'read-only' : asked;
  return { policy, network: config.network ?? 'off', env: config.env ?? [], ...(home ? { home } : {}) };
}
