// Commands that a workspace's settings start (shell hooks, stdio MCP servers) are the repository's
// commands, so they run in the same sandbox as the agent's own: the workspace writable (read-only
// when the conversation's is), the network off, the commands' rlimits and pids cgroup, the
// worker's environment, homes and secrets out of sight. Nothing of the settings file reaches a
// process outside the sandbox: bwrap runs by its absolute path with a fixed environment, and the
// command's `env` is set by bwrap inside (--clearenv, --setenv), after the launcher has started.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { CommandContext, CommandWrapper } from './command-spec.js';
import { sandboxArgv, SANDBOX_HOME } from './bwrap.js';
import { createCommandCgroup, joiningCgroup, removeCommandCgroup } from './cgroup.js';
import { handToSandbox } from './owner.js';
import { commandEnv } from './env.js';
import { DEFAULT_LIMITS, limitedShell, type CommandLimits } from './limits.js';
import { DEFAULT_SANDBOX, ENV_NAME_PATTERN, SANDBOX_WORKSPACE, type SandboxSettings } from './policy.js';
import { probeSandbox } from './preflight.js';

/** The environment of bwrap itself: fixed, nothing from the worker's or the settings file's. */
const LAUNCHER_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' };

/** Variables that make a program load code before it runs its own: never from a repository. */
const LOADER_VARIABLES = /^(LD_.*|NODE_OPTIONS|BASH_ENV|ENV)$/;

/**
 * Why a workspace command's `env` cannot be used, in one line, or undefined: a name that is not a
 * variable name, a loader variable, or a PATH with an entry that is relative or inside the
 * workspace (the repository's own `bwrap`, `node` or `sh` would run in place of the system's).
 */
export function settingsEnvRefusal(env: Record<string, string>, workspace: string, what: string): string | undefined {
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME_PATTERN.test(name)) return `${what}: its env names ${JSON.stringify(name)}, not a variable name; fix .agentrun/settings.json`;
    if (LOADER_VARIABLES.test(name))
      return `${what}: its env sets ${name}, which loads code before the program's own; a repository's settings may not set it: remove it from .agentrun/settings.json`;
    if (name !== 'PATH') continue;
    for (const entry of value.split(':')) {
      const abs = path.isAbsolute(entry) ? path.resolve(entry) : undefined;
      const inWorkspace = (root: string) => abs === root || abs?.startsWith(root + path.sep);
      if (abs && !inWorkspace(workspace) && !inWorkspace(SANDBOX_WORKSPACE)) continue;
      return `${what}: its env sets PATH with ${JSON.stringify(entry)}, ${abs ? 'inside the workspace' : 'a relative entry'}; a repository's PATH may name only absolute directories outside it: fix .agentrun/settings.json`;
    }
  }
  return undefined;
}

export function sandboxCommandWrapper(settings: SandboxSettings = DEFAULT_SANDBOX, limits: CommandLimits = DEFAULT_LIMITS): CommandWrapper {
  return (spec, ctx: CommandContext) => {
    const probe = probeSandbox();
    if (!probe.ok) throw new Error(`${ctx.what} comes from the workspace's .agentrun/settings.json and cannot run unsandboxed: ${probe.error}`);
    if (!ctx.workspace) throw new Error(`${ctx.what} comes from a workspace's settings but no workspace was given`);
    const workspace = realpathSync(ctx.workspace);
    const refused = settingsEnvRefusal(spec.env ?? {}, workspace, ctx.what);
    if (refused) throw new Error(refused);
    handToSandbox(workspace);
    // A working directory inside the workspace is kept (bwrap enters it inside); anything else is the workspace itself.
    const cwd = spec.cwd ? path.resolve(workspace, spec.cwd) : workspace;
    const chdir = cwd !== workspace && cwd.startsWith(workspace + path.sep) ? cwd : undefined;
    const policy = ctx.readOnly || settings.policy === 'read-only' ? 'read-only' : 'workspace-write';
    const sandbox: SandboxSettings = { ...settings, policy, network: 'off' };
    // The sandbox's own allowlist, then what the caller sets (the repository's file, the hook's
    // project dir), with the sandbox's home: the worker's is hidden. All set by bwrap, inside.
    // A value naming the workspace (the hook's project dir) names it where the command sees it.
    const given = Object.fromEntries(Object.entries(spec.env ?? {}).map(([k, v]) => [k, v === workspace || v === ctx.workspace ? SANDBOX_WORKSPACE : v]));
    const inside = { ...commandEnv(sandbox, SANDBOX_HOME), ...given, HOME: SANDBOX_HOME, TMPDIR: '/tmp' } as Record<string, string>;
    const setenv = ['--clearenv', ...Object.entries(inside).flatMap(([k, v]) => ['--setenv', k, v])];
    // The commands' rlimits: a hook's CPU time is its timeout, a server's the commands' limit.
    const shell = [...limitedShell(limits, ctx.timeoutSec ?? limits.cpuSec, 'exec "$@"'), 'agentrun-settings-command', spec.command, ...spec.args];
    const [bwrap, ...bwrapArgs] = sandboxArgv({ workspace, settings: sandbox, limits, chdir }, shell);
    const argv = [bwrap!, ...setenv, ...bwrapArgs];
    // And their cgroups (processes, memory), joined before anything forks; removed (what is left in them killed) when the command ends.
    const cgroup = createCommandCgroup(limits);
    const [command, ...args] = joiningCgroup(cgroup, argv);
    return { command: command!, args, env: { ...LAUNCHER_ENV }, cwd: workspace, ...(cgroup ? { cleanup: () => removeCommandCgroup(cgroup) } : {}) };
  };
}
