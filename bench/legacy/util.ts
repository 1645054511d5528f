// A frozen copy of this module as it was before the file tools went through descriptors (2334ddd),
// kept only so bench/tools.ts can time the old string-path access beside the new in one run.
// Small shared helpers: hashing, atomic writes, text decoding, head/tail output buffers.
import { randomBytes } from 'node:crypto';
import { lchown, open, readFile, rename, stat, unlink, mkdir } from 'node:fs/promises';
import { sha256 } from '../../src/tools/util.js';
import { runningAsRoot } from '../../src/sandbox/workspace-owner.js';
import path from 'node:path';

/** sha256 of a file's bytes, or null when it does not exist. */
export async function fileHash(abs: string): Promise<string | null> {
  try {
    return sha256(await readFile(abs));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw e;
  }
}

/** Write via a temp file in the same directory + fsync + rename, so a crash never leaves a torn file. */
export async function atomicWrite(abs: string, content: string | Buffer): Promise<void> {
  const dir = path.dirname(abs);
  const created = await mkdir(dir, { recursive: true });
  const owner = await ownerFor(created ? path.dirname(created) : dir);
  // New directories and the file take the owner of what holds them: a root worker's workspace
  // belongs to the sandbox user, who must be able to change what the file tools wrote.
  if (owner && created) for (let d = dir; d.length >= created.length; d = path.dirname(d)) await lchown(d, owner.uid, owner.gid);
  let mode: number | undefined;
  try {
    mode = (await stat(abs)).mode & 0o7777;
  } catch {
    mode = undefined;
  }
  const tmp = path.join(dir, `.${path.basename(abs)}.agentrun-${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', mode ?? 0o644);
  try {
    if (owner) await fh.chown(owner.uid, owner.gid);
    await fh.writeFile(content);
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fh.close();
  try {
    await rename(tmp, abs);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  // Make the rename itself durable.
  const dh = await open(dir, 'r').catch(() => null);
  if (dh) {
    await dh.sync().catch(() => undefined);
    await dh.close();
  }
}

/** The owner new entries under `dir` should get, when the worker is root and `dir` is not root's. */
async function ownerFor(dir: string): Promise<{ uid: number; gid: number } | undefined> {
  if (!runningAsRoot()) return undefined;
  const st = await stat(dir).catch(() => undefined);
  return st && st.uid !== 0 ? { uid: st.uid, gid: st.gid } : undefined;
}
