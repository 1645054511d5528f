// Fencing on the real PostgreSQL and git (src/store/fence.ts, src/workspace/offhost.ts): writes that
// carry an older epoch than the conversation's fence are refused in the same statement; the
// workflow's own writes (no epoch) always land; turn refs are pushed with a lease.
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fenced, startsUnder } from '../../activities/fence.js';
import { FencedError, underFence } from '../../src/store/fence.js';
import { ZERO_USAGE } from '../../src/types.js';
import { createCheckpoint, privateGitDir } from '../../src/workspace/checkpoint.js';
import { pushCheckpoint } from '../../src/workspace/offhost.js';
import { storeInFreshSchema } from '../helpers/store-schema.js';
import { tempDir } from '../helpers/temp.js';

const store = storeInFreshSchema('fence');
const as = <T>(conversationId: string, epoch: number, fn: () => Promise<T>) => underFence({ conversationId, epoch, superseded: new AbortController() }, fn);
const message = (conversationId: string, seq: number, content: string) =>
  ({ conversationId, seq, turn: 1, role: 'tool', kind: 'tool_result', content, tokens: 1 }) as const;

const connection = { conversationId: '', host: 'example.com', port: 443, method: 'CONNECT' as const, allowed: true, bytesUp: 1, bytesDown: 2, durationMs: 3 };

