// A host's record of a workspace's size for `list` (src/workspace/host.ts recordWorkspaceUsage) on
// the real PostgreSQL: measures coalesce to one per interval, a new placement or a request `now`
// (after setup) is measured at once, a superseded placement's measure is refused; the walk counts
// what `du` counts and does not follow links out of the tree.
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { diskUsage } from '../../src/workspace/gc.js';
import { DEFAULT_USAGE_INTERVAL_MS, parseUsageInterval, recordWorkspaceUsage, setUsageInterval, usageIntervalFromEnv } from '../../src/workspace/host.js';
import { storeInFreshSchema } from '../helpers/store-schema.js';
import { tempDir } from '../helpers/temp.js';

const store = storeInFreshSchema('usage');

/** What `du` says the tree uses, in bytes. */
const du = (dir: string) => Number(execFileSync('du', ['-s', '-B1', dir], { encoding: 'utf8' }).split('\t')[0]);

/** The store, counting its workspace usage writes and whether they settled. */
function counting(s: Store) {
  const writes: { bytes?: number; epoch: number | null; settled: Promise<unknown> }[] = [];
  const wrapped = Object.create(s, {
    putWorkspaceUsage: {
      value: (...args: Parameters<Store['putWorkspaceUsage']>) => {
        const p = s.putWorkspaceUsage(...args);
        writes.push({ bytes: args[1].diskBytes, epoch: args[2] ?? null, settled: p.catch(() => undefined) });
        return p;
      },
    },
  }) as Store;
  return { wrapped, writes };
}

afterEach(() => {
  vi.useRealTimers();
  delete process.env.AGENTRUN_WORKSPACE_USAGE_INTERVAL;
  setUsageInterval(DEFAULT_USAGE_INTERVAL_MS);
});

/** Fake timers, and a workspace of 5 bytes placed at epoch 1 whose first measure is in. */
async function measuredOnce(prefix: string) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const s = store();
  const { wrapped, writes } = counting(s);
  const id = `${prefix}-${Date.now()}`;
  const ws = await tempDir('agentrun-usage-ws-');
  await writeFile(join(ws, 'a.txt'), '12345');
  await s.raiseFence(id, 1);
  recordWorkspaceUsage(wrapped, id, ws, 1);
  await vi.waitFor(() => expect(writes).toHaveLength(1));
  await writes[0]!.settled;
  return { s, wrapped, writes, id, ws };
}

