// Checkpoints that leave the host. Repository jobs: each turn's checkpoint commit is pushed to the
// job's remote (or AGENTRUN_CHECKPOINT_REMOTE) as refs/agentrun/<id>/turn-<n>; git sends only what
// is new. Local workspaces: a git bundle per checkpoint, incremental against the one before, in
// PostgreSQL (table checkpoint_bundles), so another host can rebuild the workspace.
import type { Store } from '../store/index.js';
import { bundleCheckpoint, privateGitDir } from './checkpoint.js';
import { git } from './git.js';
import { turnRef } from './routing.js';

/** The worker's checkpoint remote for read-only origins, else the job's own remote. */
export function checkpointRemote(): string | undefined {
  return process.env.AGENTRUN_CHECKPOINT_REMOTE?.trim() || undefined;
}

export async function pushCheckpoint(
  home: string,
  dir: string,
  conversationId: string,
  turn: number,
  commit: string,
): Promise<{ ref: string; remote: string }> {
  const remote = checkpointRemote() ?? 'origin';
  const ref = turnRef(conversationId, turn);
  // Forced: a retry after a crash may find the ref already there (same commit). From the private
  // repository, whose remote and configuration only agentrun wrote.
  await git(['push', '--quiet', '--no-verify', remote, `+${commit}:${ref}`], { gitDir: privateGitDir(home, dir), kind: 'remote' });
  return { ref, remote };
}

/** Store checkpoint `commit` of a local workspace as a bundle. Safe to repeat: a commit bundled already is kept. */
export async function storeCheckpointBundle(
  store: Store,
  home: string,
  workspace: string,
  conversationId: string,
  turn: number,
  commit: string,
): Promise<{ bytes: number }> {
  const done = await store.getBundledCommits(conversationId);
  const already = done.find((d) => d.commit === commit);
  if (already) return { bytes: already.bytes };
  const since = done.at(-1)?.commit;
  const bundle = await bundleCheckpoint(workspace, conversationId, commit, since, home);
  await store.putCheckpointBundle(conversationId, turn, commit, since, bundle);
  return { bytes: bundle.length };
}

export interface OffHostSaved {
  /** Repository jobs: the ref on the remote. */
  ref?: string;
  remote?: string;
  /** Local workspaces: the size of the stored bundle. */
  bundleBytes?: number;
}

/** Save a checkpoint off the host: pushed for repository jobs (`repo` set), a bundle in the store otherwise. */
export async function saveCheckpointOffHost(
  store: Store,
  home: string,
  input: { repo?: string; workspace: string; conversationId: string; turn: number; commit: string },
): Promise<OffHostSaved> {
  if (input.repo !== undefined) return pushCheckpoint(home, input.workspace, input.conversationId, input.turn, input.commit);
  const { bytes } = await storeCheckpointBundle(store, home, input.workspace, input.conversationId, input.turn, input.commit);
  return { bundleBytes: bytes };
}
