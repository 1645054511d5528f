// Where a frozen eval case starts (src/store/evals.ts): turn 0's checkpoint read out of a
// workspace's private repository, kept as a git bundle (a local workspace) or as the commit its
// clone stood at (a repository job); and the files of such a bundle written into a new directory.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bundleCheckpoint } from './bundle.js';
import { checkoutFiles, openRepo, tryGit } from './checkpoint.js';
import { git } from './git.js';
import { unbundleInto } from './unbundle.js';

/**
 * Turn 0's checkpoint `commit` of `conversationId`: its parent (a repository job's clone stands on
 * it: the commit its ref named) and, for a local workspace (turn 0 is a root commit), the bundle of
 * its tree. Throws when the workspace's private repository no longer holds the commit (collected).
 */
export async function freezeStart(
  workspace: string,
  conversationId: string,
  commit: string,
  home: string,
  wantBundle: boolean,
): Promise<{ parent?: string; bundle?: Buffer }> {
  const repo = await openRepo(workspace, home);
  if (!(await tryGit(repo, ['rev-parse', '--verify', '-q', `${commit}^{commit}`])))
    throw new Error(`turn 0's checkpoint ${commit.slice(0, 12)} is no longer on this host (the workspace was collected)`);
  const parent = await tryGit(repo, ['rev-parse', '--verify', '-q', `${commit}^`]);
  const bundle = wantBundle ? await bundleCheckpoint(workspace, conversationId, commit, undefined, home) : undefined;
  return { ...(parent ? { parent } : {}), ...(bundle ? { bundle } : {}) };
}

/** Write the files of `commit`, held by `bundle`, into `dir` (new or empty); nothing of git is left there. */
export async function thawStart(bundle: Buffer, commit: string, dir: string, scratch: string): Promise<void> {
  await mkdir(scratch, { recursive: true });
  const gitDir = await mkdtemp(join(scratch, 'start-'));
  try {
    await git(['init', '--bare', '--quiet', gitDir]);
    await unbundleInto(gitDir, [bundle]);
    await mkdir(dir, { recursive: true });
    await checkoutFiles({ gitDir, workspace: dir }, commit, undefined, dir);
  } finally {
    await rm(gitDir, { recursive: true, force: true });
  }
}
