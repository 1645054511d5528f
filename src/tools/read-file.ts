// read_file: whole file or a line range; big files come back as head and tail with a note.
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { readHead, withLocated } from './confine.js';
import { intParam, pathParam } from './params.js';
import { ToolError, type ToolContext, type ToolDefinition, type ToolResult } from './types.js';
import { decodeText, formatBytes, looksBinary } from './util.js';

/** Files up to this size are returned whole. */
const READ_LIMIT_BYTES = 100 * 1024;
const HEAD_BYTES = 60 * 1024;
const TAIL_BYTES = 30 * 1024;
/** A line range returns at most this much text. */
const RANGE_LIMIT_BYTES = 100 * 1024;
/** Line numbers of a truncated file's tail are counted only below this size. */
const COUNT_LINES_MAX = 64 * 1024 * 1024;

const schema = z.object({
  path: pathParam('The path of the file to read, relative to the workspace root.'),
  start_line: intParam('First line to read, 1-based (default 1).', 1, 1_000_000_000).optional(),
  end_line: intParam('Last line to read, inclusive (default: the end of the file).', 1, 1_000_000_000).optional(),
});

async function readRange(fd: FileHandle, start: number, len: number): Promise<Buffer> {
  const buf = Buffer.alloc(len);
  const { bytesRead } = await fd.read(buf, 0, len, start);
  return buf.subarray(0, bytesRead);
}

/** The open file from its start, in 1 MiB chunks (the handle stays open). */
function chunks(fh: FileHandle, signal?: AbortSignal) {
  return fh.createReadStream({ start: 0, highWaterMark: 1 << 20, autoClose: false, signal });
}

async function countLines(fh: FileHandle, signal?: AbortSignal): Promise<number> {
  let n = 0;
  let last = 10;
  for await (const chunk of chunks(fh, signal) as AsyncIterable<Buffer>) {
    let i = -1;
    while ((i = chunk.indexOf(10, i + 1)) !== -1) n++;
    if (chunk.length) last = chunk[chunk.length - 1]!;
  }
  return last === 10 ? n : n + 1;
}

/** Stream lines [start, end] without loading the whole file. */
async function readLines(fh: FileHandle, start: number, end: number | undefined, signal?: AbortSignal) {
  const out: Buffer[] = [];
  let outLen = 0;
  let line = 1;
  let lastLine = 0;
  let capped = false;
  const stream = chunks(fh, signal);
  try {
    outer: for await (const chunk of stream as AsyncIterable<Buffer>) {
      let pos = 0;
      while (pos < chunk.length) {
        if (end !== undefined && line > end) break outer;
        const nl = chunk.indexOf(10, pos);
        const stop = nl === -1 ? chunk.length : nl + 1;
        if (line >= start) {
          let piece = chunk.subarray(pos, stop);
          if (outLen + piece.length > RANGE_LIMIT_BYTES) {
            piece = piece.subarray(0, RANGE_LIMIT_BYTES - outLen);
            capped = true;
          }
          out.push(piece);
          outLen += piece.length;
          lastLine = line;
          if (capped) break outer;
        }
        pos = stop;
        if (nl !== -1) line++;
      }
    }
  } finally {
    stream.destroy();
  }
  return { buf: Buffer.concat(out), capped, lastLine };
}

async function readFileTool(args: z.output<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  return withLocated(ctx.workspace, args.path, { mustExist: true }, async (loc) => {
    const shown = loc.rel;
    const kind = await loc.kind();
    if (kind === 'dir') throw new ToolError(`${shown} is a directory; use list_files to see its contents.`);
    if (args.start_line !== undefined && args.end_line !== undefined && args.end_line < args.start_line) {
      throw new ToolError(`end_line (${args.end_line}) is before start_line (${args.start_line}).`);
    }
    // Everything below reads this one descriptor: what was checked is what is read.
    const { fh, size } = await loc.openRegular();
    try {
      return await readOpen(fh, size, shown, args, ctx);
    } finally {
      await fh.close();
    }
  });
}

