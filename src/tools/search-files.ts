// search_files: regex search over the workspace's files. Matching runs in a worker thread that is
// terminated when it stops making progress, so a catastrophic regex such as (a+)+$ cannot hang the
// activity; a whole-search time cap and a result cap bound the rest.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { withLocated, type Located } from './confine.js';
import { globMatcher, listFilesHeld } from './files.js';
import { pathParam } from './params.js';
import { ToolError, type ToolContext, type ToolDefinition, type ToolResult } from './types.js';

const SEARCH_LIMITS = {
  maxResults: 300,
  maxFiles: 200_000,
  maxFileBytes: 4 * 1024 * 1024,
  timeMs: 30_000,
  /** No progress for this long means the regex is backtracking catastrophically. */
  stallMs: 3_000,
  maxLineChars: 300,
  contextLines: 1,
};

/**
 * Runs in each worker (plain JS: it must load the same way under tsx, vitest and compiled code).
 * A worker takes one search at a time, as a message; between searches it waits in the pool.
 * Worker k of n takes files k, k+n, k+2n…; it ticks its progress counter once per file and once
 * per 256 lines, so the main thread can tell a slow search from a stuck regex.
 */
const WORKER_SOURCE = String.raw`
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const C = fs.constants;
const NOFOLLOW = C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY;
const O_DIR = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW | C.O_NONBLOCK;
const at = (fd, name) => '/proc/self/fd/' + fd + '/' + name;
let buf = Buffer.allocUnsafe(256 * 1024);
parentPort.on('message', (job) => {
const { rootFd, files, dirFds, slot, workers, source, flags, maxResults, maxFileBytes, maxLineChars, contextLines, progress, wholeFilePrefilter } = job;
const counter = new Int32Array(progress);
const re = new RegExp(source, flags);
const reWhole = new RegExp(source, flags + 'm');
// Every file is opened with O_NOFOLLOW relative to its directory's descriptor (see
// src/tools/beneath.ts), which the main thread opened beneath the root while listing and holds
// open until every worker is done with the search; a file swapped for a symlink fails to open.
// Where it had too many open, the directory is walked to here from the root, one component at a time.
let curDir = '', curFd = rootFd;
function dirFd(dirRel) {
  if (dirRel === curDir) return curFd;
  if (curFd !== rootFd) fs.closeSync(curFd);
  curDir = ''; curFd = rootFd;
  let fd = rootFd;
  for (const name of dirRel.split('/')) {
    if (!name) continue;
    let next = -1;
    try { next = fs.openSync(at(fd, name), O_DIR); } catch {}
    if (fd !== rootFd) fs.closeSync(fd);
    if (next < 0) return -1;
    fd = next;
  }
  curDir = dirRel; curFd = fd;
  return fd;
}
let total = 0, searched = 0, skippedLarge = 0, skippedBinary = 0, capped = false;
const cut = (s) => (s.length > maxLineChars ? s.slice(0, maxLineChars) + ' …' : s);
for (let idx = slot; idx < files.length; idx += workers) {
  Atomics.add(counter, slot, 1);
  const rel = files[idx];
  let fd;
  const slash = rel.lastIndexOf('/');
  const dfd = dirFds[idx] >= 0 ? dirFds[idx] : dirFd(slash < 0 ? '' : rel.slice(0, slash));
  if (dfd < 0) continue;
  // O_NOFOLLOW: a symlink (which may lead outside the workspace) fails to open instead of being read.
  try { fd = fs.openSync(at(dfd, rel.slice(slash + 1)), NOFOLLOW); } catch { continue; }
  let text;
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) continue;
    if (st.size > maxFileBytes) { skippedLarge++; continue; }
    if (st.size > buf.length) buf = Buffer.allocUnsafe(st.size);
    let n = 0;
    while (n < st.size) { const r = fs.readSync(fd, buf, n, st.size - n, n); if (r <= 0) break; n += r; }
    const sampleEnd = Math.min(n, 8192);
    if (buf.subarray(0, sampleEnd).includes(0)) { skippedBinary++; continue; }
    searched++;
    text = buf.toString('utf8', 0, n);
  } catch { continue; } finally { fs.closeSync(fd); }
  if (wholeFilePrefilter && !reWhole.test(text)) continue;
  const lines = text.split('\n');
  const hits = [];
  for (let i = 0; i < lines.length; i++) {
    if ((i & 255) === 0) Atomics.add(counter, slot, 1);
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
        out.push((j + 1) + (hitSet.has(j) ? ':' : '-') + ' ' + cut(lines[j].replace(/\r$/, '')));
        last = j;
      }
    }
    parentPort.postMessage({ type: 'file', index: idx, file: rel, count: hits.length, text: out.join('\n') });
  }
  if (capped) break;
}
if (curFd !== rootFd) fs.closeSync(curFd);
// An idle worker keeps no large file's bytes.
if (buf.length > 1024 * 1024) buf = Buffer.allocUnsafe(256 * 1024);
// The last message of the search: after it, this worker touches none of its descriptors.
parentPort.postMessage({ type: 'done', total, searched, skippedLarge, skippedBinary, capped });
});
`;

