// search_files: regex search over the workspace's files. Matching runs in a worker thread that is
// terminated when it stops making progress, so a catastrophic regex such as (a+)+$ cannot hang the
// activity; a whole-search time cap and a result cap bound the rest.
import { lstat } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { resolveInWorkspace, toRel, workspaceRoot } from './confine.js';
import { globMatcher, listFilesRecursive } from './files.js';
import { pathParam } from './params.js';
import { ToolError, type ToolContext, type ToolDefinition, type ToolResult } from './types.js';

export const SEARCH_LIMITS = {
  maxResults: 300,
  maxFiles: 200_000,
  maxFileBytes: 4 * 1024 * 1024,
  timeMs: 30_000,
  /** No progress for this long means the regex is backtracking catastrophically. */
  stallMs: 3_000,
  maxLineChars: 300,
  contextLines: 1,
};

/** Runs in the worker (plain JS: it must load the same way under tsx, vitest and compiled code). */
const WORKER_SOURCE = String.raw`
const { workerData, parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const { root, files, source, flags, maxResults, maxFileBytes, maxLineChars, contextLines, progress, wholeFilePrefilter } = workerData;
const counter = new Int32Array(progress);
const re = new RegExp(source, flags);
const reWhole = new RegExp(source, flags + 'm');
let total = 0, searched = 0, skippedLarge = 0, skippedBinary = 0, capped = false;
const cut = (s) => (s.length > maxLineChars ? s.slice(0, maxLineChars) + ' …' : s);
for (const rel of files) {
  Atomics.add(counter, 0, 1);
  const abs = path.join(root, rel);
  let st;
  try { st = fs.lstatSync(abs); } catch { continue; }
  if (!st.isFile()) continue; // symlinks (which may lead outside), directories, sockets
  if (st.size > maxFileBytes) { skippedLarge++; continue; }
  let buf;
  try { buf = fs.readFileSync(abs); } catch { continue; }
  const sample = buf.subarray(0, 8192);
  if (sample.includes(0)) { skippedBinary++; continue; }
  searched++;
  const text = buf.toString('utf8');
  if (wholeFilePrefilter && !reWhole.test(text)) continue;
  const lines = text.split('\n');
  const hits = [];
  for (let i = 0; i < lines.length; i++) {
    if ((i & 255) === 0) Atomics.add(counter, 0, 1);
    let line = lines[i];
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (re.test(line)) {
      hits.push(i);
      total++;
      if (total >= maxResults) { capped = true; break; }
    }
  }
  if (hits.length) {
    const out = [];
    const hitSet = new Set(hits);
    let last = -2;
    for (const h of hits) {
      const from = Math.max(0, h - contextLines, last + 1);
      const to = Math.min(lines.length - 1, h + contextLines);
      if (last >= 0 && from > last + 1) out.push('--');
      for (let j = from; j <= to; j++) {
        if (j <= last) continue;
        const isHit = hitSet.has(j);
        out.push((j + 1) + (isHit ? ':' : '-') + ' ' + cut(lines[j].replace(/\r$/, '')));
        last = j;
      }
    }
    parentPort.postMessage({ type: 'file', file: rel, count: hits.length, text: out.join('\n') });
  }
  if (capped) break;
}
parentPort.postMessage({ type: 'done', total, searched, skippedLarge, skippedBinary, capped });
`;

/** Compile like ripgrep would accept: `(?i)` prefix as a flag; Unicode mode when the pattern allows it. */
export function compileRegex(pattern: string): { source: string; flags: string } {
  let source = pattern;
  let flags = '';
  const inline = /^\(\?([ims]+)\)/.exec(source);
  if (inline) {
    flags += [...new Set(inline[1]!.replace('m', ''))].join('');
    source = source.slice(inline[0].length);
  }
  try {
    new RegExp(source, flags + 'u');
    return { source, flags: flags + 'u' };
  } catch {
    try {
      new RegExp(source, flags);
      return { source, flags };
    } catch (e) {
      throw new ToolError(`The regex is not valid: ${(e as Error).message}. Use JavaScript/Rust-style regex syntax and escape special characters such as ( ) [ ] { } . * + ? with a backslash.`);
    }
  }
}

const schema = z.object({
  path: pathParam('The directory to search recursively (or one file), relative to the workspace root.'),
  regex: z
    .string({ error: 'expected a regular expression' })
    .transform((s) => s.replace(/^[\r\n]+|[\r\n]+$/g, ''))
    .pipe(z.string().min(1, { error: 'expected a non-empty regular expression' }))
    .describe('The regular expression to search for (Rust/JavaScript syntax; `(?i)` at the start for case-insensitive).'),
  file_pattern: z
    .string()
    .trim()
    .optional()
    .describe('A glob that file names must match, e.g. "*.ts" or "src/**/*.{js,jsx}" (default: all files).'),
});

interface WorkerDone {
  type: 'done';
  total: number;
  searched: number;
  skippedLarge: number;
  skippedBinary: number;
  capped: boolean;
}
type WorkerMsg = { type: 'file'; file: string; count: number; text: string } | WorkerDone;

