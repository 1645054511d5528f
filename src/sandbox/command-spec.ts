// A command that a settings file starts (a stdio MCP server, a shell hook) as the sandbox wraps
// it: src/extensions/commands.ts hands workspace commands to a `CommandWrapper`, and the sandbox
// (./wrap.ts) is the one that puts them in bwrap.
export interface CommandSpec {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Called once the command has ended (a wrapper's per-command cgroup is removed, what is left in it killed). */
  cleanup?: () => void;
}

export interface CommandContext {
  /** Whose settings file named the command: the operator's (runs as the worker) or the workspace's (untrusted). */
  origin: 'operator' | 'workspace';
  workspace?: string;
  /** What the command is, for errors: `MCP server "fs"`, `PreToolUse hook`. */
  what: string;
  /** The conversation may not write its workspace (plan mode, `--sandbox read-only`): nor may the command. */
  readOnly?: boolean;
  /** Seconds the command may run (a hook's timeout): its CPU limit in the sandbox too. */
  timeoutSec?: number;
}

/** Rewrites a command to run inside the sandbox (e.g. `bwrap … -- command args`). */
export type CommandWrapper = (spec: CommandSpec, ctx: CommandContext) => CommandSpec;
