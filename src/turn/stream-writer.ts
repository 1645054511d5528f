// Batches token deltas into the stream table (one INSERT + NOTIFY per batch) so watchers
// see text live without one round trip per token.
import type { Store } from '../store/index.js';
import type { StreamEvent } from '../types.js';

export class StreamWriter {
  private pending: StreamEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private failure: unknown;
  /** Events written so far: the index in each event's key (seq:attempt:segment:index). */
  private written = 0;

  constructor(
    private readonly store: Store,
    private readonly conversationId: string,
    private readonly where: { seq: number; attempt: number; segment: number },
    private readonly intervalMs = 40,
  ) {}

  text(text: string): void {
    this.add('delta', text);
  }

  reasoning(text: string): void {
    this.add('reasoning', text);
  }

  event(event: StreamEvent): void {
    this.pending.push(event);
    this.schedule();
  }

  private add(type: 'delta' | 'reasoning', text: string): void {
    const last = this.pending[this.pending.length - 1];
    if (last && last.type === type) last.text += text;
    else this.pending.push({ type, ...this.where, text });
    this.schedule();
  }

  private lastFlush = 0;

  /** Leading edge: the first delta after a quiet spell goes out at once; the rest in batches. */
  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastFlush + this.intervalMs - Date.now());
    // A failed timed write is kept for the caller's own flush; unhandled, it would end the process
    // (a CLI's worker whose PostgreSQL stops on Ctrl-C while a model call still streams).
    this.timer = setTimeout(() => void this.flush().catch(() => undefined), wait);
  }

  /** Write what is buffered; resolves when everything written so far is in the store. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.lastFlush = Date.now();
    if (batch.length) {
      const { seq, attempt, segment } = this.where;
      const keys = batch.map(() => `${seq}:${attempt}:${segment}:${this.written++}`);
      // Keyed, so writing a batch again (a lost commit acknowledgement) stores it once.
      const write = () => this.store.appendStream(this.conversationId, batch, keys);
      this.chain = this.chain
        .then(() => write().catch(write))
        .catch((err) => {
          this.failure = err;
        });
    }
    await this.chain;
    if (this.failure) throw this.failure;
  }
}
