// A host's record of a workspace's size for `list` (src/workspace/host.ts recordWorkspaceUsage) on
// the real PostgreSQL: measures coalesce to one per interval, a new placement is measured at once,
// a superseded placement's measure is refused; the walk does not follow links out of the tree.
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { diskUsage } from '../../src/workspace/gc.js';
import { recordWorkspaceUsage, USAGE_MEASURE_EVERY_MS } from '../../src/workspace/host.js';
import { storeInFreshSchema } from '../helpers/store-schema.js';
import { tempDir } from '../helpers/temp.js';

const store = storeInFreshSchema('usage');

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
});

describe('workspace usage', () => {
  it('counts the files under the workspace, not what its links point to', async () => {
    const ws = await tempDir('agentrun-usage-ws-');
    const outside = await tempDir('agentrun-usage-out-');
    await writeFile(join(outside, 'big'), Buffer.alloc(100_000));
    await mkdir(join(ws, 'd'));
    await writeFile(join(ws, 'd', 'a.txt'), '12345');
    await symlink(outside, join(ws, 'link'));
    await symlink(join(outside, 'big'), join(ws, 'big'));
    expect(await diskUsage(ws)).toBe(5);
  });

  it('measures at most once per interval, a new placement at once, and never for a superseded one', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const s = store();
    const { wrapped, writes } = counting(s);
    const id = `u-${Date.now()}`;
    const ws = await tempDir('agentrun-usage-ws-');
    await writeFile(join(ws, 'a.txt'), '12345');
    await s.raiseFence(id, 1);

    recordWorkspaceUsage(wrapped, id, ws, 1);
    await vi.waitFor(() => expect(writes).toHaveLength(1));
    await writes[0]!.settled;
    expect((await s.getWorkspaceUsage([id])).get(id)?.diskBytes).toBe(5);
    // Checkpointed turns meanwhile: one measure when the interval is over, of the tree as it is then.
    await writeFile(join(ws, 'b.txt'), '123');
    for (let i = 0; i < 5; i++) recordWorkspaceUsage(wrapped, id, ws, 1);
    expect(writes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(USAGE_MEASURE_EVERY_MS);
    await vi.waitFor(() => expect(writes).toHaveLength(2));
    await writes[1]!.settled;
    expect((await s.getWorkspaceUsage([id])).get(id)?.diskBytes).toBe(8);

    // A new placement (epoch 2, here the same host) is measured at once, resting or not.
    await s.raiseFence(id, 2);
    recordWorkspaceUsage(wrapped, id, ws, 2);
    await vi.waitFor(() => expect(writes).toHaveLength(3));
    await writes[2]!.settled;
    expect(writes[2]!.epoch).toBe(2);
    // Epoch 1's measure, late, is refused: the row stays the current placement's.
    await s.putWorkspaceUsage(id, { host: 'host-b', workspace: '/b/ws', diskBytes: 1 }, 2);
    await vi.advanceTimersByTimeAsync(USAGE_MEASURE_EVERY_MS);
    recordWorkspaceUsage(wrapped, id, await tempDir('agentrun-usage-old-'), 1);
    await vi.waitFor(() => expect(writes).toHaveLength(4));
    await Promise.all(writes.map((w) => w.settled));
    expect((await s.getWorkspaceUsage([id])).get(id)).toEqual({ host: 'host-b', workspace: '/b/ws', diskBytes: 1 });
  });
});