describe('the fence', () => {
  it('a step that runs commands reads the fence before it starts: a superseded attempt runs nothing and ends as Fenced', async () => {
    const s = store();
    const id = `c-pre-${Date.now()}`;
    await s.raiseFence(id, 2);
    let ran = 0;
    const step = fenced(s, async (_input: { conversationId: string; epoch: number }) => ++ran, { watch: true });
    await expect(step({ conversationId: id, epoch: 1 })).rejects.toMatchObject({ type: 'Fenced', nonRetryable: true });
    expect(ran).toBe(0);
    expect(await step({ conversationId: id, epoch: 2 })).toBe(1);
  });

  it('a step whose first read brings the fence (checkedByStep) starts nothing when superseded, without a fence read of its own', async () => {
    const s = store();
    const id = `c-first-${Date.now()}`;
    await s.upsertConversation({ id, task: 't', workspace: '/w', model: 'm', config: {} });
    await s.putToolCalls(id, 1, [{ id: '1.0', name: 'read_file', args: { path: 'a' } }]);
    expect(await s.getToolCallWithEntry(id, '1.0')).toMatchObject({ call: { id: '1.0' }, entry: null, fenceEpoch: 0 });
    expect(await s.getToolCallWithEntry(id, 'none')).toEqual({ call: null, entry: null, fenceEpoch: 0 });
    await s.raiseFence(id, 2);
    let ran = 0;
    const step = fenced(
      s,
      async (input: { conversationId: string; epoch: number }) => {
        startsUnder(input.conversationId, (await s.getToolCallWithEntry(input.conversationId, '1.0')).fenceEpoch);
        return ++ran;
      },
      { watch: true, checkedByStep: true },
    );
    await expect(step({ conversationId: id, epoch: 1 })).rejects.toMatchObject({ type: 'Fenced', nonRetryable: true });
    expect(ran).toBe(0);
    expect(await step({ conversationId: id, epoch: 2 })).toBe(1);
  });

  it('refuses every host write of an older epoch, lets the current one and the workflow through, and never goes down', async () => {
    const s = store();
    const id = `c-${Date.now()}`;
    expect(await s.fenceEpoch(id)).toBe(0);
    // Before any placement raised it, a write with an epoch lands.
    await as(id, 1, () => s.putMessage(message(id, 1, 'from epoch 1')));
    await s.putWorkspaceUsage(id, { host: 'host-a', workspace: '/a/ws', diskBytes: 100 }, 1);
    expect(await s.raiseFence(id, 2)).toBe(2);
    // The new placement records its host; the old host, waking up, cannot put its own back (for `list`).
    await s.putWorkspaceUsage(id, { host: 'host-b', workspace: '/b/ws', diskBytes: 200 }, 2);
    expect(await s.raiseFence(id, 1)).toBe(2);

    connection.conversationId = id;
    await s.upsertConversation({ id, task: 't', workspace: '/w', model: 'm', config: {} });
    const stale: (() => Promise<unknown>)[] = [
      () => s.putMessage(message(id, 1, 'late from epoch 1')),
      () => s.putCheckpoint(id, 1, 'abc', ['a.txt']),
      // A write and the events announcing it in one statement: neither lands.
      () => s.putMessage(message(id, 1, 'late, announced'), [{ type: 'message_completed', seq: 1, finishReason: 'stop', usage: ZERO_USAGE }]),
      () => s.putCheckpoint(id, 1, 'abc', ['a.txt'], [{ type: 'checkpoint', turn: 1, commit: 'abc', files: ['a.txt'] }]),
      () => s.putContext(id, 1, { late: true }, 10, [{ type: 'turn_started', turn: 1 }]),
      () => s.recordTurnEnd(id, { turn: 1, usage: ZERO_USAGE, costUsd: 0, status: 'running' }),
      () => s.putCheckpointBundle(id, 1, 'abc', undefined, Buffer.from('bundle')),
      () => s.appendStream(id, [{ type: 'tool_started', callId: 'k1', name: 'execute_command', preview: 'x' }]),
      () => s.ledger(id).start({ callId: 'k1', tool: 'execute_command', argsHash: 'h', state: 'started' }),
      // A claim and the tool_started announcing it in one statement: neither lands.
      () =>
        s
          .ledger(id, [{ type: 'tool_started', callId: 'k1', name: 'execute_command', preview: 'x' }])
          .start({ callId: 'k1', tool: 'execute_command', argsHash: 'h', state: 'started' }),
      () => s.checkFence(id, 1, 'the push of a ref'),
      // The model step's writes: its segments, parsed calls, context, summary, prune record, marks and usage.
      () => s.putSegment({ conversationId: id, seq: 2, segment: 0, content: 'late', finishReason: 'stop', usage: ZERO_USAGE }),
      () => s.putToolCalls(id, 2, [{ id: 'k9', name: 'read_file', args: { path: 'a' } }]),
      () => s.putToolCalls(id, 2, [{ id: 'k9', name: 'read_file', args: { path: 'a' } }], { earlierFrom: 1 }),
      // The last segment, the merged message and message_completed in one statement: none lands.
      () =>
        s.putAnswer(
          { conversationId: id, seq: 2, segment: 0, content: 'late', finishReason: 'stop', usage: ZERO_USAGE },
          { ...message(id, 2, 'late answer') },
          [{ type: 'message_completed', seq: 2, finishReason: 'stop', usage: ZERO_USAGE }],
        ),
      () => s.putContext(id, 1, { late: true }, 10),
      () => s.putSummary(id, 2, 'late summary', 3),
      () => s.putPruneRecord(id, 1, { tokensBefore: 2, tokensAfter: 1, actions: ['late'], plan: null }),
      () => s.setMarkedIds(id, ['late']),
      () => s.putUsage({ conversationId: id, purpose: 'turn', turn: 1, seq: 2, segment: 0, model: 'm', usage: ZERO_USAGE, costUsd: 0.5 }),
      () => s.putWorkspaceUsage(id, { host: 'host-a', workspace: '/a/ws', diskBytes: 300 }),
      () => s.putWorkspaceUsage(id, { host: 'host-a', workspace: '/a/ws' }, 1),
      // What setup's and the tools' proxy records (after the step's own context: the epoch is passed), and a bundle base's parts.
      () => s.putNetworkConnection(connection, 1),
      () => s.putBundleBasePart(`base-${id}`, 0, Buffer.from('part'), id),
      () => s.finishBundleBase(`base-${id}`, 1, 4, id),
    ];
    for (const write of stale) await expect(as(id, 1, write)).rejects.toBeInstanceOf(FencedError);
    expect((await s.getMessage(id, 1))?.content).toBe('from epoch 1');
    expect(await s.getMessage(id, 2)).toBeNull();
    expect(await s.getCheckpoints(id)).toEqual([]);
    expect(await s.getBundledCommits(id)).toEqual([]);
    expect(await s.readStream(id)).toEqual([]);
    expect(await s.ledger(id).get('k1')).toBeNull();
    expect(await s.getSegments(id, 2)).toEqual([]);
    expect(await s.getToolCalls(id, 2)).toEqual([]);
    expect(await s.getNetworkConnections(id)).toEqual([]);
    expect(await s.getBundleBase(`base-${id}`)).toBeNull();
    // The current placement's record lands, with its epoch passed or from its fence.
    await s.putNetworkConnection(connection, 2);
    await as(id, 2, () => s.putNetworkConnection(connection));
    expect(await s.getNetworkConnections(id)).toHaveLength(2);
    expect(await s.getContext(id, 1)).toBeNull();
    expect((await s.getPruneState(id)).summary).toBeNull();
    expect(await s.getPruneRecords(id)).toEqual([]);
    expect(await s.getMarkedIds(id)).toEqual([]);
    expect(await s.getUsage(id)).toEqual([]);
    expect((await s.getWorkspaceUsage([id])).get(id)).toEqual({ host: 'host-b', workspace: '/b/ws', diskBytes: 200 });
    // The current placement's model step writes them.
    await as(id, 2, () => s.putSegment({ conversationId: id, seq: 2, segment: 0, content: 'current', finishReason: 'stop', usage: ZERO_USAGE }));
    await as(id, 2, () => s.putToolCalls(id, 2, [{ id: 'k9', name: 'read_file', args: { path: 'a' } }]));
    await as(id, 2, () => s.putUsage({ conversationId: id, purpose: 'turn', turn: 1, seq: 2, segment: 0, model: 'm', usage: ZERO_USAGE, costUsd: 0.25 }));
    // A superseded step's late parse does not drop the current one's calls either.
    await expect(as(id, 1, () => s.putToolCalls(id, 2, []))).rejects.toBeInstanceOf(FencedError);
    expect((await s.getSegments(id, 2)).map((g) => g.content)).toEqual(['current']);
    expect((await s.getToolCalls(id, 2)).map((c) => c.id)).toEqual(['k9']);
    expect((await s.getUsage(id)).map((u) => u.costUsd)).toEqual([0.25]);

    // The current placement writes; an older one cannot finish the call it claimed before the move.
    await as(id, 2, () => s.ledger(id).start({ callId: 'k2', tool: 'execute_command', argsHash: 'h', state: 'started' }));
    await expect(as(id, 1, () => s.ledger(id).finish('k2', { ok: true, output: 'stale' }))).rejects.toThrow(/epoch 1.*epoch 2/);
    await as(id, 2, () => s.ledger(id).finish('k2', { ok: true, output: 'current' }));
    expect((await s.ledger(id).get('k2'))?.result?.output).toBe('current');
    // The workflow's own answers carry no epoch: always written.
    await s.putMessage(message(id, 1, 'interrupted'));
    expect((await s.getMessage(id, 1))?.content).toBe('interrupted');
    // A keyed stream event already there is no refusal for the current placement.
    await as(id, 2, () => s.appendStream(id, [{ type: 'tool_started', callId: 'k2', name: 'execute_command', preview: 'x' }]));
    expect(await as(id, 2, () => s.appendStream(id, [{ type: 'tool_started', callId: 'k2', name: 'execute_command', preview: 'x' }]))).toEqual([]);
    // The current placement's announced writes land with their event, once however often retried.
    for (let i = 0; i < 2; i++) {
      await as(id, 2, () => s.putCheckpoint(id, 1, 'def', ['b.txt'], [{ type: 'checkpoint', turn: 1, commit: 'def', files: ['b.txt'] }]));
      await as(id, 2, () => s.putMessage(message(id, 3, 'current'), [{ type: 'message_completed', seq: 3, finishReason: 'stop', usage: ZERO_USAGE }]));
    }
    expect((await s.getCheckpoints(id)).map((c) => c.commit)).toEqual(['def']);
    expect((await s.getMessage(id, 3))?.content).toBe('current');
    const announced = (await s.readStream(id)).map((r) => r.event.type).filter((t) => t === 'checkpoint' || t === 'message_completed');
    expect(announced).toEqual(['checkpoint', 'message_completed']);
  });

  it('connection records and bundle-base parts carry the epoch they were written under; a part of a newer placement is never replaced by an older one', async () => {
    const s = store();
    const id = `e-${Date.now()}`;
    const base = `base-${id}`;
    await s.raiseFence(id, 3);
    await s.putNetworkConnection({ ...connection, conversationId: id }, 3);
    await as(id, 4, () => s.putNetworkConnection({ ...connection, conversationId: id }));
    await s.putNetworkConnection({ ...connection, conversationId: id }, null);
    expect((await s.getNetworkConnections(id)).map((c) => c.epoch)).toEqual([3, 4, undefined]);

    // Epoch 5 wrote the part (its placement has not raised the fence yet); epoch 4, still allowed by the fence, cannot replace it.
    await as(id, 5, () => s.putBundleBasePart(base, 0, Buffer.from('from 5'), id));
    await expect(as(id, 4, () => s.putBundleBasePart(base, 0, Buffer.from('from 4'), id))).rejects.toThrow(/epoch 4.*epoch 5/);
    await as(id, 5, () => s.finishBundleBase(base, 1, 6, id));
    await expect(as(id, 4, () => s.finishBundleBase(base, 1, 99, id))).rejects.toBeInstanceOf(FencedError);
    expect((await s.getBundleBasePart(base, 0)).toString()).toBe('from 5');
    expect(await s.getBundleBase(base)).toEqual({ bytes: 6, parts: 1 });
    const { rows } = await s.pool.query('SELECT conversation_id, epoch FROM bundle_base_parts WHERE commit = $1', [base]);
    expect(rows).toEqual([{ conversation_id: id, epoch: '5' }]);
    // Another conversation sharing the base (the same repository's first tree) may write it again, and so may a step without an epoch.
    await as('other', 1, () => s.putBundleBasePart(base, 0, Buffer.from('from other'), 'other'));
    await s.putBundleBasePart(base, 0, Buffer.from('unfenced'));
    expect((await s.getBundleBasePart(base, 0)).toString()).toBe('unfenced');
  });

  it('a push the remote refuses itself (permissions, a hook) says so, with its reason, and never that the ref kept changing', async () => {
    const s = store();
    const id = `q-${Date.now()}`;
    const home = await tempDir('agentrun-fence-home-');
    const bare = join(await tempDir('agentrun-fence-remote-'), 'r.git');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    await writeFile(join(bare, 'hooks', 'pre-receive'), '#!/bin/sh\necho "permission denied for the bot" >&2\nexit 1\n', { mode: 0o755 });
    const ws = await tempDir('agentrun-fence-ws-');
    await writeFile(join(ws, 'a.txt'), 'one');
    const c1 = (await createCheckpoint(ws, id, 1, home))!.commit;
    execFileSync('git', ['--git-dir', privateGitDir(home, ws), 'remote', 'add', 'origin', bare]);
    await s.raiseFence(id, 1);
    const err = (await as(id, 1, () => pushCheckpoint(home, ws, id, 1, c1, { store: s, lease: '' })).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(
      /^the push of refs\/agentrun\/\S+\/turn-1 to origin was refused: .*permission denied for the bot.*; check that the worker's git credentials may push/,
    );
    expect(err.message).not.toMatch(/kept changing/);
  });

  it('pushes turn refs with a lease: a superseded host moves nothing, the current one replaces a superseded attempt’s ref', async () => {
    const s = store();
    const id = `p-${Date.now()}`;
    const home = await tempDir('agentrun-fence-home-');
    const bare = join(await tempDir('agentrun-fence-remote-'), 'r.git');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    const ws = await tempDir('agentrun-fence-ws-');
    await writeFile(join(ws, 'a.txt'), 'one');
    const c1 = (await createCheckpoint(ws, id, 1, home))!.commit;
    await writeFile(join(ws, 'a.txt'), 'two');
    const c2 = (await createCheckpoint(ws, id, 1, home))!.commit;
    execFileSync('git', ['--git-dir', privateGitDir(home, ws), 'remote', 'add', 'origin', bare]);
    const refAt = () =>
      execFileSync('git', ['--git-dir', bare, 'for-each-ref', '--format=%(objectname)', `refs/agentrun/${id}/turn-1`])
        .toString()
        .trim();

    await s.raiseFence(id, 1);
    // Epoch 1 pushes c1 (nothing there: lease ''), and again (a retry: up to date).
    await as(id, 1, () => pushCheckpoint(home, ws, id, 1, c1, { store: s, lease: '' }));
    await as(id, 1, () => pushCheckpoint(home, ws, id, 1, c1, { store: s, lease: '' }));
    expect(refAt()).toBe(c1);
    // Moved: epoch 2 redoes the turn and pushes c2; the workflow knew no commit at turn 1's ref (the loser died before reporting c1).
    await s.raiseFence(id, 2);
    await as(id, 2, () => pushCheckpoint(home, ws, id, 1, c2, { store: s, lease: '' }));
    expect(refAt()).toBe(c2);
    // The stale host's push is refused and the ref stays.
    await expect(as(id, 1, () => pushCheckpoint(home, ws, id, 1, c1, { store: s, lease: '' }))).rejects.toBeInstanceOf(FencedError);
    expect(refAt()).toBe(c2);
    // The fence rises while a push is under way (here: right after the push's own check): the ref is taken back.
    let checks = 0;
    const racing = Object.create(s, {
      checkFence: {
        value: async (...args: Parameters<typeof s.checkFence>) => {
          await s.checkFence(...args);
          if (++checks === 1) await s.raiseFence(id, 3);
        },
      },
    }) as typeof s;
    await expect(as(id, 2, () => pushCheckpoint(home, ws, id, 2, c2, { store: racing, lease: '' }))).rejects.toBeInstanceOf(FencedError);
    expect(execFileSync('git', ['--git-dir', bare, 'for-each-ref', `refs/agentrun/${id}/turn-2`]).toString()).toBe('');
  });
});
