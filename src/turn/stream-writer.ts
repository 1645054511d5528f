// Buffers one model call's output for the live stream. The process's stream flusher
// (src/store/stream-flusher.ts) takes every writer's buffer on its timer and writes them all in
// one statement, so watchers see text live and the commits do not grow with conversations.
import { epochOf } from '../store/fence.js';
import type { StreamBatch, StreamSource } from '../store/stream-flusher.js';
import type { Store } from '../store/index.js';
import type { StreamEvent } from '../types.js';

export class StreamWriter implements StreamSource {
  private pending: StreamEvent[] = [];
  /** The flush that took this writer's last events: flush() waits for it. */
  private inFlight: Promise<void> = Promise.resolve();
  private failure: unknown;
  /** Handed to the flusher's next flush (until it takes the events). */
  private scheduled = false;
  /** Events handed over so far: the index in each event's key (seq:attempt:segment:index). */
  private written = 0;
  /** The activity's fence epoch, read where the writer is made (the flusher's timer runs outside it). */
  private readonly epoch: number | null;

  constructor(
    private readonly store: Store,
    readonly conversationId: string,
    private readonly where: { seq: number; attempt: number; segment: number },
  ) {
    this.epoch = epochOf(conversationId);
  }

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

  /** The buffered events, keyed, for the flusher; the buffer starts again empty. */
  take(): StreamBatch | undefined {
    this.scheduled = false;
    if (this.pending.length === 0) return undefined;
    const events = this.pending;
    this.pending = [];
    const { seq, attempt, segment } = this.where;
    // Keyed, so a flush written again (a lost commit acknowledgement) stores each event once.
    const keys = events.map(() => `${seq}:${attempt}:${segment}:${this.written++}`);
    return { conversationId: this.conversationId, events, keys, epoch: this.epoch };
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // A failed timed write is kept for the caller's own flush; unhandled, it would end the process
    // (a CLI's worker whose PostgreSQL stops on Ctrl-C while a model call still streams).
    this.inFlight = this.store.streamFlusher.schedule(this).catch((err) => {
      this.failure = err;
    });
  }

  /** Resolves when everything buffered so far is in the store (with the process's next flush). */
  async flush(): Promise<void> {
    await this.inFlight;
    if (this.failure) throw this.failure;
  }
}