describe('workspace usage', () => {
  it('counts the files under the workspace, not what its links point to', async () => {
    const ws = await tempDir('agentrun-usage-ws-');
    const outside = await tempDir('agentrun-usage-out-');
    await writeFile(join(outside, 'big'), Buffer.alloc(100_000));
    await mkdir(join(ws, 'd'));
    await writeFile(join(ws, 'd', 'a.txt'), '12345');
    await symlink(outside, join(ws, 'link'));
    await symlink(join(outside, 'big'), join(ws, 'big'));
    expect(await diskUsage(ws)).toBe(du(ws));
    expect(await diskUsage(ws)).toBeLessThan(100_000);
  });

  it('measures at most once per interval, a new placement at once, and never for a superseded one', async () => {
    const { s, wrapped, writes, id, ws } = await measuredOnce('u');
    expect((await s.getWorkspaceUsage([id])).get(id)?.diskBytes).toBe(du(ws));
    // Checkpointed turns meanwhile: one measure when the interval is over, of the tree as it is then.
    await writeFile(join(ws, 'b.txt'), '123');
    for (let i = 0; i < 5; i++) recordWorkspaceUsage(wrapped, id, ws, 1);
    expect(writes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(DEFAULT_USAGE_INTERVAL_MS);
    await vi.waitFor(() => expect(writes).toHaveLength(2));
    await writes[1]!.settled;
    expect((await s.getWorkspaceUsage([id])).get(id)?.diskBytes).toBe(du(ws));

    // A new placement (epoch 2, here the same host) is measured at once, resting or not.
    await s.raiseFence(id, 2);
    recordWorkspaceUsage(wrapped, id, ws, 2);
    await vi.waitFor(() => expect(writes).toHaveLength(3));
    await writes[2]!.settled;
    expect(writes[2]!.epoch).toBe(2);
    // Epoch 1's measure, late, is refused: the row stays the current placement's.
    await s.putWorkspaceUsage(id, { host: 'host-b', workspace: '/b/ws', diskBytes: 1 }, 2);
    await vi.advanceTimersByTimeAsync(DEFAULT_USAGE_INTERVAL_MS);
    recordWorkspaceUsage(wrapped, id, await tempDir('agentrun-usage-old-'), 1);
    await vi.waitFor(() => expect(writes).toHaveLength(4));
    await Promise.all(writes.map((w) => w.settled));
    expect((await s.getWorkspaceUsage([id])).get(id)).toEqual({ host: 'host-b', workspace: '/b/ws', diskBytes: 1 });
  });

  it('a measure asked for now (after setup or a cache restore) does not wait for the interval; the size matches du within 10%', async () => {
    const { s, wrapped, writes, id, ws } = await measuredOnce('n');
    // What a restore brings: a dependency tree of many small files, a few larger ones, a hard link and symlinks.
    for (let i = 0; i < 60; i++) {
      const pkg = join(ws, 'node_modules', `p${i}`);
      await mkdir(join(pkg, 'lib'), { recursive: true });
      await writeFile(join(pkg, 'package.json'), `{"name":"p${i}"}`);
      await writeFile(join(pkg, 'lib', 'index.js'), 'x'.repeat(i * 700));
      await symlink(`../p${i}/lib/index.js`, join(ws, 'node_modules', `p${i}.bin`));
    }
    execFileSync('ln', [join(ws, 'node_modules', 'p59', 'lib', 'index.js'), join(ws, 'node_modules', 'p59', 'lib', 'again.js')]);
    recordWorkspaceUsage(wrapped, id, ws, 1, true);
    await vi.waitFor(() => expect(writes).toHaveLength(2));
    await writes[1]!.settled;
    const measured = (await s.getWorkspaceUsage([id])).get(id)!.diskBytes!;
    expect(Math.abs(measured - du(ws)) / du(ws)).toBeLessThanOrEqual(0.1);
    expect(measured).toBe(du(ws));

    // Asked for now again while resting after that measure (the tree grew): measured at once.
    await writeFile(join(ws, 'big'), Buffer.alloc(200_000, 1));
    recordWorkspaceUsage(wrapped, id, ws, 1, true);
    await vi.waitFor(() => expect(writes).toHaveLength(3));
    await writes[2]!.settled;
    expect((await s.getWorkspaceUsage([id])).get(id)?.diskBytes).toBe(du(ws));
  });

  it('measures at most once per AGENTRUN_WORKSPACE_USAGE_INTERVAL, as the worker reads it', async () => {
    // As a worker does at start (worker/index.ts): the interval from its environment.
    process.env.AGENTRUN_WORKSPACE_USAGE_INTERVAL = '5s';
    setUsageInterval(usageIntervalFromEnv());
    const { s, wrapped, writes, id, ws } = await measuredOnce('i');
    await writeFile(join(ws, 'b.txt'), '123');
    recordWorkspaceUsage(wrapped, id, ws, 1);
    // Not before the 5 s are over, and then at once (not at the default 30 s).
    await vi.advanceTimersByTimeAsync(4_900);
    expect(writes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(100);
    await vi.waitFor(() => expect(writes).toHaveLength(2));
    await writes[1]!.settled;
    expect((await s.getWorkspaceUsage([id])).get(id)?.diskBytes).toBe(du(ws));

    // 0: no rest between measures: the next request is measured at once.
    setUsageInterval(usageIntervalFromEnv({ AGENTRUN_WORKSPACE_USAGE_INTERVAL: '0' }));
    await vi.advanceTimersByTimeAsync(5_000); // the last rest (5 s) ends with nothing wanted
    await writeFile(join(ws, 'c.txt'), '1');
    recordWorkspaceUsage(wrapped, id, ws, 1);
    await vi.waitFor(() => expect(writes).toHaveLength(3));
    await writes[2]!.settled;
    recordWorkspaceUsage(wrapped, id, ws, 1);
    await vi.advanceTimersByTimeAsync(0);
    await vi.waitFor(() => expect(writes).toHaveLength(4));
    await writes[3]!.settled;
    expect((await s.getWorkspaceUsage([id])).get(id)?.diskBytes).toBe(du(ws));
  });

  it('reads the interval as a duration, refusing what is not one in a line that says what to write', () => {
    expect(usageIntervalFromEnv({})).toBe(30_000);
    expect(usageIntervalFromEnv({ AGENTRUN_WORKSPACE_USAGE_INTERVAL: ' ' })).toBe(30_000);
    expect(usageIntervalFromEnv({ AGENTRUN_WORKSPACE_USAGE_INTERVAL: '2m' })).toBe(120_000);
    expect(usageIntervalFromEnv({ AGENTRUN_WORKSPACE_USAGE_INTERVAL: '1.5s' })).toBe(1_500);
    expect(usageIntervalFromEnv({ AGENTRUN_WORKSPACE_USAGE_INTERVAL: '0' })).toBe(0);
    const must = (got: string) =>
      new Error(`AGENTRUN_WORKSPACE_USAGE_INTERVAL must be a duration from 1s to 1d, or 0 (e.g. 30s; a plain number is milliseconds), got "${got}"`);
    // "30" is 30 ms, surely meant as 30 s: refused, and the line says why.
    for (const bad of ['soon', '-5s', '30', '2d']) expect(() => usageIntervalFromEnv({ AGENTRUN_WORKSPACE_USAGE_INTERVAL: bad }), bad).toThrow(must(bad));
    expect(() => parseUsageInterval('x', '--workspace-usage-interval')).toThrow(/^--workspace-usage-interval must be a duration from 1s to 1d, or 0 /);
  });
});
