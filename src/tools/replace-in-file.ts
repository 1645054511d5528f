// replace_in_file: SEARCH/REPLACE blocks as in the seeds, applied in order, all or nothing.
import { z } from 'zod';
import { assertNotGitDir, EDIT_LIMIT_BYTES, MissingParent, withLocated, writeBeneath } from './confine.js';

import { pathParam } from './params.js';
import { ToolError, type FileWriteTool, type PreparedWrite, type ToolContext, type ToolResult } from './types.js';
import { decodeText, looksBinary, sha256 } from './util.js';

export interface ReplaceBlock {
  search: string;
  replace: string;
}

const SEARCH_RE = /^<{5,}\s*SEARCH\s*$/;
const DIVIDER_RE = /^={5,}\s*$/;
const REPLACE_RE = /^>{5,}\s*REPLACE\s*$/;
const FORMAT_HELP = 'Each block must look like:\n<<<<<<< SEARCH\n[exact lines from the file]\n=======\n[new lines]\n>>>>>>> REPLACE';

/** Parse the diff parameter into blocks; text outside blocks (fences, prose) is ignored. */
export function parseDiff(diff: string): ReplaceBlock[] {
  const lines = diff.replace(/\r\n/g, '\n').split('\n');
  const blocks: ReplaceBlock[] = [];
  let state: 'idle' | 'search' | 'replace' = 'idle';
  let search: string[] = [];
  let replace: string[] = [];
  for (const line of lines) {
    if (state === 'idle') {
      if (SEARCH_RE.test(line)) {
        state = 'search';
        search = [];
      } else if (DIVIDER_RE.test(line) || REPLACE_RE.test(line)) {
        throw new ToolError(`Found "${line.trim()}" outside a block (block ${blocks.length + 1} has no "<<<<<<< SEARCH" line). ${FORMAT_HELP}`);
      }
    } else if (state === 'search') {
      if (DIVIDER_RE.test(line)) {
        state = 'replace';
        replace = [];
      } else if (SEARCH_RE.test(line) || REPLACE_RE.test(line)) {
        throw new ToolError(`Block ${blocks.length + 1} has no "=======" line between its SEARCH and REPLACE parts. ${FORMAT_HELP}`);
      } else search.push(line);
    } else {
      if (REPLACE_RE.test(line)) {
        blocks.push({ search: joinLines(search), replace: joinLines(replace) });
        state = 'idle';
      } else if (SEARCH_RE.test(line)) {
        throw new ToolError(`Block ${blocks.length + 1} is not closed with ">>>>>>> REPLACE" before the next block starts. ${FORMAT_HELP}`);
      } else replace.push(line);
    }
  }
  if (state !== 'idle') throw new ToolError(`Block ${blocks.length + 1} is not closed with ">>>>>>> REPLACE". ${FORMAT_HELP}`);
  if (blocks.length === 0) throw new ToolError(`The diff holds no SEARCH/REPLACE block. ${FORMAT_HELP}`);
  return blocks;
}

