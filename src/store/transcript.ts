// A conversation's turns: messages, continuation segments, parsed tool calls and their ledger,
// context plans, summaries, prune records and marked message ids.
import type { StoredMessage, StreamEvent, ToolCall } from '../types.js';
import { epochOf, fenceAllows } from './fence.js';
import { text, optText, json, optJson, toMessage, toSegment, toToolCall, toLedgerEntry } from './rows.js';
import type { LedgerEntry, LedgerPort, PruneRecordInput, PruneRecordRow, SegmentRow } from './types.js';
import { Tables } from './tables.js';

export abstract class TranscriptTables extends Tables {
  /** With `announce`: the stream events written in the same statement (writeAnnounced). */
  async putMessage(m: StoredMessage, announce: StreamEvent[] = []): Promise<void> {
    const epoch = epochOf(m.conversationId);
    const { sql, params } = messageUpsert(m, epoch);
    await this.writeFenced(m.conversationId, epoch, sql, params, `message ${m.seq}`, announce);
  }

  /**
   * The last segment of an answer, the merged message and the events that announce it (non-empty),
   * in one statement: putSegment then putMessage with `announce`, in one round trip.
   */
  async putAnswer(s: SegmentRow, m: StoredMessage, announce: StreamEvent[]): Promise<void> {
    const epoch = epochOf(m.conversationId);
    const segment = segmentUpsert(s, epoch);
    const message = messageUpsert(m, epoch, segment.params.length + 1);
    await this.writeAnnounced(
      m.conversationId,
      epoch,
      [
        { sql: `${segment.sql} RETURNING 1`, what: segmentWhat(s) },
        { sql: `${message.sql} RETURNING 1`, what: `message ${m.seq}` },
      ],
      [...segment.params, ...message.params],
      announce,
    );
  }

  /** Ordered by seq; fromSeq and toSeq are inclusive. */
  async getMessages(conversationId: string, opts: { fromSeq?: number; toSeq?: number } = {}): Promise<StoredMessage[]> {
    const { rows } = await this.pool.query(
      `SELECT * FROM messages WHERE conversation_id = $1
         AND ($2::int IS NULL OR seq >= $2) AND ($3::int IS NULL OR seq <= $3)
       ORDER BY seq`,
      [conversationId, opts.fromSeq ?? null, opts.toSeq ?? null],
    );
    return rows.map(toMessage);
  }

  /**
   * One round trip for an incremental transcript read (src/context/transcript.ts): the messages up
   * to `toSeq` that come after `afterSeq` or were written at or after `changedSince`, the number of
   * messages up to `toSeq`, and the database's time of this read. With `turnState`: getTurnState's
   * answer for that turn too, in the same statement (on its first row).
   */
  async getMessagesChanged(
    conversationId: string,
    opts: { afterSeq: number; toSeq: number; changedSince: Date; turnState?: TurnStateRequest },
  ): Promise<{ messages: StoredMessage[]; count: number; at: Date; turnState?: TurnState }> {
    const params = [conversationId, opts.toSeq, opts.afterSeq, opts.changedSince];
    const changed = 'LEFT JOIN messages m ON m.conversation_id = $1 AND m.seq <= $2 AND (m.seq > $3 OR m.updated_at >= $4)';
    const count = 'WITH c AS (SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1 AND seq <= $2)';
    const { rows } = opts.turnState
      ? await this.pool.query(
          `${count}, st AS (SELECT ${turnStateColumns('$5', '$6')})
           SELECT c.n AS agentrun_count, now() AS agentrun_now,
                  CASE WHEN row_number() OVER (ORDER BY m.seq) = 1 THEN to_jsonb(st) END AS agentrun_state, m.*
           FROM c CROSS JOIN st ${changed}
           ORDER BY m.seq`,
          [...params, opts.turnState.turn, opts.turnState.segmentsOf ?? null],
        )
      : await this.pool.query(`${count} SELECT c.n AS agentrun_count, now() AS agentrun_now, m.* FROM c ${changed} ORDER BY m.seq`, params);
    const first = rows[0]!;
    return {
      messages: rows.filter((r) => r.seq !== null).map(toMessage),
      count: first.agentrun_count,
      at: first.agentrun_now,
      ...(opts.turnState ? { turnState: turnStateOf(first.agentrun_state, opts.turnState) } : {}),
    };
  }

