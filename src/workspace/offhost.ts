// Checkpoints that leave the host: each turn's checkpoint commit is pushed to the job's remote
// (or AGENTRUN_CHECKPOINT_REMOTE) as refs/agentrun/<id>/turn-<n>; git sends only what is new.
import { git } from './git.js';
import { turnRef } from './routing.js';

/** The worker's checkpoint remote for read-only origins, else the job's own remote. */
export function checkpointRemote(): string | undefined {
  return process.env.AGENTRUN_CHECKPOINT_REMOTE?.trim() || undefined;
}

export async function pushCheckpoint(dir: string, conversationId: string, turn: number, commit: string): Promise<{ ref: string; remote: string }> {
  const remote = checkpointRemote() ?? 'origin';
  const ref = turnRef(conversationId, turn);
  // Forced: a retry after a crash may find the ref already there (same commit).
  await git(dir, ['push', '--quiet', '--no-verify', remote, `+${commit}:${ref}`]);
  return { ref, remote };
}
