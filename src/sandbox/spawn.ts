// Start one command under its sandbox policy. The process we start is bwrap (or bash under
// `off`), leader of its own process group; bwrap's --die-with-parent ties the sandbox to it
// and to the worker, and the new PID namespace ends every process of the command when its
// first process ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bwrapArgs, SANDBOX_HOME } from './bwrap.js';
import { createCommandCgroup, removeCommandCgroup } from './cgroup.js';
import { commandEnv } from './env.js';
import { DEFAULT_LIMITS, limitedShell, type CommandLimits } from './limits.js';
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
}

export interface RunningCommand {
  child: ChildProcess;
  /** Signal the whole command (every process of it). */
  kill(signal: NodeJS.Signals): void;
  /** After the child closed: remove what the command left behind (its cgroup). */
  cleanup(): void;
}

/** Checkpoint refs in the workspace's own .git: readable by commands, never writable. */
function checkpointRefsDir(workspace: string): string | undefined {
  // A workspace that is not a git repository keeps its checkpoints in a private repository under
  // AGENTRUN_HOME (hidden): never create a .git in it (the checkpoints would then take it for one).
  if (!statSync(path.join(workspace, '.git'), { throwIfNoEntry: false })?.isDirectory()) return undefined;
  const dir = path.join(workspace, '.git', 'refs', 'agentrun');
  try {
    mkdirSync(dir, { recursive: true });
    return dir;
  } catch {
    return undefined; // no .git directory (a private checkpoint repository under AGENTRUN_HOME, hidden)
  }
}

export function startCommand(spec: CommandSpec): RunningCommand {
  const limits = spec.limits ?? DEFAULT_LIMITS;
  const { settings, workspace } = spec;
  const shell = limitedShell(limits, spec.timeoutSec, spec.command);
  let argv: string[];
  let env: NodeJS.ProcessEnv;
  if (settings.policy === 'off') {
    argv = shell;
    env = commandEnv(settings, os.homedir(), spec.baseEnv);
  } else {
    const refs = checkpointRefsDir(workspace);
    argv = ['bwrap', ...bwrapArgs({ workspace, settings, limits, readOnlyInside: refs ? [refs] : [] }), '--', ...shell];
    env = commandEnv(settings, SANDBOX_HOME, spec.baseEnv);
  }
  const cgroup = createCommandCgroup(limits.processes);
  // Join the cgroup before anything forks, then become the command (exec keeps the pid).
  const [file, ...args] = cgroup ? ['/bin/sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, ...argv] : argv;
  const child = spawn(file!, args, { cwd: workspace, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  return {
    child,
    kill(signal) {
      if (pid === undefined) return;
      try {
        process.kill(-pid, signal);
      } catch {
        // ESRCH: the group is already gone.
      }
    },
    cleanup() {
      if (cgroup) removeCommandCgroup(cgroup);
    },
  };
}
