// The stream's append as SQL, for appendStream and for the writes that announce themselves in the
// stream in the same statement (a message and its message_completed, a checkpoint and its event):
// one round trip instead of two, with the same lock, fence and keys.
import type { StreamEvent } from '../types.js';
import { fenceAllows } from './fence.js';
import { json } from './rows.js';
import { STREAM_CHANNEL } from './stream-listener.js';
import { streamLockKey } from './stream-flusher.js';

/**
 * The CTEs `locked` and `ins` that append `events` for `conversationId` (ins returns the ids
 * written), and their parameters, numbered from `$first`; `after` names a CTE the lock waits for
 * (the events are written only if it returned a row), if any. A per-conversation advisory lock,
 * taken before the first row gets its offset and held until the statement commits, makes a
 * conversation's offsets become visible in order. An event whose key (given in `keys`, else
 * streamEventKey) is already stored for the conversation is skipped; a write whose epoch is below
 * the conversation's fence inserts nothing.
 */
export function streamInsert(
  first: number,
  conversationId: string,
  events: StreamEvent[],
  epoch: number | null,
  opts: { keys?: (string | undefined)[]; after?: string } = {},
): { ctes: string; notify: string; params: unknown[] } {
  const p = (i: number) => `$${first + i}`;
  const rows = events.map((event, i) => ({ event, key: opts.keys?.[i] ?? streamEventKey(event) ?? null }));
  return {
    ctes: `locked AS (SELECT pg_advisory_xact_lock(hashtextextended(${p(0)}, 1))${opts.after ? ` FROM ${opts.after}` : ''}),
       ins AS (
         INSERT INTO stream (conversation_id, event, event_key)
         SELECT ${p(2)}, e.value->'event', e.value->>'key' FROM locked, jsonb_array_elements(${p(1)}::jsonb) WITH ORDINALITY AS e(value, n) WHERE ${fenceAllows(p(2), p(4))} ORDER BY e.n
         ON CONFLICT (conversation_id, event_key) WHERE event_key IS NOT NULL DO NOTHING
         RETURNING id
       )`,
    // PostgreSQL delivers one notification per transaction for the same channel and payload, however many rows select it.
    notify: `pg_notify(${p(3)}, ${p(2)})`,
    params: [streamLockKey(conversationId), json(rows), conversationId, STREAM_CHANNEL, epoch],
  };
}

/**
 * The identity of an event that happens once per conversation (per turn, call or seq), so writing
 * it again is a no-op. Model output (delta, reasoning, reset, continuation) is keyed by its writer
 * (seq:attempt:segment:index); a rollback may legitimately repeat and has no key.
 */
function streamEventKey(e: StreamEvent): string | undefined {
  switch (e.type) {
    case 'conversation_started':
      return 'started';
    case 'turn_started':
      return `turn_started:${e.turn}`;
    case 'message_completed':
      return `message_completed:${e.seq}`;
    case 'tool_started':
    case 'tool_completed':
    case 'approval_requested':
    case 'question_asked':
      return `${e.type}:${e.callId}`;
    case 'window':
      return `window:${e.turn}:${e.tokensBefore}:${e.tokensAfter}`;
    case 'turn_completed':
    case 'checkpoint':
      return `${e.type}:${e.turn}`;
    case 'finished':
      return 'finished';
    default:
      return undefined;
  }
}
