// Per-turn checkpoints in a private git directory under AGENTRUN_HOME (privateGitDir), with the
// workspace as its work tree: the agent never sees or writes it, and git never reads the
// workspace's own .git (its configuration, hooks and objects are the agent's). A workspace that
// is a git repository keeps its .git for the agent's own use; checkpoints do not touch it.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, lstat, mkdir, mkdtemp, readdir, readFile, realpath, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import { fileNameOf } from '../ids.js';
import { excludePathspecs, leavingOutFifos, removingFifos, watchedGit } from './fifo-guard.js';
import { GitError, git as runGit, tryGit as tryRunGit } from './git.js';
import { matchWorkspaceOwner } from '../sandbox/workspace-owner.js';

export interface Checkpoint {
  turn: number;
  commit: string;
  files: string[];
}

/** A workspace and the private git directory that holds its checkpoints. */
export interface Repo {
  gitDir: string;
  workspace: string;
}

export function checkpointRef(conversationId: string): string {
  return `refs/agentrun/${fileNameOf(conversationId)}`;
}

/** The private git directory of `workspace`: under AGENTRUN_HOME, never inside the workspace. */
export function privateGitDir(home: string, workspace: string): string {
  return join(home, 'checkpoints', createHash('sha256').update(workspace).digest('hex').slice(0, 16) + '.git');
}

export async function git(repo: Repo, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    return await runGit(args, { gitDir: repo.gitDir, workTree: repo.workspace, env: extraEnv });
  } catch (err) {
    throw brokenRepo(repo, err);
  }
}

/** A private checkpoint repository git cannot use: retrying does not repair it, so the step fails at once (activities/infra-errors.ts). */
export class BrokenCheckpointRepository extends Error {
  override readonly name = 'BrokenCheckpointRepository';
}

/**
 * git's own words for a private repository it cannot use name a hashed directory under
 * AGENTRUN_HOME: say whose it is and what to do. Other failures as they are.
 */
function brokenRepo(repo: Repo, err: unknown): unknown {
  if (!(err instanceof GitError) || !/not a git repository/i.test(err.message)) return err;
  return new BrokenCheckpointRepository(
    `the checkpoints of ${repo.workspace} cannot be made: its private git repository ${repo.gitDir} is broken (${err.message}); remove that directory (its checkpoints are lost, those stored off the host stay) and start the conversation again`,
  );
}

/** git walking the work tree (`args` end with its pathspecs): killed if it waits on a FIFO (fifo-guard.ts), `excluded` directories left out. */
function treeGit(repo: Repo, args: string[], extraEnv: NodeJS.ProcessEnv, excluded: string[]): Promise<string> {
  return watchedGit((tag) => git(repo, [...args, ...excludePathspecs(excluded)], { ...extraEnv, ...tag }));
}

/**
 * git's words for a path that went away, or became something else, between its walk of the work tree
 * and its read of the file (a directory it took for a nested repository included): a process of the
 * agent's (a dev server, a build, a watcher) changed the tree during the checkpoint.
 */
const TREE_CHANGED = /: (No such file or directory|Not a directory)$|does not have a commit checked out/m;
/** Runs of `git add` while the tree keeps changing under it: each run sees the tree as it is then. */
const ADD_RUNS = 5;

/**
 * `git add` of the work tree (`args` end with its pathspecs), run again when a file it listed went
 * away before it read it: the checkpoint is of the tree as it is once git reads it whole, and a
 * busy tree does not fail the turn.
 */
async function addTree(repo: Repo, args: string[], extraEnv: NodeJS.ProcessEnv, excluded: string[]): Promise<string> {
  for (let run = 1; ; run++) {
    try {
      return await treeGit(repo, args, extraEnv, excluded);
    } catch (err) {
      if (run >= ADD_RUNS || !(err instanceof GitError) || !TREE_CHANGED.test(err.stderr)) throw err;
    }
  }
}

