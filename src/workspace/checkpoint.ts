// Per-turn checkpoints on a private ref of the workspace's git repository. A temporary
// index file keeps the user's index and branch untouched. A workspace that is not a git
// repository gets a private git directory under AGENTRUN_HOME.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export interface Checkpoint {
  turn: number;
  commit: string;
  files: string[];
}

export interface Repo {
  env: NodeJS.ProcessEnv;
  workspace: string;
}

const AUTHOR = {
  GIT_AUTHOR_NAME: 'agentrun',
  GIT_AUTHOR_EMAIL: 'agentrun@localhost',
  GIT_COMMITTER_NAME: 'agentrun',
  GIT_COMMITTER_EMAIL: 'agentrun@localhost',
};

export function checkpointRef(conversationId: string): string {
  return `refs/agentrun/${conversationId.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

async function git(repo: Repo, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout } = await exec('git', args, { cwd: repo.workspace, env: { ...repo.env, ...extraEnv }, maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

async function tryGit(repo: Repo, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string | undefined> {
  try {
    return await git(repo, args, extraEnv);
  } catch {
    return undefined;
  }
}

async function openRepo(workspace: string, home: string): Promise<Repo> {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...AUTHOR, GIT_TERMINAL_PROMPT: '0' };
  if (existsSync(join(workspace, '.git'))) return { env: base, workspace };
  const gitDir = join(home, 'checkpoints', createHash('sha256').update(workspace).digest('hex').slice(0, 16) + '.git');
  const repo: Repo = { env: { ...base, GIT_DIR: gitDir, GIT_WORK_TREE: workspace }, workspace };
  if (!existsSync(gitDir)) {
    await mkdir(gitDir, { recursive: true });
    await exec('git', ['init', '--bare', '--quiet', gitDir]);
  }
  return repo;
}

/** Snapshot the work tree into a tree object via a temporary index (honours .gitignore). */
export async function snapshotTree(repo: Repo, startFrom: string | undefined): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrun-index-'));
  const index = { GIT_INDEX_FILE: join(dir, 'index') };
  try {
    if (startFrom) await git(repo, ['read-tree', startFrom], index);
    await git(repo, ['add', '-A', '--', '.'], index);
    return await git(repo, ['write-tree'], index);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Snapshot through the conversation's own index, kept in the git directory between turns: git
 * then re-hashes only files whose stat changed, so a checkpoint of a large repository costs about
 * what the turn changed. The index is trusted only when it holds `startFrom`'s tree.
 */
async function snapshotIncremental(repo: Repo, conversationId: string, startFrom: CommitInfo | undefined): Promise<{ tree: string; files: string[] }> {
  const gitDir = await gitDirOf(repo);
  await mkdir(join(gitDir, 'agentrun'), { recursive: true });
  const indexFile = join(gitDir, 'agentrun', `${conversationId.replace(/[^A-Za-z0-9._-]/g, '_')}.index`);
  const index = { GIT_INDEX_FILE: indexFile };
  const syncedTo = await readFile(`${indexFile}.tree`, 'utf8').catch(() => undefined);
  if (!existsSync(indexFile) || syncedTo !== startFrom?.tree) {
    await rm(indexFile, { force: true });
    if (startFrom) await git(repo, ['read-tree', startFrom.commit], index);
  }
  // --verbose names every path whose content changed against the index, i.e. against `startFrom`:
  // the checkpoint's file list without a diff afterwards.
  const added = await git(repo, ['add', '-A', '--verbose', '--', '.'], index);
  const tree = await git(repo, ['write-tree'], index);
  await writeFile(`${indexFile}.tree`, tree);
  const files = added
    ? added
        .split('\n')
        .map((l) => /^(?:add|remove) '(.*)'$/.exec(l)?.[1])
        .filter((f): f is string => f !== undefined)
    : [];
  return { tree, files };
}

async function resolveCommit(repo: Repo, rev: string): Promise<string | undefined> {
  return tryGit(repo, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]);
}

interface CommitInfo {
  commit: string;
  tree: string;
  subject: string;
}

/**
 * A commit's hash, tree and subject in one git call; undefined when `rev` names no commit. A
 * checkpoint's cost is mostly git processes started (each a few ms, tens under load), so it
 * starts as few as it can.
 */
async function commitInfo(repo: Repo, rev: string): Promise<CommitInfo | undefined> {
  const out = await tryGit(repo, ['log', '-1', '--no-walk', '--no-show-signature', '--format=%H%x09%T%x09%s', rev, '--']);
  if (!out) return undefined;
  const [commit, tree, ...subject] = out.split('\t');
  return { commit: commit!, tree: tree!, subject: subject.join('\t') };
}

/** The repository's git directory, asked of git once per process. */
const gitDirs = new Map<string, string>();
async function gitDirOf(repo: Repo): Promise<string> {
  const key = repo.env.GIT_DIR ?? repo.workspace;
  let dir = gitDirs.get(key);
  if (!dir) {
    dir = await git(repo, ['rev-parse', '--absolute-git-dir']);
    gitDirs.set(key, dir);
  }
  return dir;
}

function marker(conversationId: string, turn: number): string {
  return `agentrun ${conversationId} turn ${turn}`;
}

/**
 * Commit the workspace state for `turn` if it changed since the last checkpoint.
 * Safe to run twice: a checkpoint already made for this turn is returned as it is.
 */
export async function createCheckpoint(workspace: string, conversationId: string, turn: number, home: string): Promise<Checkpoint | null> {
  const repo = await openRepo(workspace, home);
  const ref = checkpointRef(conversationId);
  let head = await commitInfo(repo, ref);
  if (head?.subject === marker(conversationId, turn)) {
    // Already made for this turn (a retry, or an earlier call of the same turn): keep it if the
    // files are the same, else replace it by a snapshot of now on the same parent.
    const again = await snapshotTree(repo, head.commit);
    if (head.tree === again) return { turn, commit: head.commit, files: await changedFiles(repo, head.commit) };
    head = await commitInfo(repo, `${head.commit}^`);
  }
  const parent = head ?? (await commitInfo(repo, 'HEAD'));
  const { tree, files } = await snapshotIncremental(repo, conversationId, parent);
  if (parent?.tree === tree) {
    if (head) return null;
    // First checkpoint and nothing changed since HEAD: still anchor the ref so rollback to turn 0 works.
  }
  const commit = await git(repo, ['commit-tree', tree, ...(parent ? ['-p', parent.commit] : []), '-m', marker(conversationId, turn)]);
  await git(repo, ['update-ref', ref, commit]);
  // Without a parent every file is new (--verbose listed them all too).
  return { turn, commit, files: files.sort() };
}

async function changedFiles(repo: Repo, commit: string): Promise<string[]> {
  const out = await git(repo, ['diff-tree', '--no-commit-id', '--name-only', '-r', '--root', commit]);
  return out ? out.split('\n') : [];
}

/** The patch a checkpoint commit introduced (for `inspect`). */
export async function checkpointDiff(workspace: string, commit: string, home: string, maxBytes = 200_000): Promise<string> {
  const repo = await openRepo(workspace, home);
  const out = await git(repo, ['show', '--format=', '--stat', '--patch', commit]);
  return out.length > maxBytes ? out.slice(0, maxBytes) + `\n… (${out.length - maxBytes} more bytes)` : out;
}

export interface RestoreResult {
  restored: string[];
  removed: string[];
  /** The workspace just before the restore (tracked, untracked, and edits made outside the agent): rolling back to it undoes the restore. */
  saved?: string;
  /** Ignored files: checkpoints do not hold them, so they stay as they are. */
  notRestored: string[];
}

/**
 * Save the workspace as it is now (a commit on the conversation's checkpoint ref, so it is kept),
 * then restore the files of `commit`: changed files are rewritten, files added since are removed.
 * Safe to run twice: the second run saves the restored state (nothing to restore) and returns.
 */
export async function restoreCheckpoint(
  workspace: string,
  commit: string,
  home: string,
  save?: { conversationId: string; key: string },
): Promise<RestoreResult> {
  const repo = await openRepo(workspace, home);
  let saved: string | undefined;
  if (save) {
    const ref = checkpointRef(save.conversationId);
    const head = await resolveCommit(repo, ref);
    const subject = `agentrun ${save.conversationId} saved before rollback ${save.key}`;
    if (head && (await git(repo, ['log', '-1', '--format=%s', head])) === subject)
      saved = head; // a retry: keep the first save
    else {
      const parent = head ?? (await resolveCommit(repo, 'HEAD'));
      const tree = await snapshotTree(repo, parent);
      saved = await git(repo, ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', subject]);
      await git(repo, ['update-ref', ref, saved]);
    }
  }
  const ignored = await git(repo, ['ls-files', '--others', '--ignored', '--exclude-standard', '--directory']);
  const notRestored = ignored ? ignored.split('\n') : [];
  const target = await git(repo, ['rev-parse', `${commit}^{tree}`]);
  const current = await snapshotTree(repo, commit);
  const diff = await git(repo, ['diff-tree', '-r', '--name-status', target, current]);
  const restored: string[] = [];
  const removed: string[] = [];
  for (const line of diff ? diff.split('\n') : []) {
    const [status, file] = line.split('\t') as [string, string];
    if (status === 'A') {
      await unlink(join(workspace, file)).catch(() => {});
      removed.push(file);
    } else restored.push(file);
  }
  if (restored.length) {
    const dir = await mkdtemp(join(tmpdir(), 'agentrun-index-'));
    const index = { GIT_INDEX_FILE: join(dir, 'index') };
    try {
      await git(repo, ['read-tree', commit], index);
      await git(repo, ['checkout-index', '-f', '--', ...restored], index);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return { restored, removed, saved, notRestored };
}

/** True when `commit` is a state this conversation saved or checkpointed (on its checkpoint ref). */
export async function isConversationCommit(workspace: string, conversationId: string, commit: string, home: string): Promise<boolean> {
  const repo = await openRepo(workspace, home);
  const head = await resolveCommit(repo, checkpointRef(conversationId));
  const target = await resolveCommit(repo, commit);
  if (!head || !target) return false;
  return (await tryGit(repo, ['merge-base', '--is-ancestor', target, head])) !== undefined;
}

/**
 * Write the files of checkpoint `commit` (of `conversationId` in `workspace`) into `dir` (new or
 * empty), leaving the workspace alone. A git workspace gives a clone whose branch stands where the
 * checkpoint started from, with no remote (nothing in the copy can push into the original); else
 * plain files. Ignored files are not in checkpoints, so they are not copied.
 */
export async function copyCheckpoint(workspace: string, conversationId: string, commit: string, home: string, dir: string): Promise<void> {
  const repo = await openRepo(workspace, home);
  await mkdir(dir, { recursive: true });
  if (!repo.env.GIT_DIR) {
    const copy: Repo = { env: repo.env, workspace: dir };
    await git(copy, ['clone', '--quiet', '--no-checkout', workspace, '.']);
    // The checkpoint is on a private ref a clone does not take; its parent is the commit the run started from.
    const ref = checkpointRef(conversationId);
    await git(copy, ['fetch', '--quiet', workspace, `+${ref}:${ref}`]);
    const parent = await resolveCommit(copy, `${commit}^`);
    if (parent) await git(copy, ['reset', '--quiet', parent]);
    await git(copy, ['remote', 'remove', 'origin']);
  }
  const tmp = await mkdtemp(join(tmpdir(), 'agentrun-index-'));
  const index = { GIT_INDEX_FILE: join(tmp, 'index') };
  try {
    await git(repo, ['read-tree', commit], index);
    await git(repo, ['checkout-index', '-a', '-f', `--prefix=${dir.endsWith('/') ? dir : dir + '/'}`], index);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * A git bundle of checkpoint `commit` holding what `since` (the previous bundle's commit) does not
 * reach, so each turn ships only its own change. Without `since`, the whole history below `commit`.
 */
export async function bundleCheckpoint(workspace: string, conversationId: string, commit: string, since: string | undefined, home: string): Promise<Buffer> {
  const repo = await openRepo(workspace, home);
  const dir = await mkdtemp(join(tmpdir(), 'agentrun-bundle-'));
  const file = join(dir, 'checkpoint.bundle');
  try {
    // A bundle carries refs, not bare commits. The checkpoint ref names `commit` right after the
    // checkpoint: bundle it in one git call, and check the bundle's header says so.
    const direct = await bundleRef(repo, file, checkpointRef(conversationId), since);
    if (direct?.commit === commit) return direct.bundle;
    // The ref has moved on, or `since` is not here: a short-lived ref names the commit.
    const ref = `refs/agentrun-bundle/${conversationId.replace(/[^A-Za-z0-9._-]/g, '_')}`;
    await git(repo, ['update-ref', ref, commit]);
    try {
      const base = since ? await resolveCommit(repo, since) : undefined;
      await git(repo, ['bundle', 'create', '--quiet', file, ref, ...(base ? [`^${base}`] : [])]);
      return await readFile(file);
    } finally {
      await tryGit(repo, ['update-ref', '-d', ref]);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Bundle `ref` (without what `since` reaches); the commit the bundle's header gives it, or undefined when git refused. */
async function bundleRef(repo: Repo, file: string, ref: string, since: string | undefined): Promise<{ commit: string; bundle: Buffer } | undefined> {
  if ((await tryGit(repo, ['bundle', 'create', '--quiet', file, ref, ...(since ? [`^${since}`] : [])])) === undefined) return undefined;
  const bundle = await readFile(file);
  // The header lists each ref as "<commit> <ref>" before a blank line and the pack.
  const header = bundle.subarray(0, Math.min(bundle.length, 8192)).toString('latin1');
  const commit = header
    .split('\n')
    .find((l) => l.endsWith(` ${ref}`))
    ?.split(' ')[0];
  return commit ? { commit, bundle } : undefined;
}

/**
 * Re-create a workspace in `dir` from a conversation's bundles (oldest first) at checkpoint
 * `commit`: a fresh repository with every checkpoint, its checkpoint ref at `commit` (the next
 * turn's checkpoint chains on) and the work tree checked out there. Safe to run twice.
 */
export async function restoreFromBundles(dir: string, conversationId: string, bundles: Buffer[], commit: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const repo: Repo = { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...AUTHOR, GIT_TERMINAL_PROMPT: '0' }, workspace: dir };
  await git(repo, ['init', '--quiet']);
  const tmp = await mkdtemp(join(tmpdir(), 'agentrun-unbundle-'));
  try {
    for (const [i, bundle] of bundles.entries()) {
      const file = join(tmp, `${i}.bundle`);
      await writeFile(file, bundle);
      await git(repo, ['bundle', 'unbundle', file]);
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  if (!(await resolveCommit(repo, commit))) throw new Error(`checkpoint ${commit} of ${conversationId} is not in its stored bundles`);
  await git(repo, ['update-ref', checkpointRef(conversationId), commit]);
  await git(repo, ['checkout', '--quiet', '--detach', commit]);
}
