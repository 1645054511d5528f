// list_files: a directory's entries, or all files below it; .gitignore respected.
import { z } from 'zod';
import { withLocated, type Located } from './confine.js';
import { listDirectory, listFilesRecursive } from './files.js';
import { boolParam, pathParam } from './params.js';
import { ToolError, type ToolContext, type ToolDefinition, type ToolResult } from './types.js';

const LIST_LIMIT = 1000;
const LIST_TIME_MS = 20_000;

const schema = z.object({
  path: pathParam('The directory to list, relative to the workspace root ("." for the root).'),
  recursive: boolParam('true to list all files below the directory, false (default) for its direct entries only.').optional(),
});

async function listFilesTool(args: z.output<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  return withLocated(ctx.workspace, args.path, { mustExist: true }, (loc) => listLocated(loc, args));
}

async function listLocated(loc: Located, args: z.output<typeof schema>): Promise<ToolResult> {
  const shown = loc.rel;
  if ((await loc.kind()) !== 'dir') throw new ToolError(`${shown} is a file, not a directory; use read_file to read it.`);
  const prefix = shown === '.' ? '' : `${shown}/`;

  if (args.recursive) {
    const r = await listFilesRecursive(loc, { limit: LIST_LIMIT, deadline: Date.now() + LIST_TIME_MS });
    const lines = r.files;
    let out = lines.length ? lines.join('\n') : `(no files in ${shown})`;
    if (r.truncated) out += `\n\n[Listing stopped at ${LIST_LIMIT} files. List a subdirectory, or use search_files with a file_pattern, to see the rest.]`;
    return { ok: true, output: out, meta: { path: shown, count: lines.length, truncated: r.truncated, source: r.source } };
  }

  const entries = await listDirectory(loc);
  const shownEntries = entries.slice(0, LIST_LIMIT).map((e) => `${prefix}${e.name}${e.isDir ? '/' : ''}`);
  let out = shownEntries.length ? shownEntries.join('\n') : `(${shown} is empty)`;
  const truncated = entries.length > LIST_LIMIT;
  if (truncated) out += `\n\n[${entries.length - LIST_LIMIT} more entries not shown.]`;
  return { ok: true, output: out, meta: { path: shown, count: shownEntries.length, truncated } };
}

export const listFiles: ToolDefinition<typeof schema> = {
  name: 'list_files',
  description:
    'List the files and directories in a directory of the workspace (directories end with "/"). ' +
    `With recursive=true, list every file below it. Files ignored by .gitignore are left out; at most ${LIST_LIMIT} entries are shown. ` +
    'Paths are relative to the workspace root.',
  schema,
  kind: 'read',
  example: '<list_files>\n<path>src</path>\n<recursive>true</recursive>\n</list_files>',
  run: listFilesTool,
  about: ['path'],
  line: (a) => `list_files ${typeof a.path === 'string' ? a.path : '.'}${a.recursive === true || a.recursive === 'true' ? ' (recursive)' : ''}`,
};