export async function tryGit(repo: Repo, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string | undefined> {
  return tryRunGit(args, { gitDir: repo.gitDir, workTree: repo.workspace, env: extraEnv });
}

/**
 * A scratch directory (temporary index, bundle file) inside the private repository: a worker
 * killed mid-checkpoint leaves it there, removed with the repository, not in the host's /tmp.
 */
export async function scratchDir(repo: Repo, prefix: string): Promise<string> {
  await mkdir(join(repo.gitDir, 'agentrun'), { recursive: true });
  return mkdtemp(join(repo.gitDir, 'agentrun', `tmp-${prefix}`));
}

/** The workspace's private repository, created on first use. */
export async function openRepo(workspace: string, home: string): Promise<Repo> {
  return (await openOrCreateRepo(workspace, home)).repo;
}

/**
 * The workspace's private repository, and whether this call created it (then it holds no ref and
 * no object yet: a caller can skip asking git for any). Created without git's template directory:
 * its sample hooks and description are a dozen files written per repository, and no hook runs here.
 */
async function openOrCreateRepo(workspace: string, home: string): Promise<{ repo: Repo; created: boolean }> {
  const repo: Repo = { gitDir: privateGitDir(home, workspace), workspace };
  if (existsSync(join(repo.gitDir, 'HEAD'))) return { repo, created: false };
  await mkdir(repo.gitDir, { recursive: true, mode: 0o700 });
  await runGit(['init', '--bare', '--quiet', '--template=', repo.gitDir]);
  return { repo, created: true };
}

/** Snapshot the work tree into a tree object via a temporary index (honours .gitignore). */
export async function snapshotTree(repo: Repo, startFrom: string | undefined): Promise<string> {
  return leavingOutFifos(repo.workspace, async (excluded) => {
    const dir = await scratchDir(repo, 'index-');
    const index = { GIT_INDEX_FILE: join(dir, 'index') };
    try {
      if (startFrom) await git(repo, ['read-tree', startFrom], index);
      await addTree(repo, ['add', '-A', '--', '.'], index, excluded);
      return await git(repo, ['write-tree'], index);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

/**
 * Snapshot through the conversation's own index, kept in the git directory between turns: git
 * then re-hashes only files whose stat changed, so a checkpoint of a large repository costs about
 * what the turn changed. The index is trusted only when it holds `startFrom`'s tree.
 */
async function snapshotIncremental(
  repo: Repo,
  conversationId: string,
  startFrom: CommitInfo | undefined,
  seed = true,
  excluded: string[] = [],
): Promise<{ tree: string; files: string[] }> {
  await mkdir(join(repo.gitDir, 'agentrun'), { recursive: true });
  const indexFile = conversationIndex(repo, conversationId);
  // A run again after a git killed on a FIFO: its lock is left behind.
  if (excluded.length) await rm(`${indexFile}.lock`, { force: true });
  const index = { GIT_INDEX_FILE: indexFile };
  const syncedTo = await readFile(`${indexFile}.tree`, 'utf8').catch(() => undefined);
  let seeded = false;
  if (!existsSync(indexFile) || syncedTo !== startFrom?.tree) {
    await rm(indexFile, { force: true });
    if (startFrom) await git(repo, ['read-tree', startFrom.commit], index);
    else if (seed) seeded = await seedIndex(repo, indexFile);
  }
  // --verbose names every path whose content changed against the index, i.e. against `startFrom`:
  // the checkpoint's file list without a diff afterwards.
  // The first snapshot of a tree nobody snapshotted here (a root commit: the first local
  // conversation's turn 0) adds every file: streamed into one pack (bulk check-in, every file
  // above the threshold) rather than one loose object each, so its bundle reuses that pack as it
  // is instead of compressing it all again, and at zlib level 1 (about 15% larger, faster).
  // bench/bundle.ts, 20k files / 210 MB: checkpoint + bundle from 32 s to 6.4 s. Later turns, and
  // a seeded index, add few files: loose objects, and none written for content already here.
  const bulk = startFrom || seeded ? [] : BULK_CHECKIN;
  const halves = bulk.length > 0 && (await checkInHalves(repo, indexFile, excluded));
  const added = await addTree(repo, [...(halves ? [] : bulk), 'add', '-A', '--verbose', '--', '.'], index, excluded);
  const tree = seeded ? await tryGit(repo, ['write-tree'], index) : await git(repo, ['write-tree'], index);
  if (tree === undefined) {
    // A seed naming an object that is not here (never expected: nothing prunes these objects): start over without one.
    await rm(indexFile, { force: true });
    return snapshotIncremental(repo, conversationId, startFrom, false, excluded);
  }
  await writeFile(`${indexFile}.tree`, tree);
  // A seeded (or half-filled) index already held files: without a parent, every file is in the checkpoint.
  if (seeded || halves) return { tree, files: await treeFiles(repo, tree) };
  const files = added
    ? added
        .split('\n')
        .map((l) => /^(?:add|remove) '(.*)'$/.exec(l)?.[1])
        .filter((f): f is string => f !== undefined)
    : [];
  return { tree, files };
}

const BULK_CHECKIN = ['-c', 'core.bigFileThreshold=1', '-c', 'pack.compression=1'];

/** Below this many files a root snapshot is quick anyway: one `git add`, no listing first. */
export const HALVES_MIN_FILES = 2000;

/**
 * A root snapshot of many files on a machine with more than one core: the files, listed (with the
 * ignore rules `add -A` applies), are checked in as two halves by two `git update-index` processes
 * at once, each into its own pack; `indexFile` gets the first half, with its stat data. The
 * `git add -A` that follows then only hashes the second half (its objects are there: nothing is
 * compressed again) and picks up whatever the halves did not take (a nested repository, a file
 * created since): the checkpoint is that `add`'s, whatever happened here. bench/bundle.ts's header,
 * 1 GB: 19-20 s instead of 27-29 s with a core idle, about even on a busy machine. Whether both
 * halves were checked in (else the `add` does it all, in bulk).
 */
async function checkInHalves(repo: Repo, indexFile: string, excluded: string[]): Promise<boolean> {
  if (availableParallelism() < 2) return false;
  // Most workspaces are far below the threshold: a few directory reads say so without a git process.
  if (!(await atLeastEntries(repo.workspace, HALVES_MIN_FILES))) return false;
  const listed = await treeGit(repo, ['ls-files', '-z', '--others', '--exclude-standard', '--', '.'], { GIT_INDEX_FILE: indexFile }, excluded);
  // A directory (a nested repository) is left to `add -A`, which makes it a gitlink.
  const paths = listed.split('\0').filter((p) => p && !p.endsWith('/'));
  if (paths.length < HALVES_MIN_FILES) return false;
  const other = `${indexFile}.half`;
  try {
    const results = await Promise.allSettled(
      [0, 1].map((half) =>
        runGit([...BULK_CHECKIN, 'update-index', '--add', '--remove', '-z', '--stdin'], {
          gitDir: repo.gitDir,
          workTree: repo.workspace,
          env: { GIT_INDEX_FILE: half === 0 ? indexFile : other },
          input: paths.filter((_, i) => i % 2 === half).join('\0') + '\0',
        }),
      ),
    );
    if (results.every((r) => r.status === 'fulfilled')) return true;
    // One half failed: the `add` starts from an empty index (what the halves wrote is found there, not written again).
    await rm(indexFile, { force: true });
    return false;
  } finally {
    await rm(other, { force: true });
    await rm(`${other}.lock`, { force: true });
  }
}

/**
 * Whether the tree under `dir` holds at least `n` entries (files, links, directories; ignored ones
 * too, `.git` directories left out): an upper bound of what `ls-files --others` would list, so
 * false means fewer than `n` files to check in. Reads directories only (never opens an entry, never
 * follows a link) and stops at `n`; an unreadable directory counts as large (git decides then).
 */
export async function atLeastEntries(dir: string, n: number): Promise<boolean> {
  let seen = 0;
  const stack = [dir];
  while (stack.length) {
    const at = stack.pop()!;
    let entries;
    try {
      entries = await readdir(at, { withFileTypes: true });
    } catch {
      return true;
    }
    for (const e of entries) {
      if (e.name === '.git') continue;
      if (++seen >= n) return true;
      if (e.isDirectory()) stack.push(join(at, e.name));
    }
  }
  return false;
}

function conversationIndex(repo: Repo, conversationId: string): string {
  return join(repo.gitDir, 'agentrun', `${conversationId.replace(/[^A-Za-z0-9._-]/g, '_')}.index`);
}

/**
 * The first snapshot of a conversation in a directory others snapshotted before (a sub-agent, a
 * rerun, the next conversation on the same repository): start from the most recent of their
 * indexes, so git re-hashes only files whose stat changed since, instead of every file (bench/bundle.ts,
 * 1 GB: 12 s to well under a second). Only a cache: `add -A` brings it to the work tree as it is
 * now, and git's racy-entry rule holds for the copy as for the original. Whether one was found.
 */
async function seedIndex(repo: Repo, indexFile: string): Promise<boolean> {
  const dir = join(repo.gitDir, 'agentrun');
  let newest: { file: string; at: number } | undefined;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith('.index')) continue;
    const file = join(dir, name);
    // Only an index a snapshot finished with (its tree recorded), not one a killed snapshot left half-written.
    const at = (await stat(`${file}.tree`).catch(() => undefined))?.mtimeMs;
    if (at !== undefined && file !== indexFile && (!newest || at > newest.at)) newest = { file, at };
  }
  if (!newest) return false;
  await copyFile(newest.file, `${indexFile}.seed`);
  await rename(`${indexFile}.seed`, indexFile);
  return true;
}

async function treeFiles(repo: Repo, tree: string): Promise<string[]> {
  const out = await git(repo, ['ls-tree', '-r', '--name-only', '-z', tree]);
  return out.split('\0').filter(Boolean);
}

export async function resolveCommit(repo: Repo, rev: string): Promise<string | undefined> {
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

function marker(conversationId: string, turn: number): string {
  return `agentrun ${conversationId} turn ${turn}`;
}

/**
 * Commit the workspace state for `turn` if it changed since the last checkpoint.
 * Safe to run twice: a checkpoint already made for this turn is returned as it is.
 */
export async function createCheckpoint(workspace: string, conversationId: string, turn: number, home: string): Promise<Checkpoint | null> {
  const { repo, created } = await openOrCreateRepo(workspace, home);
  const ref = checkpointRef(conversationId);
  // A repository created just now has no commit to ask git about (a new local workspace's turn 0).
  let head = created ? undefined : await commitInfo(repo, ref);
  if (head?.subject === marker(conversationId, turn)) {
    // Already made for this turn (a retry, or an earlier call of the same turn): keep it if the
    // files are the same, else replace it by a snapshot of now on the same parent.
    const again = await snapshotTree(repo, head.commit);
    if (head.tree === again) return { turn, commit: head.commit, files: await changedFiles(repo, head.commit) };
    head = await commitInfo(repo, `${head.commit}^`);
  }
  const parent = head ?? (created ? undefined : await commitInfo(repo, 'HEAD'));
  const { tree, files } = await leavingOutFifos(workspace, (excluded) => snapshotIncremental(repo, conversationId, parent, true, excluded));
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

/** The largest diff `inspect` shows of one checkpoint; the rest is cut, and the cut says how much. */
export const MAX_DIFF_BYTES = 200_000;

/** The patch checkpoint `commit` introduced (stat and diff, for `inspect`), from `gitDir`, cut at `maxBytes`. */
export async function showCommit(gitDir: string, commit: string, maxBytes = MAX_DIFF_BYTES): Promise<string> {
  // No diff driver or textconv program runs, whatever an attributes file names; no work tree is read.
  const out = await runGit(['show', '--no-ext-diff', '--no-textconv', '--format=', '--stat', '--patch', commit, '--'], { gitDir });
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
  const ignored = await leavingOutFifos(workspace, (excluded) =>
    treeGit(repo, ['ls-files', '--others', '--ignored', '--exclude-standard', '--directory', '--', '.'], {}, excluded),
  );
  const notRestored = ignored ? ignored.split('\n') : [];
  const target = await git(repo, ['rev-parse', `${commit}^{tree}`]);
  const current = await snapshotTree(repo, commit);
  const diff = await git(repo, ['diff-tree', '-r', '--name-status', target, current]);
  const restored: string[] = [];
  const removed: string[] = [];
  for (const line of diff ? diff.split('\n') : []) {
    const [status, file] = line.split('\t') as [string, string];
    if (status === 'A') {
      await unlinkInside(workspace, file);
      removed.push(file);
    } else restored.push(file);
  }
  if (restored.length) await checkoutFiles(repo, commit, restored);
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
 * Write `paths` (every file when absent) of `commit` into the work tree, or under `prefix`, through
 * a temporary index. git refuses to write through a symlinked directory, so nothing lands outside;
 * what it writes gets the workspace's owner (the sandbox user, when the worker is root).
 */
export async function checkoutFiles(repo: Repo, commit: string, paths?: string[], prefix?: string): Promise<void> {
  const tmp = await scratchDir(repo, 'index-');
  const index = { GIT_INDEX_FILE: join(tmp, 'index') };
  try {
    await git(repo, ['read-tree', commit], index);
    const where = prefix ? [`--prefix=${prefix.endsWith('/') ? prefix : prefix + '/'}`] : [];
    const checkout = () => watchedGit((tag) => git(repo, ['checkout-index', '-f', ...where, ...(paths ? ['--', ...paths] : ['-a'])], { ...index, ...tag }));
    // Into a fresh directory nothing can wait; into the work tree, git reads each directory's attributes.
    await (prefix ? checkout() : removingFifos(repo.workspace, checkout));
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  await matchWorkspaceOwner(prefix ?? repo.workspace, paths);
}

/** Remove `file` of the workspace unless a symlinked directory on its way leads outside. */
async function unlinkInside(workspace: string, file: string): Promise<void> {
  const abs = join(workspace, file);
  const parent = await realpath(dirname(abs)).catch(() => undefined);
  const root = await realpath(workspace);
  if (parent === undefined || (parent !== root && !parent.startsWith(root + sep))) return;
  if ((await lstat(abs).catch(() => undefined)) === undefined) return;
  await unlink(join(parent, basename(abs))).catch(() => {});
}

/**
 * Write the files of checkpoint `commit` (of `conversationId` in `workspace`) into `dir` (new or
 * empty), leaving the workspace alone: plain files, nothing of the workspace's own .git (the
 * agent's, never read outside the sandbox). Ignored files are not in checkpoints, so they are not copied.
 */
export async function copyCheckpoint(workspace: string, commit: string, home: string, dir: string): Promise<void> {
  const repo = await openRepo(workspace, home);
  await mkdir(dir, { recursive: true });
  await checkoutFiles(repo, commit, undefined, dir);
}
