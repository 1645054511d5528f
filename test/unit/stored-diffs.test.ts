// Checkpoint diffs for `inspect` on a machine that does not hold the workspace's private repository
// (src/workspace/stored-diffs.ts), on the real PostgreSQL and git: read from the stored bundles
// (base and incremental ones) through a scratch repository that is removed after; one line instead
// when the bundles are above the cap, were skipped, are missing, or the job is a repository job.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCheckpoint } from '../../src/workspace/checkpoint.js';
import { storeCheckpointBundle } from '../../src/workspace/offhost.js';
import { checkpointDiffs } from '../../src/workspace/stored-diffs.js';
import { summaryWhere, workspaceLine, workspaceOf } from '../../src/client/workspace-where.js';
import { storeInFreshSchema } from '../helpers/store-schema.js';
import { tempDirSync } from '../helpers/temp.js';

const store = storeInFreshSchema('stored_diffs');

afterEach(() => {
  delete process.env.AGENTRUN_MAX_BUNDLE_BYTES;
  delete process.env.AGENTRUN_INSPECT_MAX_BUNDLE_BYTES;
});

/** A conversation of three checkpoints on a worker (turn 0, then a.txt, then README.md edited), each bundled into the store. */
async function conversation(opts: { turn2?: string } = {}) {
  const s = store();
  const home = tempDirSync('agentrun-diffs-worker-');
  const ws = tempDirSync('agentrun-diffs-ws-');
  writeFileSync(join(ws, 'README.md'), 'hello\n');
  const id = `c-${randomBytes(4).toString('hex')}`;
  const turns = [];
  for (const [turn, change] of [
    [0, () => undefined],
    [1, () => writeFileSync(join(ws, 'a.txt'), 'from turn 1\n')],
    [2, () => writeFileSync(join(ws, 'README.md'), opts.turn2 ?? 'hello again\n')],
  ] as const) {
    change();
    const cp = (await createCheckpoint(ws, id, turn, home))!;
    await storeCheckpointBundle(s, home, ws, id, turn, cp.commit);
    turns.push({ turn, commit: cp.commit });
  }
  return { s, home, ws, id, shown: turns.slice(1), bundled: await s.getBundledCommits(id) };
}

