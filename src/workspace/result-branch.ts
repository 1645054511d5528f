// The result of a repository job is a branch: the final workspace state as one commit on top of
// the job's base, named after the task and the conversation, pushed with --push. Made and pushed
// from the workspace's private repository: nothing of the workspace's own .git takes part.
import { openRepo, snapshotTree } from './checkpoint.js';
import { git, GitError, tryGit } from './git.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointRemote } from './offhost.js';
import { resultRef } from './routing.js';
import { unchangedSetupPaths, type SetupCreated } from './setup-created.js';

export interface Diffstat {
  files: number;
  insertions: number;
  deletions: number;
  /** `git diff --stat` output, bounded. */
  text: string;
}

export interface BranchResult {
  branch: string;
  commit: string;
  base: string;
  diffstat: Diffstat;
  pushed: boolean;
  /** Where the commit is kept on the remote even if the branch push is rejected. */
  keptAt?: string;
  /** The repository's check (`--verify`) passed on this state; false: the branch is unverified. */
  verified?: boolean;
  /** The job changed nothing: no commit was made and nothing pushed (`commit` is the base). */
  empty?: true;
}

/** The last verify run of the job, as written in the commit message. */
export interface VerifyNote {
  command: string;
  passed: boolean;
  exitCode: number | null;
  attempts: number;
}

/** A push that git refused (non-fast-forward, no permission): the job fails with git's words. */
export class PushRejectedError extends Error {}

/** What changed between two commits of the private repository `gitDir` (no diff driver or textconv runs). */
async function diffstat(gitDir: string, from: string, to: string): Promise<Diffstat> {
  const numstat = await git(['diff', '--no-ext-diff', '--no-textconv', '--numstat', from, to], { gitDir });
  let insertions = 0;
  let deletions = 0;
  const lines = numstat ? numstat.split('\n') : [];
  for (const l of lines) {
    const [a, d] = l.split('\t');
    insertions += Number(a) || 0;
    deletions += Number(d) || 0;
  }
  const text = (await git(['diff', '--no-ext-diff', '--no-textconv', '--stat=100', from, to], { gitDir })).slice(0, 8000);
  return { files: lines.length, insertions, deletions, text };
}

/** The commit's subject: the task's first line, cut at a word (with "…") when longer than 72 characters. */
export function commitSubject(task: string): string {
  const line = (task.split('\n').find((l) => l.trim()) ?? '').trim();
  if (line.length <= 72) return line;
  const cut = line.slice(0, 71);
  const space = cut.lastIndexOf(' ');
  // One long word (a URL, a path): cut it rather than leave almost nothing.
  return `${(space >= 40 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function message(task: string, conversationId: string, verify?: VerifyNote): string {
  const first = commitSubject(task);
  const checked = verify
    ? verify.passed
      ? `\n\nVerified: \`${verify.command}\` passed (attempt ${verify.attempts})`
      : `\n\nUNVERIFIED: \`${verify.command}\` failed (exit ${verify.exitCode ?? 'none'}) after ${verify.attempts} attempts`
    : '';
  return `${first}${verify && !verify.passed ? ' [unverified]' : ''}\n\nagentrun conversation ${conversationId}${checked}\n\nTask:\n${task.trim().slice(0, 4000)}`;
}

/**
 * `tree` with what lies under `paths` as it was in `base`: setup's outputs (the cached
 * directories) never reach the branch, whether the repository ignores them or not, while what the
 * repository itself tracks there stays.
 */
