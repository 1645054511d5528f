// A workspace must not expose the worker: the agent reads and (under workspace-write) writes all
// of it, so a workspace that is, or contains, the worker's home (keys, shell start-up files,
// git config), AGENTRUN_HOME (the embedded database, checkpoints) or `/` hands those over. Nor may
// a workspace lie inside the worker's own directories: AGENTRUN_HOME (another conversation's
// private checkpoint repository, whose configuration git reads at its next checkpoint), the
// dependency cache (the next job's files) or the workspaces directory (another conversation's
// workspace), except the directory placed there for this very conversation. Used by the CLI before
// it starts a conversation and by the worker where it first uses a workspace (its home may differ
// from the CLI's).
import { realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cacheRoot } from '../runtime/home.js';
import { workspacesDir } from './host.js';

export class UnsafeWorkspaceError extends Error {}

export interface WorkerPlaces {
  /** The worker's home directories: os.homedir() and $HOME (they may differ). */
  home: string[];
  agentrunHome: string;
  /** The worker's own directories a workspace may not lie inside, with what each is. */
  own?: [string, string][];
  /** The one directory inside them placed by the worker for this conversation (a clone, a rebuilt workspace, a parent's). */
  placed?: string[];
}

/** This process's own places: os.homedir(), $HOME, AGENTRUN_HOME, the cache and workspaces directories. */
export function workerPlaces(agentrunHome: string, placed: string[] = []): WorkerPlaces {
  const home = [os.homedir(), process.env.HOME?.trim()].filter((h): h is string => !!h && path.isAbsolute(h));
  const own: [string, string][] = [
    [agentrunHome, 'AGENTRUN_HOME'],
    [cacheRoot(agentrunHome), 'the dependency cache directory (AGENTRUN_CACHE_DIR)'],
    [workspacesDir(agentrunHome), 'the workspaces directory (AGENTRUN_WORKSPACES)'],
  ];
  return { home, agentrunHome, own, placed };
}

/** The real path; for a path that does not exist (yet), its nearest existing parent's real path plus the rest. */
export function real(p: string): string {
  const abs = path.resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const parent = path.dirname(abs);
    return parent === abs ? abs : path.join(real(parent), path.basename(abs));
  }
}

/** Whether `p` is `dir` or lies beneath it (both real paths). */
export function contains(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..' + path.sep) && rel !== '..' && !path.isAbsolute(rel));
}

/**
 * Throw UnsafeWorkspaceError (one line) when `dir` is, or contains, `/`, a home directory or
 * AGENTRUN_HOME. Real paths on both sides: symlinks and `..` cannot dodge it.
 */
export function assertWorkspaceSafe(dir: string, places: WorkerPlaces): void {
  const ws = real(dir);
  const shown = ws === path.resolve(dir) ? ws : `${dir} (${ws})`;
  if (ws === path.parse(ws).root)
    throw new UnsafeWorkspaceError(`workspace ${shown} is the root directory: the agent would reach the whole machine; give the project's own directory`);
  const protectedPlaces: [string, string][] = [...places.home.map((h): [string, string] => [h, 'the home directory']), [places.agentrunHome, 'AGENTRUN_HOME']];
  for (const [place, what] of protectedPlaces) {
    const p = real(place);
    if (!contains(ws, p)) continue;
    const how = p === ws ? 'is' : 'contains';
    throw new UnsafeWorkspaceError(
      `workspace ${shown} ${how} ${what} (${p}): the agent would reach the keys and settings there; give the project's own directory`,
    );
  }
  const placed = (places.placed ?? []).map(real);
  if (placed.includes(ws)) return;
  for (const [place, what] of places.own ?? []) {
    const p = real(place);
    if (!contains(p, ws)) continue;
    throw new UnsafeWorkspaceError(
      `workspace ${shown} ${ws === p ? 'is' : 'is inside'} ${what} (${p}), which holds the worker's own files and other conversations' workspaces; give the project's own directory`,
    );
  }
}
