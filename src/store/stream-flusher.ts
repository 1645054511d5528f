// The live stream's one writer per process: every conversation's pending model output goes to
// PostgreSQL in one statement on a short timer, with one notification naming the conversations
// that moved. A notifying commit takes a lock for the whole database, so the commits a second
// grow with the processes that write, not with the conversations or the tokens they stream.
import type pg from 'pg';
import { log } from '../log.js';
import type { StreamEvent } from '../types.js';
import { fenceAllows } from './fence.js';
import { json } from './rows.js';
import { STREAM_CHANNEL, streamPayloads } from './stream-listener.js';

/** What a writer hands over at a flush: its conversation's events in order, each with its key. */
export interface StreamBatch {
  conversationId: string;
  events: StreamEvent[];
  keys: (string | null)[];
  /** The fenced activity's epoch (src/store/fence.ts), or null. */
  epoch: number | null;
}

/** A writer with events waiting: the flusher takes them when its timer fires. */
export interface StreamSource {
  readonly conversationId: string;
  take(): StreamBatch | undefined;
}

/** A flush's refusals, by conversation (a superseded host's output). */
type Refusals = Map<string, unknown>;

/** The time between two flushes of a process (ms): the longest a delta waits for its commit. */
const STREAM_FLUSH_MS = 50;

/** Model output older than this is pruned from the stream (the transcript keeps the answers). */
export const STREAM_TEXT_RETENTION_HOURS = 24;
/** How often a writing process prunes; spread at random so the workers of a fleet take turns. */
const PRUNE_EVERY_MS = 10 * 60_000;
const PRUNE_ROWS = 10_000;

/** The per-conversation lock that orders a conversation's offsets (the same key as appendStream's). */
export function streamLockKey(conversationId: string): string {
  return `agentrun.stream:${conversationId}`;
}

interface Cycle {
  done: Promise<Refusals>;
  resolve(refusals: Refusals): void;
  reject(err: unknown): void;
}

function cycle(): Cycle {
  let resolve!: (refusals: Refusals) => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<Refusals>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A cycle nobody awaits (a writer that never calls flush) must not end the process.
  done.catch(() => undefined);
  return { done, resolve, reject };
}

export class StreamFlusher {
  private readonly waiting = new Set<StreamSource>();
  private next = cycle();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastFlush = 0;
  private closed = false;
  private nextPrune = Date.now() + Math.random() * PRUNE_EVERY_MS;
  private pruning = false;
  /** Flush transactions committed by this process (benches read it). */
  commits = 0;

  constructor(
    private readonly pool: pg.Pool,
    /** Throws FencedError when a fenced batch wrote nothing because a newer placement holds its conversation. */
    private readonly refusedUnless: (conversationId: string, epoch: number | null, rowCount: number, what: string) => Promise<void>,
    private readonly intervalMs = STREAM_FLUSH_MS,
  ) {}

