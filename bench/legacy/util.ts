// A frozen copy of this module as it was before the file tools went through descriptors (2334ddd),
// kept only so bench/tools.ts can time the old string-path access beside the new in one run.
// Small shared helpers: hashing, atomic writes, text decoding, head/tail output buffers.
import { createHash, randomBytes } from 'node:crypto';
import { lchown, open, readFile, rename, stat, unlink, mkdir } from 'node:fs/promises';
import { runningAsRoot } from '../../src/workspace/owner.js';
import path from 'node:path';

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

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

/** Heuristic binary check on a sample: NUL bytes or many control characters. */
export function looksBinary(sample: Buffer): boolean {
  if (sample.length === 0) return false;
  // UTF-16 text carries NULs; treat a BOM as text.
  if (sample.length >= 2 && ((sample[0] === 0xff && sample[1] === 0xfe) || (sample[0] === 0xfe && sample[1] === 0xff))) return false;
  let control = 0;
  for (const b of sample) {
    if (b === 0) return true;
    if (b < 8 || (b > 13 && b < 32 && b !== 27)) control++;
  }
  return control / sample.length > 0.1;
}

/** Decode text; invalid UTF-8 is replaced with U+FFFD and reported. UTF-16 with a BOM is honoured. */
export function decodeText(buf: Buffer): { text: string; invalidUtf8: boolean; encoding: string } {
  if (buf.length >= 2 && buf[0] === 0xff && buf[1] === 0xfe)
    return { text: new TextDecoder('utf-16le').decode(buf.subarray(2)), invalidUtf8: false, encoding: 'utf-16le' };
  if (buf.length >= 2 && buf[0] === 0xfe && buf[1] === 0xff)
    return { text: new TextDecoder('utf-16be').decode(buf.subarray(2)), invalidUtf8: false, encoding: 'utf-16be' };
  const body = buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? buf.subarray(3) : buf;
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(body), invalidUtf8: false, encoding: 'utf-8' };
  } catch {
    return { text: new TextDecoder('utf-8').decode(body), invalidUtf8: true, encoding: 'utf-8' };
  }
}

/**
 * Keeps the first `headLimit` and the last `tailLimit` bytes of a stream, counting what falls
 * in between, so memory stays bounded however much is written.
 */
export class HeadTailBuffer {
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  total = 0;

  constructor(
    private readonly headLimit: number,
    private readonly tailLimit: number,
  ) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headLen < this.headLimit) {
      const take = Math.min(chunk.length, this.headLimit - this.headLen);
      this.head.push(chunk.subarray(0, take));
      this.headLen += take;
      chunk = chunk.subarray(take);
      if (chunk.length === 0) return;
    }
    if (chunk.length >= this.tailLimit) {
      // Copy so the big chunk it came from can be freed.
      this.tail = [Buffer.from(chunk.subarray(chunk.length - this.tailLimit))];
      this.tailLen = this.tailLimit;
      return;
    }
    this.tail.push(chunk);
    this.tailLen += chunk.length;
    while (this.tailLen - this.tail[0]!.length >= this.tailLimit) this.tailLen -= this.tail.shift()!.length;
  }

  get dropped(): number {
    return Math.max(0, this.total - this.headLen - Math.min(this.tailLen, this.tailLimit));
  }

  /** Text with the dropped middle replaced by a note. */
  render(note: (droppedBytes: number) => string): string {
    const head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    if (tail.length > this.tailLimit) tail = tail.subarray(tail.length - this.tailLimit);
    const dec = (b: Buffer) => new TextDecoder('utf-8').decode(b);
    const dropped = this.total - head.length - tail.length;
    if (dropped <= 0) return dec(Buffer.concat([head, tail]));
    return `${dec(head)}\n\n${note(dropped)}\n\n${dec(tail)}`;
  }
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1000 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(2)} GB`;
}

export function isFsUserError(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return (
    code !== undefined && ['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'ELOOP', 'ENAMETOOLONG', 'EEXIST', 'ENOTEMPTY', 'EROFS', 'EINVAL'].includes(code)
  );
}
