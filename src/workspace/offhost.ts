// Checkpoints that leave the host. Repository jobs: each turn's checkpoint commit is pushed to the
// job's remote (or AGENTRUN_CHECKPOINT_REMOTE) as refs/agentrun/<id>/turn-<n>; git sends only what
// is new. Local workspaces: a git bundle per checkpoint, incremental against the one before, in
// PostgreSQL (table checkpoint_bundles), so another host can rebuild the workspace; the first one
// against the repository's bundle base (bundle_bases), stored once per directory.
import { epochOf, FencedError } from '../store/fence.js';
import { log } from '../log.js';
import type { Store } from '../store/index.js';
import { createReadStream } from 'node:fs';
import { privateGitDir } from './checkpoint.js';
import { bundleCheckpoint, bundleCheckpointOnBase, currentBundleBase, withNewBundleBase } from './bundle.js';
import { git, GitError, tryGit } from './git.js';
import { turnRef } from './routing.js';

/** The worker's checkpoint remote for read-only origins, else the job's own remote. */
export function checkpointRemote(): string | undefined {
  return process.env.AGENTRUN_CHECKPOINT_REMOTE?.trim() || undefined;
}

/**
 * Push checkpoint `commit` as the turn's ref, from the private repository (whose remote and
 * configuration only agentrun wrote). Without `fence` (placements made before fencing) it is forced.
 * With it, `lease` is what the workflow knows at the ref ('' none) and the push is
 * `--force-with-lease` on it, after the store's fence said this placement is current: a host
 * superseded meanwhile moves no ref of the new placement. A ref found holding another commit was
 * pushed by a superseded attempt (it died before the workflow heard of it): a current placement
 * replaces it, leased on what it found. A push during which the fence rose is taken back.
 */
export async function pushCheckpoint(
  home: string,
  dir: string,
  conversationId: string,
  turn: number,
  commit: string,
  fence?: { store: Store; lease: string },
): Promise<{ ref: string; remote: string }> {
  const remote = checkpointRemote() ?? 'origin';
  const ref = turnRef(conversationId, turn);
  const run = { gitDir: privateGitDir(home, dir), kind: 'remote' as const };
  if (!fence) {
    // Forced: a retry after a crash may find the ref already there (same commit).
    await git(['push', '--quiet', '--no-verify', remote, `+${commit}:${ref}`], run);
    return { ref, remote };
  }
  const epoch = epochOf(conversationId);
  let expected = fence.lease;
  for (let attempt = 0; attempt < 3; attempt++) {
    await fence.store.checkFence(conversationId, epoch, `the push of ${ref}`);
    // git reports a ref that already holds `commit` as up to date, whatever the lease: a retry passes.
    let refusal: string | undefined;
    try {
      await git(['push', '--quiet', '--no-verify', `--force-with-lease=${ref}:${expected}`, remote, `${commit}:${ref}`], run);
    } catch (err) {
      if (!(err instanceof GitError)) throw err;
      refusal = err.message;
    }
    if (refusal === undefined) {
      await unlessSuperseded(fence.store, conversationId, epoch, ref, () =>
        // The fence rose while the push was under way: take the ref back (if it is still this one's), as if it had never been pushed.
        tryGit(['push', '--quiet', '--no-verify', `--force-with-lease=${ref}:${commit}`, remote, `:${ref}`], run),
      );
      return { ref, remote };
    }
    const found = (await git(['ls-remote', remote, ref], run)).split(/\s/)[0] ?? '';
    if (found === commit) return { ref, remote };
    // The ref is as the lease expected: the remote refused the push itself (permissions, a hook, a protected ref).
    if (found === expected)
      throw new Error(
        `the push of ${ref} to ${remote} was refused: ${refusal?.replace(/\/\/[^/@\s]+@/g, '//')}; check that the worker's git credentials may push to ${remote}`,
      );
    expected = found;
  }
  throw new Error(`the push of ${ref} to ${remote} was refused three times (the ref kept changing under it); retry the step`);
}

/** Run `undo` and rethrow when the fence says this placement is superseded. */
async function unlessSuperseded(store: Store, conversationId: string, epoch: number | null, ref: string, undo: () => Promise<unknown>): Promise<void> {
  try {
    await store.checkFence(conversationId, epoch, `the push of ${ref}`);
  } catch (err) {
    if (err instanceof FencedError) await undo();
    throw err;
  }
}