function joinLines(lines: string[]): string {
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

function splitLines(text: string): string[] {
  const ls = text.split('\n');
  if (ls.length > 0 && ls[ls.length - 1] === '') ls.pop();
  return ls;
}

const leadingWs = (s: string) => /^[ \t]*/.exec(s)![0];

/** Re-indent replacement lines when a block matched with different indentation (e.g. the model dropped it). */
function reindent(replaceLines: string[], searchLines: string[], fileLines: string[]): string[] {
  const k = searchLines.findIndex((l) => l.trim() !== '');
  if (k < 0) return replaceLines;
  const want = leadingWs(fileLines[k]!);
  const have = leadingWs(searchLines[k]!);
  if (want === have) return replaceLines;
  if (want.endsWith(have)) {
    const extra = want.slice(0, want.length - have.length);
    return replaceLines.map((l) => (l.trim() === '' ? l : extra + l));
  }
  if (have.endsWith(want)) {
    const extra = have.slice(0, have.length - want.length);
    return replaceLines.map((l) => (l.startsWith(extra) ? l.slice(extra.length) : l));
  }
  return replaceLines;
}

function lineTrimmedFind(fileLines: string[], searchLines: string[], fromLine: number): number {
  const n = searchLines.length;
  const wanted = searchLines.map((l) => l.trim());
  const tryFrom = (from: number, to: number) => {
    for (let i = from; i + n <= to; i++) {
      let ok = true;
      for (let k = 0; k < n; k++) {
        if (fileLines[i + k]!.trim() !== wanted[k]) {
          ok = false;
          break;
        }
      }
      if (ok) return i;
    }
    return -1;
  };
  const i = tryFrom(fromLine, fileLines.length);
  return i >= 0 ? i : tryFrom(0, Math.min(fileLines.length, fromLine + n - 1));
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  const t = s.trim().slice(0, 300);
  for (let i = 0; i < t.length - 1; i++) {
    const g = t.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

function dice(a: Map<string, number>, alen: number, b: Map<string, number>, blen: number): number {
  if (alen === 0 && blen === 0) return 1;
  if (alen === 0 || blen === 0) return 0;
  let common = 0;
  for (const [g, c] of a) common += Math.min(c, b.get(g) ?? 0);
  return (2 * common) / (alen + blen);
}

/** The window of the file most similar to the SEARCH lines, for the model to see what is really there. */
function nearestCandidate(fileLines: string[], searchLines: string[]): { start: number; score: number } | null {
  const n = searchLines.length;
  if (n === 0 || fileLines.length === 0) return null;
  const maxLines = Math.min(fileLines.length, 50_000);
  const fileGrams = fileLines.slice(0, maxLines).map((l) => {
    const g = bigrams(l);
    return { g, len: Math.max(0, Math.min(l.trim().length, 300) - 1), trimmed: l.trim() };
  });
  const searchGrams = searchLines.map((l) => ({ g: bigrams(l), len: Math.max(0, Math.min(l.trim().length, 300) - 1), trimmed: l.trim() }));
  const sims = searchGrams.map((s) => fileGrams.map((f) => (s.trimmed === f.trimmed ? 1 : dice(s.g, s.len, f.g, f.len))));
  let best = { start: 0, score: -1 };
  const windows = Math.max(1, maxLines - n + 1);
  for (let i = 0; i < windows; i++) {
    let sum = 0;
    let count = 0;
    for (let k = 0; k < n && i + k < maxLines; k++) {
      sum += sims[k]![i + k]!;
      count++;
    }
    const score = sum / n;
    if (count > 0 && score > best.score) best = { start: i, score };
  }
  return best;
}

function showLines(fileLines: string[], from: number, to: number): string {
  const width = String(to).length;
  const out: string[] = [];
  for (let i = from; i < to; i++) out.push(`${String(i + 1).padStart(width)} | ${fileLines[i]!.slice(0, 400)}`);
  return out.join('\n');
}

interface ApplyOutcome {
  content: string;
  fuzzy: number[]; // 1-based indices of blocks matched ignoring whitespace
}

/** Apply blocks in order to `content` (LF line endings). Throws ToolError, changing nothing, if a block fails. */
function applyBlocks(content: string, blocks: ReplaceBlock[], shown: string): ApplyOutcome {
  let cur = content;
  let from = 0;
  const fuzzy: number[] = [];
  blocks.forEach((b, idx) => {
    const label = blocks.length > 1 ? `SEARCH block ${idx + 1} of ${blocks.length}` : 'The SEARCH block';
    if (b.search === '') {
      if (cur.trim() === '') {
        cur = b.replace;
        from = cur.length;
        return;
      }
      throw new ToolError(`${label} is empty, but ${shown} is not; an empty SEARCH only fills an empty file. No change was made.`);
    }
    let at = cur.indexOf(b.search, from);
    if (at < 0) at = cur.indexOf(b.search);
    if (at >= 0) {
      cur = cur.slice(0, at) + b.replace + cur.slice(at + b.search.length);
      from = at + b.replace.length;
      return;
    }
    // Blocks hold whole lines, so SEARCH ends with a newline the file may lack (last line), or the
    // model meant part of a line. Accept that only when unambiguous: at the very end, or unique.
    const bare = b.search.slice(0, -1);
    const bareReplace = b.replace.endsWith('\n') ? b.replace.slice(0, -1) : b.replace;
    const first = bare === '' ? -1 : cur.indexOf(bare);
    const unique = first >= 0 && cur.indexOf(bare, first + 1) < 0;
    const pos = unique ? first : first >= 0 && cur.endsWith(bare) ? cur.length - bare.length : -1;
    if (pos >= 0) {
      cur = cur.slice(0, pos) + bareReplace + cur.slice(pos + bare.length);
      from = pos + bareReplace.length;
      return;
    }
    const fileLines = cur.split('\n');
    const searchLines = splitLines(b.search);
    const fromLine = cur.slice(0, from).split('\n').length - 1;
    const i = lineTrimmedFind(fileLines, searchLines, fromLine);
    if (i >= 0) {
      const matched = fileLines.slice(i, i + searchLines.length);
      const replaceLines = reindent(splitLines(b.replace), searchLines, matched);
      const before = fileLines.slice(0, i);
      const after = fileLines.slice(i + searchLines.length);
      cur = [...before, ...replaceLines, ...after].join('\n');
      from = [...before, ...replaceLines].join('\n').length + (replaceLines.length ? 1 : 0);
      fuzzy.push(idx + 1);
      return;
    }
    const cand = nearestCandidate(fileLines, searchLines);
    let detail: string;
    if (cand && cand.score >= 0.3) {
      const lo = Math.max(0, cand.start - 2);
      const hi = Math.min(fileLines.length, cand.start + searchLines.length + 2);
      detail =
        `The closest text in the file is at lines ${cand.start + 1}-${Math.min(fileLines.length, cand.start + searchLines.length)} (${Math.round(cand.score * 100)}% similar):\n` +
        showLines(fileLines, lo, hi);
    } else {
      detail = 'Nothing in the file resembles it.';
    }
    const applied = idx > 0 ? ` (after applying the ${idx} block${idx > 1 ? 's' : ''} before it)` : '';
    throw new ToolError(
      `${label} does not match ${shown}${applied}, neither exactly nor ignoring whitespace. No change was made to the file.\n${detail}\n` +
        'Copy the SEARCH lines exactly from the current file (read_file it again if unsure) and retry.',
      { block: idx + 1 },
    );
  });
  return { content: cur, fuzzy };
}

const schema = z.object({
  path: pathParam('The path of the file to modify, relative to the workspace root.'),
  diff: z
    .string({ error: 'expected one or more SEARCH/REPLACE blocks' })
    .min(1, { error: 'expected one or more SEARCH/REPLACE blocks' })
    .describe(
      'One or more SEARCH/REPLACE blocks:\n<<<<<<< SEARCH\n[exact content to find]\n=======\n[new content to replace with]\n>>>>>>> REPLACE\n' +
        'Rules: 1. SEARCH must match the file character for character, including whitespace, indentation and comments. ' +
        '2. Each block replaces only the first match; list several blocks in the order they appear in the file. ' +
        '3. Keep blocks short: the changing lines plus a few lines to make them unique; never truncate lines. ' +
        '4. To delete code, use an empty REPLACE part; to move code, use two blocks (delete, then insert).',
    ),
});

async function prepare(args: z.output<typeof schema>, ctx: ToolContext): Promise<PreparedWrite> {
  const blocks = parseDiff(args.diff);
  const { shown, raw } = await withLocated(ctx.workspace, args.path, {}, async (loc) => {
    assertNotGitDir(loc.rel, loc.rel);
    const kind = await loc.kind();
    if (kind === 'dir') throw new ToolError(`${loc.rel} is a directory; give a file path.`);
    if (kind === 'missing') throw new ToolError(`${loc.rel} does not exist; use write_to_file to create it.`);
    return { shown: loc.rel, raw: await loc.read({ maxBytes: EDIT_LIMIT_BYTES }) };
  }).catch((e: unknown) => {
    if (e instanceof MissingParent) throw new ToolError(`${e.rel} does not exist; use write_to_file to create it.`);
    throw e;
  });
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
    newContent,
    beforeHash: sha256(raw),
    afterHash: sha256(newContent),
    message,
    meta: { path: shown, blocks: n, fuzzyBlocks: outcome.fuzzy },
  };
}

async function apply(p: PreparedWrite, ctx: ToolContext): Promise<ToolResult> {
  await writeBeneath(ctx.workspace, p.path, p.newContent);
  return { ok: true, output: p.message, meta: { ...p.meta, afterHash: p.afterHash } };
}

export const replaceInFile: FileWriteTool<typeof schema> = {
  name: 'replace_in_file',
  description:
    'Change parts of an existing file with SEARCH/REPLACE blocks. Use this for targeted edits; use write_to_file to create a file or rewrite it whole. ' +
    'All blocks apply or none does. If a SEARCH part does not match, the closest lines of the file are shown.',
  schema,
  kind: 'edit',
  example:
    '<replace_in_file>\n<path>src/math.ts</path>\n<diff>\n<<<<<<< SEARCH\nexport function add(a: number, b: number) {\n  return a - b;\n}\n=======\nexport function add(a: number, b: number) {\n  return a + b;\n}\n>>>>>>> REPLACE\n</diff>\n</replace_in_file>',
  prepare,
  apply,
  async run(args, ctx) {
    return apply(await prepare(args, ctx), ctx);
  },
  about: ['path'],
  edits: (a) => {
    try {
      return parseDiff(typeof a.diff === 'string' ? a.diff : '');
    } catch {
      return undefined; // the tool reports the malformed diff itself
    }
  },
};