export async function searchFilesTool(args: z.output<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  const started = Date.now();
  const root = await workspaceRoot(ctx.workspace);
  const abs = await resolveInWorkspace(ctx.workspace, args.path, { mustExist: true });
  const shown = toRel(root, abs);
  const { source, flags } = compileRegex(args.regex);
  const match = globMatcher(args.file_pattern);
  const st = await lstat(abs);
  let files: string[];
  let listTruncated = false;
  if (st.isDirectory()) {
    const r = await listFilesRecursive(root, abs, { limit: SEARCH_LIMITS.maxFiles, deadline: started + SEARCH_LIMITS.timeMs / 2 });
    files = r.files.filter(match);
    listTruncated = r.truncated;
  } else {
    files = [shown];
  }
  const progress = new SharedArrayBuffer(4);
  const counter = new Int32Array(progress);
  // Lookarounds can see across line ends, so the whole-file prefilter could hide a per-line match.
  const wholeFilePrefilter = !/\(\?<?[=!]/.test(source);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { root, files, source, flags, progress, wholeFilePrefilter, ...SEARCH_LIMITS },
    resourceLimits: { maxOldGenerationSizeMb: 512 },
  });
  const blocks: string[] = [];
  let fileCount = 0;
  let done: WorkerDone | null = null;
  let stopReason: 'stall' | 'time' | 'cancel' | null = null;
  await new Promise<void>((resolve, reject) => {
    let lastCount = -1;
    let lastChange = Date.now();
    const timer = setInterval(() => {
      const c = Atomics.load(counter, 0);
      const now = Date.now();
      if (c !== lastCount) {
        lastCount = c;
        lastChange = now;
      }
      if (ctx.signal?.aborted) stopReason = 'cancel';
      else if (now - lastChange > SEARCH_LIMITS.stallMs) {
        stopReason = 'stall';
      } else if (now - started > SEARCH_LIMITS.timeMs) stopReason = 'time';
      if (stopReason) {
        clearInterval(timer);
        void worker.terminate().then(() => resolve());
      }
    }, 100);
    worker.on('message', (m: WorkerMsg) => {
      if (m.type === 'file') {
        fileCount++;
        blocks.push(`${m.file}\n${m.text}`);
      } else done = m;
    });
    worker.on('error', (e) => {
      clearInterval(timer);
      reject(e);
    });
    worker.on('exit', () => {
      clearInterval(timer);
      resolve();
    });
  });
  const elapsedMs = Date.now() - started;
  const d = done as WorkerDone | null;
  const total = d?.total ?? blocks.reduce((n, b) => n + (b.match(/^\d+:/gm)?.length ?? 0), 0);
  const notes: string[] = [];
  if (stopReason === 'stall') {
    const msg =
      `The regex made no progress for ${SEARCH_LIMITS.stallMs / 1000} s and the search was stopped: it backtracks catastrophically on some line ` +
      '(nested quantifiers such as (a+)+ or (.*)* do this). Simplify the pattern, e.g. remove the nested repetition.';
    if (blocks.length === 0) throw new ToolError(msg, { elapsedMs, stopped: 'stall' });
    notes.push(`[${msg} Results found before that are shown.]`);
  } else if (stopReason === 'time') {
    notes.push(`[The search hit its ${SEARCH_LIMITS.timeMs / 1000} s time limit; results are partial. Narrow the path or add a file_pattern.]`);
  } else if (stopReason === 'cancel') {
    notes.push('[The search was cancelled; results are partial.]');
  }
  if (d?.capped) notes.push(`[Showing the first ${SEARCH_LIMITS.maxResults} matches; narrow the search to see others.]`);
  if (listTruncated) notes.push(`[Only the first ${SEARCH_LIMITS.maxFiles} files were searched.]`);
  if (d?.skippedLarge) notes.push(`[${d.skippedLarge} file(s) over ${SEARCH_LIMITS.maxFileBytes / 1024 / 1024} MB were not searched.]`);
  const head =
    total === 0
      ? `No matches for /${args.regex}/ in ${shown}${args.file_pattern ? ` (files matching ${args.file_pattern})` : ''}.`
      : `Found ${total} match${total === 1 ? '' : 'es'} in ${fileCount} file${fileCount === 1 ? '' : 's'}.`;
  const output = [head, ...blocks.map((b) => `\n${b}`), ...(notes.length ? ['', ...notes] : [])].join('\n');
  return {
    ok: true,
    output,
    meta: { path: shown, matches: total, files: fileCount, searchedFiles: d?.searched, elapsedMs, stopped: stopReason ?? undefined, capped: d?.capped ?? false },
  };
}

export const searchFiles: ToolDefinition<typeof schema> = {
  name: 'search_files',
  description:
    'Search the files below a directory for a regular expression and show each matching line with its line number and one line of context. ' +
    `Files ignored by .gitignore, binary files and files over ${SEARCH_LIMITS.maxFileBytes / 1024 / 1024} MB are skipped; at most ${SEARCH_LIMITS.maxResults} matches are shown. ` +
    'Use it to find definitions, usages, TODOs or error messages.',
  schema,
  readOnly: true,
  mutating: false,
  control: false,
  example: '<search_files>\n<path>src</path>\n<regex>function\\s+load\\w*</regex>\n<file_pattern>*.ts</file_pattern>\n</search_files>',
  run: searchFilesTool,
};
