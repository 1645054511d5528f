// Bundle bases on the real PostgreSQL and git: a local directory's first tree is
// bundled and stored once; every conversation's first bundle holds only what differs from it; a
// conversation's first snapshot starts from the directory's newest index; the workspace is rebuilt
// elsewhere from the base and the bundles; gc removes unused bases; a base above its cap is
// recorded once and every conversation on the directory skips at once.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCheckpoint, privateGitDir } from '../../src/workspace/checkpoint.js';
import { restoreFromBundles } from '../../src/workspace/bundle.js';
import { bundleBaseParts, checkpointBundles, storeCheckpointBundle } from '../../src/workspace/offhost.js';
import { storeInFreshSchema } from '../helpers/store-schema.js';
import { tempDirSync } from '../helpers/temp.js';

const store = storeInFreshSchema('bundle_base');
const treeOf = (home: string, ws: string, commit: string) =>
  execFileSync('git', ['--git-dir', privateGitDir(home, ws), 'rev-parse', `${commit}^{tree}`], { encoding: 'utf8' }).trim();

/** A directory of `n` files that do not compress much (so sizes say what a bundle holds). */
async function workspace(n: number): Promise<string> {
  const ws = tempDirSync('agentrun-base-ws-');
  await mkdir(join(ws, 'src'), { recursive: true });
  for (let i = 0; i < n; i++) writeFileSync(join(ws, 'src', `f${i}.txt`), `${i} ${randomBytes(400).toString('hex')}\n`);
  return ws;
}

afterEach(() => {
  delete process.env.AGENTRUN_MAX_BASE_BUNDLE_BYTES;
});

