// Where a conversation's workspace is: the host and directory holding it now (workspace_usage, or
// the history's placements), and where it was first placed when it moved since. The conversation
// row keeps the path it was started with. Shared by `inspect`, `list`, the SDK and the web page.

/** A placement of the workspace, from the history: the host and directory a placing step returned. */
export interface Placement {
  run: number;
  at: string;
  host: string;
  workspace: string;
}

/** Where a conversation's workspace is. */
export interface WorkspaceWhere {
  /** The directory, on `host` when a host holds it (else the path the conversation was started with). */
  dir: string;
  host?: string;
  /** A repository job: the repository it cloned. */
  repo?: string;
  /** Where it was first placed, when that was another directory or host (it moved). */
  first?: { dir: string; host?: string };
}

/**
 * The workspace's directory and host now: from workspace_usage (written by the host that holds it,
 * fenced, so a superseded host cannot put itself back), else the history's last placement; and
 * where it was first placed when that differs. The conversation row keeps the path it started with.
 */
export function workspaceOf(
  started: string,
  repo: string | undefined,
  usage: { host: string; workspace: string } | undefined,
  placements: Placement[],
): WorkspaceWhere {
  const last = placements.at(-1);
  const now = usage ? { dir: usage.workspace, host: usage.host } : last ? { dir: last.workspace, host: last.host } : { dir: started };
  // A local workspace starts where it was started; a repository job where it was first cloned.
  const firstPlaced = placements[0];
  const first = repo === undefined ? { dir: started, host: firstPlaced?.host } : firstPlaced && { dir: firstPlaced.workspace, host: firstPlaced.host };
  const moved = first && (first.dir !== now.dir || (first.host !== undefined && now.host !== undefined && first.host !== now.host));
  return {
    ...now,
    ...(repo !== undefined ? { repo } : {}),
    ...(moved ? { first: { dir: first.dir, ...(first.host !== undefined ? { host: first.host } : {}) } } : {}),
  };
}

/** One line: `/x on host B (first placed at /y on A)`. */
export function workspaceLine(w: WorkspaceWhere): string {
  const notes: string[] = [];
  if (w.repo !== undefined && w.repo !== w.dir) notes.push(`a clone of ${w.repo}`);
  if (w.first)
    notes.push(w.first.dir !== w.dir ? `first placed at ${w.first.dir}${w.first.host ? ` on ${w.first.host}` : ''}` : `first placed on ${w.first.host}`);
  return `${w.dir}${w.host ? ` on host ${w.host}` : ''}${notes.length ? ` (${notes.join('; ')})` : ''}`;
}

/** A `list` row's workspace: the directory and host holding it now, and the path it started with if it moved. */
export function summaryWhere(r: {
  /** The path it was started with (a repository job: its repository). */
  workspace?: string;
  /** The host holding it now and the directory there (workspace_usage). */
  host?: string;
  hostWorkspace?: string;
  repo?: string;
}): string {
  const usage = r.host !== undefined && r.hostWorkspace !== undefined ? { host: r.host, workspace: r.hostWorkspace } : undefined;
  const started = r.workspace ?? r.hostWorkspace;
  return started === undefined ? '' : workspaceLine(workspaceOf(started, r.repo, usage, []));
}

/** The repository a stored conversation's config names: a repository job's; undefined for a local workspace. */
export function repoOf(config: unknown): string | undefined {
  const repo = (config as { repo?: unknown } | null | undefined)?.repo;
  return typeof repo === 'string' ? repo : undefined;
}

/** A stored conversation's workspace line, as `list` shows it: from its row and its workspace_usage row (the host holding it now). */
export function storedWhere(row: { workspace: string; config: unknown }, usage: { host: string; workspace: string } | undefined): string {
  return summaryWhere({ workspace: row.workspace, host: usage?.host, hostWorkspace: usage?.workspace, repo: repoOf(row.config) });
}
