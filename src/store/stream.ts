// The live stream: token deltas and events in a table, batched, with a NOTIFY per batch
// (principle 5, docs/architecture.md), and the key that makes an event's second write a no-op.
import type { StreamEvent } from '../types.js';
import { epochOf } from './fence.js';
import { json } from './rows.js';
import type { StreamRow } from './types.js';
import { streamInsert } from './stream-append.js';
import { Tables } from './tables.js';

export abstract class StreamTables extends Tables {
  /**
   * Append events and NOTIFY watchers, in one statement (one round trip: it is the store's most
   * frequent write, several per turn). Returns the offsets of the rows written, ascending. A
   * per-conversation advisory lock, taken before the first row gets its offset and held until the
   * statement commits, makes a conversation's offsets become visible in order: a watcher that read
   * up to offset N never later finds a smaller one committed. Idempotent: an event whose key (given
   * in `keys`, else `streamEventKey`) is already stored for the conversation is skipped, so a
   * retried activity does not write it twice. PostgreSQL delivers one notification per
   * transaction for the same channel and payload, however many rows select it.
   */
  async appendStream(conversationId: string, events: StreamEvent[], keys?: (string | undefined)[]): Promise<number[]> {
    if (events.length === 0) return [];
    const epoch = epochOf(conversationId);
    const append = streamInsert(1, conversationId, events, epoch, { keys });
    const { rows } = await this.pool.query<{ id: string }>(`WITH ${append.ctes} SELECT id, ${append.notify} FROM ins`, append.params);
    // Keyed events already stored insert nothing too: only a raised fence makes that a refusal.
    if (rows.length === 0) await this.refusedUnless(conversationId, epoch, 0, `stream events (${events.map((e) => e.type).join(', ')})`);
    return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  }

  /**
   * A turn's end in one round trip: the conversation row (status, turns, usage, cost) and then its
   * `turn_completed` event, appended as appendStream does (the conversation's advisory lock, the
   * fence, the event's key: a repeat writes no second event). The event is written only if the
   * row was, so a missing conversation fails as updateConversation does and leaves no event.
   * Returns the offsets written (none for a repeat).
   */
  async recordTurnEnd(
    conversationId: string,
    end: { turn: number; usage: Extract<StreamEvent, { type: 'turn_completed' }>['usage']; costUsd: number; status: string },
  ): Promise<number[]> {
    const event: StreamEvent = { type: 'turn_completed', turn: end.turn, usage: end.usage, costUsd: end.costUsd };
    const epoch = epochOf(conversationId);
    const append = streamInsert(6, conversationId, [event], epoch, { after: 'upd' });
    const { rows } = await this.pool.query<{ updated: number; id: string | null }>(
      `WITH upd AS (
         UPDATE conversations SET updated_at = now(), status = $2, turns = $3, usage = $4::jsonb, cost_usd = $5 WHERE id = $1 RETURNING 1
       ),
       ${append.ctes}
       SELECT u.n AS updated, i.id, CASE WHEN i.id IS NOT NULL THEN ${append.notify} END AS notified
       FROM (SELECT count(*)::int AS n FROM upd) u LEFT JOIN ins i ON true`,
      [conversationId, end.status, end.turn, json(end.usage), end.costUsd, ...append.params],
    );
    if (!rows[0]?.updated) throw new Error(`conversation ${conversationId} not found in the store`);
    const ids = rows.filter((r) => r.id !== null).map((r) => Number(r.id));
    if (ids.length === 0) await this.refusedUnless(conversationId, epoch, 0, 'stream events (turn_completed)');
    return ids;
  }

  /** Whether the stream has the event with this key (streamEventKey). */
  async hasStreamEvent(conversationId: string, key: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM stream WHERE conversation_id = $1 AND event_key = $2', [conversationId, key]);
    return (rowCount ?? 0) > 0;
  }

  /**
   * The model output that attempts before `beforeAttempt` streamed for one segment of the answer
   * at `seq`: text and reasoning per attempt, in the order they were written.
   */
  async streamedOutput(
    conversationId: string,
    seq: number,
    segment: number,
    beforeAttempt: number,
  ): Promise<Map<number, { content: string; reasoning: string }>> {
    const { rows } = await this.pool.query<{ event: StreamEvent & { attempt: number; text: string } }>(
      `SELECT event FROM stream
       WHERE conversation_id = $1 AND event->>'type' IN ('delta', 'reasoning')
         AND (event->>'seq')::int = $2 AND (event->>'segment')::int = $3 AND (event->>'attempt')::int < $4
       ORDER BY id`,
      [conversationId, seq, segment, beforeAttempt],
    );
    const out = new Map<number, { content: string; reasoning: string }>();
    for (const { event } of rows) {
      const a = out.get(event.attempt) ?? { content: '', reasoning: '' };
      if (event.type === 'delta') a.content += event.text;
      else a.reasoning += event.text;
      out.set(event.attempt, a);
    }
    return out;
  }

  /** The conversation's latest event of `type` (why it waits for a budget, say), if any. */
  async lastStreamEvent<T extends StreamEvent['type']>(conversationId: string, type: T): Promise<Extract<StreamEvent, { type: T }> | undefined> {
    const { rows } = await this.pool.query("SELECT event FROM stream WHERE conversation_id = $1 AND event->>'type' = $2 ORDER BY id DESC LIMIT 1", [
      conversationId,
      type,
    ]);
    return rows[0]?.event as Extract<StreamEvent, { type: T }> | undefined;
  }

  /**
   * Events with offset > fromOffset (default 0), oldest first, at most `limit` (default 1000). The
   * reads the process asks for in one turn of the event loop share one query (the watchers one
   * notification woke).
   */
  readStream(conversationId: string, fromOffset = 0, limit = 1000): Promise<StreamRow[]> {
    return this.streamReader.read(conversationId, fromOffset, limit);
  }

  /**
   * Call onWake whenever events are appended to the conversation (and after the listening
   * connection was lost and re-established, since notifications may have been missed then).
   * onWake carries no data: the caller reads from its last offset. Returns unsubscribe.
   */
  async subscribe(conversationId: string, onWake: () => void): Promise<() => Promise<void>> {
    return this.listener.add(conversationId, onWake);
  }
}
