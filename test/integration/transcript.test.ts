// The incremental transcript read (src/context/transcript.ts) against real PostgreSQL: after
// new messages, rewritten messages (a retried step), a replaced conversation and eviction it
// returns exactly what a full read returns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TranscriptCache } from '../../src/context/transcript.js';
import type { StoredMessage } from '../../src/types.js';
import { createHarness, uid, type Harness } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ worker: false });
});
afterAll(async () => {
  await h?.close();
});

const msg = (conversationId: string, seq: number, content = `message ${seq}`): StoredMessage => ({
  conversationId,
  seq,
  turn: Math.ceil(seq / 2),
  role: seq % 2 ? 'assistant' : 'tool',
  kind: seq % 2 ? 'assistant' : 'tool_result',
  content,
  tokens: 3,
});

async function conversation(seqs: number[]): Promise<string> {
  const id = uid('tr');
  await h.store.upsertConversation({ id, task: 't', workspace: '/w', model: 'm', config: {} as never });
  for (const s of seqs) await h.store.putMessage(msg(id, s));
  return id;
}

const full = (id: string, toSeq: number) => h.store.getMessages(id, { toSeq });

describe('incremental transcript reads', () => {
  it('reads only what changed and returns what a full read returns', async () => {
    const cache = new TranscriptCache();
    const id = await conversation([0, 1, 2, 3, 4]);
    expect(await cache.read(h.store, id, 4)).toEqual(await full(id, 4));
    for (const s of [5, 6, 7]) await h.store.putMessage(msg(id, s));
    expect(await cache.read(h.store, id, 6)).toEqual(await full(id, 6));
    // The same range again (the model call after the context step) and a longer one.
    expect(await cache.read(h.store, id, 6)).toEqual(await full(id, 6));
    expect(await cache.read(h.store, id, 7)).toEqual(await full(id, 7));
    expect(cache.stats).toEqual({ full: 1, incremental: 3 });
  });

  it('sees a message rewritten by a retried step', async () => {
    const cache = new TranscriptCache();
    const id = await conversation([0, 1, 2]);
    await cache.read(h.store, id, 2);
    await h.store.putMessage(msg(id, 1, 'the answer of the second attempt'));
    const after = await cache.read(h.store, id, 2);
    expect(after.find((m) => m.seq === 1)?.content).toBe('the answer of the second attempt');
    expect(after).toEqual(await full(id, 2));
  });

  it('reads everything again when rows went away (a replaced conversation)', async () => {
    const cache = new TranscriptCache();
    const id = await conversation([0, 1, 2, 3, 4, 5]);
    await cache.read(h.store, id, 5);
    await h.store.deleteConversation(id);
    await h.store.upsertConversation({ id, task: 't', workspace: '/w', model: 'm', config: {} as never });
    for (const s of [0, 1, 2]) await h.store.putMessage(msg(id, s, `new ${s}`));
    // seq 3 is skipped (a seq the workflow gave out without a message), 4 written.
    await h.store.putMessage(msg(id, 4, 'new 4'));
    const after = await cache.read(h.store, id, 5);
    expect(after).toEqual(await full(id, 5));
    expect(after.map((m) => m.seq)).toEqual([0, 1, 2, 4]);
  });

  it('evicts the least recently read conversation past its size limit, and still answers', async () => {
    const cache = new TranscriptCache(30); // one conversation of two 9-character messages fits, two do not
    const a = await conversation([0, 1]);
    const b = await conversation([0, 1]);
    await cache.read(h.store, a, 1);
    await cache.read(h.store, b, 1);
    await cache.read(h.store, a, 1);
    expect(cache.stats.full).toBe(3);
    expect(await cache.read(h.store, a, 1)).toEqual(await full(a, 1));
  });
});
