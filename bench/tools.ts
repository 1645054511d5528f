// bench/tools: search_files over a generated 50,000-file git repository beside `grep -rn` on the
// same tree in the same run, and list_files on it. Run: npx tsx bench/tools.ts [--files N]
// First, per call: read_file, write_to_file, replace_in_file and search_files as they are (every
// path walked through descriptors beneath the root, src/workspace/beneath.ts) against the string-path
// access they replaced (frozen in bench/legacy/), alternated in one run on one tree. search_files
// now also keeps its worker threads between calls (the frozen copy boots new ones every call).
// Goal: at most 1.5x the old time per call and at most 2 ms more at the median.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { readFileTool } from '../src/tools/read-file.js';
import { replaceInFile } from '../src/tools/replace-in-file.js';
import { searchFilesTool } from '../src/tools/search-files.js';
import { runTool } from '../src/tools/index.js';
import { writeToFile } from '../src/tools/write-to-file.js';
import { readFileTool as oldReadFile } from './legacy/read-file.js';
import { replaceInFile as oldReplaceInFile } from './legacy/replace-in-file.js';
import { searchFilesTool as oldSearchFiles } from './legacy/search-files.js';
import { writeToFile as oldWriteToFile } from './legacy/write-to-file.js';

const execFileP = promisify(execFile);
const argFiles = process.argv.indexOf('--files');
const FILES = argFiles > 0 ? Number(process.argv[argFiles + 1]) : 50_000;
const PER_DIR = 100;
const RUNS = 3;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function generate(root: string): { bytes: number; planted: number } {
  let bytes = 0;
  let planted = 0;
  for (let i = 0; i < FILES; i++) {
    const dir = path.join(root, 'src', `mod${Math.floor(i / PER_DIR)}`);
    if (i % PER_DIR === 0) mkdirSync(dir, { recursive: true });
    const lines = [
      `// file ${i}`,
      `import { helper${i % 97} } from '../lib/helper${i % 97}.js';`,
      '',
      `export function compute${i}(x: number): number {`,
      `  const y = helper${i % 97}(x) * ${i % 13};`,
      '  return y + 1;',
      '}',
      '',
      `export class Widget${i} {`,
      `  name = 'widget-${i}';`,
      '  render(): string {',
      '    return this.name;',
      '  }',
      '}',
    ];
    // A rare marker in 0.4% of the files: few enough matches that no result cap ends the search early.
    if (i % 250 === 7) {
      lines.push(`// FIXME(bench): remove legacyAdapter${i} before release`);
      planted++;
    }
    const text = lines.join('\n') + '\n';
    bytes += text.length;
    writeFileSync(path.join(dir, `file${i}.ts`), text);
  }
  return { bytes, planted };
}

async function time<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))]!;
}

