// Unbundling stored checkpoint bundles into a bare git directory of our own: a workspace rebuilt on
// another host (src/workspace/bundle.ts) and `inspect`'s diffs from the store
// (src/workspace/stored-diffs.ts) both apply a bundle base and a conversation's bundles in order.
// git runs with its fixed configuration (src/workspace/git.ts) on the git directory alone, no work
// tree: what the agent wrote is only read as objects.
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { git } from './git.js';

/** One bundle: whole, or in parts (a bundle base may be large: written one part at a time, never held whole). */
export type StoredBundle = Buffer | AsyncIterable<Buffer>;

/**
 * `git bundle unbundle` each of `bundles`, in order, into the bare repository `gitDir`. Each is
 * written to a file in a scratch directory inside `gitDir` (a process killed midway leaves it
 * there, removed with the repository, not in /tmp) and removed once applied; one bundle is on disk
 * at a time. A bundle whose prerequisites are missing fails with git's message.
 */
export async function unbundleInto(gitDir: string, bundles: AsyncIterable<StoredBundle> | Iterable<StoredBundle>): Promise<void> {
  await mkdir(join(gitDir, 'agentrun'), { recursive: true });
  const scratch = await mkdtemp(join(gitDir, 'agentrun', 'tmp-unbundle-'));
  try {
    const file = join(scratch, 'next.bundle');
    for await (const bundle of bundles) {
      if (Buffer.isBuffer(bundle)) await writeFile(file, bundle);
      else await pipeline(Readable.from(bundle), createWriteStream(file));
      await git(['bundle', 'unbundle', file], { gitDir });
      await rm(file, { force: true });
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
