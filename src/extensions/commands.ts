// Commands that settings files start (stdio MCP servers, shell hooks). The operator's settings run
// as the worker; a workspace's settings are the repository's, untrusted: its commands run only
// through a `CommandWrapper` that puts them in the command sandbox (src/sandbox/ plugs in here),
// or when the worker was told to trust workspace commands.
import type { CommandContext, CommandSpec, CommandWrapper } from '../sandbox/command-spec.js';

export type { CommandContext, CommandSpec, CommandWrapper };

export interface CommandPolicy {
  wrapCommand?: CommandWrapper;
  trustWorkspaceCommands?: boolean;
}

/** `${VAR}` in operator settings reads the worker's environment (secrets stay out of the file). */
export function expandEnv(value: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => process.env[name] ?? '');
}

/** The command as it will be spawned, or an error saying why a workspace command may not run. */
export function prepareCommand(spec: CommandSpec, ctx: CommandContext, policy: CommandPolicy): CommandSpec {
  if (ctx.origin === 'operator') {
    return {
      ...spec,
      command: expandEnv(spec.command),
      args: spec.args.map(expandEnv),
      env: spec.env && Object.fromEntries(Object.entries(spec.env).map(([k, v]) => [k, expandEnv(v)])),
    };
  }
  if (policy.wrapCommand) return policy.wrapCommand(spec, ctx);
  if (policy.trustWorkspaceCommands) return spec;
  throw new Error(
    `${ctx.what} comes from the workspace's .agentrun/settings.json and this worker has no command sandbox for it; move it to the operator's settings.json in AGENTRUN_HOME or run the worker with trustWorkspaceCommands`,
  );
}