/** A byte count from the environment variable `name`, else `fallback`; anything but a positive integer is an error naming it. */
export function bytesFromEnv(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name}=${raw} is not a positive number of bytes: set it to e.g. ${fallback}`);
  return n;
}

/** AGENTRUN_MAX_BUNDLE_BYTES: the largest bundle stored in PostgreSQL (default 256 MiB; its bytea cap is 1 GB). */
const DEFAULT_MAX_BUNDLE_BYTES = 256 * 1024 * 1024;
function maxBundleBytes(): number {
  return bytesFromEnv('AGENTRUN_MAX_BUNDLE_BYTES', DEFAULT_MAX_BUNDLE_BYTES);
}

/** AGENTRUN_MAX_BASE_BUNDLE_BYTES: the largest bundle base (stored once per directory, in parts; default 2 GiB). */
const DEFAULT_MAX_BASE_BUNDLE_BYTES = 2 * 1024 * 1024 * 1024;
function maxBaseBundleBytes(): number {
  return bytesFromEnv('AGENTRUN_MAX_BASE_BUNDLE_BYTES', DEFAULT_MAX_BASE_BUNDLE_BYTES);
}

/** The size of one stored part of a bundle base: far below bytea's 1 GB and what the driver can send at once. */
const BASE_PART_BYTES = 64 * 1024 * 1024;

/** A bundle's size as the operator's lines give it: kB below a megabyte, else MB. */
export function sizeText(n: number): string {
  return n < 1e6 ? `${(n / 1e3).toFixed(1)} kB` : `${(n / 1e6).toFixed(1)} MB`;
}

/** The one line an operator reads, in the stream, `inspect` and the worker's log. `base`: the repository's shared bundle base was the one too large. */
export function bundleTooLargeReason(bytes: number, max?: number, base = false): string {
  const what = base ? "its repository's bundle base" : 'its checkpoint bundle';
  const cap = base ? 'AGENTRUN_MAX_BASE_BUNDLE_BYTES' : 'AGENTRUN_MAX_BUNDLE_BYTES';
  return `${what} (${sizeText(bytes)}) is above ${cap}${max !== undefined ? ` (${sizeText(max)})` : ''}: the conversation goes on without off-host checkpoints and cannot move to another host if this one is lost; raise the cap${base ? '' : ' (PostgreSQL takes up to 1 GB)'} or .gitignore large files`;
}

/**
 * Store checkpoint `commit` of a local workspace as a bundle. Safe to repeat: a commit bundled
 * already is kept. Once one bundle was above the cap the conversation has no off-host
 * checkpoints (the next ones would be incremental against a bundle that is not there): nothing
 * more is bundled, and `skipped` says why. The first bundle starts from the repository's bundle
 * base (stored once, shared by every conversation on the directory): it holds only what differs.
 */
export async function storeCheckpointBundle(
  store: Store,
  home: string,
  workspace: string,
  conversationId: string,
  turn: number,
  commit: string,
): Promise<{ bytes: number; skipped?: string }> {
  const done = await store.getBundledCommits(conversationId);
  const max = maxBundleBytes();
  const over = done.find((d) => d.skipped);
  if (over) return { bytes: 0, skipped: bundleTooLargeReason(over.bytes, over.base ? maxBaseBundleBytes() : max, over.base !== undefined) };
  const already = done.find((d) => d.commit === commit);
  if (already) return { bytes: already.bytes };
  const last = done.at(-1)?.commit;
  for (let attempt = 0; ; attempt++) {
    const base = last === undefined ? await bundleBase(store, home, workspace, commit, conversationId) : undefined;
    if (base?.skipped !== undefined) return skip(store, conversationId, turn, commit, base.skipped, base.commit);
    const since = last ?? base?.commit;
    const bundle = base
      ? await bundleCheckpointOnBase(workspace, conversationId, commit, base.commit, home, max)
      : await bundleCheckpoint(workspace, conversationId, commit, since, home, max);
    if (!Buffer.isBuffer(bundle)) return skip(store, conversationId, turn, commit, bundle.tooLarge);
    if (await store.putCheckpointBundle(conversationId, turn, commit, since, bundle, bundle.length, base?.commit)) return { bytes: bundle.length };
    // The base was removed (gc) between finding it and naming it: make a new one, once.
    if (attempt > 0)
      throw new Error(`the bundle base of ${workspace} was removed from the store while turn ${turn} of ${conversationId} was bundled; retry the step`);
    await forgetBundleBase(home, workspace);
  }
}

/**
 * Record that `conversationId` has no off-host checkpoints from `turn` on (a bundle, or its
 * repository's base, above the cap): a row with the size and no content, so every host (and
 * `inspect`) knows, and nothing is bundled again.
 */
async function skip(
  store: Store,
  conversationId: string,
  turn: number,
  commit: string,
  bytes: number,
  base?: string,
): Promise<{ bytes: number; skipped: string }> {
  const max = base ? maxBaseBundleBytes() : maxBundleBytes();
  await store.putCheckpointBundle(conversationId, turn, commit, undefined, Buffer.alloc(0), bytes, base);
  const reason = bundleTooLargeReason(bytes, max, base !== undefined);
  await store.appendStream(conversationId, [{ type: 'offhost_skipped', turn, bytes, maxBytes: max, reason }]);
  log.warn({ conversationId, turn, bytes, maxBytes: max, base }, `no off-host checkpoint: ${reason}`);
  return { bytes: 0, skipped: reason };
}

/**
 * The directory's bundle base, stored: the one made here before if the store still has it, else a
 * new one from `commit` (this conversation's first checkpoint), stored in parts. `skipped`: its
 * size, when above AGENTRUN_MAX_BASE_BUNDLE_BYTES (recorded too: later conversations skip at once).
 */
async function bundleBase(
  store: Store,
  home: string,
  workspace: string,
  commit: string,
  /** Whose checkpoint stores it: its parts are written under that conversation's fence. */
  conversationId: string,
): Promise<{ commit: string; skipped?: number }> {
  const current = await currentBundleBase(workspace, home);
  const stored = current ? await store.getBundleBase(current) : null;
  if (current && stored) return stored.parts === 0 ? { commit: current, skipped: stored.bytes } : { commit: current };
  const t0 = performance.now();
  return withNewBundleBase(workspace, home, commit, async (base) => {
    const t1 = performance.now();
    if (base.bytes > maxBaseBundleBytes()) {
      await store.finishBundleBase(base.commit, 0, base.bytes, conversationId);
      return { commit: base.commit, skipped: base.bytes };
    }
    let part = 0;
    // A read stream allocates its high-water mark for every read: 64 MB twice for a base of a few
    // hundred bytes (a new small directory's turn 0) cost milliseconds of CPU and pressed the GC.
    const highWaterMark = Math.max(1, Math.min(BASE_PART_BYTES, base.bytes));
    for await (const data of createReadStream(base.file, { highWaterMark })) await store.putBundleBasePart(base.commit, part++, data as Buffer, conversationId);
    await store.finishBundleBase(base.commit, part, base.bytes, conversationId);
    log.info(
      { workspace, base: base.commit, bytes: base.bytes, parts: part, bundleMs: Math.round(t1 - t0), storeMs: Math.round(performance.now() - t1) },
      'bundle base stored: later conversations on this directory bundle only what differs from it',
    );
    return { commit: base.commit };
  });
}

async function forgetBundleBase(home: string, workspace: string): Promise<void> {
  await tryGit(['update-ref', '-d', 'refs/agentrun-base'], { gitDir: privateGitDir(home, workspace) });
}

/** A bundle base's parts, read one at a time. */
export async function* bundleBaseParts(store: Pick<Store, 'getBundleBase' | 'getBundleBasePart'>, commit: string): AsyncGenerator<Buffer> {
  const base = await store.getBundleBase(commit);
  if (!base || base.parts === 0) throw new Error(`bundle base ${commit} is not in the store (removed, or above the cap)`);
  for (let part = 0; part < base.parts; part++) yield await store.getBundleBasePart(commit, part);
}

/**
 * A conversation's checkpoint bundles (the commits of `getBundledCommits`, oldest first), read
 * from the store one at a time, the next one while the caller applies the current one: a rebuild
 * holds two bundles in memory, never all of them.
 */
export async function* checkpointBundles(
  store: Pick<Store, 'getCheckpointBundle'>,
  conversationId: string,
  commits: readonly { commit: string }[],
): AsyncGenerator<Buffer> {
  const read = async (commit: string) => {
    const bundle = await store.getCheckpointBundle(conversationId, commit);
    if (!bundle) throw new Error(`the checkpoint bundle of ${commit} (${conversationId}) is gone from the store (removed by gc?)`);
    return bundle;
  };
  let next = commits.length > 0 ? read(commits[0]!.commit) : undefined;
  for (let i = 0; next; i++) {
    const bundle = await next;
    next = i + 1 < commits.length ? read(commits[i + 1]!.commit) : undefined;
    // Awaited on the next round; a caller that stops early must not leave it unhandled.
    next?.catch(() => undefined);
    yield bundle;
  }
}

export interface OffHostSaved {
  /** Repository jobs: the ref on the remote. */
  ref?: string;
  remote?: string;
  /** Local workspaces: the size of the stored bundle. */
  bundleBytes?: number;
  /** Local workspaces: why no bundle was stored (above AGENTRUN_MAX_BUNDLE_BYTES). */
  skipped?: string;
}

/** Save a checkpoint off the host: pushed for repository jobs (`repo` set), a bundle in the store otherwise. */
export async function saveCheckpointOffHost(
  store: Store,
  home: string,
  input: { repo?: string; workspace: string; conversationId: string; turn: number; commit: string; lease?: string },
): Promise<OffHostSaved> {
  const fence = input.lease !== undefined && epochOf(input.conversationId) !== null ? { store, lease: input.lease } : undefined;
  if (input.repo !== undefined) return pushCheckpoint(home, input.workspace, input.conversationId, input.turn, input.commit, fence);
  const { bytes, skipped } = await storeCheckpointBundle(store, home, input.workspace, input.conversationId, input.turn, input.commit);
  return skipped ? { skipped } : { bundleBytes: bytes };
}
