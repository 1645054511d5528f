// settings.json: `mcpServers` and `hooks`, in the shape Claude Code and Gemini CLI users know.
// Two files: the operator's `$AGENTRUN_HOME/settings.json` (trusted, runs as the worker) and the
// workspace's `.agentrun/settings.json` (a repository is untrusted input: its commands go
// through the command sandbox). A bad file is one clear error naming the file and the key.
import { readSmallFile } from '../workspace/beneath.js';
import { join } from 'node:path';
import { z } from 'zod';
import { networkRefusal } from '../sandbox/network.js';
import { parseMatcher } from './matcher.js';
import { cacheDirRefusal } from '../workspace/setup-created.js';

export type SettingsOrigin = 'operator' | 'workspace';

const name = z.string().regex(/^[A-Za-z0-9_-]+$/, { error: 'use letters, digits, "_" and "-" only' });

const stdioServerSchema = z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  /** Seconds to wait for the server's initialize answer and tool list. */
  timeout: z.number().positive().optional() /** Run this server's tools without asking (Gemini CLI's key); honoured only in the operator's settings. */,
  trust: z.boolean().optional(),
});

const httpServerSchema = z.strictObject({
  type: z.enum(['http', 'streamable-http']).optional(),
  url: z.url(),
  headers: z.record(z.string(), z.string()).default({}),
  timeout: z.number().positive().optional() /** Run this server's tools without asking (Gemini CLI's key); honoured only in the operator's settings. */,
  trust: z.boolean().optional(),
});

export const mcpServerSchema = z.union([stdioServerSchema, httpServerSchema], {
  error: 'an MCP server needs either "command" (stdio) or "url" (Streamable HTTP), and no other keys',
});

/** Claude Code's event names, so its settings files validate; RUNNING_HOOK_EVENTS are the ones conversations run today. */
export const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'Stop',
  'SubagentStop',
  'UserPromptSubmit',
  'Notification',
  'PreCompact',
  'SessionStart',
  'SessionEnd',
] as const;
export const RUNNING_HOOK_EVENTS: readonly string[] = ['PreToolUse', 'PostToolUse', 'Stop'];
export type HookEvent = (typeof HOOK_EVENTS)[number];

const shellHookSchema = z.strictObject({
  type: z.literal('command'),
  command: z.string().min(1),
  /** Seconds before the hook is killed (Claude Code's default is 60). */
  timeout: z.number().positive().optional(),
});

const hookMatcherSchema = z.strictObject({
  /** The tool name: empty or "*" (every tool), a name, a glob, names joined by "|", or a regular expression as /…/ (src/extensions/matcher.ts). */
  matcher: z
    .string()
    .optional()
    .superRefine((m, ctx) => {
      try {
        parseMatcher(m);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: err instanceof SyntaxError ? `not a valid regular expression: ${err.message}` : (err as Error).message });
      }
    }),
  hooks: z.array(shellHookSchema).min(1),
});

const setupCommand = z.string({ error: 'a setup command must be a string (a shell command)' }).trim().min(1, { error: 'a setup command must not be empty' });

export const settingsSchema = z.strictObject({
  $schema: z.string().optional(),
  mcpServers: z.record(name, mcpServerSchema).default({}),
  hooks: z.partialRecord(z.enum(HOOK_EVENTS), z.array(hookMatcherSchema)).default({}),
  /** Setup commands run before turn 1 with the network (a `--setup` flag wins). */
  setup: z.union([setupCommand, z.array(setupCommand)], { error: 'a setup command must be a string (a shell command), alone or in a list' }).optional(),
  /** Setup's network: on (the default), allow:HOST[,HOST…] or off (a `--setup-network` flag wins). */
  setupNetwork: z
    .string({ error: 'setupNetwork must be a string: off, on or allow:HOST[,HOST…]' })
    .refine((v) => !networkRefusal(v), { error: (i) => networkRefusal(String(i.input))?.replace(/^--network /, '') ?? 'invalid network' })
    .transform((v) => v.trim())
    .optional(),
  /** Commands run after setup on every job, after a cache hit too (a `--maintenance` flag wins). */
  maintenance: z
    .union([setupCommand, z.array(setupCommand)], { error: 'a maintenance command must be a string (a shell command), alone or in a list' })
    .optional(),
  /** Directories setup produces, kept by the cache (a `--cache` flag wins). */
  cache: z
    .array(
      z
        .string({ error: 'a cache directory must be a string' })
        .min(1)
        .refine((d) => !cacheDirRefusal(d), { error: (i) => `cache directory ${JSON.stringify(i.input)}: ${cacheDirRefusal(String(i.input))}` }),
    )
    .optional(),
  /** The repository's check run when the model calls attempt_completion (a `--verify` flag wins). */
  verify: z.string({ error: 'verify must be a string (a shell command)' }).trim().min(1).optional(),
  /**
   * Operator's file only: false turns repository extensions off on this worker (hooks, MCP servers,
   * agent files, setup, verify, cache of repositories), whatever AGENTRUN_REPOSITORY_EXTENSIONS says; flags still apply.
   */
  repositorySetup: z.boolean().optional(),
});