describe('bundle bases', () => {
  it('stores a directory’s tree once: later conversations bundle only what differs and are rebuilt from base + bundles', async () => {
    const s = store();
    const home = tempDirSync('agentrun-base-home-');
    const ws = await workspace(200);
    const a = `a-${Date.now()}`;
    const b = `b-${Date.now()}`;
    const a0 = (await createCheckpoint(ws, a, 0, home))!;
    expect(a0.files).toHaveLength(200);
    const savedA = await storeCheckpointBundle(s, home, ws, a, 0, a0.commit);
    const [rowA] = await s.getBundledCommits(a);
    const base = rowA!.base!;
    expect(base).toMatch(/^[0-9a-f]{40}$/);
    const stored = (await s.getBundleBase(base))!;
    expect(stored.parts).toBe(1);
    expect(stored.bytes).toBeGreaterThan(40_000);
    // The first conversation's own bundle is its commit alone: the base holds its tree.
    expect(savedA.bytes).toBeLessThan(1_000);

    // The directory changes before the next conversation: one file edited, one removed, one added.
    writeFileSync(join(ws, 'src', 'f1.txt'), 'edited\n');
    unlinkSync(join(ws, 'src', 'f2.txt'));
    writeFileSync(join(ws, 'NEW.md'), 'new\n');
    const b0 = (await createCheckpoint(ws, b, 0, home))!;
    // Its index was seeded from a's, yet the snapshot is the directory as it is now: the same tree a fresh private repository makes.
    const fresh = tempDirSync('agentrun-base-fresh-');
    const f0 = (await createCheckpoint(ws, 'fresh', 0, fresh))!;
    expect(treeOf(home, ws, b0.commit)).toBe(treeOf(fresh, ws, f0.commit));
    expect(b0.files).toEqual(f0.files);
    expect(b0.files).toContain('NEW.md');
    expect(b0.files).not.toContain('src/f2.txt');
    const savedB = await storeCheckpointBundle(s, home, ws, b, 0, b0.commit);
    expect((await s.getBundledCommits(b))[0]!.base).toBe(base);
    // Its new trees and the two new files, not the 200 files again.
    expect(savedB.bytes).toBeLessThan(stored.bytes / 8);
    expect((await s.pool.query('SELECT commit FROM bundle_bases')).rows).toEqual([{ commit: base }]);
    // A turn later, incremental against b's turn 0.
    writeFileSync(join(ws, 'src', 'f3.txt'), 'turn one\n');
    const b1 = (await createCheckpoint(ws, b, 1, home))!;
    expect(b1.files).toEqual(['src/f3.txt']);
    await storeCheckpointBundle(s, home, ws, b, 1, b1.commit);

    // Another host: the base, then b's bundles in order, give b's workspace at turn 1.
    const rows = await s.getBundledCommits(b);
    const elsewhere = join(tempDirSync('agentrun-base-other-'), 'b');
    const otherHome = tempDirSync('agentrun-base-otherhome-');
    await restoreFromBundles(elsewhere, b, checkpointBundles(s, b, rows), b1.commit, otherHome, bundleBaseParts(s, rows[0]!.base!));
    expect(execFileSync('diff', ['-r', '--exclude=.git', ws, elsewhere], { encoding: 'utf8' })).toBe('');
    expect(readFileSync(join(elsewhere, 'src', 'f3.txt'), 'utf8')).toBe('turn one\n');
    // Without the base the bundles alone cannot be applied.
    await expect(restoreFromBundles(join(tempDirSync('agentrun-base-nobase-'), 'b'), b, checkpointBundles(s, b, rows), b1.commit, otherHome)).rejects.toThrow();
    // Bundles are read one at a time; one missing from the store is named.
    const missing = '0'.repeat(40);
    await expect(
      restoreFromBundles(
        join(tempDirSync('agentrun-base-gone-'), 'b'),
        b,
        checkpointBundles(s, b, [...rows, { commit: missing }]),
        b1.commit,
        otherHome,
        bundleBaseParts(s, base),
      ),
    ).rejects.toThrow(`the checkpoint bundle of ${missing} (${b}) is gone from the store`);

    // gc: a base some conversation's bundles name stays; once none does, it goes.
    expect(await s.deleteUnusedBundleBases(0)).toEqual({ bases: 0, bytes: 0 });
    await s.deleteCheckpointBundles(a);
    await s.deleteCheckpointBundles(b);
    expect(await s.deleteUnusedBundleBases(0, true)).toEqual({ bases: 1, bytes: stored.bytes });
    expect(await s.deleteUnusedBundleBases(0)).toEqual({ bases: 1, bytes: stored.bytes });
    expect(await s.getBundleBase(base)).toBeNull();
    expect((await s.pool.query('SELECT count(*)::int AS n FROM bundle_base_parts')).rows[0].n).toBe(0);
    // A bundle cannot name a base that is gone; the next conversation makes and stores a new one.
    expect(await s.putCheckpointBundle('c-x', 0, b0.commit, base, Buffer.from('x'), 1, base)).toBe(false);
    const c = `c-${Date.now()}`;
    const c0 = (await createCheckpoint(ws, c, 0, home))!;
    await storeCheckpointBundle(s, home, ws, c, 0, c0.commit);
    const newBase = (await s.getBundledCommits(c))[0]!.base!;
    expect(newBase).not.toBe(base);
    expect((await s.getBundleBase(newBase))?.parts).toBe(1);
  });

  it('records a base above AGENTRUN_MAX_BASE_BUNDLE_BYTES once: every conversation on the directory goes on without off-host checkpoints, saying why', async () => {
    const s = store();
    const home = tempDirSync('agentrun-base-home-');
    const ws = await workspace(100);
    process.env.AGENTRUN_MAX_BASE_BUNDLE_BYTES = String(4 * 1024);
    const reasons: string[] = [];
    const bases = new Set<string>();
    for (const id of [`d-${Date.now()}`, `e-${Date.now()}`]) {
      const cp = (await createCheckpoint(ws, id, 0, home))!;
      const saved = await storeCheckpointBundle(s, home, ws, id, 0, cp.commit);
      expect(saved.bytes).toBe(0);
      reasons.push(saved.skipped!);
      const [row] = await s.getBundledCommits(id);
      expect(row).toMatchObject({ turn: 0, skipped: true, base: expect.any(String) });
      bases.add(row!.base!);
      // Nothing more is bundled for it.
      writeFileSync(join(ws, 'x.txt'), id);
      const next = (await createCheckpoint(ws, id, 1, home))!;
      expect((await storeCheckpointBundle(s, home, ws, id, 1, next.commit)).skipped).toBe(saved.skipped);
      expect(await s.getBundledCommits(id)).toHaveLength(1);
    }
    // One base, recorded with its size and no parts: the second conversation did not bundle it again.
    expect(bases.size).toBe(1);
    expect(await s.getBundleBase([...bases][0]!)).toMatchObject({ parts: 0 });
    expect(reasons[0]).toMatch(/^its repository's bundle base \(.+ kB\) is above AGENTRUN_MAX_BASE_BUNDLE_BYTES \(4\.1 kB\): the conversation goes on/);
    expect(reasons[1]).toBe(reasons[0]);
  });
});