async function readOpen(fh: FileHandle, size: number, shown: string, args: z.output<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  const st = { size };
  const sample = await readRange(fh, 0, Math.min(8192, st.size));
  if (sample.subarray(0, 5).toString('latin1') === '%PDF-')
    throw new ToolError(`${shown} is a PDF document (${formatBytes(st.size)}); read_file returns text files only.`);
  if (looksBinary(sample)) {
    throw new ToolError(
      `${shown} looks like a binary file (${formatBytes(st.size)}); read_file returns text only. Use execute_command (e.g. \`file ${shown}\` or \`xxd ${shown} | head\`) to inspect it.`,
    );
  }
  const meta: Record<string, unknown> = { path: shown, bytes: st.size };
  const notes: string[] = [];

  if (args.start_line !== undefined || args.end_line !== undefined) {
    const start = args.start_line ?? 1;
    const { buf, capped, lastLine } = await readLines(fh, start, args.end_line, ctx.signal);
    const dec = decodeText(buf);
    if (dec.invalidUtf8) notes.push('[The file is not valid UTF-8; invalid bytes are shown as U+FFFD.]');
    if (buf.length === 0) throw new ToolError(`${shown} has fewer than ${start} lines.`);
    if (capped) notes.push(`[Output limited to ${formatBytes(RANGE_LIMIT_BYTES)}; stopped in line ${lastLine}. Continue with start_line=${lastLine}.]`);
    Object.assign(meta, { startLine: start, endLine: lastLine, truncated: capped });
    const header = `[${shown}, lines ${start}-${lastLine}]\n`;
    return { ok: true, output: header + dec.text + (notes.length ? `\n${notes.join('\n')}` : ''), meta };
  }

  if (st.size <= READ_LIMIT_BYTES) {
    const buf = await readHead(fh, st.size);
    const dec = decodeText(buf);
    if (dec.invalidUtf8) notes.push('[The file is not valid UTF-8; invalid bytes are shown as U+FFFD. Writing it back would replace them.]');
    if (dec.encoding !== 'utf-8') meta.encoding = dec.encoding;
    meta.truncated = false;
    return { ok: true, output: dec.text + (notes.length ? `\n${notes.join('\n')}` : ''), meta };
  }

  // Large file: head and tail, never the middle (a 200 MB file costs two small reads).
  let head = await readRange(fh, 0, HEAD_BYTES);
  let tail = await readRange(fh, st.size - TAIL_BYTES, TAIL_BYTES);
  // Cut at line boundaries so line numbers stay meaningful.
  const headEnd = head.lastIndexOf(10);
  if (headEnd > 0) head = head.subarray(0, headEnd + 1);
  const tailStart = tail.indexOf(10);
  if (tailStart !== -1 && tailStart < tail.length - 1) tail = tail.subarray(tailStart + 1);
  let headLines = 0;
  for (const b of head) if (b === 10) headLines++;
  const omitted = st.size - head.length - tail.length;
  let where = '';
  if (st.size <= COUNT_LINES_MAX) {
    const total = await countLines(fh, ctx.signal);
    let tailLines = 0;
    for (const b of tail) if (b === 10) tailLines++;
    if (tail.length && tail[tail.length - 1] !== 10) tailLines++;
    const tailFirst = total - tailLines + 1;
    meta.lines = total;
    where = ` (lines ${headLines + 1}-${tailFirst - 1} of ${total})`;
  } else {
    where = ` (after line ${headLines}; the file is too large to count its lines)`;
  }
  const hdec = decodeText(head);
  const tdec = decodeText(tail);
  if (hdec.invalidUtf8 || tdec.invalidUtf8) notes.push('[The file is not valid UTF-8; invalid bytes are shown as U+FFFD.]');
  const note = `[... ${formatBytes(omitted)} omitted${where}. The file is ${formatBytes(st.size)}; read a part with start_line and end_line, or find the lines you need with search_files.]`;
  Object.assign(meta, { truncated: true, omittedBytes: omitted });
  return { ok: true, output: `${hdec.text}\n${note}\n\n${tdec.text}${notes.length ? `\n${notes.join('\n')}` : ''}`, meta };
}

export const readFile: ToolDefinition<typeof schema> = {
  name: 'read_file',
  description:
    'Read the contents of a text file in the workspace. Use this to examine a file before changing it, or to read code, configuration or logs. ' +
    `Files larger than ${formatBytes(READ_LIMIT_BYTES)} come back as their beginning and end with a note; read other parts with start_line and end_line (1-based, inclusive). ` +
    'Binary files are refused.',
  schema,
  kind: 'read',
  example: '<read_file>\n<path>src/config.ts</path>\n</read_file>',
  run: readFileTool,
  about: ['path'],
  line: (a) =>
    `read_file ${typeof a.path === 'string' ? a.path : ''}${a.start_line || a.end_line ? ` (lines ${a.start_line ?? 1}–${a.end_line ?? 'end'})` : ''}`,
};
