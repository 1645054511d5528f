// Checkpoints that leave the host. Repository jobs: each turn's checkpoint commit is pushed to the
// job's remote (or AGENTRUN_CHECKPOINT_REMOTE) as refs/agentrun/<id>/turn-<n>; git sends only what
// is new. Local workspaces: a git bundle per checkpoint, incremental against the one before, in
// PostgreSQL (table checkpoint_bundles), so another host can rebuild the workspace.
import { epochOf, FencedError } from '../store/fence.js';
import { log } from '../log.js';
import type { Store } from '../store/index.js';
import { bundleCheckpoint, privateGitDir } from './checkpoint.js';
import { git, tryGit } from './git.js';
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
    if ((await tryGit(['push', '--quiet', '--no-verify', `--force-with-lease=${ref}:${expected}`, remote, `${commit}:${ref}`], run)) !== undefined) {
      await unlessSuperseded(fence.store, conversationId, epoch, ref, () =>
        // The fence rose while the push was under way: take the ref back (if it is still this one's), as if it had never been pushed.
        tryGit(['push', '--quiet', '--no-verify', `--force-with-lease=${ref}:${commit}`, remote, `:${ref}`], run),
      );
      return { ref, remote };
    }
    const found = (await git(['ls-remote', remote, ref], run)).split(/\s/)[0] ?? '';
    if (found === commit) return { ref, remote };
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

/** AGENTRUN_MAX_BUNDLE_BYTES: the largest bundle stored in PostgreSQL (default 256 MiB; its bytea cap is 1 GB). */
export const DEFAULT_MAX_BUNDLE_BYTES = 256 * 1024 * 1024;
export function maxBundleBytes(): number {
  const raw = process.env.AGENTRUN_MAX_BUNDLE_BYTES?.trim();
  if (!raw) return DEFAULT_MAX_BUNDLE_BYTES;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0)
    throw new Error(`AGENTRUN_MAX_BUNDLE_BYTES=${raw} is not a positive number of bytes: set it to e.g. ${DEFAULT_MAX_BUNDLE_BYTES}`);
  return n;
}

/** The one line an operator reads, in the stream, `inspect` and the worker's log. */
export function bundleTooLargeReason(bytes: number, max?: number): string {
  const size = (n: number) => (n < 1e6 ? `${(n / 1e3).toFixed(1)} kB` : `${(n / 1e6).toFixed(1)} MB`);
  return `its checkpoint bundle (${size(bytes)}) is above AGENTRUN_MAX_BUNDLE_BYTES${max !== undefined ? ` (${size(max)})` : ''}: the conversation goes on without off-host checkpoints and cannot move to another host if this one is lost; raise the cap (PostgreSQL takes up to 1 GB) or .gitignore large files`;
}

/**
 * Store checkpoint `commit` of a local workspace as a bundle. Safe to repeat: a commit bundled
 * already is kept. Once one bundle was above the cap the conversation has no off-host
 * checkpoints (the next ones would be incremental against a bundle that is not there): nothing
 * more is bundled, and `skipped` says why.
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
  if (over) return { bytes: 0, skipped: bundleTooLargeReason(over.bytes, max) };
  const already = done.find((d) => d.commit === commit);
  if (already) return { bytes: already.bytes };
  const since = done.at(-1)?.commit;
  const bundle = await bundleCheckpoint(workspace, conversationId, commit, since, home, max);
  if (!Buffer.isBuffer(bundle)) {
    // Recorded with its size and no content, so every host (and `inspect`) knows, and nothing is bundled again.
    await store.putCheckpointBundle(conversationId, turn, commit, since, Buffer.alloc(0), bundle.tooLarge);
    const reason = bundleTooLargeReason(bundle.tooLarge, max);
    await store.appendStream(conversationId, [{ type: 'offhost_skipped', turn, bytes: bundle.tooLarge, maxBytes: max, reason }]);
    log.warn({ conversationId, turn, bytes: bundle.tooLarge, maxBytes: max }, `no off-host checkpoint: ${reason}`);
    return { bytes: 0, skipped: reason };
  }
  await store.putCheckpointBundle(conversationId, turn, commit, since, bundle);
  return { bytes: bundle.length };
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
