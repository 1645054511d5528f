// The base of the store's table groups: the connection pool and the fencing of writes.
import pg from 'pg';
import { log } from '../log.js';
import { inc } from '../metrics.js';
import type { StreamEvent } from '../types.js';
import { FencedError } from './fence.js';
import { streamInsert } from './stream-append.js';
import { StreamListener } from './stream-listener.js';
import { StreamFlusher } from './stream-flusher.js';
import { StreamReader } from './stream-reader.js';

/**
 * What every table group of the store stands on: the pool, the stream's listener, and the fence
 * (src/store/fence.ts) that a write of a superseded host is refused by. The groups' methods are
 * gathered into one `Store` (./store.ts); none of these classes is made on its own.
 */
export abstract class Tables {
  protected readonly listener: StreamListener;
  /** The process's one writer of model output to the stream (src/store/stream-flusher.ts). */
  readonly streamFlusher: StreamFlusher;
  /** The process's reads of the stream, batched per turn of the event loop (src/store/stream-reader.ts). */
  readonly streamReader: StreamReader;

  protected constructor(
    readonly pool: pg.Pool,
    readonly schema: string,
    clientConfig: pg.ClientConfig,
  ) {
    this.listener = new StreamListener({ ...clientConfig, application_name: `agentrun-listen:${schema}`.slice(0, 63) });
    this.streamReader = new StreamReader(pool);
    this.streamFlusher = new StreamFlusher(pool, (conversationId, epoch, rowCount, what) => this.refusedUnless(conversationId, epoch, rowCount, what));
  }

  // ── fencing ──────────────────────────────────────────────────────────────────────────────────

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
   * Fenced writes and the stream events that announce them, in one statement (one round trip
   * instead of two or more): each write is an INSERT … RETURNING 1 on the parameters $1…$n
   * (`params`, shared), conditional on the fence itself; the events are appended as appendStream
   * does (the lock, the fence, their keys: a retried write repeats no event). All are refused when
   * the fence is above `epoch` (one snapshot of the fence), and that is thrown as FencedError naming
   * the first write's `what`. Returns the rows each write wrote (0: it had nothing to do).
   */
  protected async writeAnnounced(
    conversationId: string,
    epoch: number | null,
    writes: { sql: string; what: string }[],
    params: unknown[],
    events: StreamEvent[],
  ): Promise<number[]> {
    const append = streamInsert(params.length + 1, conversationId, events, epoch);
    const counts = writes.map((_, i) => `(SELECT count(*) FROM w${i})::int AS w${i}`).join(', ');
    const { rows } = await this.pool.query<Record<string, number> & { id: string | null }>(
      `WITH ${writes.map((w, i) => `w${i} AS (${w.sql})`).join(', ')}, ${append.ctes}
       SELECT ${counts}, i.id, CASE WHEN i.id IS NOT NULL THEN ${append.notify} END AS notified
       FROM (SELECT 1) one LEFT JOIN ins i ON true`,
      [...params, ...append.params],
    );
    for (const [i, w] of writes.entries()) await this.refusedUnless(conversationId, epoch, rows[0]?.[`w${i}`] ?? 0, w.what);
    // Keyed events already stored insert nothing too: only a raised fence makes that a refusal.
    if (!rows.some((r) => r.id !== null)) await this.refusedUnless(conversationId, epoch, 0, `stream events (${events.map((e) => e.type).join(', ')})`);
    return writes.map((_, i) => rows[0]?.[`w${i}`] ?? 0);
  }

  /**
   * A fenced write (an INSERT … WHERE fenceAllows), refused as FencedError naming `what` when the
   * fence is above `epoch`; with `announce`, its stream events go in the same statement (writeAnnounced).
   */
  protected async writeFenced(
    conversationId: string,
    epoch: number | null,
    sql: string,
    params: unknown[],
    what: string,
    announce: StreamEvent[],
  ): Promise<void> {
    if (announce.length) {
      await this.writeAnnounced(conversationId, epoch, [{ sql: `${sql} RETURNING 1`, what }], params, announce);
      return;
    }
    const { rowCount } = await this.pool.query(sql, params);
    await this.refusedUnless(conversationId, epoch, rowCount, what);
  }

  /**
   * A conditional write that changed no row (`rowCount` 0) was refused when the fence is above its
   * epoch: logged, counted, and thrown as FencedError. Otherwise nothing (an upsert that had nothing to do).
   */
  protected async refusedUnless(conversationId: string, epoch: number | null, rowCount: number | null, what: string): Promise<void> {
    if (epoch === null || (rowCount ?? 0) > 0) return;
    const current = await this.fenceEpoch(conversationId);
    if (current <= epoch) return;
    inc('agentrun_fenced_total', { kind: 'write' });
    log.warn({ conversationId, epoch, current, what }, 'write refused: this host was superseded by a newer placement of the workspace');
    throw new FencedError(conversationId, epoch, current, what);
  }
}