  async getMessage(conversationId: string, seq: number): Promise<StoredMessage | null> {
    const { rows } = await this.pool.query('SELECT * FROM messages WHERE conversation_id = $1 AND seq = $2', [conversationId, seq]);
    return rows[0] ? toMessage(rows[0]) : null;
  }

  async putSegment(s: SegmentRow): Promise<void> {
    const epoch = epochOf(s.conversationId);
    const { sql, params } = segmentUpsert(s, epoch);
    const { rowCount } = await this.pool.query(sql, params);
    await this.refusedUnless(s.conversationId, epoch, rowCount, segmentWhat(s));
  }

  async getSegments(conversationId: string, seq: number): Promise<SegmentRow[]> {
    const { rows } = await this.pool.query('SELECT * FROM segments WHERE conversation_id = $1 AND seq = $2 ORDER BY segment', [conversationId, seq]);
    return rows.map(toSegment);
  }

  /**
   * Replaces the calls of message `seq` (a re-parse that yields fewer calls drops the stale ones).
   * With `earlierFrom`: in the same round trip, getToolCallsBetween's answer from there to `seq - 1`
   * (rows this statement does not touch: call ids are per message).
   */
  async putToolCalls(conversationId: string, seq: number, calls: ToolCall[], opts: { earlierFrom?: number } = {}): Promise<Map<number, ToolCall[]>> {
    const rows = calls.map((c, position) => ({ id: c.id, position, native_id: c.nativeId ?? null, name: c.name, args: c.args, hooks: c.hooks ?? null }));
    const epoch = epochOf(conversationId);
    // One statement, so it is atomic without an explicit transaction; the fence holds for the delete too.
    const write = `WITH del AS (
         DELETE FROM tool_calls WHERE conversation_id = $1 AND seq = $2 AND NOT (call_id = ANY($4::text[])) AND ${fenceAllows('$1', '$5')}
       ), ins AS (
       INSERT INTO tool_calls (conversation_id, call_id, seq, position, native_id, name, args, hooks)
       SELECT $1, x.id, $2, x.position, x.native_id, x.name, x.args, x.hooks
       FROM jsonb_to_recordset($3::jsonb) AS x(id text, position int, native_id text, name text, args jsonb, hooks jsonb)
       WHERE ${fenceAllows('$1', '$5')}
       ON CONFLICT (conversation_id, call_id) DO UPDATE SET
         seq = EXCLUDED.seq, position = EXCLUDED.position, native_id = EXCLUDED.native_id,
         name = EXCLUDED.name, args = EXCLUDED.args, hooks = EXCLUDED.hooks
       RETURNING 1)`;
    const params = [conversationId, seq, json(rows), calls.map((c) => c.id), epoch];
    if (opts.earlierFrom === undefined) {
      const { rows: r } = await this.pool.query(`${write} SELECT count(*)::int AS written FROM ins`, params);
      await this.refusedUnless(conversationId, epoch, r[0]!.written, `the tool calls of message ${seq}`);
      return new Map();
    }
    const { rows: r } = await this.pool.query(
      `${write} SELECT (SELECT count(*) FROM ins)::int AS agentrun_written, t.* FROM (SELECT 1) one
       LEFT JOIN tool_calls t ON t.conversation_id = $1 AND t.seq >= $6 AND t.seq < $2
       ORDER BY t.seq, t.position`,
      [...params, opts.earlierFrom],
    );
    await this.refusedUnless(conversationId, epoch, r[0]!.agentrun_written, `the tool calls of message ${seq}`);
    return callsBySeq(r.filter((row) => row.call_id !== null));
  }

  async getToolCall(conversationId: string, callId: string): Promise<ToolCall | null> {
    const { rows } = await this.pool.query('SELECT * FROM tool_calls WHERE conversation_id = $1 AND call_id = $2', [conversationId, callId]);
    return rows[0] ? toToolCall(rows[0]) : null;
  }