/** Compile like ripgrep would accept: `(?i)` prefix as a flag; Unicode mode when the pattern allows it. */
function compileRegex(pattern: string): { source: string; flags: string } {
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
      throw new ToolError(
        `The regex is not valid: ${(e as Error).message}. Use JavaScript/Rust-style regex syntax and escape special characters such as ( ) [ ] { } . * + ? with a backslash.`,
      );
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
  file_pattern: z.string().trim().optional().describe('A glob that file names must match, e.g. "*.ts" or "src/**/*.{js,jsx}" (default: all files).'),
});

interface WorkerDone {
  type: 'done';
  total: number;
  searched: number;
  skippedLarge: number;
  skippedBinary: number;
  capped: boolean;
}
interface FileHits {
  type: 'file';
  index: number;
  file: string;
  count: number;
  text: string;
}
type WorkerMsg = FileHits | WorkerDone;

/** Files per extra worker: below this, one worker is faster than starting two. */
const FILES_PER_WORKER = 2_000;

/**
 * Search workers kept between calls: booting one costs tens of ms of CPU, more than a whole
 * search of a few thousand files. A worker stopped for a stuck regex, the time cap or a cancel
 * is terminated, never kept; an idle one does not hold the process open and ends after a while.
 */
/** Only these: a worker's own listeners (of newListener) start and stop its message port. */
const unlisten = (w: Worker) => {
  for (const e of ['message', 'error', 'exit']) w.removeAllListeners(e);
};

const pool = {
  idle: [] as Worker[],
  max: Math.max(1, availableParallelism()),
  idleMs: 60_000,
  timers: new Map<Worker, NodeJS.Timeout>(),
  take(): Worker {
    const w = pool.idle.pop();
    if (w) {
      clearTimeout(pool.timers.get(w));
      pool.timers.delete(w);
      unlisten(w);
      w.ref();
      return w;
    }
    return new Worker(WORKER_SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 512 } });
  },
  giveBack(w: Worker): void {
    unlisten(w);
    if (pool.idle.length >= pool.max) {
      void w.terminate();
      return;
    }
    const drop = () => {
      pool.idle = pool.idle.filter((x) => x !== w);
      clearTimeout(pool.timers.get(w));
      pool.timers.delete(w);
    };
    w.once('exit', drop);
    w.on('error', drop);
    const timer = setTimeout(() => {
      drop();
      void w.terminate();
    }, pool.idleMs);
    timer.unref();
    pool.timers.set(w, timer);
    w.unref();
    pool.idle.push(w);
  },
};

async function searchFilesTool(args: z.output<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  const started = Date.now();
  const { source, flags } = compileRegex(args.regex);
  // The root stays open while the workers read beneath it.
  return withLocated(ctx.workspace, args.path, { mustExist: true }, (loc) => searchLocated(loc, args, source, flags, started, ctx));
}

