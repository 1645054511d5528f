// PostgreSQL store: transcript, live stream, tool-call ledger and the per-turn records.
// Every write is an upsert keyed by ids the workflow assigned, because activities run twice
// (principle 3, docs/architecture.md).
import pg from 'pg';
import { log } from '../log.js';
import type { ConversationStatus, StoredMessage, StreamEvent, ToolCall, Usage } from '../types.js';
import { epochOf, fenceAllows, FencedError, notOlderThanStored } from './fence.js';
import { migrate } from './migrations.js';
import { inc } from '../metrics.js';
import type {
  ApprovalRow,
  CheckpointRow,
  ConversationInput,
  ConversationPatch,
  ConversationRow,
  LedgerEntry,
  LedgerPort,
  NetworkConnectionInput,
  NetworkConnectionRow,
  PruneRecordInput,
  PruneRecordRow,
  SegmentRow,
  StreamRow,
  UsageInput,
  UsageRow,
} from './types.js';

/** NOTIFY channel of the stream table; the payload is the conversation id. */
export const STREAM_CHANNEL = 'agentrun_stream';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface StoreOptions {
  /** Postgres schema for all tables (created if missing); default `public`. Tests use one each. */
  schema?: string;
  /** Pool size (default 10). */
  max?: number;
}

export class Store {
  private readonly listener: StreamListener;

  private constructor(
    readonly pool: pg.Pool,
    readonly schema: string,
    clientConfig: pg.ClientConfig,
  ) {
    this.listener = new StreamListener({ ...clientConfig, application_name: `agentrun-listen:${schema}`.slice(0, 63) });
  }

  /** Open a pool and bring the schema up to date. Throws a one-line error if Postgres is unreachable. */
  static async connect(databaseUrl: string, opts: StoreOptions = {}): Promise<Store> {
    const schema = opts.schema ?? 'public';
    if (!SCHEMA_NAME.test(schema)) {
      throw new Error(`invalid schema name "${schema}": use lower-case letters, digits and _`);
    }
    // search_path as a startup option: set before the first query on every pooled connection
    // (a SET in pool.on('connect') would race the caller's first query).
    const clientConfig: pg.ClientConfig = {
      connectionString: databaseUrl,
      options: `-c search_path=${schema}`,
      connectionTimeoutMillis: 10_000,
    };
    const pool = new pg.Pool({ ...clientConfig, max: opts.max ?? 10 });
    // An idle client losing its connection must not crash the process; the pool replaces it.
    // 57P01 (admin shutdown) is expected when an embedded server stops under an idle client.
    pool.on('error', (err) =>
      ((err as { code?: string }).code === '57P01' ? log.debug : log.warn).call(log, { err: err.message }, 'postgres idle client error'),
    );
    try {
      const client = await pool.connect();
      try {
        const applied = await migrate(client, schema);
        if (applied.length > 0) log.debug({ schema, applied }, 'store migrated');
      } finally {
        client.release();
      }
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw postgresError(err, databaseUrl);
    }
    return new Store(pool, schema, clientConfig);
  }

  async close(): Promise<void> {
    await this.listener.close();
    await this.pool.end();
  }

  // ── conversations ────────────────────────────────────────────────────────────────────────────

  /** Idempotent: a repeated call (retry, continue-as-new) refreshes the fields and keeps created_at and progress. */
  async upsertConversation(c: ConversationInput): Promise<void> {
    await this.pool.query(
      `INSERT INTO conversations (id, task, workspace, model, config, schedule_id)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6)
       ON CONFLICT (id) DO UPDATE SET
         task = EXCLUDED.task, workspace = EXCLUDED.workspace, model = EXCLUDED.model,
         config = EXCLUDED.config, schedule_id = COALESCE(EXCLUDED.schedule_id, conversations.schedule_id),
         updated_at = now()`,
      [c.id, text(c.task), c.workspace, c.model, json(c.config ?? null), c.scheduleId ?? null],
    );
  }

  async updateConversation(id: string, patch: ConversationPatch): Promise<void> {
    const sets: string[] = ['updated_at = now()'];
    const params: unknown[] = [id];
    const add = (column: string, value: unknown, cast = '') => {
      params.push(value);
      sets.push(`${column} = $${params.length}${cast}`);
    };
    if (patch.status !== undefined) add('status', patch.status);
    if (patch.reason !== undefined) add('reason', text(patch.reason));
    if (patch.turns !== undefined) add('turns', patch.turns);
    if (patch.usage !== undefined) add('usage', json(patch.usage), '::jsonb');
    if (patch.costUsd !== undefined) add('cost_usd', patch.costUsd);
    if (patch.finished === true) sets.push('finished_at = COALESCE(finished_at, now())');
    if (patch.finished === false) sets.push('finished_at = NULL');
    const res = await this.pool.query(`UPDATE conversations SET ${sets.join(', ')} WHERE id = $1`, params);
    if (res.rowCount === 0) throw new Error(`conversation ${id} not found in the store`);
  }

  /** Merge fields into a conversation's stored run configuration (a raised budget's limits); undefined fields are removed. */
  async mergeConversationConfig(id: string, fields: Record<string, unknown>): Promise<void> {
    const set = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    const unset = Object.keys(fields).filter((k) => fields[k] === undefined);
    const res = await this.pool.query(`UPDATE conversations SET config = (config || $2::jsonb) - $3::text[], updated_at = now() WHERE id = $1`, [
      id,
      json(set),
      unset,
    ]);
    if (res.rowCount === 0) throw new Error(`conversation ${id} not found in the store`);
  }

