// Commands that a workspace's settings start (shell hooks, stdio MCP servers) are the repository's
// commands, so they run in the same sandbox as the agent's own: the workspace writable, the
// network off, the worker's environment, homes and secrets out of sight.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { CommandWrapper } from '../extensions/commands.js';
import { sandboxArgv, SANDBOX_HOME } from './bwrap.js';
import { handToSandbox } from './owner.js';
import { commandEnv } from './env.js';
import { DEFAULT_LIMITS } from './limits.js';
import { DEFAULT_SANDBOX, type SandboxSettings } from './policy.js';
import { probeSandbox } from './preflight.js';

export function sandboxCommandWrapper(settings: SandboxSettings = DEFAULT_SANDBOX): CommandWrapper {
  return (spec, ctx) => {
    const probe = probeSandbox();
    if (!probe.ok) throw new Error(`${ctx.what} comes from the workspace's .agentrun/settings.json and cannot run unsandboxed: ${probe.error}`);
    if (!ctx.workspace) throw new Error(`${ctx.what} comes from a workspace's settings but no workspace was given`);
    const workspace = realpathSync(ctx.workspace);
    handToSandbox(workspace);
    // A working directory inside the workspace is kept; anything else is the workspace itself.
    const cwd = spec.cwd ? path.resolve(workspace, spec.cwd) : workspace;
    const chdir = cwd !== workspace && cwd.startsWith(workspace + path.sep) ? cwd : undefined;
    const [command, ...args] = sandboxArgv({ workspace, settings, limits: DEFAULT_LIMITS, chdir }, [spec.command, ...spec.args]);
    // The sandbox's own allowlist and what the caller sets (the repository's file, the hook's
    // project dir), with the sandbox's home: the worker's is hidden.
    const env = { ...commandEnv(settings, SANDBOX_HOME), ...(spec.env ?? {}), HOME: SANDBOX_HOME, TMPDIR: '/tmp' } as Record<string, string>;
    return { command: command!, args, env, cwd: workspace };
  };
}