async function searchLocated(
  loc: Located,
  args: z.output<typeof schema>,
  source: string,
  flags: string,
  started: number,
  ctx: ToolContext,
): Promise<ToolResult> {
  const shown = loc.rel;
  const match = globMatcher(args.file_pattern);
  const progress = new SharedArrayBuffer(4 * pool.max);
  const counters = new Int32Array(progress);
  // Lookarounds can see across line ends, so the whole-file prefilter could hide a per-line match.
  const wholeFilePrefilter = !/\(\?<?[=!]/.test(source);
  const hits: FileHits[] = [];
  const dones: WorkerDone[] = [];
  const workers: Worker[] = [];
  const finished: boolean[] = [];
  let failure: { error: unknown } | undefined;
  let changed = () => {};
  const addWorker = () => {
    const slot = workers.length;
    const w = pool.take();
    finished[slot] = false;
    w.on('message', (m: WorkerMsg) => {
      if (m.type === 'file') hits.push(m);
      else {
        dones.push(m);
        finished[slot] = true;
        changed();
      }
    });
    w.on('error', (error) => {
      failure ??= { error };
      changed();
    });
    w.on('exit', () => {
      if (!finished[slot]) failure ??= { error: new Error('a search worker ended before it finished its part of the search') };
      changed();
    });
    workers.push(w);
  };
  // The first worker (booting, when the pool has none) while the tree is listed.
  addWorker();
  let list: { files: string[]; dirFds: Int32Array; truncated: boolean; close(): void } | undefined;
  let stopReason: 'stall' | 'time' | 'cancel' | null = null;
  let n = 1;
  let posted = false;
  try {
    if ((await loc.kind()) === 'dir') {
      const r = await listFilesHeld(loc, { limit: SEARCH_LIMITS.maxFiles, deadline: started + SEARCH_LIMITS.timeMs / 2 });
      const keep = r.files.map(match);
      list = { files: r.files.filter((_, i) => keep[i]), dirFds: r.dirFds.filter((_, i) => keep[i]), truncated: r.truncated, close: r.close };
    } else {
      list = { files: [shown], dirFds: Int32Array.of(loc.dir.fd), truncated: false, close: () => undefined };
    }
    const { files, dirFds } = list;
    n = Math.max(1, Math.min(pool.max, Math.ceil(files.length / FILES_PER_WORKER)));
    while (workers.length < n) addWorker();
    posted = true;
    workers.forEach((w, slot) =>
      w.postMessage({ rootFd: loc.rootFd, files, dirFds, slot, workers: n, source, flags, progress, wholeFilePrefilter, ...SEARCH_LIMITS }),
    );
    await new Promise<void>((resolve, reject) => {
      const last = Array.from({ length: n }, () => ({ count: -1, at: Date.now() }));
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        clearInterval(timer);
        changed = () => {};
        if (failure) reject(failure.error);
        else resolve();
      };
      const timer = setInterval(() => {
        const now = Date.now();
        for (let k = 0; k < n; k++) {
          const c = Atomics.load(counters, k);
          if (c !== last[k]!.count) last[k] = { count: c, at: now };
          else if (!finished[k] && now - last[k]!.at > SEARCH_LIMITS.stallMs) stopReason ??= 'stall';
        }
        if (ctx.signal?.aborted) stopReason ??= 'cancel';
        if (now - started > SEARCH_LIMITS.timeMs) stopReason ??= 'time';
        if (stopReason) finish();
      }, 100);
      changed = () => {
        if (failure || finished.every(Boolean)) finish();
      };
      changed();
    });
  } finally {
    // A worker still searching (stopped, or the search failed) is ended; one that finished goes back to the pool.
    await Promise.all(workers.map((w, k) => (!posted || (finished[k] && !failure) ? pool.giveBack(w) : w.terminate())));
    // Only now that no worker uses them: a descriptor closed earlier could be reused under one.
    list?.close();
  }
  const listTruncated = list.truncated;
  // Results in file order; the cap applies to the merged list.
  hits.sort((a, b) => a.index - b.index);
  const blocks: string[] = [];
  let total = 0;
  let capped = dones.some((d) => d.capped);
  for (const h of hits) {
    if (total >= SEARCH_LIMITS.maxResults) {
      capped = true;
      break;
    }
    blocks.push(`${h.file}\n${h.text}`);
    total += h.count;
  }
  const fileCount = blocks.length;
  const d =
    dones.length === n
      ? dones.reduce((a, b) => ({
          ...a,
          searched: a.searched + b.searched,
          skippedLarge: a.skippedLarge + b.skippedLarge,
          skippedBinary: a.skippedBinary + b.skippedBinary,
        }))
      : null;
  const elapsedMs = Date.now() - started;
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
  if (capped) notes.push(`[Showing the first ${SEARCH_LIMITS.maxResults} matches; narrow the search to see others.]`);
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
    meta: { path: shown, matches: total, files: fileCount, searchedFiles: d?.searched, elapsedMs, stopped: stopReason ?? undefined, capped, workers: n },
  };
}

export const searchFiles: ToolDefinition<typeof schema> = {
  name: 'search_files',
  description:
    'Search the files below a directory for a regular expression and show each matching line with its line number and one line of context. ' +
    `Files ignored by .gitignore, binary files and files over ${SEARCH_LIMITS.maxFileBytes / 1024 / 1024} MB are skipped; at most ${SEARCH_LIMITS.maxResults} matches are shown. ` +
    'Use it to find definitions, usages, TODOs or error messages.',
  schema,
  kind: 'read',
  example: '<search_files>\n<path>src</path>\n<regex>function\\s+load\\w*</regex>\n<file_pattern>*.ts</file_pattern>\n</search_files>',
  run: searchFilesTool,
  about: ['path', 'regex'],
  line: (a) =>
    `search_files ${JSON.stringify(typeof a.regex === 'string' ? a.regex : '')} in ${typeof a.path === 'string' ? a.path : '.'}${typeof a.file_pattern === 'string' && a.file_pattern ? ` (${a.file_pattern})` : ''}`,
};