/** The setup commands of a settings file, as a list. */
export function setupCommands(s: Settings, which: 'setup' | 'maintenance' = 'setup'): string[] | undefined {
  const given = s[which];
  return given === undefined ? undefined : typeof given === 'string' ? [given] : given;
}

export type Settings = z.output<typeof settingsSchema>;
export type McpServerConfig = z.output<typeof mcpServerSchema>;
/** An MCP server as written (defaults not yet applied). */
export type McpServerInput = z.input<typeof mcpServerSchema>;

/** A settings file that cannot be used: the message names the file and the key. */
export class SettingsError extends Error {
  constructor(
    readonly file: string,
    readonly key: string,
    detail: string,
  ) {
    super(`${file}: ${key ? `${key}: ` : ''}${detail}; fix the file or remove it`);
    this.name = 'SettingsError';
  }
}

export const WORKSPACE_SETTINGS = join('.agentrun', 'settings.json');

export function operatorSettingsPath(home: string): string {
  return join(home, 'settings.json');
}

export function workspaceSettingsPath(workspace: string): string {
  return join(workspace, WORKSPACE_SETTINGS);
}

/** Validate parsed settings; `file` names the source in the error. */
export function parseSettings(data: unknown, file: string): Settings {
  const r = settingsSchema.safeParse(data);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const key = issue.path.map(String).join('.');
  let detail = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `"${k}"`).join(', ');
    detail = key === 'hooks' ? `unknown hook event ${keys} (known: ${HOOK_EVENTS.join(', ')})` : `unknown key${issue.keys.length > 1 ? 's' : ''} ${keys}`;
  } else if (issue.code === 'invalid_key') {
    detail = `bad name: ${issue.issues[0]?.message ?? issue.message}`;
  }
  throw new SettingsError(file, key, detail);
}

/** Settings files larger than this are refused (a real one is a few kilobytes). */
const SETTINGS_MAX_BYTES = 1024 * 1024;

/**
 * The text of a settings file, undefined when it does not exist. A workspace's file (`beneath`:
 * the workspace) is read beneath its root; any settings file must be a regular file: a FIFO or
 * device there would block the worker's file I/O.
 */
export async function readSettingsText(file: string, beneath?: string): Promise<string | undefined> {
  try {
    return (await readSmallFile(file, { beneath, maxBytes: SETTINGS_MAX_BYTES }))?.toString('utf8');
  } catch (err) {
    throw new SettingsError(file, '', `cannot read: ${(err as Error).message}`);
  }
}

/** Read and validate one settings file; a missing file is empty settings. `beneath`: the workspace it is in. */
export async function loadSettingsFile(file: string, beneath?: string): Promise<Settings> {
  const text = await readSettingsText(file, beneath);
  if (text === undefined) return settingsSchema.parse({});
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new SettingsError(file, '', `not valid JSON: ${(err as Error).message}`);
  }
  return parseSettings(data, file);
}

export interface LoadedSettings {
  operator: Settings;
  workspace: Settings;
}

export async function loadSettings(opts: { home?: string; workspace?: string }): Promise<LoadedSettings> {
  const empty = settingsSchema.parse({});
  return {
    operator: opts.home ? await loadSettingsFile(operatorSettingsPath(opts.home)) : empty,
    workspace: opts.workspace ? await loadSettingsFile(workspaceSettingsPath(opts.workspace), opts.workspace) : empty,
  };
}
