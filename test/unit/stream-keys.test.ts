// Stream events are written once per key against the real PostgreSQL: a retried write (or a
// retried activity writing the same turn's events) adds no rows.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StreamWriter } from '../../src/turn/stream-writer.js';
import { StreamFlusher } from '../../src/store/stream-flusher.js';
import type { Store } from '../../src/store/index.js';
import type { StreamEvent } from '../../src/types.js';
import { storeInFreshSchema } from '../helpers/store-schema.js';

const db = storeInFreshSchema('t_keys');
const cid = () => `c-${randomUUID()}`;

const rows = async (id: string) => (await db().readStream(id, 0, 1000)).map((r) => r.event);

describe('idempotent stream writes', () => {
  it('stores keyed model output once per (seq, attempt, segment, index), however often it is written', async () => {
    const id = cid();
    const events: StreamEvent[] = [
      { type: 'delta', seq: 1, attempt: 1, segment: 0, text: 'Hel' },
      { type: 'delta', seq: 1, attempt: 1, segment: 0, text: 'lo' },
    ];
    const keys = ['1:1:0:0', '1:1:0:1'];
    expect(await db().appendStream(id, events, keys)).toHaveLength(2);
    expect(await db().appendStream(id, events, keys)).toEqual([]);
    expect(await rows(id)).toEqual(events);
    // The next attempt is a different key: it is stored.
    await db().appendStream(id, [{ type: 'delta', seq: 1, attempt: 2, segment: 0, text: 'Hello' }], ['1:2:0:0']);
    expect(await rows(id)).toHaveLength(3);
  });

  it('keys once-only events by what they are about; a rollback may repeat', async () => {
    const id = cid();
    const once: StreamEvent[] = [
      { type: 'turn_started', turn: 1 },
      { type: 'tool_started', callId: 'c1', name: 'read_file', preview: 'a' },
      { type: 'message_completed', seq: 1, finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } },
      { type: 'finished', status: 'completed', reason: 'done' },
    ];
    const rollback: StreamEvent = { type: 'rollback', toTurn: 1, commit: 'abc', restored: [], removed: [] };
    await db().appendStream(id, [...once, rollback]);
    await db().appendStream(id, [...once, rollback]);
    const stored = await rows(id);
    expect(stored.filter((e) => e.type !== 'rollback')).toEqual(once);
    expect(stored.filter((e) => e.type === 'rollback')).toHaveLength(2);
    // A key repeated within one write is stored once too.
    expect(
      (
        await db().appendStream(id, [
          { type: 'turn_started', turn: 2 },
          { type: 'turn_started', turn: 2 },
        ])
      ).length,
    ).toBe(1);
  });

  it('the stream writer rewrites a flush whose commit was not acknowledged without duplicating it', async () => {
    const id = cid();
    let calls = 0;
    // The first flush commits, then its acknowledgement is lost (as when the connection drops).
    const pool = db().pool;
    const flakyPool = {
      query: async (...args: unknown[]) => {
        const r = await (pool.query as (...a: unknown[]) => Promise<unknown>)(...args);
        if (calls++ === 0) throw new Error('connection lost after commit');
        return r;
      },
    } as unknown as typeof pool;
    const flusher = new StreamFlusher(flakyPool, async () => undefined, 0);
    const store = { streamFlusher: flusher } as unknown as Store;
    const writer = new StreamWriter(store, id, { seq: 3, attempt: 1, segment: 0 });
    writer.text('abc');
    writer.reasoning('why');
    await writer.flush();
    writer.text('def');
    await writer.flush();
    expect(calls).toBe(3);
    expect((await rows(id)).map((e) => ('text' in e ? e.text : ''))).toEqual(['abc', 'why', 'def']);
  });
});
