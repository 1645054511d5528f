// Start one command under its sandbox policy. The process started is bwrap (or bash under
// `off`), leader of its own process group, started by the worker's launcher process
// (src/runtime/launcher.ts) so that the worker never forks itself; bwrap's --die-with-parent ties
// the sandbox to the launcher, which ends with the worker, and the new PID namespace ends every
// process of the command when its first process ends.
import os from 'node:os';
import { sandboxArgv, SANDBOX_HOME, type SandboxBind } from './bwrap.js';
import { handToSandbox } from './owner.js';
import { createCommandCgroup, joiningCgroup, removeCommandCgroup } from './cgroup.js';
import { egressProxy, type ConnectionRecord, type EgressBridge } from './proxy.js';
import { commandEnv, networkEnv } from './env.js';
import { forwarderPrologue, SANDBOX_PROXY_URL } from './forwarder.js';
import { DEFAULT_LIMITS, limitedShell, type CommandLimits } from './limits.js';
import { networkPolicy } from './network.js';
import { launchCommand, type CommandProcess } from '../runtime/launcher.js';
import type { SandboxSettings } from './policy.js';

export interface CommandSpec {
  command: string;
  /** Workspace root, a real path. */
  workspace: string;
  settings: SandboxSettings;
  timeoutSec: number;
  limits?: CommandLimits;
  /** The environment `--env` names are looked up in (default: the worker's). */
  baseEnv?: NodeJS.ProcessEnv;
  /** Called with every connection the command makes through the egress proxy (network allow/on). */
  recordConnection?: (r: ConnectionRecord) => void;
  /** The tenant whose conversation runs the command: its proxy connections count toward that tenant's cap (default `default`). */
  tenant?: string;
  /** More directories bound into the sandbox (under its /tmp). */
  binds?: SandboxBind[];
}

export interface RunningCommand {
  child: CommandProcess;
  /** Signal the whole command (every process of it). */
  kill(signal: NodeJS.Signals): void;
  /** After the child closed: remove what the command left behind (its cgroup, its proxy's sockets). */
  cleanup(): void;
  /** Connections the egress proxy refused during the command, one line each. */
  refusals(): string[];
}

export function startCommand(spec: CommandSpec): RunningCommand {
  const limits = spec.limits ?? DEFAULT_LIMITS;
  const { settings, workspace } = spec;
  let argv: string[];
  let env: NodeJS.ProcessEnv;
  let bridge: EgressBridge | undefined;
  if (settings.policy === 'off') {
    argv = limitedShell(limits, spec.timeoutSec, spec.command);
    env = commandEnv(settings, os.homedir(), spec.baseEnv);
  } else {
    handToSandbox(workspace);
    const policy = networkPolicy(settings.network);
    if (policy.mode !== 'off') bridge = egressProxy().open(policy, spec.recordConnection ?? (() => undefined), spec.tenant);
    const shell = limitedShell(limits, spec.timeoutSec, spec.command, bridge ? forwarderPrologue() : undefined);
    argv = sandboxArgv({ workspace, settings, limits, ...(spec.binds ? { binds: spec.binds } : {}) }, shell);
    env = { ...commandEnv(settings, SANDBOX_HOME, spec.baseEnv), ...networkEnv(settings, SANDBOX_PROXY_URL) };
  }
  const cgroup = createCommandCgroup(limits);
  const [file, ...args] = joiningCgroup(cgroup, argv);
  // With a network, fd 3 is an IPC channel: the sandbox hands the proxy its listening socket there.
  let child: CommandProcess;
  try {
    child = launchCommand({ file: file!, args, cwd: workspace, env, ipc: bridge !== undefined });
  } catch (err) {
    // The launcher itself could not start: nothing will call cleanup().
    bridge?.close();
    throw err;
  }
  bridge?.listenFrom(child);
  return {
    child,
    kill: (signal) => child.killGroup(signal),
    cleanup() {
      if (cgroup) removeCommandCgroup(cgroup);
      bridge?.close();
    },
    refusals: () => bridge?.refusals() ?? [],
  };
}
