// Small shared helpers: hashing, text decoding, head/tail output buffers.
import { createHash } from 'node:crypto';

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
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
