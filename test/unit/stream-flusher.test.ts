// The stream's one writer per process, against the real PostgreSQL: many conversations' model
// output in one commit with one notification, watchers of each woken, offsets in order, a
// superseded host's output refused.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FencedError, underFence } from '../../src/store/fence.js';
import { conversationsOf, streamPayloads } from '../../src/store/stream-listener.js';
import { STREAM_TEXT_RETENTION_HOURS } from '../../src/store/stream-flusher.js';
import { StreamWriter } from '../../src/turn/stream-writer.js';
import { storeInFreshSchema } from '../helpers/store-schema.js';

const db = storeInFreshSchema('t_flush');
const cid = () => `c-${randomUUID()}`;

describe('the stream flusher', () => {
  it('writes every conversation that has output in one commit, and wakes each one’s watchers', async () => {
    const ids = Array.from({ length: 30 }, cid);
    const woken = new Map<string, number>();
    const unsubscribe = await Promise.all(ids.map((id) => db().subscribe(id, () => woken.set(id, (woken.get(id) ?? 0) + 1))));
    const before = db().streamFlusher.commits;
    const writers = ids.map((id) => new StreamWriter(db(), id, { seq: 1, attempt: 1, segment: 0 }));
    for (const [i, w] of writers.entries()) {
      w.text(`a${i} `);
      w.text(`b${i} `);
      w.event({ type: 'continuation', seq: 1, segment: 0 });
      w.text(`c${i}`);
    }
    await Promise.all(writers.map((w) => w.flush()));
    // The first flush may go out on the leading edge with the first writer alone; the rest share one.
    expect(db().streamFlusher.commits - before).toBeLessThanOrEqual(2);
    for (const [i, id] of ids.entries()) {
      const rows = await db().readStream(id);
      expect(rows.map((r) => r.event)).toEqual([
        { type: 'delta', seq: 1, attempt: 1, segment: 0, text: `a${i} b${i} ` },
        { type: 'continuation', seq: 1, segment: 0 },
        { type: 'delta', seq: 1, attempt: 1, segment: 0, text: `c${i}` },
      ]);
      expect(rows[0]!.offset).toBeLessThan(rows[2]!.offset);
    }
    await expect.poll(() => ids.filter((id) => woken.has(id)).length).toBe(ids.length);
    await Promise.all(unsubscribe.map((u) => u()));
  });

  it('names every conversation in payloads PostgreSQL accepts, one unless they overflow it', () => {
    const few = ['a', 'b"c', 'd'];
    expect(streamPayloads(few)).toHaveLength(1);
    expect(conversationsOf(streamPayloads(few)[0]!)).toEqual(few);
    expect(conversationsOf('plain-id')).toEqual(['plain-id']);
    const many = Array.from({ length: 2000 }, (_, i) => `conversation-${i}-${'x'.repeat(20)}`);
    const payloads = streamPayloads(many);
    expect(payloads.length).toBeGreaterThan(1);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8000);
    expect(payloads.flatMap(conversationsOf)).toEqual(many);
  });

  it('refuses the output of a host a newer placement superseded, and writes the others of the same flush', async () => {
    const stale = cid();
    const fresh = cid();
    await db().raiseFence(stale, 3);
    const superseded = new AbortController();
    const staleWriter = await underFence(
      { conversationId: stale, epoch: 2, superseded },
      async () => new StreamWriter(db(), stale, { seq: 1, attempt: 1, segment: 0 }),
    );
    const freshWriter = new StreamWriter(db(), fresh, { seq: 1, attempt: 1, segment: 0 });
    staleWriter.text('late');
    freshWriter.text('live');
    const results = await Promise.allSettled([staleWriter.flush(), freshWriter.flush()]);
    expect(results.some((r) => r.status === 'rejected' && r.reason instanceof FencedError)).toBe(true);
    expect(await db().readStream(stale)).toEqual([]);
    expect((await db().readStream(fresh)).map((r) => r.event)).toEqual([{ type: 'delta', seq: 1, attempt: 1, segment: 0, text: 'live' }]);
  });

  it('prunes model output older than the retention and keeps the other events', async () => {
    const id = cid();
    await db().appendStream(
      id,
      [
        { type: 'turn_started', turn: 1 },
        { type: 'delta', seq: 1, attempt: 1, segment: 0, text: 'old' },
        { type: 'reasoning', seq: 1, attempt: 1, segment: 0, text: 'old why' },
      ],
      [undefined, '1:1:0:0', '1:1:0:1'],
    );
    await db().pool.query(`UPDATE stream SET at = now() - make_interval(hours => $2) WHERE conversation_id = $1`, [id, STREAM_TEXT_RETENTION_HOURS + 1]);
    await db().appendStream(id, [{ type: 'delta', seq: 2, attempt: 1, segment: 0, text: 'new' }], ['2:1:0:0']);
    await db().streamFlusher.prune();
    expect((await db().readStream(id)).map((r) => r.event)).toEqual([
      { type: 'turn_started', turn: 1 },
      { type: 'delta', seq: 2, attempt: 1, segment: 0, text: 'new' },
    ]);
  });
});