/** Each file tool, new and old alternated call by call on a 3,000-file tree four directories deep. */
async function perCall(): Promise<Record<string, unknown>[]> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'agentrun-bench-access-'));
  try {
    for (let m = 0; m < 30; m++) {
      const dir = path.join(root, 'src', 'pkg', 'sub', `mod${m}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 100; f++)
        writeFileSync(path.join(dir, `file${f}.ts`), `// file ${f}\nexport function compute${f}(x: number) {\n  return x + ${f};\n}\n`.repeat(20));
    }
    const ctx = { workspace: root };
    const file = 'src/pkg/sub/mod7/file70.ts';
    const body = 'export const value = 1;\n'.repeat(80);
    // Each side edits its own copy, back and forth.
    const toggler = (f: number) => {
      let flip = false;
      return () => {
        flip = !flip;
        const [a, b] = flip ? [`// file ${f}`, '// file changed'] : ['// file changed', `// file ${f}`];
        return `<<<<<<< SEARCH\n${a}\n=======\n${b}\n>>>>>>> REPLACE`;
      };
    };
    const [diffNow, diffOld] = [toggler(70), toggler(71)];
    const ops: { name: string; n: number; now: () => Promise<{ ok: boolean; output: string }>; old: () => Promise<{ ok: boolean; output: string }> }[] = [
      { name: 'read_file', n: 400, now: () => readFileTool({ path: file }, ctx), old: () => oldReadFile({ path: file }, ctx) },
      {
        name: 'write_to_file',
        n: 300,
        now: () => writeToFile.run!({ path: 'src/pkg/sub/mod7/out.ts', content: body }, ctx),
        old: () => oldWriteToFile.run!({ path: 'src/pkg/sub/mod7/out.ts', content: body }, ctx),
      },
      {
        name: 'replace_in_file',
        n: 300,
        now: () => replaceInFile.run!({ path: file, diff: diffNow() }, ctx),
        old: () => oldReplaceInFile.run!({ path: 'src/pkg/sub/mod7/file71.ts', diff: diffOld() }, ctx),
      },
      {
        name: 'search_files',
        n: 40,
        now: () => searchFilesTool({ path: 'src/pkg/sub', regex: 'compute7\\b' }, ctx),
        old: () => oldSearchFiles({ path: 'src/pkg/sub', regex: 'compute7\\b' }, ctx),
      },
    ];
    const out: Record<string, unknown>[] = [];
    for (const op of ops) {
      const now: number[] = [];
      const old: number[] = [];
      for (let i = 0; i < 10; i++) (await op.now(), await op.old()); // warm up
      for (let i = 0; i < op.n; i++) {
        // Alternate which goes first, so neither always meets a warmer cache.
        for (const [fn, xs] of i % 2
          ? ([
              [op.now, now],
              [op.old, old],
            ] as const)
          : ([
              [op.old, old],
              [op.now, now],
            ] as const)) {
          const t = await time(fn);
          if (!t.value.ok) throw new Error(`${op.name}: ${t.value.output}`);
          xs.push(t.ms);
        }
      }
      const p50 = quantile(now, 0.5);
      const oldP50 = quantile(old, 0.5);
      out.push({
        tool: op.name,
        calls: op.n,
        p50Ms: Number(p50.toFixed(3)),
        oldP50Ms: Number(oldP50.toFixed(3)),
        p90Ms: Number(quantile(now, 0.9).toFixed(3)),
        oldP90Ms: Number(quantile(old, 0.9).toFixed(3)),
        ratioP50: Number((p50 / oldP50).toFixed(2)),
        addedP50Ms: Number((p50 - oldP50).toFixed(3)),
      });
    }
    return out;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const loadBefore = os.loadavg();
  const access = await perCall();
  // The machine is shared: the load average says how far the figures are from an idle one.
  const load = [loadBefore[0], os.loadavg()[0]].map((l) => Number(l.toFixed(2)));
  console.log(
    `bench/tools per call (descriptors beneath the root vs the old string paths), ${os.cpus().length} cores, node ${process.version}, load average ${load[0]} → ${load[1]}\n`,
  );
  console.log(
    `${'tool'.padEnd(16)} ${'p50 ms'.padStart(8)} ${'old p50'.padStart(8)} ${'p90 ms'.padStart(8)} ${'old p90'.padStart(8)} ${'ratio'.padStart(6)} ${'added'.padStart(8)}`,
  );
  for (const r of access)
    console.log(
      `${String(r.tool).padEnd(16)} ${String(r.p50Ms).padStart(8)} ${String(r.oldP50Ms).padStart(8)} ${String(r.p90Ms).padStart(8)} ${String(r.oldP90Ms).padStart(8)} ${String(r.ratioP50).padStart(6)} ${String(r.addedP50Ms).padStart(8)}`,
    );
  console.log(JSON.stringify({ bench: 'tools-access', goal: { ratioP50: 1.5, addedP50Ms: 2 }, loadAverage: load, tools: access }));
  if (process.argv.includes('--access-only')) return;
  const root = mkdtempSync(path.join(os.tmpdir(), 'agentrun-bench-tools-'));
  try {
    const g = await time(async () => generate(root));
    const gitT = await time(async () => {
      execFileSync('git', ['init', '-q', '-b', 'main', root]);
      execFileSync('git', ['-C', root, 'add', '-A']);
      execFileSync('git', ['-C', root, '-c', 'user.email=b@example.com', '-c', 'user.name=bench', 'commit', '-q', '-m', 'generated']);
    });
    const ctx = { workspace: root };
    const regex = 'FIXME\\(bench\\): remove legacyAdapter\\d+';
    const noMatch = 'neverDefined\\w+Anywhere';

    const rows: { name: string; ms: number; detail: string }[] = [];
    const searchMs: number[] = [];
    const grepMs: number[] = [];
    const searchNoneMs: number[] = [];
    const grepNoneMs: number[] = [];
    let matches = 0;
    let grepMatches = 0;
    for (let r = 0; r < RUNS; r++) {
      const s = await time(() => runTool('search_files', { path: '.', regex }, ctx));
      if (!s.value.ok) throw new Error(s.value.output);
      matches = Number(s.value.meta?.matches ?? 0);
      searchMs.push(s.ms);
      const gr = await time(() =>
        execFileP('grep', ['-rnE', '--exclude-dir=.git', 'FIXME\\(bench\\): remove legacyAdapter[0-9]+', '.'], { cwd: root, maxBuffer: 64 << 20 }),
      );
      grepMatches = gr.value.stdout.split('\n').filter(Boolean).length;
      grepMs.push(gr.ms);
      const sn = await time(() => runTool('search_files', { path: '.', regex: noMatch }, ctx));
      searchNoneMs.push(sn.ms);
      const gn = await time(() =>
        execFileP('grep', ['-rnE', '--exclude-dir=.git', 'neverDefined[A-Za-z0-9_]+Anywhere', '.'], { cwd: root }).catch((e: { code?: number }) => {
          if (e.code !== 1) throw e; // 1 = no match
          return { stdout: '' };
        }),
      );
      grepNoneMs.push(gn.ms);
    }
    if (matches !== grepMatches) throw new Error(`search_files found ${matches} matches, grep ${grepMatches}`);
    const listMs: number[] = [];
    let listed = 0;
    for (let r = 0; r < RUNS; r++) {
      const l = await time(() => runTool('list_files', { path: '.', recursive: 'true' }, ctx));
      listed = Number(l.value.meta?.count ?? 0);
      listMs.push(l.ms);
    }
    const lsMs: number[] = [];
    for (let r = 0; r < RUNS; r++) lsMs.push((await time(() => execFileP('git', ['ls-files'], { cwd: root, maxBuffer: 64 << 20 }))).ms);

    rows.push({ name: 'generate files', ms: g.ms, detail: `${FILES} files, ${(g.value.bytes / 1e6).toFixed(1)} MB` });
    rows.push({ name: 'git init + add + commit', ms: gitT.ms, detail: '' });
    rows.push({ name: 'search_files (matches)', ms: median(searchMs), detail: `${matches} matches, median of ${RUNS}` });
    rows.push({ name: 'grep -rn (matches)', ms: median(grepMs), detail: `${grepMatches} matches, median of ${RUNS}` });
    rows.push({ name: 'search_files (no match)', ms: median(searchNoneMs), detail: 'full scan' });
    rows.push({ name: 'grep -rn (no match)', ms: median(grepNoneMs), detail: 'full scan' });
    rows.push({ name: 'list_files recursive', ms: median(listMs), detail: `${listed} shown (limit), ${FILES} in the tree` });
    rows.push({ name: 'git ls-files (baseline)', ms: median(lsMs), detail: '' });

    console.log(`bench/tools: ${FILES} files, ${os.cpus().length} cores, node ${process.version}\n`);
    console.log(`${'step'.padEnd(28)} ${'ms'.padStart(9)}  detail`);
    for (const r of rows) console.log(`${r.name.padEnd(28)} ${r.ms.toFixed(0).padStart(9)}  ${r.detail}`);
    const ratio = median(searchMs) / median(grepMs);
    const ratioNone = median(searchNoneMs) / median(grepNoneMs);
    console.log(`\nsearch_files / grep -rn: ${ratio.toFixed(2)}x (matches), ${ratioNone.toFixed(2)}x (no match)`);
    console.log(
      JSON.stringify({
        bench: 'tools',
        files: FILES,
        searchMs: Math.round(median(searchMs)),
        grepMs: Math.round(median(grepMs)),
        ratio: Number(ratio.toFixed(2)),
        searchNoMatchMs: Math.round(median(searchNoneMs)),
        grepNoMatchMs: Math.round(median(grepNoneMs)),
        ratioNoMatch: Number(ratioNone.toFixed(2)),
        matches,
        listFilesMs: Math.round(median(listMs)),
        gitLsFilesMs: Math.round(median(lsMs)),
        generateMs: Math.round(g.ms),
        gitCommitMs: Math.round(gitT.ms),
      }),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
