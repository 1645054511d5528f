// A workspace must not expose the worker: the agent reads and (under workspace-write) writes all
// of it, so a workspace that is, or contains, the worker's home (keys, shell start-up files,
// git config), AGENTRUN_HOME (the embedded database, checkpoints) or `/` hands those over. Used
// by the CLI before it starts a conversation and by the worker where it first uses a workspace
// (its home may differ from the CLI's).
import { realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export class UnsafeWorkspaceError extends Error {}

export interface WorkerPlaces {
  /** The worker's home directories: os.homedir() and $HOME (they may differ). */
  home: string[];
  agentrunHome: string;
}

/** This process's own places: os.homedir(), $HOME and AGENTRUN_HOME. */
export function workerPlaces(agentrunHome: string): WorkerPlaces {
  const home = [os.homedir(), process.env.HOME?.trim()].filter((h): h is string => !!h && path.isAbsolute(h));
  return { home, agentrunHome };
}

/** The real path; for a path that does not exist (yet), its nearest existing parent's real path plus the rest. */
function real(p: string): string {
  const abs = path.resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const parent = path.dirname(abs);
    return parent === abs ? abs : path.join(real(parent), path.basename(abs));
  }
}

function contains(dir: string, p: string): boolean {
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
}
