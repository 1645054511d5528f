// Turn-0 checkpoint and bundle of a large local workspace, measured.
// A local workspace's turn-0 checkpoint is a root commit of its files (no history); its bundle
// starts from the repository's bundle base, stored once in PostgreSQL and shared by every later
// conversation on the directory. This measures, on a generated tree: the first conversation
// (checkpoint: git add of every file; the base bundled and stored in parts; its own bundle), a
// second conversation on the same directory (its index seeded from the first one's, its bundle
// only what differs from the base), a turn-1 checkpoint + incremental bundle after a small edit,
// the rebuild of the second conversation's workspace elsewhere from the store, and `inspect`'s diff
// of its turn 1 on a machine without its private repository (from the base and the bundles).
// Files are text from a small vocabulary, so they compress about as source code does.
// Run: DATABASE_URL=postgres://… npx tsx bench/bundle.ts
//   (BENCH_BUNDLE_FILES=20000 BENCH_BUNDLE_MB=200 by default; 1 GB: BENCH_BUNDLE_FILES=50000 BENCH_BUNDLE_MB=1000)
//   BENCH_BUNDLE_TREE=/some/dir: generate the tree there once and reuse it on later runs (the files
//   a run edits are written back first), so runs compare the same files without regenerating 1 GB.
//
// 1 GB, 50k files, 2 cores (2026-11-25, other sessions kept the load at 1.3-3.5; `load` is the
// 1-minute average when measured). First conversation: checkpoint 30.8 s + base bundled 3.7 s and
// stored 8.8 s (load 3.4); 27.8 s + 2.2 s + 5.6 s (load 3.2). What was tried to make it cheaper:
// - pack.compression=0 for the bulk check-in (git add alone, same tree): 22.2 s instead of 33.3 s
//   (load 2.8-3.0), but the pack, hence the bundle base stored in PostgreSQL and read back by every
//   failover, grows from 353 MB to 1019 MB (x2.9): the store time grows by about what git saves.
//   Not taken.
// - TOAST compression of the 64 MiB bytea parts (pglz): storing the real 352 MB pack as six parts
//   took 3.7 / 3.1 s with the default storage and 3.7 / 3.1 s with SET STORAGE EXTERNAL (load 2.8):
//   pglz gives up at once on zlib data. No migration. (Random bytes: 7.8 / 5.6 s against 4.8 / 4.0 s,
//   irrelevant here.) Two parts INSERTed at once: 5.8 / 5.6 s against 4.3 / 4.8 s, in the noise.
// - Both cores (kept): the listed files checked in as two halves by two `git update-index` at
//   once, then one `git add -A` that only hashes the second half. git alone: 18.5-20.3 s against
//   21.9-29.0 s for one `git add` at load 1.1-1.6, but 20.8-32.8 s against 22.1-25.0 s at load
//   2.9-3.5 (no idle core, and the second half is hashed twice). The base's `bundle create` then
//   searched for deltas across the two packs (3.7 s -> 33 s) until pack.window=0. This bench, A/B
//   against the previous commit, back to back: checkpoint 22.8 / 19.2 s against 28.2 / 24.1 s
//   (load 0.9-1.4); base bundled 2.0 / 1.8 s against 2.0 / 2.1 s, stored 4.2 / 5.0 s against
//   4.6 / 4.4 s, 353.3 MB either way ("against": the code before bounded bundles).
// What helped most is not making the first model step wait for any of it (patch
// turn-zero-alongside-first-step; bench/first-turn.ts: first model step at 40.4 s -> 0.85 s).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchStore } from './harness.js';
import { createCheckpoint, privateGitDir } from '../src/workspace/checkpoint.js';
import { restoreFromBundles } from '../src/workspace/bundle.js';
import { bundleBaseParts, checkpointBundles, storeCheckpointBundle } from '../src/workspace/offhost.js';
import { checkpointDiffs } from '../src/workspace/stored-diffs.js';

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
  const { store, drop } = await benchStore('bench_bundle');
  const root = await mkdtemp(join(tmpdir(), 'agentrun-bench-bundle-'));
  const home = join(root, 'home');
  const kept = process.env.BENCH_BUNDLE_TREE?.trim();
  const ws = kept ? join(kept, `tree-${FILES}-${MB}`) : join(root, 'ws');
  try {
    const per = Math.round((MB * 1e6) / FILES);
    const file = (i: number) => join(ws, `pkg${i % 200}`, `mod${i % 7}`, `file${i}.ts`);
    const [, genMs] = await timed(async () => {
      if (kept && existsSync(`${ws}.generated`)) {
        // The files the previous run edited, as generated.
        for (const i of [0, 1]) await writeFile(file(i), text(i + 1, per));
        await rm(join(ws, 'NEW.md'), { force: true });
        return;
      }
      for (let i = 0; i < FILES; i++) {
        if (i < 1400) await mkdir(join(ws, `pkg${i % 200}`, `mod${i % 7}`), { recursive: true });
        await writeFile(file(i), text(i + 1, per));
      }
      if (kept) await writeFile(`${ws}.generated`, '');
    });
    const du = Number(execFileSync('du', ['-sb', ws], { encoding: 'utf8' }).split('\t')[0]);
    console.log(`machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}`);
    console.log(`workspace: ${FILES} files, ${mb(du)} on disk (generated in ${genMs} ms)`);
    /** Turn 0 of a new conversation on the directory, as initConversation + saveCheckpointOffHost do it. */
    const start = async (id: string) => {
      const [cp, cpMs] = await timed(() => createCheckpoint(ws, id, 0, home));
      const [saved, bMs] = await timed(() => storeCheckpointBundle(store, home, ws, id, 0, cp!.commit));
      const stored = saved.skipped ? `not stored: ${saved.skipped}` : `${saved.bytes} bytes stored`;
      console.log(`${id} turn 0: checkpoint ${cpMs} ms (${cp!.files.length} files), bundle + store ${bMs} ms (${stored}); start ${cpMs + bMs} ms`);
      return cp!;
    };
    await start('first');
    const bases = (await store.pool.query<{ commit: string; bytes: string; parts: number }>('SELECT commit, bytes, parts FROM bundle_bases')).rows;
    for (const b of bases) console.log(`  bundle base ${b.commit.slice(0, 12)}: ${mb(Number(b.bytes))} in ${b.parts} parts (stored once for the directory)`);
    await writeFile(join(ws, 'pkg1', 'mod1', 'file1.ts'), text(424_242, per));
    await start('second');
    await writeFile(join(ws, 'pkg0', 'mod0', 'file0.ts'), text(999_999, per));
    await writeFile(join(ws, 'NEW.md'), 'a new file\n');
    const [cp1, cp1Ms] = await timed(() => createCheckpoint(ws, 'second', 1, home));
    const [b1, b1Ms] = await timed(() => storeCheckpointBundle(store, home, ws, 'second', 1, cp1!.commit));
    console.log(
      `second turn 1 (one file changed, one added): checkpoint ${cp1Ms} ms (${cp1!.files.length} files), bundle + store ${b1Ms} ms, ${b1.bytes} bytes`,
    );
    const gitDirBytes = Number(execFileSync('du', ['-sb', privateGitDir(home, ws)], { encoding: 'utf8' }).split('\t')[0]);
    console.log(`private git dir ${mb(gitDirBytes)}`);
    if (bases.every((b) => b.parts > 0)) {
      const rows = await store.getBundledCommits('second');
      const [, rMs] = await timed(() =>
        restoreFromBundles(
          join(root, 'rebuilt'),
          'second',
          checkpointBundles(store, 'second', rows),
          cp1!.commit,
          home,
          rows[0]?.base ? bundleBaseParts(store, rows[0].base) : undefined,
        ),
      );
      const same = execFileSync('diff', ['-rq', ws, join(root, 'rebuilt')], { encoding: 'utf8' }) === '';
      console.log(`rebuild of second elsewhere from the store (base + ${rows.length} bundles): ${rMs} ms, ${same ? 'identical' : 'DIFFERENT'}`);
      const source = { conversationId: 'second', home: join(root, 'operator'), dirs: [ws], bundled: await store.getBundledCommits('second') };
      const [[diff], dMs] = await timed(() => checkpointDiffs(store, source, [{ turn: 1, commit: cp1!.commit }]));
      console.log(
        `inspect elsewhere: turn 1's diff from the store (base + ${rows.length} bundles): ${dMs} ms, ${diff!.includes('NEW.md') ? 'the diff' : `NOT THE DIFF: ${diff!.slice(0, 200)}`}`,
      );
    }
  } finally {
    await rm(root, { recursive: true, force: true });
    await drop();
  }
}

await main();