  /**
   * A call (null: not stored) and its ledger entry (null: none yet), and the conversation's fence
   * epoch (0: never raised), in one round trip: the tool step reads them before it runs the call
   * (activities/fence.ts, startsUnder).
   */
  async getToolCallWithEntry(conversationId: string, callId: string): Promise<{ call: ToolCall | null; entry: LedgerEntry | null; fenceEpoch: number }> {
    const { rows } = await this.pool.query(
      `SELECT (SELECT epoch FROM fence WHERE conversation_id = $1) AS agentrun_fence_epoch, t.*, to_jsonb(l) AS ledger_row
       FROM (SELECT 1) one
       LEFT JOIN tool_calls t ON t.conversation_id = $1 AND t.call_id = $2
       LEFT JOIN ledger l ON l.conversation_id = t.conversation_id AND l.call_id = t.call_id`,
      [conversationId, callId],
    );
    const r = rows[0]!;
    return {
      call: r.call_id === null ? null : toToolCall(r),
      entry: r.ledger_row ? toLedgerEntry(r.ledger_row) : null,
      fenceEpoch: r.agentrun_fence_epoch === null ? 0 : Number(r.agentrun_fence_epoch),
    };
  }

  /** The calls of one assistant message, in the order they appeared. */
  async getToolCalls(conversationId: string, seq: number): Promise<ToolCall[]> {
    const { rows } = await this.pool.query('SELECT * FROM tool_calls WHERE conversation_id = $1 AND seq = $2 ORDER BY position', [conversationId, seq]);
    return rows.map(toToolCall);
  }

  /** The calls of the assistant messages from `fromSeq` to `toSeq`, by seq, each in the order they appeared (as their turns parsed them). */
  async getToolCallsBetween(conversationId: string, fromSeq: number, toSeq: number): Promise<Map<number, ToolCall[]>> {
    const { rows } = await this.pool.query('SELECT * FROM tool_calls WHERE conversation_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq, position', [
      conversationId,
      fromSeq,
      toSeq,
    ]);
    return callsBySeq(rows);
  }

  /** With `announce`: the stream events each claim (start) writes in its own statement (writeAnnounced). */
  ledger(conversationId: string, announce: StreamEvent[] = []): LedgerPort {
    const pool = this.pool;
    const refusedUnless = (epoch: number | null, rowCount: number | null, what: string) => this.refusedUnless(conversationId, epoch, rowCount, what);
    const announced = (epoch: number | null, write: { sql: string; what: string }, params: unknown[]) =>
      this.writeAnnounced(conversationId, epoch, [write], params, announce);
    return {
      async get(callId: string): Promise<LedgerEntry | null> {
        const { rows } = await pool.query('SELECT * FROM ledger WHERE conversation_id = $1 AND call_id = $2', [conversationId, callId]);
        return rows[0] ? toLedgerEntry(rows[0]) : null;
      },
      async start(entry: LedgerEntry): Promise<boolean> {
        // One statement decides who runs the call: the row this caller inserted comes back, a lost race returns none.
        const epoch = epochOf(conversationId);
        const sql = `INSERT INTO ledger (conversation_id, call_id, tool, args_hash, state, intent, result, finished_at)
           SELECT $1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, CASE WHEN $5 = 'done' THEN now() END WHERE ${fenceAllows('$1', '$8')}
           ON CONFLICT (conversation_id, call_id) DO NOTHING
           RETURNING call_id`;
        const params = [conversationId, entry.callId, entry.tool, entry.argsHash, entry.state, optJson(entry.intent), optJson(entry.result), epoch];
        const what = `the start of call ${entry.callId}`;
        // A lost race writes nothing, which writeAnnounced, like the check below, refuses only under a raised fence.
        if (announce.length) return (await announced(epoch, { sql, what }, params))[0] === 1;
        const { rowCount } = await pool.query(sql, params);
        if (rowCount === 0) await refusedUnless(epoch, 0, what);
        return rowCount === 1;
      },
      async finish(callId: string, result: NonNullable<LedgerEntry['result']>): Promise<void> {
        // First result wins: a call already done keeps what a previous attempt recorded.
        const epoch = epochOf(conversationId);
        const res = await pool.query(
          `UPDATE ledger SET state = 'done', result = $3::jsonb, finished_at = now()
           WHERE conversation_id = $1 AND call_id = $2 AND state <> 'done' AND ${fenceAllows('$1', '$4')}`,
          [conversationId, callId, json(result), epoch],
        );
        if (res.rowCount === 0) {
          await refusedUnless(epoch, 0, `the result of call ${callId}`);
          const { rowCount } = await pool.query('SELECT 1 FROM ledger WHERE conversation_id = $1 AND call_id = $2', [conversationId, callId]);
          if (rowCount === 0) throw new Error(`ledger: finish of call ${callId} that was never started (conversation ${conversationId})`);
        }
      },
    };
  }

