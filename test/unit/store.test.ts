// The store against the real PostgreSQL (DATABASE_URL): one fresh schema for this file, dropped after.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, Store } from '../../src/store/index.js';
import type { StoredMessage, StreamEvent, Usage } from '../../src/types.js';
import { DATABASE_URL, dropSchema, freshSchemaName } from '../helpers/store-schema.js';

const SCHEMA = freshSchemaName('t_store');
const usage: Usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };

let store: Store;
const cid = () => `c-${randomUUID()}`;

beforeAll(async () => {
  store = await Store.connect(DATABASE_URL, { schema: SCHEMA });
});

afterAll(async () => {
  await store?.close();
  await dropSchema(SCHEMA);
});

describe('migrations', () => {
  it('records every version once and is idempotent across connects', async () => {
    const again = await Store.connect(DATABASE_URL, { schema: SCHEMA });
    await again.close();
    const { rows } = await store.pool.query('SELECT version, name FROM agentrun_schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it('refuses a schema that another build migrated under other names, naming the clash', async () => {
    const schema = `t_clash_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const last = MIGRATIONS[MIGRATIONS.length - 1]!;
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    try {
      await (await Store.connect(DATABASE_URL, { schema })).close();
      await admin.query(`UPDATE ${schema}.agentrun_schema_migrations SET name = 'a branch of its own' WHERE version = $1`, [last.version]);
      await expect(Store.connect(DATABASE_URL, { schema })).rejects.toThrow(`migration ${last.version} is 'a branch of its own' there, '${last.name}' here`);
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });

  it('two concurrent connects to a fresh schema both succeed and migrate once', async () => {
    const schema = `t_race_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    try {
      const stores = await Promise.all([0, 1, 2].map(() => Store.connect(DATABASE_URL, { schema, max: 2 })));
      const { rows } = await stores[0]!.pool.query('SELECT count(*)::int AS n FROM agentrun_schema_migrations');
      expect(rows[0].n).toBe(MIGRATIONS.length);
      // Each store really uses its schema.
      await stores[1]!.upsertConversation({ id: 'x', task: 't', workspace: '/w', model: 'm', config: {} });
      expect(await stores[2]!.getConversation('x')).not.toBeNull();
      expect(await store.getConversation('x')).toBeNull();
      await Promise.all(stores.map((s) => s.close()));
    } finally {
      const c = new pg.Client({ connectionString: DATABASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    }
  });

  it('works for a least-privilege role that owns an existing schema but cannot create schemas', async () => {
    const suffix = randomUUID().replace(/-/g, '').slice(0, 10);
    const role = `agentrun_t_${suffix}`;
    const schema = `t_role_${suffix}`;
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`CREATE SCHEMA ${schema} AUTHORIZATION ${role}`);
      // (PUBLIC has no CREATE on a database by default, so the role cannot create schemas.)
      const url = new URL(DATABASE_URL);
      url.username = role;
      url.password = '';
      const limited = await Store.connect(url.toString(), { schema });
      await limited.upsertConversation({ id: 'r', task: 't', workspace: '/w', model: 'm', config: {} });
      expect((await limited.getConversation('r'))!.task).toBe('t');
      await limited.close();
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });

  it('rejects a schema name that is not a plain identifier', async () => {
    await expect(Store.connect(DATABASE_URL, { schema: 'a; drop table x' })).rejects.toThrow(/invalid schema name/);
  });

  it('gives one clear line when PostgreSQL is unreachable', async () => {
    const err = await Store.connect('postgres://postgres:secret@127.0.0.1:1/none').catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/cannot reach PostgreSQL at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/none \(ECONNREFUSED\)/);
    expect((err as Error).message).not.toContain('secret');
    expect((err as Error).message).not.toContain('\n');
  });
});

describe('conversations', () => {
  it('upsert is idempotent, keeps created_at and progress; update patches', async () => {
    const id = cid();
    await store.upsertConversation({ id, task: 'fix it', workspace: '/ws', model: 'scripted:a.yaml', config: { maxTurns: 5 } });
    const first = await store.getConversation(id);
    expect(first).toMatchObject({ id, task: 'fix it', workspace: '/ws', status: 'running', turns: 0, costUsd: 0, config: { maxTurns: 5 } });
    expect(first!.scheduleId).toBeUndefined();
    expect(first!.finishedAt).toBeUndefined();

    await store.updateConversation(id, { turns: 3, usage, costUsd: 0.25 });
    await store.upsertConversation({ id, task: 'fix it', workspace: '/ws', model: 'scripted:a.yaml', config: { maxTurns: 5 }, scheduleId: 'nightly' });
    const second = await store.getConversation(id);
    expect(second!.createdAt.getTime()).toBe(first!.createdAt.getTime());
    expect(second).toMatchObject({ turns: 3, usage, costUsd: 0.25, scheduleId: 'nightly' });

    await store.updateConversation(id, { status: 'completed', reason: 'done', finished: true });
    const done = await store.getConversation(id);
    expect(done).toMatchObject({ status: 'completed', reason: 'done' });
    expect(done!.finishedAt).toBeInstanceOf(Date);
    await store.updateConversation(id, { finished: true });
    expect((await store.getConversation(id))!.finishedAt!.getTime()).toBe(done!.finishedAt!.getTime());
  });

  it('update of an unknown conversation throws', async () => {
    await expect(store.updateConversation(cid(), { turns: 1 })).rejects.toThrow(/not found/);
  });

  it('getConversation returns null for an unknown id', async () => {
    expect(await store.getConversation(cid())).toBeNull();
  });

  it('lists newest first, filtered by status, limited', async () => {
    const ids = [cid(), cid(), cid()];
    for (const id of ids) {
      await store.upsertConversation({ id, task: 't', workspace: '/w', model: 'm', config: null });
    }
    await store.updateConversation(ids[1]!, { status: 'failed', reason: 'x' });
    const failed = await store.listConversations({ status: 'failed' });
    expect(failed.map((c) => c.id)).toContain(ids[1]);
    expect(failed.every((c) => c.status === 'failed')).toBe(true);
    const latest = await store.listConversations({ limit: 2 });
    expect(latest).toHaveLength(2);
    expect(latest[0]!.createdAt.getTime()).toBeGreaterThanOrEqual(latest[1]!.createdAt.getTime());
  });
});

describe('messages and segments', () => {
  it('putMessage upserts by (conversation, seq); getMessages orders and ranges', async () => {
    const id = cid();
    const msg = (seq: number, content: string): StoredMessage => ({
      conversationId: id,
      seq,
      turn: seq,
      role: seq % 2 ? 'assistant' : 'user',
      kind: seq % 2 ? 'assistant' : 'user',
      content,
      tokens: content.length,
    });
    for (const seq of [3, 0, 2, 1]) await store.putMessage(msg(seq, `m${seq}`));
    await store.putMessage(msg(2, 'm2')); // a retried activity
    await store.putMessage({
      ...msg(4, 'calls'),
      reasoning: 'thinking',
      toolCalls: [{ id: 'n1', name: 'read_file', arguments: '{"path":"a"}' }],
      meta: { finishReason: 'tool_calls' },
    });
    await store.putMessage({ ...msg(5, 'result'), role: 'tool', kind: 'tool_result', toolCallId: '4.0', toolName: 'read_file' });

    const all = await store.getMessages(id);
    expect(all.map((m) => m.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(all[0]).toEqual(msg(0, 'm0')); // no null-valued optional keys
    expect(all[4]).toMatchObject({
      reasoning: 'thinking',
      toolCalls: [{ id: 'n1', name: 'read_file', arguments: '{"path":"a"}' }],
      meta: { finishReason: 'tool_calls' },
    });
    expect(all[5]).toMatchObject({ role: 'tool', kind: 'tool_result', toolCallId: '4.0', toolName: 'read_file' });
    expect((await store.getMessages(id, { fromSeq: 2, toSeq: 3 })).map((m) => m.seq)).toEqual([2, 3]);
    expect((await store.getMessages(id, { fromSeq: 4 })).map((m) => m.seq)).toEqual([4, 5]);

    await store.putMessage(msg(1, 'rewritten'));
    expect((await store.getMessage(id, 1))!.content).toBe('rewritten');
    expect(await store.getMessage(id, 99)).toBeNull();
  });

  it('stores NUL characters as U+FFFD instead of failing', async () => {
    const id = cid();
    await store.putMessage({
      conversationId: id,
      seq: 0,
      turn: 0,
      role: 'tool',
      kind: 'tool_result',
      content: 'a\u0000b',
      tokens: 1,
      meta: { raw: 'x\u0000y', lit: '\\u0000' },
    });
    const m = await store.getMessage(id, 0);
    expect(m!.content).toBe('a\uFFFDb');
    expect(m!.meta).toEqual({ raw: 'x\uFFFDy', lit: '\\u0000' });
  });

  it('segments upsert and come back in order', async () => {
    const id = cid();
    for (const segment of [1, 0]) {
      await store.putSegment({ conversationId: id, seq: 3, segment, content: `part${segment}`, finishReason: segment ? 'stop' : 'length', usage });
    }
    await store.putSegment({
      conversationId: id,
      seq: 3,
      segment: 1,
      content: 'part1!',
      reasoning: 'r',
      toolCalls: [{ id: 'a', name: 'b', arguments: '{}' }],
      finishReason: 'stop',
      usage,
    });
    const segs = await store.getSegments(id, 3);
    expect(segs.map((s) => [s.segment, s.content, s.finishReason])).toEqual([
      [0, 'part0', 'length'],
      [1, 'part1!', 'stop'],
    ]);
    expect(segs[0]!.reasoning).toBeUndefined();
    expect(segs[1]).toMatchObject({ reasoning: 'r', toolCalls: [{ id: 'a', name: 'b', arguments: '{}' }], usage });
    expect(await store.getSegments(id, 4)).toEqual([]);
    // Read with a turn's state (the model step's first read): the same rows.
    expect((await store.getTurnState(id, 1, { segmentsOf: 3 })).segments).toEqual(segs);
    expect((await store.getTurnState(id, 1, { segmentsOf: 4 })).segments).toEqual([]);
    expect((await store.getTurnState(id, 1)).segments).toBeUndefined();
  });

  it('putAnswer stores the last segment, the merged message and its event in one statement; again, nothing twice', async () => {
    const id = cid();
    const segment = { conversationId: id, seq: 5, segment: 1, content: 'b', finishReason: 'stop', usage };
    const message = { conversationId: id, seq: 5, turn: 2, role: 'assistant', kind: 'assistant', content: 'ab', tokens: 2, meta: { segments: 2 } } as const;
    const announce: StreamEvent[] = [{ type: 'message_completed', seq: 5, finishReason: 'stop', usage }];
    await store.putAnswer(segment, message, announce);
    await store.putAnswer(segment, message, announce);
    expect(await store.getSegments(id, 5)).toEqual([segment]);
    expect(await store.getMessage(id, 5)).toEqual(message);
    expect((await store.readStream(id)).map((r) => r.event)).toEqual(announce);
  });
});

describe('tool calls', () => {
  it('putToolCalls replaces the set of a message; getToolCall by id', async () => {
    const id = cid();
    const big = 'x'.repeat(200_000);
    await store.putToolCalls(id, 4, [
      { id: '4.0', name: 'read_file', args: { path: 'a.ts' } },
      { id: '4.1', name: 'write_to_file', nativeId: 'call_9', args: { path: 'b.ts', content: big } },
      { id: '4.2', name: 'list_files', args: { path: '.' } },
    ]);
    expect(await store.getToolCall(id, '4.1')).toEqual({ id: '4.1', name: 'write_to_file', nativeId: 'call_9', args: { path: 'b.ts', content: big } });
    expect(await store.getToolCall(id, '4.0')).toEqual({ id: '4.0', name: 'read_file', args: { path: 'a.ts' } });
    // A re-parse that yields two calls drops the third.
    await store.putToolCalls(id, 4, [
      { id: '4.0', name: 'read_file', args: { path: 'c.ts' } },
      { id: '4.1', name: 'list_files', args: {} },
    ]);
    expect((await store.getToolCalls(id, 4)).map((c) => [c.id, c.name])).toEqual([
      ['4.0', 'read_file'],
      ['4.1', 'list_files'],
    ]);
    expect(await store.getToolCall(id, '4.2')).toBeNull();
    expect((await store.getToolCall(id, '4.0'))!.args).toEqual({ path: 'c.ts' });
    await store.putToolCalls(id, 4, []);
    expect(await store.getToolCalls(id, 4)).toEqual([]);
  });

  it('putToolCalls with earlierFrom brings back the calls of the messages before, as getToolCallsBetween does', async () => {
    const id = cid();
    await store.putToolCalls(id, 2, [{ id: '2.0', name: 'read_file', args: { path: 'a.ts' } }]);
    await store.putToolCalls(id, 4, [
      { id: '4.0', name: 'list_files', args: {} },
      { id: '4.1', name: 'read_file', args: { path: 'b.ts' } },
    ]);
    const earlier = await store.putToolCalls(id, 6, [{ id: '6.0', name: 'read_file', args: { path: 'c.ts' } }], { earlierFrom: 1 });
    expect(earlier).toEqual(await store.getToolCallsBetween(id, 1, 5));
    expect([...earlier.keys()]).toEqual([2, 4]);
    expect(await store.putToolCalls(id, 6, [], { earlierFrom: 3 })).toEqual(await store.getToolCallsBetween(id, 3, 5));
    expect(await store.getToolCalls(id, 6)).toEqual([]);
  });
});

describe('live stream', () => {
  const delta = (text: string): StreamEvent => ({ type: 'delta', seq: 1, attempt: 1, segment: 0, text });

  it('offsets are monotonic, readStream resumes from an offset and pages', async () => {
    const id = cid();
    expect(await store.appendStream(id, [])).toEqual([]);
    const a = await store.appendStream(id, [{ type: 'turn_started', turn: 1 }, delta('he'), delta('llo')]);
    const b = await store.appendStream(id, [delta(' world')]);
    expect(a).toHaveLength(3);
    const offsets = [...a, ...b];
    expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
    expect(new Set(offsets).size).toBe(4);

    const all = await store.readStream(id);
    expect(all.map((r) => r.offset)).toEqual(offsets);
    expect(all.map((r) => r.event)).toEqual([{ type: 'turn_started', turn: 1 }, delta('he'), delta('llo'), delta(' world')]);
    expect(all[0]!.at).toBeInstanceOf(Date);
    expect((await store.readStream(id, a[1])).map((r) => r.offset)).toEqual([a[2], b[0]]);
    expect((await store.readStream(id, 0, 2)).map((r) => r.offset)).toEqual([a[0], a[1]]);
    expect(await store.readStream(id, b[0])).toEqual([]);
    expect(await store.readStream(cid())).toEqual([]);
  });

  it('reads asked for together share one query, each from its own offset and limit', async () => {
    const [x, y] = [cid(), cid()];
    const ox = await store.appendStream(x, [delta('x1'), delta('x2'), delta('x3')]);
    const oy = await store.appendStream(y, [delta('y1'), delta('y2')]);
    const before = store.streamReader.queries;
    const [fromStart, afterFirst, paged, other, empty, again] = await Promise.all([
      store.readStream(x),
      store.readStream(x, ox[0]),
      store.readStream(x, 0, 2),
      store.readStream(y, oy[0]),
      store.readStream(cid()),
      store.readStream(x),
    ]);
    expect(store.streamReader.queries - before).toBe(1);
    expect(fromStart.map((r) => r.offset)).toEqual(ox);
    expect(afterFirst.map((r) => r.offset)).toEqual(ox.slice(1));
    expect(paged.map((r) => r.event)).toEqual([delta('x1'), delta('x2')]);
    expect(other.map((r) => r.event)).toEqual([delta('y2')]);
    expect(empty).toEqual([]);
    expect(again).toEqual(fromStart);
    expect(again[0]!.at).toBeInstanceOf(Date);
  });

  it('concurrent appends to one conversation commit in offset order', async () => {
    const id = cid();
    const batches = Array.from({ length: 20 }, (_, i) => [delta(`${i}a`), delta(`${i}b`)]);
    const results = await Promise.all(batches.map((events) => store.appendStream(id, events)));
    for (const offsets of results) expect(offsets[1]! - offsets[0]!).toBe(1); // a batch is contiguous
    const read = await store.readStream(id);
    expect(read).toHaveLength(40);
    expect(read.map((r) => r.offset)).toEqual(results.flat().sort((x, y) => x - y));
  });

  it('a reader following the stream during concurrent appends misses no row (offsets become visible in order)', async () => {
    const id = cid();
    const seen: number[] = [];
    let last = 0;
    let writing = true;
    const follow = async () => {
      for (const r of await store.readStream(id, last)) {
        seen.push(r.offset);
        last = r.offset;
      }
    };
    const reader = (async () => {
      while (writing) await follow();
      await follow();
    })();
    await Promise.all(Array.from({ length: 60 }, (_, i) => store.appendStream(id, [delta(`${i}a`), delta(`${i}b`)])));
    writing = false;
    await reader;
    // A row committed below an offset the reader had passed would be skipped for good.
    expect(seen).toHaveLength(120);
  });

  it('subscribe wakes on NOTIFY for its conversation only; unsubscribe stops it', async () => {
    const id = cid();
    const other = cid();
    let wakes = 0;
    let otherWakes = 0;
    let signal: () => void = () => {};
    const unsubscribe = await store.subscribe(id, () => {
      wakes++;
      signal();
    });
    const unsubscribeOther = await store.subscribe(other, () => otherWakes++);
    const woke = new Promise<void>((resolve) => (signal = resolve));
    await store.appendStream(id, [delta('x')]);
    await woke;
    expect(wakes).toBe(1);

    // A second subscriber on the same conversation also wakes.
    let second = 0;
    const unsubscribeSecond = await store.subscribe(id, () => second++);
    const wokeAgain = new Promise<void>((resolve) => (signal = resolve));
    await store.appendStream(id, [delta('y')]);
    await wokeAgain;
    await new Promise((r) => setTimeout(r, 50));
    expect(second).toBe(1);
    expect(otherWakes).toBe(0);

    await unsubscribe();
    await unsubscribe(); // twice is harmless
    await store.appendStream(id, [delta('z')]);
    await new Promise((r) => setTimeout(r, 200));
    expect(wakes).toBe(2);
    expect(second).toBe(2);
    await unsubscribeSecond();
    await unsubscribeOther();

    // Subscribing again after everyone left reconnects the listener.
    let resolveAgain: () => void = () => {};
    const again = new Promise<void>((resolve) => (resolveAgain = resolve));
    const unsubscribeAgain = await store.subscribe(id, () => resolveAgain());
    await store.appendStream(id, [delta('w')]);
    await again;
    await unsubscribeAgain();
  });
});

describe('stream listener', () => {
  it('reconnects after its connection is killed, waking subscribers to re-read', async () => {
    const id = cid();
    let wakes = 0;
    let signal: () => void = () => {};
    const unsubscribe = await store.subscribe(id, () => {
      wakes++;
      signal();
    });
    const lostWake = new Promise<void>((resolve) => (signal = resolve));
    const { rowCount } = await store.pool.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid() AND query ILIKE 'LISTEN%'",
      [`agentrun-listen:${store.schema}`.slice(0, 63)],
    );
    expect(rowCount).toBeGreaterThan(0);
    await lostWake;
    // Wait for the reconnect wake, then a NOTIFY must reach us again.
    await new Promise<void>((resolve) => {
      const t = setInterval(() => wakes >= 2 && (clearInterval(t), resolve()), 20);
    });
    const before = wakes;
    const woke = new Promise<void>((resolve) => (signal = resolve));
    await store.appendStream(id, [{ type: 'turn_started', turn: 1 }]);
    await woke;
    expect(wakes).toBe(before + 1);
    await unsubscribe();
  });
});

describe('ledger', () => {
  it('start is insert-if-absent, finish records the first result', async () => {
    const id = cid();
    const ledger = store.ledger(id);
    expect(await ledger.get('1.0')).toBeNull();
    const intent = { path: 'src/a.ts', beforeHash: null, afterHash: 'abc' };
    await ledger.start({ callId: '1.0', tool: 'write_to_file', argsHash: 'h1', state: 'started', intent });
    await ledger.start({ callId: '1.0', tool: 'write_to_file', argsHash: 'h2', state: 'started' }); // retry: keeps the first
    expect(await ledger.get('1.0')).toEqual({ callId: '1.0', tool: 'write_to_file', argsHash: 'h1', state: 'started', intent });

    await ledger.finish('1.0', { ok: true, output: 'wrote 3 lines', meta: { bytes: 12 } });
    await ledger.finish('1.0', { ok: false, output: 'second attempt' });
    expect(await ledger.get('1.0')).toEqual({
      callId: '1.0',
      tool: 'write_to_file',
      argsHash: 'h1',
      state: 'done',
      intent,
      result: { ok: true, output: 'wrote 3 lines', meta: { bytes: 12 } },
    });
    // Another conversation's ledger is separate.
    expect(await store.ledger(cid()).get('1.0')).toBeNull();
    await expect(ledger.finish('9.9', { ok: true, output: '' })).rejects.toThrow(/never started/);
  });

  it('concurrent starts of one call leave exactly one entry', async () => {
    const id = cid();
    const ledger = store.ledger(id);
    await Promise.all(Array.from({ length: 8 }, (_, i) => ledger.start({ callId: '2.0', tool: 'execute_command', argsHash: `h${i}`, state: 'started' })));
    const { rows } = await store.pool.query('SELECT count(*)::int AS n FROM ledger WHERE conversation_id = $1', [id]);
    expect(rows[0].n).toBe(1);
  });

  it('a claim that announces the call writes its event in the same statement: one winner, the event once', async () => {
    const id = cid();
    const started: StreamEvent = { type: 'tool_started', callId: '3.0', name: 'execute_command', preview: 'ls' };
    const ledger = store.ledger(id, [started]);
    const won = await Promise.all(
      Array.from({ length: 4 }, (_, i) => ledger.start({ callId: '3.0', tool: 'execute_command', argsHash: `h${i}`, state: 'started' })),
    );
    expect(won.filter(Boolean)).toHaveLength(1);
    expect((await store.readStream(id)).map((r) => r.event)).toEqual([started]);
    expect(await ledger.start({ callId: '3.0', tool: 'execute_command', argsHash: 'h', state: 'started' })).toBe(false);
    expect(await store.readStream(id)).toHaveLength(1);
  });
});

describe('per-turn records', () => {
  it('context plans upsert per turn', async () => {
    const id = cid();
    await store.putContext(id, 1, { keep: [0, 1] }, 100);
    await store.putContext(id, 1, { keep: [0, 1, 2] }, 120);
    expect(await store.getContext(id, 1)).toEqual({ plan: { keep: [0, 1, 2] }, promptTokens: 120 });
    expect(await store.getContext(id, 2)).toBeNull();
  });

  it('the previous context is the newest one before the turn (the pruner keeps what it cleared)', async () => {
    const id = cid();
    expect(await store.getPreviousContext(id, 5)).toEqual({ plan: null, startedAt: null });
    await store.putContext(id, 1, { plan: { cleared: [2] } }, 100);
    await store.putContext(id, 3, { plan: { cleared: [2, 4] } }, 100);
    await store.putContext(id, 4, { plan: { cleared: [2, 4, 6] } }, 100);
    expect((await store.getPreviousContext(id, 4)).plan).toEqual({ plan: { cleared: [2, 4] } });
    expect((await store.getPreviousContext(id, 3)).plan).toEqual({ plan: { cleared: [2] } });
    expect((await store.getPreviousContext(id, 1)).plan).toBeNull();
    // The day the conversation started, for the system prompt.
    await store.upsertConversation({ id, task: 't', workspace: '/w', model: 'm', config: {} });
    const { startedAt } = await store.getPreviousContext(id, 1);
    expect(startedAt).toBeInstanceOf(Date);
    expect(Math.abs(startedAt!.getTime() - Date.now())).toBeLessThan(60_000);
  });

  it('the latest summary is the one through the highest seq', async () => {
    const id = cid();
    expect((await store.getPruneState(id)).summary).toBeNull();
    await store.putSummary(id, 10, 'first', 50);
    await store.putSummary(id, 30, 'second', 70);
    await store.putSummary(id, 20, 'middle', 60);
    await store.putSummary(id, 30, 'second, again', 71);
    expect((await store.getPruneState(id)).summary).toEqual({ throughSeq: 30, content: 'second, again', tokens: 71 });
    // Read with the previous context when a turn is prepared: the same state.
    await store.setMarkedIds(id, ['m1']);
    expect((await store.getTurnState(id, 1)).prune).toEqual(await store.getPruneState(id));
    expect((await store.getTurnState(id, 1)).prune).toMatchObject({ markedIds: ['m1'], summary: { throughSeq: 30 } });
    // And with the messages (the model step's first read): the same state, with or without messages to read.
    await store.upsertConversation({ id, task: 't', workspace: '/w', model: 'm', config: {} });
    await store.putContext(id, 1, { plan: { cleared: [2] } }, 10);
    await store.putSegment({ conversationId: id, seq: 3, segment: 0, content: 'part', finishReason: 'length', usage });
    const changed = (afterSeq: number) => store.getMessagesChanged(id, { afterSeq, toSeq: 2, changedSince: new Date(), turnState: { turn: 2, segmentsOf: 3 } });
    const expected = await store.getTurnState(id, 2, { segmentsOf: 3 });
    expect(expected).toMatchObject({ previous: { plan: { plan: { cleared: [2] } } }, segments: [{ content: 'part' }] });
    expect((await changed(-1)).turnState).toEqual(expected);
    await store.putMessage({ conversationId: id, seq: 1, turn: 1, role: 'user', kind: 'task', content: 'a', tokens: 1 });
    await store.putMessage({ conversationId: id, seq: 2, turn: 1, role: 'assistant', kind: 'assistant', content: 'b', tokens: 1 });
    const r = await changed(-1);
    expect(r.messages.map((m) => m.seq)).toEqual([1, 2]);
    expect(r.turnState).toEqual(expected);
    expect((await store.getMessagesChanged(id, { afterSeq: -1, toSeq: 2, changedSince: new Date() })).turnState).toBeUndefined();
  });

  it('prune records upsert by (turn, pass), ordered', async () => {
    const id = cid();
    await store.putPruneRecord(id, 2, { tokensBefore: 900, tokensAfter: 500, actions: ['clear 1.0'], plan: { a: 1 } });
    await store.putPruneRecord(id, 2, { pass: 1, tokensBefore: 500, tokensAfter: 300, actions: ['summary'], plan: null });
    await store.putPruneRecord(id, 1, { tokensBefore: 100, tokensAfter: 100, actions: [], plan: {} });
    await store.putPruneRecord(id, 2, { tokensBefore: 900, tokensAfter: 450, actions: ['clear 1.0', 'clear 1.1'], plan: { a: 2 } });
    const recs = await store.getPruneRecords(id);
    expect(recs.map((r) => [r.turn, r.pass, r.tokensAfter, r.actions])).toEqual([
      [1, 0, 100, []],
      [2, 0, 450, ['clear 1.0', 'clear 1.1']],
      [2, 1, 300, ['summary']],
    ]);
    expect(recs[1]!.plan).toEqual({ a: 2 });
    expect(recs[0]!.at).toBeInstanceOf(Date);
  });

  it('marked ids are a replaceable set', async () => {
    const id = cid();
    expect(await store.getMarkedIds(id)).toEqual([]);
    await store.setMarkedIds(id, ['3', '5', '3']);
    expect(await store.getMarkedIds(id)).toEqual(['3', '5']);
    await store.setMarkedIds(id, []);
    expect(await store.getMarkedIds(id)).toEqual([]);
  });

  it('the prune state is the marked ids, the latest summary and the furthest failed summary range, in one read', async () => {
    const id = cid();
    expect(await store.getPruneState(id)).toEqual({ markedIds: [], summary: null, summaryFailedThroughSeq: undefined });
    await store.setMarkedIds(id, ['7', '2']);
    await store.putSummary(id, 10, 'first', 50);
    await store.putSummary(id, 30, 'latest', 70);
    await store.putPruneRecord(id, 3, { tokensBefore: 9, tokensAfter: 9, actions: ['summary request failed'], plan: { summaryFailedThroughSeq: 12 } });
    await store.putPruneRecord(id, 5, { tokensBefore: 9, tokensAfter: 9, actions: ['summary refused'], plan: { summaryFailedThroughSeq: 25 } });
    await store.putPruneRecord(id, 6, { tokensBefore: 9, tokensAfter: 5, actions: ['clear 1.0'], plan: { a: 1 } });
    expect(await store.getPruneState(id)).toEqual({
      markedIds: ['7', '2'],
      summary: { throughSeq: 30, content: 'latest', tokens: 70 },
      summaryFailedThroughSeq: 25,
    });
  });

  it('checkpoints upsert per turn, ordered', async () => {
    const id = cid();
    await store.putCheckpoint(id, 2, 'bbb', ['b.ts']);
    await store.putCheckpoint(id, 1, 'aaa', ['a.ts', 'c.ts']);
    await store.putCheckpoint(id, 2, 'ccc', ['b.ts', 'd.ts']);
    const cps = await store.getCheckpoints(id);
    expect(cps.map((c) => [c.turn, c.commit, c.files])).toEqual([
      [1, 'aaa', ['a.ts', 'c.ts']],
      [2, 'ccc', ['b.ts', 'd.ts']],
    ]);
    expect(cps[0]!.at).toBeInstanceOf(Date);
  });

  it('usage rows: one per (purpose, seq, segment, attempt)', async () => {
    const id = cid();
    const row = { conversationId: id, turn: 1, seq: 1, segment: 0, model: 'm', usage, costUsd: 0.01, purpose: 'turn' };
    await store.putUsage(row);
    await store.putUsage(row); // retried write
    await store.putUsage({ ...row, attempt: 2, costUsd: 0.02 });
    await store.putUsage({ ...row, segment: 1 });
    await store.putUsage({ ...row, purpose: 'summary', costUsd: 0.005 });
    const rows = await store.getUsage(id);
    expect(rows).toHaveLength(4);
    expect(rows.map((r) => [r.purpose, r.seq, r.segment, r.attempt, r.costUsd])).toEqual(
      expect.arrayContaining([
        ['turn', 1, 0, 1, 0.01],
        ['turn', 1, 0, 2, 0.02],
        ['turn', 1, 1, 1, 0.01],
        ['summary', 1, 0, 1, 0.005],
      ]),
    );
    expect(rows[0]).toMatchObject({ turn: 1, model: 'm', usage });
  });

  it("a turn call's usage write returns what earlier attempts and the turn's summaries billed, unreported", async () => {
    const id = cid();
    const row = { conversationId: id, turn: 3, seq: 5, segment: 0, model: 'm', usage, costUsd: 0.01, purpose: 'turn' };
    expect(await store.putUsage({ ...row, purpose: 'summary', costUsd: 0.005 })).toEqual([]);
    expect(await store.putUsage({ ...row, purpose: 'summary', turn: 2, seq: 4, costUsd: 0.5 })).toEqual([]);
    expect(await store.putUsage(row)).toEqual([{ usage, costUsd: 0.005 }]);
    const second = await store.putUsage({ ...row, attempt: 2, costUsd: 0.02 });
    expect(second.map((u) => u.costUsd).sort()).toEqual([0.005, 0.01]);
    // A later segment: only its own earlier attempts; a retried write reports the same.
    expect(await store.putUsage({ ...row, segment: 1, attempt: 2 })).toEqual([]);
    expect(await store.putUsage({ ...row, segment: 1, attempt: 3 })).toEqual([{ usage, costUsd: 0.01 }]);
    expect(await store.putUsage({ ...row, segment: 1, attempt: 3 })).toEqual([{ usage, costUsd: 0.01 }]);
  });

  it("a turn's end: the conversation row and one turn_completed in one round trip; a repeat writes no second event", async () => {
    const id = cid();
    await store.upsertConversation({ id, task: 't', workspace: '/w', model: 'm', config: {} });
    const end = { turn: 1, usage, costUsd: 0.25, status: 'running' as const };
    const first = await store.recordTurnEnd(id, end);
    expect(first).toHaveLength(1);
    expect(await store.recordTurnEnd(id, end)).toEqual([]);
    expect(await store.getConversation(id)).toMatchObject({ turns: 1, costUsd: 0.25, status: 'running', usage });
    const events = (await store.readStream(id, 0, 100)).map((r) => r.event);
    expect(events.filter((e) => e.type === 'turn_completed')).toEqual([{ type: 'turn_completed', turn: 1, usage, costUsd: 0.25 }]);
    await expect(store.recordTurnEnd(cid(), end)).rejects.toThrow(/not found in the store/);
  });
});