  /**
   * Every row of a conversation, in every table of the schema that has a conversation_id (so
   * tables added later are covered): `run --id X --replace` starts over with nothing of the old one.
   */
  async deleteConversation(id: string): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ table_name: string }>(
        `SELECT DISTINCT table_name FROM information_schema.columns WHERE table_schema = $1 AND column_name = 'conversation_id'`,
        [this.schema],
      );
      for (const r of rows) await client.query(`DELETE FROM ${client.escapeIdentifier(r.table_name)} WHERE conversation_id = $1`, [id]);
      await client.query('DELETE FROM conversations WHERE id = $1', [id]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async getConversation(id: string): Promise<ConversationRow | null> {
    const { rows } = await this.pool.query('SELECT * FROM conversations WHERE id = $1', [id]);
    return rows[0] ? toConversation(rows[0]) : null;
  }

  /** A conversation's sub-agents (config.agent.parentId, workflows/delegate.ts), oldest first. */
  async getChildConversations(parentId: string): Promise<ConversationRow[]> {
    const { rows } = await this.pool.query(`SELECT * FROM conversations WHERE config->'agent'->>'parentId' = $1 ORDER BY created_at, id`, [parentId]);
    return rows.map(toConversation);
  }

  /** Newest first. */
  /** Those of `ids` whose conversation has ended (a final status recorded). */
  async endedConversations(ids: string[]): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM conversations WHERE id = ANY($1::text[]) AND status IN ('completed', 'failed', 'cancelled', 'budget_exhausted', 'loop_detected', 'context_overflow')`,
      [ids],
    );
    return rows.map((r) => r.id);
  }

  async listConversations(opts: { status?: string; limit?: number } = {}): Promise<ConversationRow[]> {
    const { rows } = await this.pool.query(
      `SELECT * FROM conversations WHERE ($1::text IS NULL OR status = $1)
       ORDER BY created_at DESC, id LIMIT $2`,
      [opts.status ?? null, opts.limit ?? 100],
    );
    return rows.map(toConversation);
  }

  // ── messages ─────────────────────────────────────────────────────────────────────────────────

  async putMessage(m: StoredMessage): Promise<void> {
    const epoch = epochOf(m.conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO messages (conversation_id, seq, turn, role, kind, content, reasoning, tool_calls,
                             tool_call_id, tool_name, tokens, meta)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12::jsonb WHERE ${fenceAllows('$1', '$13')}
       ON CONFLICT (conversation_id, seq) DO UPDATE SET
         turn = EXCLUDED.turn, role = EXCLUDED.role, kind = EXCLUDED.kind, content = EXCLUDED.content,
         reasoning = EXCLUDED.reasoning, tool_calls = EXCLUDED.tool_calls, tool_call_id = EXCLUDED.tool_call_id,
         tool_name = EXCLUDED.tool_name, tokens = EXCLUDED.tokens, meta = EXCLUDED.meta, updated_at = now()`,
      [
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
    );
    await this.refusedUnless(m.conversationId, epoch, rowCount, `message ${m.seq}`);
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
   * messages up to `toSeq`, and the database's time of this read.
   */
  async getMessagesChanged(
    conversationId: string,
    opts: { afterSeq: number; toSeq: number; changedSince: Date },
  ): Promise<{ messages: StoredMessage[]; count: number; at: Date }> {
    const { rows } = await this.pool.query(
      `WITH c AS (SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1 AND seq <= $2)
       SELECT c.n AS agentrun_count, now() AS agentrun_now, m.* FROM c
         LEFT JOIN messages m ON m.conversation_id = $1 AND m.seq <= $2 AND (m.seq > $3 OR m.updated_at >= $4)
       ORDER BY m.seq`,
      [conversationId, opts.toSeq, opts.afterSeq, opts.changedSince],
    );
    return { messages: rows.filter((r) => r.seq !== null).map(toMessage), count: rows[0]!.agentrun_count, at: rows[0]!.agentrun_now };
  }

  async getMessage(conversationId: string, seq: number): Promise<StoredMessage | null> {
    const { rows } = await this.pool.query('SELECT * FROM messages WHERE conversation_id = $1 AND seq = $2', [conversationId, seq]);
    return rows[0] ? toMessage(rows[0]) : null;
  }

  // ── continuation segments ────────────────────────────────────────────────────────────────────

  async putSegment(s: SegmentRow): Promise<void> {
    const epoch = epochOf(s.conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO segments (conversation_id, seq, segment, content, reasoning, tool_calls, finish_reason, usage)
       SELECT $1, $2, $3, $4, $5, $6::jsonb, $7, $8::jsonb WHERE ${fenceAllows('$1', '$9')}
       ON CONFLICT (conversation_id, seq, segment) DO UPDATE SET
         content = EXCLUDED.content, reasoning = EXCLUDED.reasoning, tool_calls = EXCLUDED.tool_calls,
         finish_reason = EXCLUDED.finish_reason, usage = EXCLUDED.usage`,
      [s.conversationId, s.seq, s.segment, text(s.content), optText(s.reasoning), optJson(s.toolCalls), s.finishReason, json(s.usage), epoch],
    );
    await this.refusedUnless(s.conversationId, epoch, rowCount, `segment ${s.segment} of message ${s.seq}`);
  }

  async getSegments(conversationId: string, seq: number): Promise<SegmentRow[]> {
    const { rows } = await this.pool.query('SELECT * FROM segments WHERE conversation_id = $1 AND seq = $2 ORDER BY segment', [conversationId, seq]);
    return rows.map((r) => ({
      conversationId: r.conversation_id,
      seq: r.seq,
      segment: r.segment,
      content: r.content,
      ...(r.reasoning != null && { reasoning: r.reasoning }),
      ...(r.tool_calls != null && { toolCalls: r.tool_calls }),
      finishReason: r.finish_reason,
      usage: r.usage,
    }));
  }

  // ── parsed tool calls ────────────────────────────────────────────────────────────────────────

  /** Replaces the calls of message `seq` (a re-parse that yields fewer calls drops the stale ones). */
  async putToolCalls(conversationId: string, seq: number, calls: ToolCall[]): Promise<void> {
    const rows = calls.map((c, position) => ({ id: c.id, position, native_id: c.nativeId ?? null, name: c.name, args: c.args, hooks: c.hooks ?? null }));
    const epoch = epochOf(conversationId);
    // One statement, so it is atomic without an explicit transaction; the fence holds for the delete too.
    const { rowCount } = await this.pool.query(
      `WITH del AS (
         DELETE FROM tool_calls WHERE conversation_id = $1 AND seq = $2 AND NOT (call_id = ANY($4::text[])) AND ${fenceAllows('$1', '$5')}
       )
       INSERT INTO tool_calls (conversation_id, call_id, seq, position, native_id, name, args, hooks)
       SELECT $1, x.id, $2, x.position, x.native_id, x.name, x.args, x.hooks
       FROM jsonb_to_recordset($3::jsonb) AS x(id text, position int, native_id text, name text, args jsonb, hooks jsonb)
       WHERE ${fenceAllows('$1', '$5')}
       ON CONFLICT (conversation_id, call_id) DO UPDATE SET
         seq = EXCLUDED.seq, position = EXCLUDED.position, native_id = EXCLUDED.native_id,
         name = EXCLUDED.name, args = EXCLUDED.args, hooks = EXCLUDED.hooks`,
      [conversationId, seq, json(rows), calls.map((c) => c.id), epoch],
    );
    await this.refusedUnless(conversationId, epoch, rowCount, `the tool calls of message ${seq}`);
  }

  async getToolCall(conversationId: string, callId: string): Promise<ToolCall | null> {
    const { rows } = await this.pool.query('SELECT * FROM tool_calls WHERE conversation_id = $1 AND call_id = $2', [conversationId, callId]);
    return rows[0] ? toToolCall(rows[0]) : null;
  }

  /** The calls of one assistant message, in the order they appeared. */
  async getToolCalls(conversationId: string, seq: number): Promise<ToolCall[]> {
    const { rows } = await this.pool.query('SELECT * FROM tool_calls WHERE conversation_id = $1 AND seq = $2 ORDER BY position', [conversationId, seq]);
    return rows.map(toToolCall);
  }

  // ── live stream ──────────────────────────────────────────────────────────────────────────────

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
    const rowsIn = events.map((event, i) => ({ event, key: keys?.[i] ?? streamEventKey(event) ?? null }));
    const epoch = epochOf(conversationId);
    const { rows } = await this.pool.query<{ id: string }>(
      `WITH locked AS (SELECT pg_advisory_xact_lock(hashtextextended($1, 1))),
       ins AS (
         INSERT INTO stream (conversation_id, event, event_key)
         SELECT $3, e.value->'event', e.value->>'key' FROM locked, jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(value, n) WHERE ${fenceAllows('$3', '$5')} ORDER BY e.n
         ON CONFLICT (conversation_id, event_key) WHERE event_key IS NOT NULL DO NOTHING
         RETURNING id
       )
       SELECT id, pg_notify($4, $3) FROM ins`,
      [`agentrun.stream:${conversationId}`, json(rowsIn), conversationId, STREAM_CHANNEL, epoch],
    );
    // Keyed events already stored insert nothing too: only a raised fence makes that a refusal.
    if (rows.length === 0) await this.refusedUnless(conversationId, epoch, 0, `stream events (${events.map((e) => e.type).join(', ')})`);
    return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  }

  /** Whether the stream has the event with this key (streamEventKey). */
  async hasStreamEvent(conversationId: string, key: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM stream WHERE conversation_id = $1 AND event_key = $2', [conversationId, key]);
    return (rowCount ?? 0) > 0;
  }

  /** Events with offset > fromOffset (default 0), oldest first, at most `limit` (default 1000). */
  async readStream(conversationId: string, fromOffset = 0, limit = 1000): Promise<StreamRow[]> {
    const { rows } = await this.pool.query('SELECT id, event, at FROM stream WHERE conversation_id = $1 AND id > $2 ORDER BY id LIMIT $3', [
      conversationId,
      fromOffset,
      limit,
    ]);
    return rows.map((r) => ({ offset: Number(r.id), event: r.event as StreamEvent, at: r.at }));
  }

  /**
   * Call onWake whenever events are appended to the conversation (and after the listening
   * connection was lost and re-established, since notifications may have been missed then).
   * onWake carries no data: the caller reads from its last offset. Returns unsubscribe.
   */
  async subscribe(conversationId: string, onWake: () => void): Promise<() => Promise<void>> {
    return this.listener.add(conversationId, onWake);
  }

  // ── tool-call ledger ─────────────────────────────────────────────────────────────────────────

  ledger(conversationId: string): LedgerPort {
    const pool = this.pool;
    const refusedUnless = (epoch: number | null, rowCount: number | null, what: string) => this.refusedUnless(conversationId, epoch, rowCount, what);
    return {
      async get(callId: string): Promise<LedgerEntry | null> {
        const { rows } = await pool.query('SELECT * FROM ledger WHERE conversation_id = $1 AND call_id = $2', [conversationId, callId]);
        const r = rows[0];
        if (!r) return null;
        return {
          callId: r.call_id,
          tool: r.tool,
          argsHash: r.args_hash,
          state: r.state,
          ...(r.intent != null && { intent: r.intent }),
          ...(r.result != null && { result: r.result }),
        };
      },
      async start(entry: LedgerEntry): Promise<boolean> {
        // One statement decides who runs the call: the row this caller inserted comes back, a lost race returns none.
        const epoch = epochOf(conversationId);
        const { rowCount } = await pool.query(
          `INSERT INTO ledger (conversation_id, call_id, tool, args_hash, state, intent, result, finished_at)
           SELECT $1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, CASE WHEN $5 = 'done' THEN now() END WHERE ${fenceAllows('$1', '$8')}
           ON CONFLICT (conversation_id, call_id) DO NOTHING
           RETURNING call_id`,
          [conversationId, entry.callId, entry.tool, entry.argsHash, entry.state, optJson(entry.intent), optJson(entry.result), epoch],
        );
        if (rowCount === 0) await refusedUnless(epoch, 0, `the start of call ${entry.callId}`);
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

  // ── context plans, summaries, prune records ──────────────────────────────────────────────────

  async putContext(conversationId: string, turn: number, plan: unknown, promptTokens: number): Promise<void> {
    const epoch = epochOf(conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO contexts (conversation_id, turn, plan, prompt_tokens) SELECT $1, $2, $3::jsonb, $4 WHERE ${fenceAllows('$1', '$5')}
       ON CONFLICT (conversation_id, turn) DO UPDATE SET plan = EXCLUDED.plan, prompt_tokens = EXCLUDED.prompt_tokens, created_at = now()`,
      [conversationId, turn, json(plan ?? null), promptTokens, epoch],
    );
    await this.refusedUnless(conversationId, epoch, rowCount, `the context of turn ${turn}`);
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
    const { rows } = await this.pool.query(
      `SELECT (SELECT created_at FROM conversations WHERE id = $1) AS started_at,
              (SELECT plan FROM contexts WHERE conversation_id = $1 AND turn < $2 ORDER BY turn DESC LIMIT 1) AS plan`,
      [conversationId, turn],
    );
    return { plan: rows[0]?.plan ?? null, startedAt: rows[0]?.started_at ?? null };
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
  async getPruneState(conversationId: string): Promise<{
    markedIds: string[];
    summary: { throughSeq: number; content: string; tokens: number } | null;
    summaryFailedThroughSeq: number | undefined;
  }> {
    const { rows } = await this.pool.query(
      `SELECT (SELECT ids FROM marked_ids WHERE conversation_id = $1) AS ids,
              s.through_seq, s.content, s.tokens,
              (SELECT max((plan->>'summaryFailedThroughSeq')::int) FROM prune_records
                WHERE conversation_id = $1 AND plan ? 'summaryFailedThroughSeq') AS failed_seq
       FROM (SELECT 1) one
       LEFT JOIN LATERAL (SELECT through_seq, content, tokens FROM summaries WHERE conversation_id = $1 ORDER BY through_seq DESC LIMIT 1) s ON true`,
      [conversationId],
    );
    const r = rows[0]!;
    return {
      markedIds: r.ids ?? [],
      summary: r.through_seq === null ? null : { throughSeq: r.through_seq, content: r.content, tokens: r.tokens },
      summaryFailedThroughSeq: r.failed_seq ?? undefined,
    };
  }

  // ── marked message ids ───────────────────────────────────────────────────────────────────────

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

  // ── checkpoints ──────────────────────────────────────────────────────────────────────────────

  async putCheckpoint(conversationId: string, turn: number, commit: string, files: string[]): Promise<void> {
    const epoch = epochOf(conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO checkpoints (conversation_id, turn, commit, files) SELECT $1, $2, $3, $4 WHERE ${fenceAllows('$1', '$5')}
       ON CONFLICT (conversation_id, turn) DO UPDATE SET commit = EXCLUDED.commit, files = EXCLUDED.files, at = now()`,
      [conversationId, turn, commit, files, epoch],
    );
    await this.refusedUnless(conversationId, epoch, rowCount, `checkpoint of turn ${turn}`);
  }

  /** Ordered by turn. */
  async getCheckpoints(conversationId: string): Promise<CheckpointRow[]> {
    const { rows } = await this.pool.query('SELECT turn, commit, files, at FROM checkpoints WHERE conversation_id = $1 ORDER BY turn', [conversationId]);
    return rows.map((r) => ({ turn: r.turn, commit: r.commit, files: r.files, at: r.at }));
  }

  // ── checkpoint bundles (off-host checkpoints of local workspaces) ───────────────────────────

  /**
   * Safe to repeat: a commit already bundled keeps its first bundle. `base`: the bundle needs that
   * bundle base (its prerequisite); false when the base is not stored (gc removed it meanwhile).
   */
  async putCheckpointBundle(
    conversationId: string,
    turn: number,
    commit: string,
    prerequisite: string | undefined,
    bundle: Buffer,
    /** A skipped bundle: its size, with an empty bundle. */
    bytes = bundle.length,
    base?: string,
  ): Promise<boolean> {
    const epoch = epochOf(conversationId);
    // Using a base marks it used now: gc removes only bases nobody used for a while, and a delete
    // under way re-reads the row it waited for, so it never removes one a bundle just named.
    const { rowCount } = await this.pool.query(
      `WITH b AS (UPDATE bundle_bases SET at = now() WHERE commit = $8 RETURNING 1)
       INSERT INTO checkpoint_bundles (conversation_id, turn, commit, prerequisite, bundle, bytes, base)
       SELECT $1, $2, $3, $4, $5, $6, $8 WHERE ${fenceAllows('$1', '$7')} AND ($8::text IS NULL OR EXISTS (SELECT 1 FROM b))
       ON CONFLICT (conversation_id, commit) DO NOTHING`,
      [conversationId, turn, commit, prerequisite ?? null, bundle, bytes, epoch, base ?? null],
    );
    if (rowCount === 0) await this.refusedUnless(conversationId, epoch, 0, `checkpoint bundle of turn ${turn}`);
    if (rowCount !== 0 || base === undefined) return true;
    const { rowCount: there } = await this.pool.query('SELECT 1 FROM checkpoint_bundles WHERE conversation_id = $1 AND commit = $2', [conversationId, commit]);
    return (there ?? 0) > 0;
  }

  // ── bundle bases (a local repository's first tree, shared by its conversations' bundles) ──────

  /** Null when not (or not completely) stored. `parts` 0: it was above the cap, only its size is kept. */
  async getBundleBase(commit: string): Promise<{ bytes: number; parts: number } | null> {
    const { rows } = await this.pool.query<{ bytes: string; parts: number }>('SELECT bytes, parts FROM bundle_bases WHERE commit = $1', [commit]);
    return rows[0] ? { bytes: Number(rows[0].bytes), parts: rows[0].parts } : null;
  }

  /**
   * Safe to repeat. The base exists for readers once `finishBundleBase` recorded it. Written for
   * `conversationId` (whose checkpoint stores it): under its fence, so a superseded host writes no part.
   */
  async putBundleBasePart(commit: string, part: number, data: Buffer, conversationId?: string): Promise<void> {
    const epoch = conversationId === undefined ? null : epochOf(conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO bundle_base_parts (commit, part, data, conversation_id, epoch) SELECT $1, $2, $3, $4, $5 WHERE ${fenceAllows('$4', '$5')}
       ON CONFLICT (commit, part) DO UPDATE SET data = EXCLUDED.data, conversation_id = EXCLUDED.conversation_id, epoch = EXCLUDED.epoch, at = now()
       WHERE ${notOlderThanStored('bundle_base_parts')}`,
      [commit, part, data, conversationId ?? null, epoch],
    );
    if (conversationId === undefined) return;
    await this.refusedUnless(conversationId, epoch, rowCount, `part ${part} of bundle base ${commit}`);
    if (rowCount === 0)
      await this.olderThanStored(
        conversationId,
        epoch,
        'SELECT conversation_id, epoch FROM bundle_base_parts WHERE commit = $1 AND part = $2',
        [commit, part],
        `part ${part} of bundle base ${commit}`,
      );
  }

  async finishBundleBase(commit: string, parts: number, bytes: number, conversationId?: string): Promise<void> {
    const epoch = conversationId === undefined ? null : epochOf(conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO bundle_bases (commit, bytes, parts, conversation_id, epoch) SELECT $1, $2, $3, $4, $5 WHERE ${fenceAllows('$4', '$5')}
       ON CONFLICT (commit) DO UPDATE SET bytes = EXCLUDED.bytes, parts = EXCLUDED.parts, conversation_id = EXCLUDED.conversation_id, epoch = EXCLUDED.epoch, at = now()
       WHERE ${notOlderThanStored('bundle_bases')}`,
      [commit, bytes, parts, conversationId ?? null, epoch],
    );
    if (conversationId === undefined) return;
    await this.refusedUnless(conversationId, epoch, rowCount, `bundle base ${commit}`);
    if (rowCount === 0)
      await this.olderThanStored(conversationId, epoch, 'SELECT conversation_id, epoch FROM bundle_bases WHERE commit = $1', [commit], `bundle base ${commit}`);
  }

  /** An upsert that kept the stored row because the same conversation wrote it under a newer placement: refused like a fenced write. */
  private async olderThanStored(conversationId: string, epoch: number | null, sql: string, params: unknown[], what: string): Promise<void> {
    if (epoch === null) return;
    const { rows } = await this.pool.query<{ conversation_id: string | null; epoch: string | null }>(sql, params);
    const stored = rows[0];
    if (!stored || stored.conversation_id !== conversationId || stored.epoch === null || Number(stored.epoch) <= epoch) return;
    inc('agentrun_fenced_total', { kind: 'write' });
    log.warn({ conversationId, epoch, current: Number(stored.epoch), what }, 'write refused: a newer placement of the workspace wrote it');
    throw new FencedError(conversationId, epoch, Number(stored.epoch), what);
  }

  async getBundleBasePart(commit: string, part: number): Promise<Buffer> {
    const { rows } = await this.pool.query<{ data: Buffer }>('SELECT data FROM bundle_base_parts WHERE commit = $1 AND part = $2', [commit, part]);
    if (!rows[0]) throw new Error(`part ${part} of bundle base ${commit} is missing from the store`);
    return rows[0].data;
  }

  /**
   * Bases no conversation's bundle names and nobody used for `graceMs`, and parts a writer killed
   * midway left; removed unless `dryRun`. Returns what was (or would be) removed.
   */
  async deleteUnusedBundleBases(graceMs: number, dryRun = false): Promise<{ bases: number; bytes: number }> {
    const unused = `FROM bundle_bases b WHERE b.at < now() - ($1::double precision * interval '1 millisecond')
       AND NOT EXISTS (SELECT 1 FROM checkpoint_bundles c WHERE c.base = b.commit)`;
    const { rows } = dryRun
      ? await this.pool.query<{ bytes: string }>(`SELECT b.bytes ${unused}`, [graceMs])
      : await this.pool.query<{ bytes: string }>(`DELETE ${unused} RETURNING b.bytes`, [graceMs]);
    if (!dryRun)
      await this.pool.query(
        `DELETE FROM bundle_base_parts p WHERE p.at < now() - ($1::double precision * interval '1 millisecond')
         AND NOT EXISTS (SELECT 1 FROM bundle_bases b WHERE b.commit = p.commit)`,
        [graceMs],
      );
    return { bases: rows.length, bytes: rows.reduce((n, r) => n + Number(r.bytes), 0) };
  }

  // ── fencing (src/store/fence.ts) ────────────────────────────────────────────────────────────

  /**
   * A placement of the conversation's workspace with `epoch`: writes that carry an older epoch are
   * refused from now on. Never lowers the fence (a retried or late placement step is harmless).
   */
  async raiseFence(conversationId: string, epoch: number): Promise<number> {
    const { rows } = await this.pool.query<{ epoch: string }>(
      `INSERT INTO fence (conversation_id, epoch) VALUES ($1, $2)
       ON CONFLICT (conversation_id) DO UPDATE SET epoch = GREATEST(fence.epoch, EXCLUDED.epoch), at = now()
       RETURNING epoch`,
      [conversationId, epoch],
    );
    return Number(rows[0]!.epoch);
  }

  /** The conversation's current epoch (0 before its first fenced placement). */
  async fenceEpoch(conversationId: string): Promise<number> {
    const { rows } = await this.pool.query<{ epoch: string }>('SELECT epoch FROM fence WHERE conversation_id = $1', [conversationId]);
    return rows[0] ? Number(rows[0].epoch) : 0;
  }

  /** Throw FencedError when a write carrying `epoch` is superseded (for steps that are no store write: a push). */
  async checkFence(conversationId: string, epoch: number | null, what: string): Promise<void> {
    await this.refusedUnless(conversationId, epoch, 0, what);
  }

  /**
   * A conditional write that changed no row (`rowCount` 0) was refused when the fence is above its
   * epoch: logged, counted, and thrown as FencedError. Otherwise nothing (an upsert that had nothing to do).
   */
  private async refusedUnless(conversationId: string, epoch: number | null, rowCount: number | null, what: string): Promise<void> {
    if (epoch === null || (rowCount ?? 0) > 0) return;
    const current = await this.fenceEpoch(conversationId);
    if (current <= epoch) return;
    inc('agentrun_fenced_total', { kind: 'write' });
    log.warn({ conversationId, epoch, current, what }, 'write refused: this host was superseded by a newer placement of the workspace');
    throw new FencedError(conversationId, epoch, current, what);
  }

  /**
   * The commits bundled so far, oldest first (without the bundles). `skipped`: a bundle above
   * AGENTRUN_MAX_BUNDLE_BYTES, recorded with its size and an empty bundle (src/workspace/offhost.ts).
   */
  async getBundledCommits(conversationId: string): Promise<{ turn: number; commit: string; bytes: number; skipped?: true; base?: string }[]> {
    const { rows } = await this.pool.query(
      'SELECT turn, commit, bytes, octet_length(bundle) = 0 AS skipped, base FROM checkpoint_bundles WHERE conversation_id = $1 ORDER BY id',
      [conversationId],
    );
    return rows.map((r) => ({
      turn: r.turn,
      commit: r.commit,
      bytes: r.bytes,
      ...(r.skipped ? { skipped: true as const } : {}),
      ...(r.base ? { base: r.base as string } : {}),
    }));
  }

  /** One bundle (of commit `commit`), or undefined when there is none (never stored, removed by gc, or skipped: empty). */
  async getCheckpointBundle(conversationId: string, commit: string): Promise<Buffer | undefined> {
    const { rows } = await this.pool.query<{ bundle: Buffer }>(
      'SELECT bundle FROM checkpoint_bundles WHERE conversation_id = $1 AND commit = $2 AND octet_length(bundle) > 0',
      [conversationId, commit],
    );
    return rows[0]?.bundle;
  }

  /** Returns the rows and bytes removed. */
  async deleteCheckpointBundles(conversationId: string): Promise<{ bundles: number; bytes: number }> {
    const { rows } = await this.pool.query<{ bytes: number }>('DELETE FROM checkpoint_bundles WHERE conversation_id = $1 RETURNING bytes', [conversationId]);
    return { bundles: rows.length, bytes: rows.reduce((n, r) => n + r.bytes, 0) };
  }

  // ── workspace host and disk use ──────────────────────────────────────────────────────────────

  /**
   * The host holding a conversation's workspace, and its size when measured (a later measure
   * replaces it). Fenced like the other host writes: `epoch` (the placement the host holds the
   * workspace under; by default the running activity's) older than the conversation's fence is
   * refused in the same statement, so a host declared lost that wakes up does not put its host
   * and directory back in `list`.
   */
  async putWorkspaceUsage(
    conversationId: string,
    u: { host: string; workspace: string; diskBytes?: number },
    epoch: number | null = epochOf(conversationId),
  ): Promise<void> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO workspace_usage (conversation_id, host, workspace, disk_bytes) SELECT $1, $2, $3, $4::bigint WHERE ${fenceAllows('$1', '$5')}
       ON CONFLICT (conversation_id) DO UPDATE SET host = EXCLUDED.host, workspace = EXCLUDED.workspace,
         disk_bytes = COALESCE(EXCLUDED.disk_bytes, CASE WHEN workspace_usage.workspace = EXCLUDED.workspace THEN workspace_usage.disk_bytes END), at = now()`,
      [conversationId, u.host, u.workspace, u.diskBytes ?? null, epoch],
    );
    await this.refusedUnless(conversationId, epoch, rowCount, `the workspace usage (host ${u.host}, ${u.workspace})`);
  }

  /** Host and disk use of many conversations in one query (for list). */
  async getWorkspaceUsage(conversationIds: string[]): Promise<Map<string, { host: string; workspace: string; diskBytes?: number }>> {
    const out = new Map<string, { host: string; workspace: string; diskBytes?: number }>();
    if (!conversationIds.length) return out;
    const { rows } = await this.pool.query('SELECT conversation_id, host, workspace, disk_bytes FROM workspace_usage WHERE conversation_id = ANY($1)', [
      conversationIds,
    ]);
    for (const r of rows)
      out.set(r.conversation_id, { host: r.host, workspace: r.workspace, ...(r.disk_bytes === null ? {} : { diskBytes: Number(r.disk_bytes) }) });
    return out;
  }

  // ── network connections through the egress proxy ─────────────────────────────────────────────

  /**
   * `epoch`: the placement the recording step ran under (the proxy records outside the step's own
   * async context, so it is passed); a superseded host's record is refused.
   */
  async putNetworkConnection(c: NetworkConnectionInput, epoch: number | null = epochOf(c.conversationId)): Promise<void> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO network_connections (conversation_id, call_id, host, port, address, method, allowed, reason, bytes_up, bytes_down, duration_ms, epoch)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 WHERE ${fenceAllows('$1', '$12')}`,
      [
        c.conversationId,
        c.callId ?? null,
        c.host,
        c.port,
        c.address ?? null,
        c.method,
        c.allowed,
        c.reason ?? null,
        c.bytesUp,
        c.bytesDown,
        Math.round(c.durationMs),
        epoch,
      ],
    );
    await this.refusedUnless(c.conversationId, epoch, rowCount, `the record of a connection to ${c.host}`);
  }

  /** Keep a conversation's repository extensions once: the first write wins; returns what is stored. */
  async putRepositoryExtensions(conversationId: string, snapshot: object): Promise<unknown> {
    const { rows } = await this.pool.query<{ snapshot: unknown }>(
      `WITH ins AS (
         INSERT INTO repository_extensions (conversation_id, snapshot) VALUES ($1, $2) ON CONFLICT (conversation_id) DO NOTHING RETURNING snapshot
       )
       SELECT snapshot FROM ins UNION ALL SELECT snapshot FROM repository_extensions WHERE conversation_id = $1 LIMIT 1`,
      [conversationId, JSON.stringify(snapshot)],
    );
    return rows[0]?.snapshot;
  }

  async getRepositoryExtensions(conversationId: string): Promise<{ snapshot: unknown; setupPlan?: unknown } | undefined> {
    const { rows } = await this.pool.query<{ snapshot: unknown; setup_plan: unknown }>(
      'SELECT snapshot, setup_plan FROM repository_extensions WHERE conversation_id = $1',
      [conversationId],
    );
    const r = rows[0];
    return r ? { snapshot: r.snapshot, ...(r.setup_plan !== null ? { setupPlan: r.setup_plan } : {}) } : undefined;
  }

  /** The plan of a conversation's first setup, kept once (a retried or later setup does not change it); returns what is stored. */
  async putSetupPlan(conversationId: string, plan: object): Promise<unknown> {
    const { rows } = await this.pool.query<{ setup_plan: unknown }>(
      `INSERT INTO repository_extensions (conversation_id, snapshot, setup_plan) VALUES ($1, '{"enabled":false,"found":[]}', $2)
       ON CONFLICT (conversation_id) DO UPDATE SET setup_plan = COALESCE(repository_extensions.setup_plan, EXCLUDED.setup_plan)
       RETURNING setup_plan`,
      [conversationId, JSON.stringify(plan)],
    );
    return rows[0]?.setup_plan;
  }

  /** A conversation's connections, oldest first (at most `limit`, the newest ones). */
  /** Record a decision on a call that waited for approval (again: the same row). */
  async recordApproval(conversationId: string, a: ApprovalRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO approvals (conversation_id, call_id, approved, decided_by, reason, timed_out, at) VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7 / 1000.0))
       ON CONFLICT (conversation_id, call_id) DO UPDATE SET approved = EXCLUDED.approved, decided_by = EXCLUDED.decided_by, reason = EXCLUDED.reason, timed_out = EXCLUDED.timed_out, at = EXCLUDED.at`,
      [conversationId, a.callId, a.approved, a.by ?? null, a.reason ?? null, a.timedOut ?? false, a.atMs],
    );
  }

  /** The decisions on a conversation's calls, oldest first. */
  async getApprovals(conversationId: string): Promise<ApprovalRow[]> {
    const { rows } = await this.pool.query('SELECT * FROM approvals WHERE conversation_id = $1 ORDER BY at, call_id', [conversationId]);
    return rows.map((r) => ({
      callId: r.call_id,
      approved: r.approved,
      ...(r.decided_by ? { by: r.decided_by } : {}),
      ...(r.reason ? { reason: r.reason } : {}),
      ...(r.timed_out ? { timedOut: true } : {}),
      atMs: (r.at as Date).getTime(),
    }));
  }

  /** What gc removed of a conversation (src/workspace/gc.ts), kept on its row. */
  async recordCollected(conversationId: string, collected: Record<string, unknown>): Promise<void> {
    await this.pool.query('UPDATE conversations SET collected = $2 WHERE id = $1', [conversationId, JSON.stringify(collected)]);
  }

  async getNetworkConnections(conversationId: string, limit = 1000): Promise<NetworkConnectionRow[]> {
    const { rows } = await this.pool.query(
      `SELECT * FROM (SELECT * FROM network_connections WHERE conversation_id = $1 ORDER BY id DESC LIMIT $2) c ORDER BY id`,
      [conversationId, limit],
    );
    return rows.map((r) => ({
      conversationId: r.conversation_id,
      ...(r.call_id ? { callId: r.call_id } : {}),
      host: r.host,
      port: r.port,
      ...(r.address ? { address: r.address } : {}),
      method: r.method,
      allowed: r.allowed,
      ...(r.reason ? { reason: r.reason } : {}),
      bytesUp: Number(r.bytes_up),
      bytesDown: Number(r.bytes_down),
      durationMs: r.duration_ms,
      ...(r.epoch === null ? {} : { epoch: Number(r.epoch) }),
      at: r.at,
    }));
  }

  // ── usage per model call ─────────────────────────────────────────────────────────────────────

  /**
   * Fenced like the other model-step writes: the new placement's step for the same message starts
   * again at attempt 1, so a superseded step's late row would overwrite the current one's. What
   * the refused call cost is in the log line.
   */
  async putUsage(row: UsageInput): Promise<void> {
    const epoch = epochOf(row.conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO usage (conversation_id, purpose, seq, segment, attempt, turn, model, usage, cost_usd)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9 WHERE ${fenceAllows('$1', '$10')}
       ON CONFLICT (conversation_id, purpose, seq, segment, attempt) DO UPDATE SET
         turn = EXCLUDED.turn, model = EXCLUDED.model, usage = EXCLUDED.usage, cost_usd = EXCLUDED.cost_usd`,
      [row.conversationId, row.purpose, row.seq, row.segment, row.attempt ?? 1, row.turn, row.model, json(row.usage), row.costUsd, epoch],
    );
    await this.refusedUnless(row.conversationId, epoch, rowCount, `the usage of message ${row.seq} (${row.model}, $${row.costUsd.toFixed(4)})`);
  }

  /**
   * Usage billed but not yet reported to the workflow, which counts what a call's successful
   * result reports: the earlier attempts of this (seq, segment) of a turn (failed, or whose result
   * was lost), and for the turn's first segment the summaries made while preparing the turn.
   */
  async getUnreportedUsage(
    conversationId: string,
    call: { turn: number; seq: number; segment: number; attempt: number },
  ): Promise<{ usage: Usage; costUsd: number }[]> {
    const { rows } = await this.pool.query(
      `SELECT usage, cost_usd FROM usage WHERE conversation_id = $1 AND (
         (purpose = 'turn' AND seq = $2 AND segment = $3 AND attempt < $4) OR ($3 = 0 AND purpose = 'summary' AND turn = $5))`,
      [conversationId, call.seq, call.segment, call.attempt, call.turn],
    );
    return rows.map((r) => ({ usage: r.usage as Usage, costUsd: r.cost_usd }));
  }

  /** In call order: by time, then seq, segment and attempt. */
  async getUsage(conversationId: string): Promise<UsageRow[]> {
    const { rows } = await this.pool.query('SELECT * FROM usage WHERE conversation_id = $1 ORDER BY at, seq, segment, attempt', [conversationId]);
    return rows.map((r) => ({
      turn: r.turn,
      seq: r.seq,
      segment: r.segment,
      attempt: r.attempt,
      model: r.model,
      usage: r.usage as Usage,
      costUsd: r.cost_usd,
      purpose: r.purpose,
      at: r.at,
    }));
  }
}

// ── LISTEN connection ──────────────────────────────────────────────────────────────────────────

/** One dedicated connection per Store LISTENs for all subscribers (not one per watcher). */
class StreamListener {
  private client?: pg.Client;
  private connecting?: Promise<void>;
  private readonly subs = new Map<string, Set<() => void>>();
  private closed = false;
  private retry?: NodeJS.Timeout;

  constructor(private readonly config: pg.ClientConfig) {}

  async add(conversationId: string, onWake: () => void): Promise<() => Promise<void>> {
    if (this.closed) throw new Error('store is closed');
    // Wrap so the same function subscribed twice is two subscriptions.
    const fn = () => onWake();
    let set = this.subs.get(conversationId);
    if (!set) this.subs.set(conversationId, (set = new Set()));
    set.add(fn);
    try {
      await this.ensure();
    } catch (err) {
      this.remove(conversationId, fn);
      throw err;
    }
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      this.remove(conversationId, fn);
      if (this.count() === 0) await this.disconnect();
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subs.clear();
    await this.disconnect();
  }

  private remove(conversationId: string, fn: () => void): void {
    const set = this.subs.get(conversationId);
    set?.delete(fn);
    if (set?.size === 0) this.subs.delete(conversationId);
  }

  private count(): number {
    let n = 0;
    for (const s of this.subs.values()) n += s.size;
    return n;
  }

  private ensure(): Promise<void> {
    if (this.client) return Promise.resolve();
    if (this.connecting) return this.connecting;
    // Named so operators (and the reconnect test) can tell it apart in pg_stat_activity.
    const c = new pg.Client(this.config);
    c.on('notification', (msg) => {
      if (msg.channel === STREAM_CHANNEL && msg.payload) this.wake(this.subs.get(msg.payload));
    });
    c.on('error', (err) => this.lost(c, err));
    c.on('end', () => this.lost(c));
    this.connecting = (async () => {
      try {
        await c.connect();
        await c.query(`LISTEN ${STREAM_CHANNEL}`);
        this.client = c;
      } catch (err) {
        await c.end().catch(() => undefined);
        throw err;
      }
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async disconnect(): Promise<void> {
    clearTimeout(this.retry);
    await this.connecting?.catch(() => undefined);
    const c = this.client;
    this.client = undefined;
    if (c && (this.closed || this.count() === 0)) await c.end().catch(() => undefined);
    else if (c) this.client = c;
  }

  private lost(c: pg.Client, err?: Error): void {
    if (this.client !== c) return;
    this.client = undefined;
    c.end().catch(() => undefined);
    if (this.closed || this.count() === 0) return;
    log.warn({ err: err?.message }, 'stream LISTEN connection lost; reconnecting');
    // Notifications sent while disconnected are gone: wake everyone so they re-read from their offsets.
    for (const set of this.subs.values()) this.wake(set);
    const reconnect = () => {
      this.retry = undefined;
      if (this.closed || this.count() === 0) return;
      this.ensure().then(
        () => {
          for (const set of this.subs.values()) this.wake(set);
        },
        () => {
          this.retry = setTimeout(reconnect, 1000);
        },
      );
    };
    this.retry = setTimeout(reconnect, 200);
  }

  private wake(set: Set<() => void> | undefined): void {
    if (!set) return;
    for (const fn of [...set]) {
      try {
        fn();
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'stream subscriber threw');
      }
    }
  }
}

// ── helpers ────────────────────────────────────────────────────────────────────────────────────

// PostgreSQL text and jsonb cannot hold U+0000 (a tool reading a binary file can produce it). Rather
// than fail the activity on every retry, store U+FFFD in its place.
function text(s: string): string {
  return s.includes('\u0000') ? s.replace(/\u0000/g, '\uFFFD') : s;
}

function optText(s: string | undefined): string | null {
  return s === undefined ? null : text(s);
}

function json(v: unknown): string {
  const s = JSON.stringify(v);
  // Only an escape preceded by an even number of backslashes is a real \u0000 (not an escaped "\\u0000").
  return s.includes('\\u0000') ? s.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd') : s;
}

function optJson(v: unknown): string | null {
  return v === undefined ? null : json(v);
}

function toConversation(r: any): ConversationRow {
  return {
    id: r.id,
    task: r.task,
    workspace: r.workspace,
    model: r.model,
    config: r.config,
    ...(r.schedule_id != null && { scheduleId: r.schedule_id }),
    status: r.status as ConversationStatus,
    ...(r.reason != null && { reason: r.reason }),
    turns: r.turns,
    usage: r.usage,
    costUsd: r.cost_usd,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    ...(r.finished_at != null && { finishedAt: r.finished_at }),
    ...(r.collected != null && { collected: r.collected }),
  };
}

function toMessage(r: any): StoredMessage {
  return {
    conversationId: r.conversation_id,
    seq: r.seq,
    turn: r.turn,
    role: r.role,
    kind: r.kind,
    content: r.content,
    ...(r.reasoning != null && { reasoning: r.reasoning }),
    ...(r.tool_calls != null && { toolCalls: r.tool_calls }),
    ...(r.tool_call_id != null && { toolCallId: r.tool_call_id }),
    ...(r.tool_name != null && { toolName: r.tool_name }),
    tokens: r.tokens,
    ...(r.meta != null && { meta: r.meta }),
  };
}

function toToolCall(r: any): ToolCall {
  return { id: r.call_id, ...(r.native_id != null && { nativeId: r.native_id }), name: r.name, args: r.args, ...(r.hooks != null && { hooks: r.hooks }) };
}

/** `postgres://user:***@host:port/db`, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

/** Turn a connection failure into one line that says what to do. */
export function postgresError(err: unknown, databaseUrl: string): Error {
  const e = err as { code?: string; message?: string };
  const where = redactUrl(databaseUrl);
  const hint = 'check DATABASE_URL, or unset it to use the embedded PostgreSQL (`agentrun dev`)';
  let msg: string;
  switch (e.code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
      msg = `cannot reach PostgreSQL at ${where} (${e.code}): is it running? ${hint}`;
      break;
    case '28P01':
    case '28000':
      msg = `PostgreSQL at ${where} refused the credentials (${e.message}): ${hint}`;
      break;
    case '3D000':
      msg = `PostgreSQL at ${where}: ${e.message}; create it (createdb) or ${hint}`;
      break;
    default:
      if (/timeout/i.test(e.message ?? '')) msg = `cannot reach PostgreSQL at ${where} (connection timeout): ${hint}`;
      else return new Error(`PostgreSQL at ${where}: ${e.message ?? String(err)}`, { cause: err });
  }
  return new Error(msg, { cause: err });
}

/**
 * The identity of an event that happens once per conversation (per turn, call or seq), so writing
 * it again is a no-op. Model output (delta, reasoning, reset, continuation) is keyed by its writer
 * (seq:attempt:segment:index); a rollback may legitimately repeat and has no key.
 */
export function streamEventKey(e: StreamEvent): string | undefined {
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