  /** With `announce`: the stream events written in the same statement (writeAnnounced). */
  async putContext(conversationId: string, turn: number, plan: unknown, promptTokens: number, announce: StreamEvent[] = []): Promise<void> {
    const epoch = epochOf(conversationId);
    const sql = `INSERT INTO contexts (conversation_id, turn, plan, prompt_tokens) SELECT $1, $2, $3::jsonb, $4 WHERE ${fenceAllows('$1', '$5')}
       ON CONFLICT (conversation_id, turn) DO UPDATE SET plan = EXCLUDED.plan, prompt_tokens = EXCLUDED.prompt_tokens, created_at = now()`;
    const params = [conversationId, turn, json(plan ?? null), promptTokens, epoch];
    await this.writeFenced(conversationId, epoch, sql, params, `the context of turn ${turn}`, announce);
  }

  // `any` on purpose: the plan's shape belongs to src/context, which owns its (de)serialisation.
  async getContext(conversationId: string, turn: number): Promise<{ plan: any; promptTokens: number } | null> {
    const { rows } = await this.pool.query('SELECT plan, prompt_tokens FROM contexts WHERE conversation_id = $1 AND turn = $2', [conversationId, turn]);
    return rows[0] ? { plan: rows[0].plan, promptTokens: rows[0].prompt_tokens } : null;
  }

  /**
   * The plan and system prompt of the newest turn before `turn` that has a context, and when the
   * conversation started: the pruner keeps what that plan cleared, the prompt keeps its date.
   */
  async getPreviousContext(conversationId: string, turn: number): Promise<{ plan: any; startedAt: Date | null }> {
    return (await this.getTurnState(conversationId, turn)).previous;
  }

  async putSummary(conversationId: string, throughSeq: number, content: string, tokens: number): Promise<void> {
    const epoch = epochOf(conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO summaries (conversation_id, through_seq, content, tokens) SELECT $1, $2, $3, $4 WHERE ${fenceAllows('$1', '$5')}
       ON CONFLICT (conversation_id, through_seq) DO UPDATE SET content = EXCLUDED.content, tokens = EXCLUDED.tokens`,
      [conversationId, throughSeq, text(content), tokens, epoch],
    );
    await this.refusedUnless(conversationId, epoch, rowCount, `the summary through message ${throughSeq}`);
  }

  async putPruneRecord(conversationId: string, turn: number, record: PruneRecordInput): Promise<void> {
    const epoch = epochOf(conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO prune_records (conversation_id, turn, pass, tokens_before, tokens_after, actions, plan)
       SELECT $1, $2, $3, $4, $5, $6::jsonb, $7::jsonb WHERE ${fenceAllows('$1', '$8')}
       ON CONFLICT (conversation_id, turn, pass) DO UPDATE SET
         tokens_before = EXCLUDED.tokens_before, tokens_after = EXCLUDED.tokens_after,
         actions = EXCLUDED.actions, plan = EXCLUDED.plan, at = now()`,
      [conversationId, turn, record.pass ?? 0, record.tokensBefore, record.tokensAfter, json(record.actions), optJson(record.plan), epoch],
    );
    await this.refusedUnless(conversationId, epoch, rowCount, `the prune record of turn ${turn}`);
  }

