// A repository's own extensions (`.agentrun/settings.json`: hooks, MCP servers, setup, verify,
// cache; `.agentrun/agents/*.md`) are the operator's decision: a worker runs them only when it was
// started with repository extensions on (AGENTRUN_REPOSITORY_EXTENSIONS, `--repository-extensions`).
// They are read once, from the job's starting tree, and that copy (stored with the conversation)
// is what the whole run uses: what the agent writes to `.agentrun/` later never reaches the worker
// in this run. The files are opened without following links, non-blocking (a FIFO cannot stall
// the worker), as regular files under a size cap.
import { constants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { O_READ } from '../workspace/beneath.js';
import { HOOK_EVENTS, parseSettings, SettingsError, setupCommands, WORKSPACE_SETTINGS, type Settings } from './settings.js';
export { parseRepositoryExtensions, repositoryExtensionsFromEnv } from './switch.js';

/** Largest settings or agent file read (a bigger one is refused, not truncated). */
export const REPOSITORY_FILE_CAP = 256 * 1024;
/** At most this many agent files are read. */
const MAX_AGENT_FILES = 100;

/** What a conversation keeps of its repository's extensions (stored once, JSON). */
export interface RepositorySnapshot {
  /** Whether the worker that read the starting tree had repository extensions on. */
  enabled: boolean;
  /** What the repository defines, one short phrase each ("hooks (PreToolUse)", "setup", …). */
  found: string[];
  /** The settings file as parsed JSON (kept only when enabled). */
  settings?: unknown;
  /** Why the settings file cannot be used (one line naming the file), when it cannot. */
  settingsError?: string;
  /** `.agentrun/agents/<name>.md` files (kept only when enabled). */
  agents?: Array<{ name: string; text: string }>;
}

export const NO_REPOSITORY: RepositorySnapshot = { enabled: false, found: [] };

/** Open `name` in the directory `dirPath` names with the file tools' read flags (src/workspace/beneath.ts): no link followed in its last component, no blocking, no tty. */
async function openBeneath(dirPath: string, name: string, flags = 0) {
  return open(join(dirPath, name), O_READ | flags);
}

/** A directory by descriptor, reached as /proc/self/fd/N: later names resolve from it, not from a path the agent can swap. */
async function openDir(parent: string, name: string) {
  try {
    const fh = await openBeneath(parent, name, constants.O_DIRECTORY);
    return { fh, path: `/proc/self/fd/${fh.fd}` };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Missing, not a directory, or a symbolic link (ELOOP): nothing is read from it.
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return undefined;
    throw err;
  }
}

/** A regular file's text, capped; undefined when missing. Errors name the file and what is wrong. */
async function readRegular(dirPath: string, name: string, label: string): Promise<string | undefined> {
  let fh;
  try {
    fh = await openBeneath(dirPath, name);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new Error(`${label} is a symbolic link; repository settings must be regular files`);
    throw new Error(`${label} cannot be read: ${(err as Error).message}`);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error(`${label} is not a regular file`);
    if (st.size > REPOSITORY_FILE_CAP) throw new Error(`${label} is larger than ${REPOSITORY_FILE_CAP / 1024} KiB`);
    const buf = Buffer.alloc(REPOSITORY_FILE_CAP + 1);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    if (bytesRead > REPOSITORY_FILE_CAP) throw new Error(`${label} is larger than ${REPOSITORY_FILE_CAP / 1024} KiB`);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/** One phrase per kind of extension the settings define. */
function describe(s: Settings): string[] {
  const out: string[] = [];
  const events = HOOK_EVENTS.filter((e) => s.hooks[e]?.length);
  if (events.length) out.push(`hooks (${events.join(', ')})`);
  const servers = Object.keys(s.mcpServers);
  if (servers.length) out.push(`MCP servers (${servers.join(', ')})`);
  if (setupCommands(s)?.length || setupCommands(s, 'maintenance')?.length) out.push('setup');
  if (s.verify) out.push('verify');
  if (s.cache) out.push('cache');
  return out;
}

/** Key names of the raw JSON, for a file that does not validate (what it tried to define). */
function describeRaw(data: unknown): string[] {
  if (data === null || typeof data !== 'object') return ['settings'];
  const keys = Object.keys(data).filter((k) => k !== '$schema');
  return keys.length ? keys.map((k) => (k === 'mcpServers' ? 'MCP servers' : k)) : [];
}

/**
 * Read the repository's extensions from the workspace as it is now (the caller calls this at turn
 * 0 only). `enabled` false records only what was there, for the notice.
 */
export async function readRepositoryExtensions(workspace: string, enabled: boolean): Promise<RepositorySnapshot> {
  const found: string[] = [];
  const snapshot: RepositorySnapshot = { enabled, found };
  const dir = await openDir(workspace, '.agentrun');
  if (!dir) return snapshot;
  try {
    let text: string | undefined;
    try {
      text = await readRegular(dir.path, 'settings.json', WORKSPACE_SETTINGS);
    } catch (err) {
      found.push('settings');
      if (enabled) snapshot.settingsError = `${(err as Error).message}; fix the file or remove it`;
    }
    if (text !== undefined) {
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch (err) {
        found.push('settings');
        if (enabled) snapshot.settingsError = new SettingsError(WORKSPACE_SETTINGS, '', `not valid JSON: ${(err as Error).message}`).message;
      }
      if (data !== undefined) {
        try {
          found.push(...describe(parseSettings(data, WORKSPACE_SETTINGS)));
        } catch (err) {
          found.push(...describeRaw(data));
          if (enabled) snapshot.settingsError = (err as Error).message;
        }
        if (enabled) snapshot.settings = data;
      }
    }
    const agentsDir = await openDir(dir.path, 'agents');
    if (agentsDir) {
      try {
        const names = (await readdir(agentsDir.path)).filter((n) => n.endsWith('.md')).sort();
        const agents: Array<{ name: string; text: string }> = [];
        for (const entry of names.slice(0, MAX_AGENT_FILES)) {
          let body: string | undefined;
          try {
            body = await readRegular(agentsDir.path, entry, `.agentrun/agents/${entry}`);
          } catch {
            continue; // a link, a FIFO, a huge file: not an agent
          }
          if (body !== undefined) agents.push({ name: entry.slice(0, -3), text: body });
        }
        if (agents.length) found.push(`agents (${agents.map((a) => a.name).join(', ')})`);
        if (enabled) snapshot.agents = agents;
      } finally {
        await agentsDir.fh.close();
      }
    }
  } finally {
    await dir.fh.close();
  }
  return snapshot;
}

/** The repository's settings a run may use: none unless extensions were on when read; a broken file is an error. */
export function repositorySettings(snapshot: RepositorySnapshot): Settings | undefined {
  if (!snapshot.enabled) return undefined;
  if (snapshot.settingsError) {
    const err = new SettingsError(WORKSPACE_SETTINGS, '', '');
    err.message = snapshot.settingsError;
    throw err;
  }
  if (snapshot.settings === undefined) return undefined;
  return parseSettings(snapshot.settings, WORKSPACE_SETTINGS);
}

/** The notice for the stream and `inspect`, when the repository defines anything. */
export function repositoryNotice(snapshot: RepositorySnapshot): string | undefined {
  if (!snapshot.found.length) return undefined;
  const what = snapshot.found.join(', ');
  return snapshot.enabled
    ? `repository extensions are on: ${what} from .agentrun/ were read once, from the starting tree, and are used for this whole run; changes to .agentrun/ made during the run have no effect until the next run`
    : `repository extensions are off on this worker: ignored ${what} from .agentrun/ (the operator turns them on with --repository-extensions on or AGENTRUN_REPOSITORY_EXTENSIONS=on)`;
}
