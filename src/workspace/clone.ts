// Repository jobs: clone --repo at --ref into this host's workspaces folder, or re-materialise a
// workspace from an off-host checkpoint (failover, fork). Both are safe to run twice.
// The clone agentrun works from is private (privateGitDir, outside the workspace): checkpoints,
// the result branch and every push come from it. The workspace gets the files and a copy of the
// repository for the agent's own git commands, which agentrun never reads back.
import { constants } from 'node:fs';
import { access, mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { checkoutFiles, checkpointRef, privateGitDir } from './checkpoint.js';
import { git, GitError, redactUrl, tryGit } from './git.js';

/** Bad input that retrying cannot fix: the conversation fails with this message. */
export class WorkspaceInputError extends Error {}

async function ensureWritable(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (err) {
    throw new WorkspaceInputError(
      `the workspaces folder ${dir} is not writable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): set AGENTRUN_WORKSPACES to a writable directory`,
    );
  }
}

/** A bare clone of `repo` as the workspace's private repository (the workspace itself is emptied). */
async function freshClone(repo: string, dir: string, home: string): Promise<string> {
  await ensureWritable(dirname(dir));
  const gitDir = privateGitDir(home, dir);
  await rm(dir, { recursive: true, force: true });
  await rm(gitDir, { recursive: true, force: true });
  await mkdir(dirname(gitDir), { recursive: true, mode: 0o700 });
  try {
    await git(['clone', '--bare', '--quiet', repo, gitDir], { kind: 'remote' });
  } catch (err) {
    if (err instanceof GitError) throw new WorkspaceInputError(`cannot clone ${repo}: ${err.message}`);
    throw err;
  }
  return gitDir;
}

/** The commit `ref` names in the clone: a branch, a tag or a sha; the default branch when absent. */
async function resolveRef(gitDir: string, repo: string, ref: string | undefined): Promise<string> {
  const candidates = ref ? [`refs/heads/${ref}`, `refs/tags/${ref}`, ref] : ['HEAD'];
  for (const c of candidates) {
    const commit = await tryGit(['rev-parse', '--verify', '--quiet', `${c}^{commit}`], { gitDir });
    if (commit) return commit;
  }
  if (!ref) throw new WorkspaceInputError(`${repo} has no default branch to check out: give --ref`);
  throw new WorkspaceInputError(`ref "${ref}" does not exist in ${repo}: give a branch, tag or commit of that repository`);
}

/**
 * Lay out the workspace: the agent's own repository (a copy of the private one without hard
 * links, standing at `base`, its origin the job's remote without credentials) and the files of
 * `files` (the base, or a checkpoint after a move).
 */
async function populateWorkspace(opts: { gitDir: string; dir: string; repo: string; base: string; files: string }): Promise<void> {
  const { gitDir, dir, base } = opts;
  await mkdir(dir, { recursive: true });
  await git(['clone', '--quiet', '--no-hardlinks', '--no-checkout', gitDir, dir]);
  const agentRepo = { gitDir: join(dir, '.git'), workTree: dir };
  await git(['remote', 'set-url', 'origin', redactUrl(opts.repo)], agentRepo);
  await git(['update-ref', '--no-deref', 'HEAD', base], agentRepo);
  await git(['read-tree', base], agentRepo);
  await git(['update-ref', '--no-deref', 'HEAD', base], { gitDir });
  await checkoutFiles({ gitDir, workspace: dir }, opts.files);
}

/** Clone `repo` into `dir` and check out `ref`; returns the checked-out commit (the job's base). */
export async function cloneRepository(repo: string, ref: string | undefined, dir: string, home: string): Promise<{ base: string }> {
  const gitDir = await freshClone(repo, dir, home);
  const base = await resolveRef(gitDir, repo, ref);
  await populateWorkspace({ gitDir, dir, repo, base, files: base });
  return { base };
}

/**
 * Re-create a workspace on this host from the checkpoint `commit` kept at `remoteRef` on
 * `checkpointRemote` (the job's remote unless a checkpoint remote is configured). The local
 * checkpoint ref continues from it, so the next turn's checkpoint chains on. Returns the job's base:
 * `base` when given, else the first commit below the checkpoint that is not one of `fromConversationId`'s.
 */
export async function materializeCheckpoint(opts: {
  repo: string;
  checkpointRemote?: string;
  remoteRef: string;
  commit: string;
  dir: string;
  conversationId: string;
  fromConversationId?: string;
  base?: string;
  home: string;
}): Promise<{ base: string }> {
  const gitDir = await freshClone(opts.repo, opts.dir, opts.home);
  const remote = opts.checkpointRemote ?? 'origin';
  try {
    await git(['fetch', '--quiet', remote, opts.remoteRef], { gitDir, kind: 'remote' });
  } catch (err) {
    throw new Error(`cannot fetch checkpoint ${opts.remoteRef} from ${remote}: ${(err as Error).message}`);
  }
  const fetched = await git(['rev-parse', 'FETCH_HEAD^{commit}'], { gitDir });
  if (fetched !== opts.commit)
    throw new WorkspaceInputError(`checkpoint ${opts.remoteRef} on ${remote} is ${fetched}, expected ${opts.commit}: the ref was moved by someone else`);
  await git(['update-ref', checkpointRef(opts.conversationId), opts.commit], { gitDir });
  const base = opts.base ?? (await jobBase(gitDir, opts.commit, opts.fromConversationId ?? opts.conversationId));
  await populateWorkspace({ gitDir, dir: opts.dir, repo: opts.repo, base, files: opts.commit });
  return { base };
}

/** The commit a job started from: the first commit below `commit` that is not one of its checkpoints. */
async function jobBase(gitDir: string, commit: string, conversationId: string): Promise<string> {
  const log = await git(['log', '--first-parent', '--format=%H%x09%s', commit], { gitDir });
  const marker = `agentrun ${conversationId} turn `;
  for (const line of log.split('\n')) {
    const [hash, subject] = line.split('\t') as [string, string];
    if (!subject?.startsWith(marker)) return hash;
  }
  throw new WorkspaceInputError(`checkpoint ${commit} of ${conversationId} has no base commit below it`);
}