  /** Ordered by turn, then pass. */
  async getPruneRecords(conversationId: string): Promise<PruneRecordRow[]> {
    const { rows } = await this.pool.query('SELECT * FROM prune_records WHERE conversation_id = $1 ORDER BY turn, pass', [conversationId]);
    return rows.map((r) => ({
      turn: r.turn,
      pass: r.pass,
      tokensBefore: r.tokens_before,
      tokensAfter: r.tokens_after,
      actions: r.actions,
      plan: r.plan,
      at: r.at,
    }));
  }

  /**
   * What the pruner reads every turn, in one round trip: the marked message ids, the latest
   * summary, and the furthest range a summary was refused or failed for.
   */
  async getPruneState(conversationId: string): Promise<PruneState> {
    const { rows } = await this.pool.query(`SELECT ${PRUNE_STATE}`, [conversationId]);
    return pruneStateOf(rows[0]!);
  }

  /**
   * What preparing turn `turn` reads besides its messages, in one round trip: getPreviousContext's
   * and getPruneState's answers; with `segmentsOf`, getSegments' for that seq too (the model step's
   * answer, segments an earlier attempt stored). getMessagesChanged reads it with the messages.
   */
  async getTurnState(conversationId: string, turn: number, opts: { segmentsOf?: number } = {}): Promise<TurnState> {
    const { rows } = await this.pool.query(`SELECT ${turnStateColumns('$2', '$3')}`, [conversationId, turn, opts.segmentsOf ?? null]);
    return turnStateOf(rows[0]!, { turn, ...opts });
  }

  async getMarkedIds(conversationId: string): Promise<string[]> {
    const { rows } = await this.pool.query('SELECT ids FROM marked_ids WHERE conversation_id = $1', [conversationId]);
    return rows[0]?.ids ?? [];
  }

