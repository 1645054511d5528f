// The read side of the live stream: one flush wakes every watcher of the conversations it names at
// once (each `agentrun watch`, each page's SSE of the process), and each reads from its own
// offset. The reads asked for in the same turn of the event loop go to PostgreSQL as one query,
// so a process's reads a second grow with the notifications it gets, not with its watchers.
import type pg from 'pg';
import type { StreamEvent } from '../types.js';
import type { StreamRow } from './types.js';

interface Read {
  conversationId: string;
  after: number;
  limit: number;
  resolve(rows: StreamRow[]): void;
  reject(err: unknown): void;
}

/** Batches under way at once: a slow one does not hold up the reads asked for meanwhile. */
const IN_FLIGHT = 2;

export class StreamReader {
  private queued: Read[] = [];
  private scheduled = false;
  private inFlight = 0;
  /** Queries sent (benches read it). */
  queries = 0;

  constructor(private readonly pool: pg.Pool) {}

  /** Events of the conversation with offset > `after`, oldest first, at most `limit`. */
  read(conversationId: string, after: number, limit: number): Promise<StreamRow[]> {
    return new Promise((resolve, reject) => {
      this.queued.push({ conversationId, after, limit, resolve, reject });
      this.schedule();
    });
  }

  /** After the current turn of the event loop: the watchers woken by one notification all ask in it. */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= IN_FLIGHT || this.queued.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const reads = this.queued;
      this.queued = [];
      this.inFlight++;
      void this.run(reads).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    });
  }

  private async run(reads: Read[]): Promise<void> {
    this.queries++;
    try {
      // Each read is its own index range scan (conversation_id, id), as a lone read would be.
      const { rows } = await this.pool.query<{ k: string; id: string; event: StreamEvent; at: Date }>(
        `SELECT r.k, s.id, s.event, s.at
         FROM unnest($1::text[], $2::bigint[], $3::int[]) WITH ORDINALITY AS r(c, after, lim, k)
         CROSS JOIN LATERAL (
           SELECT id, event, at FROM stream WHERE conversation_id = r.c AND id > r.after ORDER BY id LIMIT r.lim
         ) s
         ORDER BY r.k, s.id`,
        [reads.map((r) => r.conversationId), reads.map((r) => r.after), reads.map((r) => r.limit)],
      );
      const out = reads.map((): StreamRow[] => []);
      for (const r of rows) out[Number(r.k) - 1]!.push({ offset: Number(r.id), event: r.event, at: r.at });
      reads.forEach((r, i) => r.resolve(out[i]!));
    } catch (err) {
      for (const r of reads) r.reject(err);
    }
  }
}
