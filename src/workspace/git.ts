// Every git process agentrun runs on a workspace. Everything in a workspace is the agent's and
// hostile, `.git` included, so git here never reads a workspace's configuration, hooks, attribute
// drivers or alternates: checkpoints and result branches live in a private git directory outside
// the workspace (src/workspace/checkpoint.ts), the workspace is only its work tree, and every run
// gets a fixed configuration and an environment built from an allowlist, never process.env.
// docs/decisions.md ("git outside the sandbox") says why this design.
import { launch } from '../runtime/launcher.js';
import { findProgram } from '../sandbox/programs.js';

const AUTHOR = {
  GIT_AUTHOR_NAME: 'agentrun',
  GIT_AUTHOR_EMAIL: 'agentrun@localhost',
  GIT_COMMITTER_NAME: 'agentrun',
  GIT_COMMITTER_EMAIL: 'agentrun@localhost',
} as const;

/**
 * Settings that run programs, forced off on every call whatever a configuration says: hooks,
 * the file-system monitor, the ext:: transport. Filters and diff drivers need a configuration
 * entry, which only the private git directory (written by agentrun alone) could hold.
 */
const FIXED_CONFIG = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'core.untrackedCache=false', '-c', 'protocol.ext.allow=never'];

/** What a push, fetch or clone may need from the worker to reach the remote (the operator's credentials, never the agent's). */
const REMOTE_PASSTHROUGH = [
  'HOME',
  'USER',
  'SSH_AUTH_SOCK',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'GIT_SSL_NO_VERIFY',
  'GIT_CONFIG_GLOBAL',
  'XDG_CONFIG_HOME',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
] as const;

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The environment of a git run. `local` (everything on a work tree) reads no system or global
 * configuration; `remote` (clone, fetch, push, ls-remote) keeps the worker's own credential set-up
 * (its ~/.gitconfig credential helper, SSH agent, askpass): those are the operator's.
 */
function gitEnv(kind: 'local' | 'remote', extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH || DEFAULT_PATH, LC_ALL: 'C', ...AUTHOR, GIT_TERMINAL_PROMPT: '0', GIT_ATTR_NOSYSTEM: '1' };
  if (kind === 'local') Object.assign(env, { HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' });
  else for (const name of REMOTE_PASSTHROUGH) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...extra };
}

let gitProgram: string | undefined;

/** git by its absolute path, found once on the worker's own PATH (a name not found stays a name: its start fails with ENOENT). */
function gitPath(): string {
  return (gitProgram ??= findProgram('git', process.env.PATH) ?? 'git');
}

export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly stderr: string,
    readonly code?: number,
  ) {
    super(gitMessage(stderr) || `git ${args[0]} failed`);
  }
}

/** git's own explanation, without progress noise, on one line. */
function gitMessage(stderr: string): string {
  return stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^(hint:|Cloning into|remote: (Counting|Compressing|Enumerating|Total))/.test(l))
    .join(' ')
    .slice(0, 500);
}

export interface GitRun {
  /** The private git directory (GIT_DIR); absent only for a clone or an ls-remote. */
  gitDir?: string;
  /** The work tree (GIT_WORK_TREE): the workspace. */
  workTree?: string;
  /** `remote` for clone/fetch/push/ls-remote (the worker's credentials); default `local`. */
  kind?: 'local' | 'remote';
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  timeoutMs?: number;
}

/** Run git with the fixed configuration; stdout trimmed, or a GitError with git's message. */
export async function git(args: string[], run: GitRun = {}): Promise<string> {
  return (await gitBuffer(args, run)).toString('utf8').trim();
}

function gitBuffer(args: string[], run: GitRun = {}): Promise<Buffer> {
  // A work tree without its private git directory would make git find the workspace's own .git.
  if (run.workTree && !run.gitDir) throw new Error('git on a work tree needs its private git directory');
  const env = gitEnv(run.kind ?? 'local', {
    ...(run.gitDir ? { GIT_DIR: run.gitDir } : {}),
    ...(run.workTree ? { GIT_WORK_TREE: run.workTree } : {}),
    ...run.env,
  });
  // GIT_DIR is always explicit, so git discovers no repository from the working directory; pathspecs
  // are relative to it, hence the work tree when there is one.
  const cwd = run.workTree ?? '/';
  return launch({
    file: gitPath(),
    args: [...FIXED_CONFIG, ...args],
    cwd,
    env,
    input: run.input,
    timeoutMs: run.timeoutMs ?? 10 * 60_000,
    maxBuffer: 256 * 1024 * 1024,
  }).then(({ stdout, stderr, error }) => {
    if (!error) return stdout;
    if (error.code === 'ENOENT') throw new GitError(args, `git could not start: git is not installed, or ${cwd} does not exist`);
    throw new GitError(args, stderr.toString('utf8') || error.message, typeof error.code === 'number' ? error.code : undefined);
  });
}

export async function tryGit(args: string[], run: GitRun = {}): Promise<string | undefined> {
  try {
    return await git(args, run);
  } catch {
    return undefined;
  }
}

/** A URL without its user and password, for a place the agent can read. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//');
  }
}