  /** Replaces the set (duplicates dropped, first occurrence order kept). */
  async setMarkedIds(conversationId: string, ids: string[]): Promise<void> {
    const epoch = epochOf(conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO marked_ids (conversation_id, ids) SELECT $1, $2 WHERE ${fenceAllows('$1', '$3')}
       ON CONFLICT (conversation_id) DO UPDATE SET ids = EXCLUDED.ids, updated_at = now()`,
      [conversationId, [...new Set(ids)], epoch],
    );
    await this.refusedUnless(conversationId, epoch, rowCount, 'the marked message ids');
  }
}

/** Which turn's state to read (Store.getTurnState), and whose answer's segments. */
export interface TurnStateRequest {
  turn: number;
  segmentsOf?: number;
}

/** What preparing a turn reads besides its messages (Store.getTurnState). */
export interface TurnState {
  previous: { plan: any; startedAt: Date | null };
  prune: PruneState;
  segments?: SegmentRow[];
}

/**
 * getTurnState's columns and their FROM: the conversation's start, the newest plan before the turn
 * (`turn`, a placeholder), the segments of the seq `segmentsOf` (a placeholder, NULL for none) and
 * the prune state. The conversation is $1.
 */
function turnStateColumns(turn: string, segmentsOf: string): string {
  return `(SELECT created_at FROM conversations WHERE id = $1) AS started_at,
              (SELECT plan FROM contexts WHERE conversation_id = $1 AND turn < ${turn} ORDER BY turn DESC LIMIT 1) AS plan,
              (SELECT json_agg(g ORDER BY g.segment) FROM segments g WHERE ${segmentsOf}::int IS NOT NULL AND g.conversation_id = $1 AND g.seq = ${segmentsOf}) AS agentrun_segments,
              ${PRUNE_STATE}`;
}

/** The turn state from its columns, as pg returns them or as to_jsonb does (the start a string then). */
function turnStateOf(r: any, req: TurnStateRequest): TurnState {
  return {
    previous: { plan: r.plan ?? null, startedAt: r.started_at == null ? null : new Date(r.started_at) },
    prune: pruneStateOf(r),
    ...(req.segmentsOf === undefined ? {} : { segments: ((r.agentrun_segments ?? []) as unknown[]).map(toSegment) }),
  };
}

interface PruneState {
  markedIds: string[];
  summary: { throughSeq: number; content: string; tokens: number } | null;
  summaryFailedThroughSeq: number | undefined;
}

/** The prune state's columns and their FROM (the conversation is $1): the marks, the latest summary, the last range a summary failed for. */
const PRUNE_STATE = `(SELECT ids FROM marked_ids WHERE conversation_id = $1) AS ids,
              s.through_seq, s.content, s.tokens,
              (SELECT max((plan->>'summaryFailedThroughSeq')::int) FROM prune_records
                WHERE conversation_id = $1 AND plan ? 'summaryFailedThroughSeq') AS failed_seq
       FROM (SELECT 1) one
       LEFT JOIN LATERAL (SELECT through_seq, content, tokens FROM summaries WHERE conversation_id = $1 ORDER BY through_seq DESC LIMIT 1) s ON true`;

function pruneStateOf(r: { ids: string[] | null; through_seq: number | null; content: string; tokens: number; failed_seq: number | null }): PruneState {
  return {
    markedIds: r.ids ?? [],
    summary: r.through_seq === null ? null : { throughSeq: r.through_seq, content: r.content, tokens: r.tokens },
    summaryFailedThroughSeq: r.failed_seq ?? undefined,
  };
}

/** A message's fenced upsert, its parameters numbered from `first`. */
function messageUpsert(m: StoredMessage, epoch: number | null, first = 1): { sql: string; params: unknown[] } {
  const $ = (i: number) => `$${first + i - 1}`;
  return {
    sql: `INSERT INTO messages (conversation_id, seq, turn, role, kind, content, reasoning, tool_calls,
                             tool_call_id, tool_name, tokens, meta)
       SELECT ${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)}, ${$(6)}, ${$(7)}, ${$(8)}::jsonb, ${$(9)}, ${$(10)}, ${$(11)}, ${$(12)}::jsonb WHERE ${fenceAllows($(1), $(13))}
       ON CONFLICT (conversation_id, seq) DO UPDATE SET
         turn = EXCLUDED.turn, role = EXCLUDED.role, kind = EXCLUDED.kind, content = EXCLUDED.content,
         reasoning = EXCLUDED.reasoning, tool_calls = EXCLUDED.tool_calls, tool_call_id = EXCLUDED.tool_call_id,
         tool_name = EXCLUDED.tool_name, tokens = EXCLUDED.tokens, meta = EXCLUDED.meta, updated_at = now()`,
    params: [
      m.conversationId,
      m.seq,
      m.turn,
      m.role,
      m.kind,
      text(m.content),
      optText(m.reasoning),
      optJson(m.toolCalls),
      m.toolCallId ?? null,
      m.toolName ?? null,
      m.tokens,
      optJson(m.meta),
      epoch,
    ],
  };
}

/** A continuation segment's fenced upsert, its parameters numbered from `first`. */
function segmentUpsert(s: SegmentRow, epoch: number | null, first = 1): { sql: string; params: unknown[] } {
  const $ = (i: number) => `$${first + i - 1}`;
  return {
    sql: `INSERT INTO segments (conversation_id, seq, segment, content, reasoning, tool_calls, finish_reason, usage)
       SELECT ${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)}, ${$(6)}::jsonb, ${$(7)}, ${$(8)}::jsonb WHERE ${fenceAllows($(1), $(9))}
       ON CONFLICT (conversation_id, seq, segment) DO UPDATE SET
         content = EXCLUDED.content, reasoning = EXCLUDED.reasoning, tool_calls = EXCLUDED.tool_calls,
         finish_reason = EXCLUDED.finish_reason, usage = EXCLUDED.usage`,
    params: [s.conversationId, s.seq, s.segment, text(s.content), optText(s.reasoning), optJson(s.toolCalls), s.finishReason, json(s.usage), epoch],
  };
}

function segmentWhat(s: SegmentRow): string {
  return `segment ${s.segment} of message ${s.seq}`;
}

/** tool_calls rows ordered by seq and position, grouped by seq. */
function callsBySeq(rows: any[]): Map<number, ToolCall[]> {
  const bySeq = new Map<number, ToolCall[]>();
  for (const r of rows) {
    const seq = Number(r.seq);
    if (!bySeq.has(seq)) bySeq.set(seq, []);
    bySeq.get(seq)!.push(toToolCall(r));
  }
  return bySeq;
}
