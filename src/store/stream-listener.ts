// The LISTEN side of the live stream: one dedicated connection per Store for all its watchers.
import pg from 'pg';
import { log } from '../log.js';

/** NOTIFY channel of the stream table; the payload is the conversation id. */
export const STREAM_CHANNEL = 'agentrun_stream';

/** One dedicated connection per Store LISTENs for all subscribers (not one per watcher). */
export class StreamListener {
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
