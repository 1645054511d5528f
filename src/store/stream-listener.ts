// The LISTEN side of the live stream: one dedicated connection per Store for all its watchers.
import pg from 'pg';
import { log } from '../log.js';

/**
 * NOTIFY channel of the stream table. The payload names the conversations that moved: one id (a
 * single append), or a JSON array of ids (a flush of many conversations).
 */
export const STREAM_CHANNEL = 'agentrun_stream';

/** PostgreSQL refuses a payload of 8000 bytes or more. */
const PAYLOAD_BYTES = 7900;

/** The payloads that name `conversationIds`: one JSON array, more only when one would overflow. */
export function streamPayloads(conversationIds: string[]): string[] {
  const out: string[] = [];
  let part: string[] = [];
  let bytes = 2;
  for (const id of conversationIds) {
    const size = Buffer.byteLength(JSON.stringify(id)) + 1;
    if (part.length && bytes + size > PAYLOAD_BYTES) {
      out.push(JSON.stringify(part));
      part = [];
      bytes = 2;
    }
    part.push(id);
    bytes += size;
  }
  if (part.length) out.push(JSON.stringify(part));
  return out;
}

/** The conversations a payload names. */
export function conversationsOf(payload: string): string[] {
  if (!payload.startsWith('[')) return [payload];
  try {
    const ids = JSON.parse(payload) as unknown;
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

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
      if (msg.channel !== STREAM_CHANNEL || !msg.payload) return;
      for (const id of conversationsOf(msg.payload)) this.wake(this.subs.get(id));
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