async function withoutSetupOutputs(gitDir: string, tree: string, base: string, paths: string[]): Promise<string> {
  const clean = paths.map((p) => p.replace(/^\.\/|\/+$/g, '')).filter((p) => p && !p.startsWith('/') && !p.split('/').includes('..'));
  if (!clean.length) return tree;
  const dir = await mkdtemp(join(tmpdir(), 'agentrun-result-index-'));
  const env = { GIT_INDEX_FILE: join(dir, 'index') };
  try {
    await git(['read-tree', tree], { gitDir, env });
    const entries = (await git(['ls-tree', '-r', '-z', '--name-only', tree, '--', ...clean], { gitDir, env })).split('\0').filter(Boolean);
    if (!entries.length) return tree;
    await git(['update-index', '-z', '--index-info'], { gitDir, env, input: entries.map((e) => `0 ${'0'.repeat(40)}\t${e}\0`).join('') });
    const kept = await git(['ls-tree', '-r', '-z', base, '--', ...clean], { gitDir, env });
    if (kept) await git(['update-index', '-z', '--index-info'], { gitDir, env, input: kept.endsWith('\0') ? kept : `${kept}\0` });
    return await git(['write-tree'], { gitDir, env });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Of what setup created, the paths to leave out of `tree`: its directories, and its files whose blob in `tree` is still setup's. */
async function createdBySetup(gitDir: string, tree: string, created: SetupCreated[]): Promise<string[]> {
  const files = created.flatMap((c) => c.files.map((f) => f.path));
  const entries = new Map<string, string>();
  if (files.length) {
    const listed = await git(['ls-tree', '-r', '-z', tree, '--', ...files], { gitDir });
    const wanted = new Set(files);
    for (const line of listed.split('\0')) {
      const tab = line.indexOf('\t');
      const path = line.slice(tab + 1);
      if (tab > 0 && wanted.has(path)) entries.set(path, line.slice(0, tab).split(' ')[2]!);
    }
  }
  return unchangedSetupPaths(created, entries);
}

/** Commit the workspace on `branch` (safe to run twice: an equal commit is reused) and push it. */
export async function commitResultBranch(opts: {
  dir: string;
  home: string;
  conversationId: string;
  task: string;
  base: string;
  branch: string;
  push: boolean;
  /** Commit and push even when the tree is the base's. */
  pushEmpty?: boolean;
  /** Setup's outputs (the directories its cache keeps), left out of the commit. */
  setupOutputs?: string[];
  /** What else setup created (src/environment/setup-outputs.ts): its directories, and its files the agent left as they were, left out too. */
  setupCreated?: SetupCreated[];
  verify?: VerifyNote;
}): Promise<BranchResult> {
  const { dir, base, branch } = opts;
  if ((await tryGit(['check-ref-format', '--branch', branch])) === undefined) throw new PushRejectedError(`"${branch}" is not a valid branch name`);
  const repo = await openRepo(dir, opts.home);
  const { gitDir } = repo;
  const snapshot = await snapshotTree(repo, base);
  const tree = await withoutSetupOutputs(gitDir, snapshot, base, [
    ...(opts.setupOutputs ?? []),
    ...(await createdBySetup(gitDir, snapshot, opts.setupCreated ?? [])),
  ]);
  if (!opts.pushEmpty && (await git(['rev-parse', `${base}^{tree}`], { gitDir })) === tree)
    return { branch, commit: base, base, diffstat: { files: 0, insertions: 0, deletions: 0, text: '' }, pushed: false, empty: true };
  const existing = await tryGit(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { gitDir });
  let commit: string;
  // Reused only when it is this conversation's own (a retry): another's commit of the same tree names another conversation.
  if (
    existing &&
    (await git(['rev-parse', `${existing}^{tree}`], { gitDir })) === tree &&
    (await tryGit(['rev-parse', `${existing}^`], { gitDir })) === base &&
    (await git(['log', '-1', '--format=%B', existing], { gitDir })).includes(`agentrun conversation ${opts.conversationId}\n`)
  )
    commit = existing;
  else {
    commit = await git(['commit-tree', tree, '-p', base, '-m', message(opts.task, opts.conversationId, opts.verify)], { gitDir });
    await git(['update-ref', `refs/heads/${branch}`, commit], { gitDir });
  }
  const result: BranchResult = {
    branch,
    commit,
    base,
    diffstat: await diffstat(gitDir, base, commit),
    pushed: false,
    ...(opts.verify ? { verified: opts.verify.passed } : {}),
  };
  if (!opts.push) return result;
  const remote = checkpointRemote() ?? 'origin';
  await git(['push', '--quiet', '--no-verify', remote, `+${commit}:${resultRef(opts.conversationId)}`], { gitDir, kind: 'remote' });
  result.keptAt = `${resultRef(opts.conversationId)} on ${remote}`;
  try {
    await git(['push', '--quiet', '--no-verify', 'origin', `${commit}:refs/heads/${branch}`], { gitDir, kind: 'remote' });
  } catch (err) {
    if (err instanceof GitError)
      throw new PushRejectedError(`push of ${branch} was rejected: ${err.message}; the commit ${commit.slice(0, 12)} is kept at ${result.keptAt}`);
    throw err;
  }
  result.pushed = true;
  return result;
}
