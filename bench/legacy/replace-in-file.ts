// A frozen copy of this module as it was before the file tools went through descriptors (2334ddd),
// kept only so bench/tools.ts can time the old string-path access beside the new in one run.
// replace_in_file: SEARCH/REPLACE blocks as in the seeds, applied in order, all or nothing.
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { assertNotGitDir, EDIT_LIMIT_BYTES, readRegularFile, resolveInWorkspace, toRel, workspaceRoot } from './confine.js';
import { pathParam } from '../../src/tools/params.js';
import { ToolError, type PreparedWrite as Prepared, type ToolContext, type ToolResult } from '../../src/tools/types.js';
import { applyBlocks, parseDiff } from '../../src/tools/replace-in-file.js';
import { decodeText, looksBinary, sha256 } from '../../src/tools/util.js';
import { atomicWrite } from './util.js';

/** The old intent carried the absolute path the write went to. */
type PreparedWrite = Prepared & { absPath: string };

const schema = z.object({ path: pathParam('The path of the file to modify.'), diff: z.string().min(1) });

async function prepare(args: z.output<typeof schema>, ctx: ToolContext): Promise<PreparedWrite> {
  const root = await workspaceRoot(ctx.workspace);
  const abs = await resolveInWorkspace(ctx.workspace, args.path);
  const shown = toRel(root, abs);
  assertNotGitDir(root, abs, shown);
  const blocks = parseDiff(args.diff);
  let raw: Buffer;
  try {
    if ((await stat(abs)).isDirectory()) throw new ToolError(`${shown} is a directory; give a file path.`);
    raw = await readRegularFile(abs, shown, { maxBytes: EDIT_LIMIT_BYTES });
  } catch (e) {
    if (e instanceof ToolError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new ToolError(`${shown} does not exist; use write_to_file to create it.`);
    throw e;
  }
  if (looksBinary(raw.subarray(0, 8192))) throw new ToolError(`${shown} looks like a binary file; replace_in_file edits text files only.`);
  const dec = decodeText(raw);
  if (dec.invalidUtf8) throw new ToolError(`${shown} is not valid UTF-8; replace_in_file would corrupt it. Use execute_command to edit it.`);
  if (dec.encoding !== 'utf-8') throw new ToolError(`${shown} is ${dec.encoding}; replace_in_file edits UTF-8 files only.`);
  const bom = raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? '\ufeff' : '';
  // Work with LF endings; a file that is consistently CRLF gets CRLF back.
  const crlf = (dec.text.match(/\r\n/g)?.length ?? 0) > 0 && (dec.text.match(/\r\n/g)?.length ?? 0) === (dec.text.match(/\n/g)?.length ?? 0);
  const text = crlf ? dec.text.replace(/\r\n/g, '\n') : dec.text;
  const outcome = applyBlocks(text, blocks, shown);
  const newContent = bom + (crlf ? outcome.content.replace(/\n/g, '\r\n') : outcome.content);
  const n = blocks.length;
  let message = `Applied ${n} SEARCH/REPLACE block${n > 1 ? 's' : ''} to ${shown}.`;
  if (outcome.fuzzy.length)
    message += ` Block${outcome.fuzzy.length > 1 ? 's' : ''} ${outcome.fuzzy.join(', ')} matched only when ignoring whitespace; check the indentation.`;
  if (newContent === bom + dec.text) message += ' The file content is unchanged (SEARCH and REPLACE were equal).';
  return {
    path: shown,
    absPath: abs,
    newContent,
    beforeHash: sha256(raw),
    afterHash: sha256(newContent),
    message,
    meta: { path: shown, blocks: n, fuzzyBlocks: outcome.fuzzy },
  };
}

async function apply(p: PreparedWrite): Promise<ToolResult> {
  await atomicWrite(p.absPath, p.newContent);
  return { ok: true, output: p.message, meta: { ...p.meta, afterHash: p.afterHash } };
}

export const replaceInFile = {
  async run(args: z.output<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
    return apply(await prepare(args, ctx));
  },
};