describe('checkpoint diffs away from the worker', () => {
  it('come from the stored bundles when this AGENTRUN_HOME has none, through a scratch repository removed after', async () => {
    const c = await conversation();
    expect(c.bundled.map((b) => b.turn)).toEqual([0, 1, 2]);
    expect(c.bundled[0]!.base).toEqual(expect.any(String));
    const elsewhere = tempDirSync('agentrun-diffs-operator-');
    const [one, two] = await checkpointDiffs(c.s, { conversationId: c.id, home: elsewhere, dirs: [c.ws], bundled: c.bundled }, c.shown);
    expect(one).toContain('a.txt');
    expect(one).toContain('+from turn 1');
    expect(two).toContain('README.md');
    expect(two).toContain('-hello');
    expect(two).toContain('+hello again');
    // The same text the worker's own private repository gives.
    expect(await checkpointDiffs(c.s, { conversationId: c.id, home: c.home, dirs: [c.ws], bundled: [] }, c.shown)).toEqual([one, two]);
    // Nothing left behind, and no private repository made for the workspace here.
    expect(readdirSync(join(elsewhere, 'inspect'))).toEqual([]);
    expect(existsSync(join(elsewhere, 'checkpoints'))).toBe(false);
    // Only turn 1: the bundles up to it suffice (the same diff).
    expect(await checkpointDiffs(c.s, { conversationId: c.id, home: elsewhere, dirs: [c.ws], bundled: c.bundled }, c.shown.slice(0, 1))).toEqual([one]);
    // Each diff is cut at its cap, and says how much more there was.
    const [cut] = await checkpointDiffs(c.s, { conversationId: c.id, home: elsewhere, dirs: [], bundled: c.bundled }, c.shown.slice(0, 1), {
      maxDiffBytes: 20,
    });
    expect(cut).toMatch(/^.{20}\n… \(\d+ more bytes\)$/s);
  });

  it('says in one line why not: bundles above the cap, none stored, a skipped bundle, a removed base', async () => {
    const c = await conversation();
    const elsewhere = tempDirSync('agentrun-diffs-operator-');
    const source = { conversationId: c.id, home: elsewhere, dirs: [c.ws], bundled: c.bundled, host: 'FB' };
    // Above the cap (the base and the bundles up to turn 2 count): one line per turn, no diff fetched.
    process.env.AGENTRUN_INSPECT_MAX_BUNDLE_BYTES = '1000';
    const over = await checkpointDiffs(c.s, source, c.shown);
    expect(over[0]).toMatch(
      /^\(diff unavailable: not under this AGENTRUN_HOME \(.+\), and reading it from the store takes 3 bundles and their base, .+ kB: above the 1\.0 kB inspect fetches \(AGENTRUN_INSPECT_MAX_BUNDLE_BYTES\); raise it, or inspect it with the AGENTRUN_HOME of the worker on host FB, which holds the workspace\)$/,
    );
    expect(over[1]).toBe(over[0]);
    expect(existsSync(join(elsewhere, 'inspect'))).toBe(false);
    // A cap given by the caller wins over the environment.
    expect((await checkpointDiffs(c.s, source, c.shown, { maxBundleBytes: 10_000_000 }))[0]).toContain('+from turn 1');
    delete process.env.AGENTRUN_INSPECT_MAX_BUNDLE_BYTES;

    // No bundles at all (it ran on no workspace host, or gc removed them).
    const [none] = await checkpointDiffs(c.s, { ...source, bundled: [] }, c.shown);
    expect(none).toBe(
      `(diff unavailable: not under this AGENTRUN_HOME (${elsewhere}), and the store holds no checkpoint bundles of it (none were stored: it ran on no workspace host, or gc removed them); inspect it with the AGENTRUN_HOME of the worker on host FB, which holds the workspace)`,
    );

    // A sub-agent stores none of its own.
    const [child] = await checkpointDiffs(c.s, { ...source, bundled: [], subagent: true }, c.shown);
    expect(child).toContain(
      `, and a sub-agent's checkpoints are kept only in its parent's workspace, on its host; inspect it with the AGENTRUN_HOME of the worker on host FB`,
    );

    // The base its bundles start from is gone.
    await c.s.pool.query('DELETE FROM bundle_bases WHERE commit = $1', [c.bundled[0]!.base]);
    const [noBase] = await checkpointDiffs(c.s, source, c.shown);
    expect(noBase).toContain('the bundle base its stored bundles start from is not in the store (removed)');
  });

  it('shows the turns bundled before a bundle above AGENTRUN_MAX_BUNDLE_BYTES, and says why not for the turns after', async () => {
    process.env.AGENTRUN_MAX_BUNDLE_BYTES = String(16 * 1024);
    // Turn 2 writes 64 KB that do not compress: its bundle is above the cap, and nothing is bundled from there on.
    const c = await conversation({ turn2: randomBytes(64 * 1024).toString('base64') });
    expect(c.bundled.map((b) => [b.turn, b.skipped ?? false])).toEqual([
      [0, false],
      [1, false],
      [2, true],
    ]);
    const elsewhere = tempDirSync('agentrun-diffs-operator-');
    const [one, two] = await checkpointDiffs(c.s, { conversationId: c.id, home: elsewhere, dirs: [c.ws], bundled: c.bundled }, c.shown);
    expect(one).toContain('+from turn 1');
    expect(two).toMatch(
      /^\(diff unavailable: not under this AGENTRUN_HOME \(.+\), and the store has no off-host checkpoint from turn 2 on \(its bundle, .+ kB, was above AGENTRUN_MAX_BUNDLE_BYTES\); inspect it with the AGENTRUN_HOME of the worker that ran it\)$/,
    );
  });

  it('a bundle gc removed meanwhile: the turns say the bundles could not be read', async () => {
    const c = await conversation();
    await c.s.deleteCheckpointBundles(c.id);
    const elsewhere = tempDirSync('agentrun-diffs-operator-');
    const [one] = await checkpointDiffs(c.s, { conversationId: c.id, home: elsewhere, dirs: [c.ws], bundled: c.bundled }, c.shown);
    expect(one).toContain('and its stored bundles could not be read: the bundle of turn 0 is not in the store any more');
    expect(readdirSync(join(elsewhere, 'inspect'))).toEqual([]);
  });

  it('a repository job: names the remote (without its credentials) and the turn ref', async () => {
    const elsewhere = tempDirSync('agentrun-diffs-operator-');
    const commit = 'a'.repeat(40);
    const [line] = await checkpointDiffs(
      store(),
      { conversationId: 'job/1', home: elsewhere, dirs: ['/nowhere'], repo: 'https://bot:secret@git.example.com/r.git', bundled: [] },
      [{ turn: 3, commit }],
    );
    expect(line).toBe(
      `(diff not here: turn 3's commit aaaaaaaaaaaa is on the job's remote https://git.example.com/r.git as refs/agentrun/job_1/turn-3 (on the workers' AGENTRUN_CHECKPOINT_REMOTE instead, if they set one): git fetch https://git.example.com/r.git refs/agentrun/job_1/turn-3 && git show ${commit})`,
    );
  });
});

