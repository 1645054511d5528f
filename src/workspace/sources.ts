// Where a repository job may be cloned from. Remote URLs by scheme (https, ssh, git by default)
// and, when the operator names them, by host; a path on the worker's disk (or a file:// URL) only
// beneath a directory the operator names, and never inside the worker's own places (AGENTRUN_HOME
// with its private checkpoint repositories, the dependency cache, the workspaces directory with
// other conversations' clones). Checked by the CLI before it starts a job and again by the worker
// before it clones: whoever starts a conversation may be hostile, and only the destination of a
// clone was checked before.
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { contains, real, type WorkerPlaces } from './guard.js';

export interface RepositorySources {
  /** URL schemes a remote may use (`ssh` covers `user@host:path`). */
  schemes: string[];
  /** Hosts a remote may name; undefined: any host. */
  hosts?: string[];
  /** Directories whose repositories may be cloned by path or file:// URL; none: no local source. */
  dirs: string[];
}

const DEFAULT_SCHEMES = ['https', 'ssh', 'git'];

function list(raw: string | undefined, sep: RegExp): string[] | undefined {
  const items = raw
    ?.split(sep)
    .map((s) => s.trim())
    .filter(Boolean);
  return items?.length ? items : undefined;
}

/** AGENTRUN_REPO_SCHEMES, AGENTRUN_REPO_HOSTS (comma-separated) and AGENTRUN_REPO_DIRS (`:`-separated paths). */
export function repositorySourcesFromEnv(env: NodeJS.ProcessEnv = process.env): RepositorySources {
  const hosts = list(env.AGENTRUN_REPO_HOSTS, /,/)?.map((h) => h.toLowerCase());
  return {
    schemes: (list(env.AGENTRUN_REPO_SCHEMES, /,/) ?? DEFAULT_SCHEMES).map((s) => s.toLowerCase()),
    ...(hosts ? { hosts } : {}),
    dirs: (list(env.AGENTRUN_REPO_DIRS, /:/) ?? []).filter((d) => path.isAbsolute(d)),
  };
}

type Source = { kind: 'remote'; scheme: string; host: string } | { kind: 'local'; path: string } | { kind: 'refused'; why: string };

/** What git would make of `repo`: a remote (scheme and host), a local path, or a form refused outright. */
function sourceOf(repo: string): Source {
  if (/^-/.test(repo)) return { kind: 'refused', why: "it starts with '-'" };
  if (/[\x00-\x1f\x7f]/.test(repo)) return { kind: 'refused', why: 'it holds a control character' };
  // git's `<transport>::<address>` runs a remote helper (ext:: runs a command).
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(repo)) return { kind: 'refused', why: 'remote helpers (`<transport>::<address>`) are not taken' };
  const url = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(repo);
  if (url) {
    const scheme = url[1]!.toLowerCase();
    if (scheme === 'file') {
      try {
        return { kind: 'local', path: fileURLToPath(repo) };
      } catch (err) {
        return { kind: 'refused', why: (err as Error).message };
      }
    }
    try {
      return { kind: 'remote', scheme, host: new URL(repo).hostname.toLowerCase().replace(/^\[|\]$/g, '') };
    } catch {
      return { kind: 'refused', why: 'it is not a URL git and agentrun read alike' };
    }
  }
  // scp-like `[user@]host:path`: a colon before any slash (git's own rule).
  const scp = /^(?:[^@/]+@)?(\[[^\]]+\]|[^:/]+):/.exec(repo);
  if (scp) return { kind: 'remote', scheme: 'ssh', host: scp[1]!.toLowerCase().replace(/^\[|\]$/g, '') };
  return { kind: 'local', path: repo };
}

/** The real path a local source (a path or file:// URL) names, else undefined (a remote, or a form refused). */
export function localSourcePath(repo: string): string | undefined {
  const source = sourceOf(repo);
  return source.kind === 'local' && path.isAbsolute(source.path) ? real(source.path) : undefined;
}

/**
 * Why `repo` may not be cloned here, or undefined. `places`: the worker's own directories
 * (workerPlaces), never a source whatever the allowed directories hold.
 */
export function repositorySourceRefusal(repo: string, sources: RepositorySources, places: WorkerPlaces): string | undefined {
  const source = sourceOf(repo);
  const shown = JSON.stringify(repo.length > 200 ? `${repo.slice(0, 200)}…` : repo);
  if (source.kind === 'refused') return `repository ${shown} is refused: ${source.why}`;
  if (source.kind === 'remote') {
    if (!sources.schemes.includes(source.scheme))
      return `repository ${shown} is refused: this worker clones only ${sources.schemes.join(', ')} URLs (AGENTRUN_REPO_SCHEMES)`;
    if (sources.hosts && !sources.hosts.includes(source.host))
      return `repository ${shown} is refused: host ${source.host || '(none)'} is not one this worker clones from (AGENTRUN_REPO_HOSTS: ${sources.hosts.join(', ')})`;
    return undefined;
  }
  if (!path.isAbsolute(source.path)) return `repository ${shown} is refused: a local repository is given by its absolute path`;
  // Real paths: a link beneath an allowed directory that leads elsewhere is judged by where it leads.
  const where = real(source.path);
  for (const [place, what] of places.own ?? [[places.agentrunHome, 'AGENTRUN_HOME']]) {
    const p = real(place);
    if (contains(p, where) || contains(where, p))
      return `repository ${shown} is refused: it is ${contains(p, where) ? 'inside' : 'above'} ${what} (${p}), which holds the worker's private repositories and other conversations' workspaces`;
  }
  if (!sources.dirs.some((d) => contains(real(d), where)))
    return sources.dirs.length
      ? `repository ${shown} is refused: a local repository must lie beneath a directory of AGENTRUN_REPO_DIRS (${sources.dirs.join(':')})`
      : `repository ${shown} is refused: this worker clones no local paths (its operator names the directories it may in AGENTRUN_REPO_DIRS); give a remote URL`;
  return undefined;
}
