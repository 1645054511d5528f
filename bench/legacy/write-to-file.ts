// A frozen copy of this module as it was before the file tools went through descriptors (2334ddd),
// kept only so bench/tools.ts can time the old string-path access beside the new in one run.
// write_to_file: create or overwrite a whole file, atomically (temp file + rename).
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { assertNotGitDir, EDIT_LIMIT_BYTES, readRegularFile, resolveInWorkspace, toRel, workspaceRoot } from './confine.js';
import { pathParam } from '../../src/tools/params.js';
import { ToolError, type FileWriteTool, type PreparedWrite as Prepared, type ToolContext, type ToolResult } from '../../src/tools/types.js';
import { formatBytes, sha256 } from '../../src/tools/util.js';
import { atomicWrite } from './util.js';

/** The old intent carried the absolute path the write went to. */
type PreparedWrite = Prepared & { absPath: string };

const schema = z.object({
  path: pathParam('The path of the file to write, relative to the workspace root. Missing directories are created.'),
  content: z
    .string({ error: 'expected the complete file content as text' })
    .describe('The complete content of the file. Give the whole file, not a fragment: the file is replaced by exactly this text.'),
});

async function prepare(args: z.output<typeof schema>, ctx: ToolContext): Promise<PreparedWrite> {
  const root = await workspaceRoot(ctx.workspace);
  const abs = await resolveInWorkspace(ctx.workspace, args.path);
  const shown = toRel(root, abs);
  assertNotGitDir(root, abs, shown);
  let before: Buffer | null = null;
  try {
    const st = await stat(abs);
    if (st.isDirectory()) throw new ToolError(`${shown} is a directory; give a file path.`);
    before = await readRegularFile(abs, shown, { maxBytes: EDIT_LIMIT_BYTES });
  } catch (e) {
    if (e instanceof ToolError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') throw new ToolError(`${shown}: a parent of this path is a file, not a directory.`);
    if (code !== 'ENOENT') throw e;
  }
  const lines = args.content === '' ? 0 : args.content.split('\n').length - (args.content.endsWith('\n') ? 1 : 0);
  const size = Buffer.byteLength(args.content);
  const verb = before === null ? 'Created' : 'Overwrote';
  return {
    path: shown,
    absPath: abs,
    newContent: args.content,
    beforeHash: before === null ? null : sha256(before),
    afterHash: sha256(args.content),
    message: `${verb} ${shown} (${lines} lines, ${formatBytes(size)}).`,
    meta: { path: shown, created: before === null, bytes: size, lines },
  };
}

async function apply(p: PreparedWrite): Promise<ToolResult> {
  await atomicWrite(p.absPath, p.newContent);
  return { ok: true, output: p.message, meta: { ...p.meta, afterHash: p.afterHash } };
}

export const writeToFile: FileWriteTool<typeof schema> = {
  name: 'write_to_file',
  description:
    'Write a file in the workspace: create it, or replace its whole content. Missing parent directories are created. ' +
    'The write is atomic. For small changes to an existing file prefer replace_in_file.',
  schema,
  readOnly: false,
  mutating: true,
  control: false,
  example:
    '<write_to_file>\n<path>src/greet.ts</path>\n<content>\nexport function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n</content>\n</write_to_file>',
  prepare,
  apply,
  async run(args, ctx) {
    return apply(await prepare(args, ctx));
  },
};