describe('where the workspace is', () => {
  const placed = (host: string, workspace: string) => ({ run: 1, at: '', host, workspace });
  it('names the current host and directory, and where it was first placed only when it moved', () => {
    // Never placed on a host (an SDK worker): the path it started with, as before.
    expect(workspaceLine(workspaceOf('/w', undefined, undefined, []))).toBe('/w');
    expect(workspaceLine(workspaceOf('/w', undefined, { host: 'FA', workspace: '/w' }, [placed('FA', '/w')]))).toBe('/w on host FA');
    // Moved: workspace_usage says where it is now; the history says where it was first.
    expect(workspaceLine(workspaceOf('/y', undefined, { host: 'FB', workspace: '/x' }, [placed('FA', '/y'), placed('FB', '/x')]))).toBe(
      '/x on host FB (first placed at /y on FA)',
    );
    // The history gone (retention): still the directory it started in.
    expect(workspaceLine(workspaceOf('/y', undefined, { host: 'FB', workspace: '/x' }, []))).toBe('/x on host FB (first placed at /y)');
    // The same directory on another host (a shared volume).
    expect(workspaceLine(workspaceOf('/y', undefined, { host: 'FB', workspace: '/y' }, [placed('FA', '/y')]))).toBe('/y on host FB (first placed on FA)');
    // No usage row yet: the history's last placement.
    expect(workspaceLine(workspaceOf('/y', undefined, undefined, [placed('FA', '/y'), placed('FB', '/x')]))).toBe('/x on host FB (first placed at /y on FA)');
    // A repository job: its clone, and the repository.
    expect(workspaceLine(workspaceOf('git@r:x.git', 'git@r:x.git', { host: 'B', workspace: '/ws/j' }, [placed('A', '/wa/j'), placed('B', '/ws/j')]))).toBe(
      '/ws/j on host B (a clone of git@r:x.git; first placed at /wa/j on A)',
    );
    expect(workspaceLine(workspaceOf('git@r:x.git', 'git@r:x.git', undefined, []))).toBe('git@r:x.git');
  });

  it('list: the directory and host now, and the path it started with if it moved', () => {
    expect(summaryWhere({ workspace: '/w' })).toBe('/w');
    expect(summaryWhere({ workspace: '/w', host: 'FA', hostWorkspace: '/w' })).toBe('/w on host FA');
    expect(summaryWhere({ workspace: '/y', host: 'FB', hostWorkspace: '/x' })).toBe('/x on host FB (first placed at /y)');
    expect(summaryWhere({ workspace: 'git@r:x.git', repo: 'git@r:x.git', host: 'B', hostWorkspace: '/ws/j' })).toBe('/ws/j on host B (a clone of git@r:x.git)');
    expect(summaryWhere({ host: 'B', hostWorkspace: '/ws/j' })).toBe('/ws/j on host B');
    expect(summaryWhere({})).toBe('');
  });
});
