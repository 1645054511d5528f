// Repository jobs: clone --repo at --ref into this host's workspaces folder, or re-materialise a
// workspace from an off-host checkpoint (failover, fork). Both are safe to run twice.
import { constants } from 'node:fs';
import { access, mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { checkpointRef } from './checkpoint.js';
import { git, GitError, tryGit } from './git.js';

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

async function freshClone(repo: string, dir: string): Promise<void> {
  await ensureWritable(dirname(dir));
  await rm(dir, { recursive: true, force: true });
  try {
    await git(dirname(dir), ['clone', '--quiet', '--no-checkout', repo, dir]);
  } catch (err) {
    if (err instanceof GitError) throw new WorkspaceInputError(`cannot clone ${repo}: ${err.message}`);
    throw err;
  }
}

/** The commit `ref` names in the clone: a remote branch, a tag or a sha; HEAD when absent. */
async function resolveRef(dir: string, repo: string, ref: string | undefined): Promise<string> {
  const candidates = ref ? [`refs/remotes/origin/${ref}`, `refs/tags/${ref}`, ref] : ['HEAD', 'refs/remotes/origin/HEAD'];
  for (const c of candidates) {
    const commit = await tryGit(dir, ['rev-parse', '--verify', '--quiet', `${c}^{commit}`]);
    if (commit) return commit;
  }
  if (!ref) throw new WorkspaceInputError(`${repo} has no default branch to check out: give --ref`);
  throw new WorkspaceInputError(`ref "${ref}" does not exist in ${repo}: give a branch, tag or commit of that repository`);
}

/** Clone `repo` into `dir` and check out `ref`; returns the checked-out commit (the job's base). */
export async function cloneRepository(repo: string, ref: string | undefined, dir: string): Promise<{ base: string }> {
  await freshClone(repo, dir);
  const base = await resolveRef(dir, repo, ref);
  await git(dir, ['checkout', '--quiet', '--detach', base]);
  return { base };
}

/**
 * Re-create a workspace on this host from the checkpoint `commit` kept at `remoteRef` on
 * `checkpointRemote` (the job's remote unless a checkpoint remote is configured). The local
 * checkpoint ref continues from it, so the next turn's checkpoint chains on.
 */
export async function materializeCheckpoint(opts: {
  repo: string;
  checkpointRemote?: string;
  remoteRef: string;
  commit: string;
  dir: string;
  conversationId: string;
}): Promise<void> {
  await freshClone(opts.repo, opts.dir);
  const remote = opts.checkpointRemote ?? 'origin';
  try {
    await git(opts.dir, ['fetch', '--quiet', remote, opts.remoteRef]);
  } catch (err) {
    throw new Error(`cannot fetch checkpoint ${opts.remoteRef} from ${remote}: ${(err as Error).message}`);
  }
  const fetched = await git(opts.dir, ['rev-parse', 'FETCH_HEAD^{commit}']);
  if (fetched !== opts.commit)
    throw new WorkspaceInputError(`checkpoint ${opts.remoteRef} on ${remote} is ${fetched}, expected ${opts.commit}: the ref was moved by someone else`);
  await git(opts.dir, ['update-ref', checkpointRef(opts.conversationId), opts.commit]);
  await git(opts.dir, ['checkout', '--quiet', '--detach', opts.commit]);
}

/** The commit a job started from: the first commit below `commit` that is not one of its checkpoints. */
export async function jobBase(dir: string, commit: string, conversationId: string): Promise<string> {
  const log = await git(dir, ['log', '--first-parent', '--format=%H%x09%s', commit]);
  const marker = `agentrun ${conversationId} turn `;
  for (const line of log.split('\n')) {
    const [hash, subject] = line.split('\t') as [string, string];
    if (!subject?.startsWith(marker)) return hash;
  }
  throw new WorkspaceInputError(`checkpoint ${commit} of ${conversationId} has no base commit below it`);
}
