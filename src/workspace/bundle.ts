// Git bundles of a workspace's checkpoints, the form in which they leave the host
// (src/workspace/offhost.ts): one bundle per turn holding only that turn's change, the directory's
// bundle base its first bundle starts from, and a workspace re-created from them on another host.
// The private repository and its checkpoints are src/workspace/checkpoint.ts's.
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { mkdir, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkoutFiles, checkpointRef, git, openRepo, privateGitDir, resolveCommit, scratchDir, tryGit, type Repo } from './checkpoint.js';
import { git as runGit } from './git.js';
import { type StoredBundle, unbundleInto } from './unbundle.js';

/**
 * A git bundle of checkpoint `commit` holding what `since` (the previous bundle's commit) does not
 * reach, so each turn ships only its own change. Without `since`, the whole history below `commit`
 * (a local workspace's turn 0 is a root commit: its tree only). A bundle above `maxBytes` is not
 * read into memory: its size comes back instead.
 */
export async function bundleCheckpoint(workspace: string, conversationId: string, commit: string, since: string | undefined, home: string): Promise<Buffer>;
export async function bundleCheckpoint(
  workspace: string,
  conversationId: string,
  commit: string,
  since: string | undefined,
  home: string,
  maxBytes: number,
): Promise<Buffer | { tooLarge: number }>;
export async function bundleCheckpoint(
  workspace: string,
  conversationId: string,
  commit: string,
  since: string | undefined,
  home: string,
  maxBytes = Infinity,
): Promise<Buffer | { tooLarge: number }> {
  const repo = await openRepo(workspace, home);
  const dir = await scratchDir(repo, 'bundle-');
  const file = join(dir, 'checkpoint.bundle');
  try {
    // A bundle carries refs, not bare commits. The checkpoint ref names `commit` right after the
    // checkpoint: bundle it in one git call, and check the bundle's header says so.
    const direct = await bundleRef(repo, file, checkpointRef(conversationId), since);
    if (direct === commit) return await readBundle(file, maxBytes);
    // The ref has moved on, or `since` is not here: a short-lived ref names the commit.
    const ref = `refs/agentrun-bundle/${conversationId.replace(/[^A-Za-z0-9._-]/g, '_')}`;
    await git(repo, ['update-ref', ref, commit]);
    try {
      const base = since ? await resolveCommit(repo, since) : undefined;
      await git(repo, ['bundle', 'create', '--quiet', file, ref, ...(base ? [`^${base}`] : [])]);
      return await readBundle(file, maxBytes);
    } finally {
      await tryGit(repo, ['update-ref', '-d', ref]);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A bundle of checkpoint `commit` holding only what the directory's bundle base `base` (another
 * root commit) does not: its first bundle. git's `bundle create <ref> ^<base>` leaves out only
 * what parents share, nothing of an unrelated history, so the pack is made of the objects `commit`
 * reaches and `base` does not, under a header naming `base` as its prerequisite. That set comes
 * from one `rev-list --objects-edge-aggressive`, which leaves out every object of the excluded
 * commit's tree (the plain `--objects` walk leaves out only what parents share), rather than two
 * full listings compared here: for a turn 0 whose tree is the base's, only the commit is listed.
 */
export async function bundleCheckpointOnBase(
  workspace: string,
  conversationId: string,
  commit: string,
  base: string,
  home: string,
  maxBytes = Infinity,
): Promise<Buffer | { tooLarge: number }> {
  const repo = await openRepo(workspace, home);
  const dir = await scratchDir(repo, 'bundle-');
  try {
    // Lines starting with '-' name the excluded edge (the base), not an object to send.
    const listed = await git(repo, ['rev-list', '--objects-edge-aggressive', '--no-object-names', commit, '--not', base, '--']);
    const wanted = listed.split('\n').filter((o) => o && !o.startsWith('-'));
    const hash = await runGit(['pack-objects', '--quiet', join(dir, 'pack')], { gitDir: repo.gitDir, input: wanted.join('\n') + '\n' });
    const file = join(dir, 'checkpoint.bundle');
    await writeFile(file, `# v2 git bundle\n-${base} agentrun bundle base\n${commit} ${checkpointRef(conversationId)}\n\n`);
    await pipeline(createReadStream(join(dir, `pack-${hash}.pack`)), createWriteStream(file, { flags: 'a' }));
    return await readBundle(file, maxBytes);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The ref naming the directory's bundle base: the tree its first stored bundle started from (src/workspace/offhost.ts). */
const BASE_REF = 'refs/agentrun-base';

/** The directory's bundle base, if one was made here. */
export async function currentBundleBase(workspace: string, home: string): Promise<string | undefined> {
  const repo = await openRepo(workspace, home);
  // Neither the ref's file nor packed refs: none was made here (a new directory's turn 0), and no git process asked.
  if (!existsSync(join(repo.gitDir, BASE_REF)) && !existsSync(join(repo.gitDir, 'packed-refs'))) return undefined;
  return resolveCommit(repo, BASE_REF);
}

/**
 * Make the directory's bundle base from checkpoint `commit`: a root commit of its tree (no
 * conversation's, so any conversation's first bundle can start from it), bundled into a file
 * that `fn` gets (never read into memory: it may be large), removed afterwards.
 */
export async function withNewBundleBase<T>(
  workspace: string,
  home: string,
  commit: string,
  fn: (base: { commit: string; file: string; bytes: number }) => Promise<T>,
): Promise<T> {
  const repo = await openRepo(workspace, home);
  const base = await git(repo, ['commit-tree', `${commit}^{tree}`, '-m', 'agentrun bundle base']);
  await git(repo, ['update-ref', BASE_REF, base]);
  const dir = await scratchDir(repo, 'base-');
  try {
    const file = join(dir, 'base.bundle');
    // No delta search: the files were checked in as they are (in bulk, possibly two packs), and git
    // would otherwise try pairs across packs (bench/bundle.ts, 1 GB in two packs: 2-3.7 s -> 33 s).
    await git(repo, ['-c', 'pack.window=0', 'bundle', 'create', '--quiet', file, BASE_REF]);
    return await fn({ commit: base, file, bytes: (await stat(file)).size });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function readBundle(file: string, maxBytes: number): Promise<Buffer | { tooLarge: number }> {
  const { size } = await stat(file);
  return size > maxBytes ? { tooLarge: size } : readFile(file);
}

/** Bundle `ref` (without what `since` reaches); the commit the bundle's header gives it, or undefined when git refused. */
async function bundleRef(repo: Repo, file: string, ref: string, since: string | undefined): Promise<string | undefined> {
  if ((await tryGit(repo, ['bundle', 'create', '--quiet', file, ref, ...(since ? [`^${since}`] : [])])) === undefined) return undefined;
  // The header lists each ref as "<commit> <ref>" before a blank line and the pack: read only it.
  const fh = await open(file, 'r');
  let header: string;
  try {
    const buf = Buffer.alloc(8192);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    header = buf.subarray(0, bytesRead).toString('latin1');
  } finally {
    await fh.close();
  }
  return header
    .split('\n')
    .find((l) => l.endsWith(` ${ref}`))
    ?.split(' ')[0];
}

/**
 * Re-create a workspace in `dir` from a conversation's bundles (oldest first) at checkpoint
 * `commit`: `dir`'s private repository gets every checkpoint and the checkpoint ref at `commit`
 * (the next turn's checkpoint chains on), the work tree the files of `commit`. Safe to run twice.
 */
export async function restoreFromBundles(
  dir: string,
  conversationId: string,
  bundles: Iterable<Buffer> | AsyncIterable<Buffer>,
  commit: string,
  home: string,
  /** The bundle base the first bundle starts from, in parts (written to a file, never held whole). */
  base?: AsyncIterable<Buffer>,
): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await rm(privateGitDir(home, dir), { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const repo = await openRepo(dir, home);
  await unbundleInto(repo.gitDir, baseThenBundles(base, bundles));
  if (!(await resolveCommit(repo, commit))) throw new Error(`checkpoint ${commit} of ${conversationId} is not in its stored bundles`);
  await git(repo, ['update-ref', checkpointRef(conversationId), commit]);
  await checkoutFiles(repo, commit);
}

async function* baseThenBundles(base: AsyncIterable<Buffer> | undefined, bundles: Iterable<Buffer> | AsyncIterable<Buffer>): AsyncGenerator<StoredBundle> {
  if (base) yield base;
  yield* bundles;
}
