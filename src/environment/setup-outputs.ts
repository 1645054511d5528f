// What setup created besides the directories its cache keeps (`build/`, `*.egg-info`,
// `.pytest_cache`, a generated file): the workspace's files that are not ignored, listed before
// and after setup through the private checkpoint repository (never git on the workspace's own
// .git), and the difference recorded with setup's event. The result commit leaves them out:
// whole directories setup created, and files it created in existing directories unless their
// content changed after setup (the agent's edit of a generated file is the agent's).
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { openRepo } from '../workspace/checkpoint.js';
import { git } from '../workspace/git.js';
import type { SetupCreated } from '../workspace/setup-created.js';

/** More than this many created files in existing directories: the rest are not recorded (a very unusual setup). */
const MAX_FILES = 5000;

async function withEmptyIndex<T>(gitDir: string, fn: (env: NodeJS.ProcessEnv) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(gitDir, 'agentrun-setup-index-'));
  try {
    return await fn({ GIT_INDEX_FILE: join(dir, 'index') });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const under = (path: string, dirs: string[]) => dirs.some((d) => path === d || path.startsWith(`${d}/`));

/**
 * The workspace's files that its ignore rules do not ignore, tracked or not (an empty index makes
 * every one "other"), outside `skip` (the cached directories, excluded anyway).
 */
async function visibleFiles(home: string, workspace: string, skip: string[]): Promise<string[]> {
  const repo = await openRepo(workspace, home);
  const clean = skip.map((d) => d.replace(/^\.\/|\/+$/g, '')).filter((d) => d && !d.split('/').includes('..'));
  return withEmptyIndex(repo.gitDir, async (env) => {
    const out = await git(['ls-files', '-z', '--others', '--exclude-standard', '--', '.', ...clean.map((d) => `:(exclude,literal)${d}`)], {
      gitDir: repo.gitDir,
      workTree: workspace,
      env,
    });
    return out.split('\0').filter((p) => p && !under(p, clean));
  });
}

/** What setup created: the files visible after it that were not before, as directories new as a whole and single files. */
async function setupCreated(home: string, workspace: string, before: string[], skip: string[]): Promise<SetupCreated> {
  const had = new Set(before);
  const hadDirs = new Set<string>();
  for (const p of before) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) hadDirs.add(parts.slice(0, i).join('/'));
  }
  const dirs = new Set<string>();
  const files: string[] = [];
  for (const p of await visibleFiles(home, workspace, skip)) {
    if (had.has(p)) continue;
    const parts = p.replace(/\/$/, '').split('/');
    // The outermost directory of the path that did not exist before setup, if any.
    let newDir: string | undefined;
    for (let i = 1; i < parts.length && !newDir; i++) {
      const d = parts.slice(0, i).join('/');
      if (!hadDirs.has(d)) newDir = d;
    }
    if (newDir) dirs.add(newDir);
    else if (p.endsWith('/'))
      dirs.add(p.replace(/\/$/, '')); // a nested repository git lists as one entry
    else files.push(p);
  }
  const kept = files.slice(0, MAX_FILES);
  if (!kept.length) return { dirs: [...dirs].sort(), files: [] };
  // Their blob ids as a checkpoint would store them.
  const repo = await openRepo(workspace, home);
  const staged = await withEmptyIndex(repo.gitDir, async (env) => {
    const run = { gitDir: repo.gitDir, workTree: workspace, env };
    await git(['add', '-f', '--pathspec-from-file=-', '--pathspec-file-nul'], { ...run, env: { ...env, GIT_LITERAL_PATHSPECS: '1' }, input: kept.join('\0') });
    return git(['ls-files', '-s', '-z'], run);
  });
  const blobs = staged
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      return { path: line.slice(tab + 1), blob: line.slice(0, tab).split(' ')[1]! };
    });
  return { dirs: [...dirs].sort(), files: blobs };
}

/**
 * Around setup: what is visible before it, then (after it) what it created. Never fails setup: a
 * listing that fails records nothing (the cached directories are still left out).
 */
export async function watchSetupOutputs(
  home: string,
  workspace: string,
  skip: string[],
  warn: (err: unknown) => void,
): Promise<{ created(moreSkip: string[]): Promise<SetupCreated | undefined> }> {
  const before = await visibleFiles(home, workspace, skip).catch((err: unknown) => (warn(err), undefined));
  return {
    created: async (moreSkip) =>
      before === undefined ? undefined : setupCreated(home, workspace, before, [...skip, ...moreSkip]).catch((err: unknown) => (warn(err), undefined)),
  };
}
