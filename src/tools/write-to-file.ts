// write_to_file: create or overwrite a whole file, atomically (temp file + rename).
import { z } from 'zod';
import { assertNotGitDir, EDIT_LIMIT_BYTES, MissingParent, withLocated, writeBeneath } from './confine.js';

import { pathParam } from './params.js';
import { ToolError, type FileWriteTool, type PreparedWrite, type ToolContext, type ToolResult } from './types.js';
import { formatBytes, sha256 } from './util.js';

const schema = z.object({
  path: pathParam('The path of the file to write, relative to the workspace root. Missing directories are created.'),
  content: z
    .string({ error: 'expected the complete file content as text' })
    .describe('The complete content of the file. Give the whole file, not a fragment: the file is replaced by exactly this text.'),
});

async function prepare(args: z.output<typeof schema>, ctx: ToolContext): Promise<PreparedWrite> {
  const { shown, before } = await withLocated(ctx.workspace, args.path, {}, async (loc) => {
    assertNotGitDir(loc.rel, loc.rel);
    const kind = await loc.kind();
    if (kind === 'dir') throw new ToolError(`${loc.rel} is a directory; give a file path.`);
    return { shown: loc.rel, before: kind === 'missing' ? null : await loc.read({ maxBytes: EDIT_LIMIT_BYTES }) };
  }).catch((e: unknown) => {
    // A missing directory on the way is created by the write.
    if (e instanceof MissingParent) return { shown: e.rel, before: null };
    throw e;
  });
  const lines = args.content === '' ? 0 : args.content.split('\n').length - (args.content.endsWith('\n') ? 1 : 0);
  const size = Buffer.byteLength(args.content);
  const verb = before === null ? 'Created' : 'Overwrote';
  return {
    path: shown,
    newContent: args.content,
    beforeHash: before === null ? null : sha256(before),
    afterHash: sha256(args.content),
    message: `${verb} ${shown} (${lines} lines, ${formatBytes(size)}).`,
    meta: { path: shown, created: before === null, bytes: size, lines },
  };
}

async function apply(p: PreparedWrite, ctx: ToolContext): Promise<ToolResult> {
  await writeBeneath(ctx.workspace, p.path, p.newContent);
  return { ok: true, output: p.message, meta: { ...p.meta, afterHash: p.afterHash } };
}

export const writeToFile: FileWriteTool<typeof schema> = {
  name: 'write_to_file',
  description:
    'Write a file in the workspace: create it, or replace its whole content. Missing parent directories are created. ' +
    'The write is atomic. For small changes to an existing file prefer replace_in_file.',
  schema,
  kind: 'edit',
  example:
    '<write_to_file>\n<path>src/greet.ts</path>\n<content>\nexport function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n</content>\n</write_to_file>',
  prepare,
  apply,
  async run(args, ctx) {
    return apply(await prepare(args, ctx), ctx);
  },
  about: ['path'],
  line: (a) => {
    const n = (typeof a.content === 'string' ? a.content : '').split('\n').filter((l, i, all) => i < all.length - 1 || l !== '').length;
    return `write_to_file ${typeof a.path === 'string' ? a.path : ''} (${n} line${n === 1 ? '' : 's'})`;
  },
  // A whole new content: every line added.
  edits: (a) => [{ search: '', replace: typeof a.content === 'string' ? a.content : '' }],
};
