// Turn-0 checkpoint and bundle of a large local workspace, measured (issue 21 point 7).
// A local workspace's turn-0 checkpoint is a root commit of its files (no history), so its bundle
// is the tree only; this measures what that costs on a large tree: the checkpoint (git add of
// every file into the private repository), the bundle (a pack of it), its size against
// AGENTRUN_MAX_BUNDLE_BYTES, and a turn-1 checkpoint + incremental bundle after a small edit.
// Files are text from a small vocabulary, so they compress about as source code does.
// Run: npx tsx bench/bundle.ts   (BENCH_BUNDLE_FILES=20000 BENCH_BUNDLE_MB=200 by default)
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleCheckpoint, createCheckpoint, privateGitDir } from '../src/workspace/checkpoint.js';
import { DEFAULT_MAX_BUNDLE_BYTES } from '../src/workspace/offhost.js';

const FILES = Number(process.env.BENCH_BUNDLE_FILES ?? 20_000);
const MB = Number(process.env.BENCH_BUNDLE_MB ?? 200);
const WORDS = [
  'const',
  'return',
  'function',
  'export',
  'import',
  'value',
  'index',
  'result',
  'await',
  'string',
  'number',
  'if',
  'else',
  '=>',
  '{',
  '}',
  '(',
  ')',
  ';',
];

/** Deterministic pseudo-random text (a linear congruential generator): the same tree every run. */
function text(seed: number, bytes: number): string {
  let x = seed >>> 0 || 1;
  const out: string[] = [];
  let n = 0;
  while (n < bytes) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const w = x % 7 === 0 ? `v${x % 100_000}` : WORDS[x % WORDS.length]!;
    out.push(w);
    n += w.length + 1;
    if (x % 11 === 0) {
      out.push('\n');
      n += 1;
    }
  }
  return out.join(' ');
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const r = await fn();
  return [r, Math.round(performance.now() - t)];
}

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'agentrun-bench-bundle-'));
  const home = join(root, 'home');
  const ws = join(root, 'ws');
  try {
    const per = Math.round((MB * 1e6) / FILES);
    const [, genMs] = await timed(async () => {
      for (let i = 0; i < FILES; i++) {
        const dir = join(ws, `pkg${i % 200}`, `mod${i % 7}`);
        if (i < 1400) await mkdir(dir, { recursive: true });
        await writeFile(join(dir, `file${i}.ts`), text(i + 1, per));
      }
    });
    const du = Number(execFileSync('du', ['-sb', ws], { encoding: 'utf8' }).split('\t')[0]);
    const [cp0, cp0Ms] = await timed(() => createCheckpoint(ws, 'bench', 0, home));
    const [b0, b0Ms] = await timed(() => bundleCheckpoint(ws, 'bench', cp0!.commit, undefined, home));
    await writeFile(join(ws, 'pkg0', 'mod0', 'file0.ts'), text(999_999, per));
    await writeFile(join(ws, 'NEW.md'), 'a new file\n');
    const [cp1, cp1Ms] = await timed(() => createCheckpoint(ws, 'bench', 1, home));
    const [b1, b1Ms] = await timed(() => bundleCheckpoint(ws, 'bench', cp1!.commit, cp0!.commit, home));
    const gitDirBytes = Number(execFileSync('du', ['-sb', privateGitDir(home, ws)], { encoding: 'utf8' }).split('\t')[0]);
    const over = b0.length > DEFAULT_MAX_BUNDLE_BYTES;
    console.log(`machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}`);
    console.log(`workspace: ${FILES} files, ${mb(du)} on disk (generated in ${genMs} ms)`);
    console.log(`turn 0 checkpoint (root commit of every file): ${cp0Ms} ms, ${cp0!.files.length} files; private git dir ${mb(gitDirBytes)} after turn 1`);
    console.log(`turn 0 bundle (the tree only): ${b0Ms} ms, ${mb(b0.length)}; checkpoint + bundle ${cp0Ms + b0Ms} ms`);
    console.log(
      `  against AGENTRUN_MAX_BUNDLE_BYTES default ${mb(DEFAULT_MAX_BUNDLE_BYTES)}: ${over ? 'above: not stored, the conversation goes on without off-host checkpoints' : 'below: stored'}`,
    );
    console.log(`turn 1 (one file changed, one added): checkpoint ${cp1Ms} ms (${cp1!.files.length} files), incremental bundle ${b1Ms} ms, ${b1.length} bytes`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