  /**
   * `source` has events: they go out with the next flush. Resolves when they are committed;
   * rejects when that flush failed for them (a refused fence, or PostgreSQL failing twice).
   */
  schedule(source: StreamSource): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    this.waiting.add(source);
    const done = this.next.done.then((refusals) => {
      if (refusals.has(source.conversationId)) throw refusals.get(source.conversationId);
    });
    this.arm();
    return done;
  }

  /** Write what is waiting, then stop taking more. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    if (this.waiting.size) await this.run();
    this.closed = true;
  }

  /** Leading edge: after a quiet spell the first events go out at once; then one flush per interval. */
  private arm(): void {
    if (this.timer || this.running) return;
    const wait = Math.max(0, this.lastFlush + this.intervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, wait);
  }

  private run(): Promise<void> {
    const sources = [...this.waiting];
    this.waiting.clear();
    const current = this.next;
    this.next = cycle();
    this.lastFlush = Date.now();
    const batches = sources.map((s) => s.take()).filter((b): b is StreamBatch => b !== undefined && b.events.length > 0);
    this.running = this.write(batches)
      .then(current.resolve, current.reject)
      .finally(() => {
        this.running = undefined;
        if (this.waiting.size) this.arm();
      });
    return this.running;
  }

  private async write(batches: StreamBatch[]): Promise<Refusals> {
    const refused: Refusals = new Map();
    if (batches.length === 0) return refused;
    // Keyed rows, so writing the flush again (a lost commit acknowledgement) stores each event once.
    const written = await this.insert(batches).catch((err) => {
      log.warn({ err: (err as Error).message, conversations: batches.length }, 'stream flush failed; writing it again');
      return this.insert(batches);
    });
    this.commits++;
    if (Date.now() >= this.nextPrune) void this.prune();
    // Each writer learns of its own conversation's refusal when it flushes.
    await Promise.all(
      batches.map((b) =>
        this.refusedUnless(b.conversationId, b.epoch, written.get(b.conversationId) ?? 0, `stream events (${b.events.length} of model output)`).catch(
          (err: unknown) => void refused.set(b.conversationId, err),
        ),
      ),
    );
    return refused;
  }

  /**
   * Delete model output older than the retention, a bounded number of rows at a time: the table
   * stays the size of a day's streaming. Best-effort: a failure waits for the next turn.
   */
  async prune(): Promise<void> {
    if (this.pruning) return;
    this.pruning = true;
    this.nextPrune = Date.now() + PRUNE_EVERY_MS;
    try {
      for (let round = 0; round < 10; round++) {
        const { rowCount } = await this.pool.query(
          `DELETE FROM stream WHERE ctid = ANY (ARRAY(
             SELECT ctid FROM stream
             WHERE at < now() - make_interval(hours => $1) AND event->>'type' IN ('delta', 'reasoning')
             LIMIT $2))`,
          [STREAM_TEXT_RETENTION_HOURS, PRUNE_ROWS],
        );
        if ((rowCount ?? 0) < PRUNE_ROWS) break;
      }
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'pruning old stream output failed; trying again later');
    } finally {
      this.pruning = false;
    }
  }

  /**
   * One statement: the conversations' stream locks taken in one order (offsets of a conversation
   * become visible in order, and two flushers never wait on each other in a cycle), every row
   * inserted in the writers' order, and the conversations named in one notification (more only
   * when the names overflow a payload). Returns the rows written per conversation.
   *
   * The commit does not wait for its WAL to reach the disk (synchronous_commit off, for this
   * transaction only): the stream is best-effort (the transcript is the record), a crash of
   * PostgreSQL loses at most its last fraction of a second, and a notifying commit holds the
   * database's notification lock until it returns, so the flush to disk would be paid by every
   * notifying commit of the cluster in turn.
   */
  private async insert(batches: StreamBatch[]): Promise<Map<string, number>> {
    const conversations = [...new Set(batches.map((b) => b.conversationId))];
    // The fence is read once per conversation, not per row: a flush carries many rows of each.
    const fences = [...new Map(batches.map((b) => [b.conversationId, b.epoch])).entries()].map(([c, epoch]) => ({ c, epoch }));
    const rows = batches.flatMap((b) => b.events.map((event, i) => ({ c: b.conversationId, event, key: b.keys[i] ?? null })));
    const { rows: out } = await this.pool.query<{ written: Record<string, number> | null }>(
      `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true) AS s),
       locked AS (
         SELECT count(pg_advisory_xact_lock(k.h)) AS n
         FROM (SELECT hashtextextended(c, 1) AS h FROM unnest($1::text[]) AS c GROUP BY 1 ORDER BY 1) k
       ),
       allowed AS (
         SELECT f.value->>'c' AS c FROM locked, jsonb_array_elements($5::jsonb) AS f(value)
         WHERE ${fenceAllows("(f.value->>'c')", "(f.value->>'epoch')")}
       ),
       ins AS (
         INSERT INTO stream (conversation_id, event, event_key)
         SELECT e.value->>'c', e.value->'event', e.value->>'key'
         FROM locked, jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(value, n)
         WHERE e.value->>'c' IN (SELECT c FROM allowed)
         ORDER BY e.n
         ON CONFLICT (conversation_id, event_key) WHERE event_key IS NOT NULL DO NOTHING
         RETURNING conversation_id
       ),
       notified AS (SELECT count(pg_notify($3, p)) AS n FROM unnest($4::text[]) AS p)
       SELECT (SELECT n FROM notified) AS notified, (SELECT s FROM relaxed) AS relaxed,
              (SELECT json_object_agg(conversation_id, k) FROM (SELECT conversation_id, count(*) AS k FROM ins GROUP BY 1) w) AS written`,
      [conversations.map(streamLockKey), json(rows), STREAM_CHANNEL, streamPayloads(conversations), json(fences)],
    );
    return new Map(Object.entries(out[0]?.written ?? {}).map(([c, k]) => [c, Number(k)]));
  }
}
