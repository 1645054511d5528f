// The transcript as the model step reads it every turn, incrementally: a per-worker cache of
// each conversation's messages, brought up to date with the rows after the cached seq and the
// rows rewritten since the last read (a retried step rewrites its answer), then checked against
// the store's row count. A miss (another worker, a restart, an evicted entry) or a count that
// disagrees (rows deleted by `run --replace`) reads the whole transcript again, so the result is
// always what a full read would return, after retries, worker changes and continue-as-new alike.
import type { Store, TurnState, TurnStateRequest } from '../store/index.js';
import type { StoredMessage } from '../types.js';

/**
 * Rows written this long before the previous read are read again: a write whose statement
 * started before that read but committed after it carries an earlier `updated_at`.
 */
const RECHECK_MS = 2_000;
/** Characters of message content the cache holds over all conversations (least recently read go first). */
const DEFAULT_MAX_CHARS = 128 * 1024 * 1024;

interface Entry {
  /** Seq order; every message up to `throughSeq`. */
  messages: StoredMessage[];
  throughSeq: number;
  /** The database's time of the read that produced this entry. */
  at: Date;
  chars: number;
}

const size = (m: StoredMessage) => m.content.length + (m.reasoning?.length ?? 0);

export class TranscriptCache {
  private readonly entries = new Map<string, Entry>();
  private chars = 0;
  /** Reads answered from the cache plus the changed rows, and reads of the whole transcript. */
  readonly stats = { incremental: 0, full: 0 };

  constructor(private readonly maxChars = DEFAULT_MAX_CHARS) {}

  /** Messages with seq ≤ toSeq, in seq order. Shared with the cache: do not modify them. */
  async read(store: Store, conversationId: string, toSeq: number): Promise<StoredMessage[]> {
    return (await this.readWith(store, conversationId, toSeq)).messages;
  }

  /** read, and with `state` the turn state preparing that turn reads (Store.getTurnState), in the same round trip. */
  async readWith(store: Store, conversationId: string, toSeq: number, state?: TurnStateRequest): Promise<{ messages: StoredMessage[]; turnState?: TurnState }> {
    const hit = this.take(conversationId);
    const changedSince = hit ? new Date(hit.at.getTime() - RECHECK_MS) : new Date(0);
    const r = await store.getMessagesChanged(conversationId, {
      afterSeq: hit ? hit.throughSeq : -1,
      toSeq,
      changedSince,
      ...(state ? { turnState: state } : {}),
    });
    let messages = hit ? merge(hit.messages, r.messages, toSeq) : r.messages;
    if (hit && messages.length === r.count) this.stats.incremental++;
    else {
      this.stats.full++;
      if (messages.length !== r.count) messages = await store.getMessages(conversationId, { toSeq });
    }
    this.put(conversationId, { messages, throughSeq: toSeq, at: r.at, chars: messages.reduce((n, m) => n + size(m), 0) });
    return { messages, ...(r.turnState ? { turnState: r.turnState } : {}) };
  }

  /** Forget a conversation (it ended on this worker). */
  drop(conversationId: string): void {
    this.take(conversationId);
  }

  private take(conversationId: string): Entry | undefined {
    const e = this.entries.get(conversationId);
    if (e) {
      this.entries.delete(conversationId);
      this.chars -= e.chars;
    }
    return e;
  }

  private put(conversationId: string, e: Entry): void {
    if (e.chars > this.maxChars) return;
    this.entries.set(conversationId, e);
    this.chars += e.chars;
    for (const [id, old] of this.entries) {
      if (this.chars <= this.maxChars) break;
      this.entries.delete(id);
      this.chars -= old.chars;
    }
  }
}

/** The cached messages up to `toSeq` with the changed rows put in (replacing or added), in seq order. */
function merge(cached: StoredMessage[], changed: StoredMessage[], toSeq: number): StoredMessage[] {
  const out = cached.filter((m) => m.seq <= toSeq);
  if (changed.length === 0) return out;
  const index = new Map(out.map((m, i) => [m.seq, i]));
  let sorted = true;
  for (const m of changed) {
    const i = index.get(m.seq);
    if (i !== undefined) out[i] = m;
    else {
      if (out.length && out[out.length - 1]!.seq > m.seq) sorted = false;
      out.push(m);
    }
  }
  return sorted ? out : out.sort((a, b) => a.seq - b.seq);
}

/** This worker's cache, shared by the context step and the model call of a turn. */
export const transcripts = new TranscriptCache();
