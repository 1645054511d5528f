// Fencing: every placement of a workspace gets an epoch, and a host's writes for the
// conversation carry the epoch it was placed with. The store refuses a write whose epoch is older
// than the conversation's `fence` row (raised by each placement), in the same statement as the
// write, so a host declared lost that wakes up (paused, or cut off from Temporal only) cannot
// overwrite what the workflow and the new host wrote since. docs/decisions.md has the design.
import { AsyncLocalStorage } from 'node:async_hooks';

/** The placement an activity writes for: its conversation and epoch. */
export interface Fence {
  conversationId: string;
  epoch: number;
  /** Aborted when the activity finds itself superseded: its command is killed. */
  superseded: AbortController;
}

const current = new AsyncLocalStorage<Fence>();

/** Run `fn` with its store writes for `fence.conversationId` conditional on `fence.epoch`. */
export function underFence<T>(fence: Fence, fn: () => Promise<T>): Promise<T> {
  return current.run(fence, fn);
}

/** The running activity's fence, whatever its conversation. */
export function activeFence(): Fence | undefined {
  return current.getStore();
}

/** The running activity's fence for `conversationId`'s writes; undefined outside fenced activities (the workflow's own writes). */
function fenceOf(conversationId: string): Fence | undefined {
  const f = current.getStore();
  return f && f.conversationId === conversationId ? f : undefined;
}

/** The epoch a write for `conversationId` carries, or null (an unconditional write). */
export function epochOf(conversationId: string): number | null {
  return fenceOf(conversationId)?.epoch ?? null;
}

/** A write refused: a newer placement of the workspace holds the conversation. */
export class FencedError extends Error {
  constructor(
    readonly conversationId: string,
    readonly epoch: number,
    readonly current: number,
    readonly what: string,
  ) {
    super(
      `${what} of ${conversationId} refused: this host was placed with epoch ${epoch}, the workspace has moved since (epoch ${current}); the attempt is superseded`,
    );
  }
}

/**
 * The SQL condition that lets a write through: the conversation's fence (`conversation` and `epoch`
 * are parameter placeholders) is at most the write's epoch, or the write carries none. The fence
 * row is read FOR SHARE: a raise waits for the writes under way, and a write that waited for a
 * raise sees the raised epoch.
 */
export function fenceAllows(conversation: string, epoch: string): string {
  return `(${epoch}::bigint IS NULL OR (SELECT COALESCE(max(f.epoch), 0) FROM (SELECT epoch FROM fence WHERE conversation_id = ${conversation} FOR SHARE) f) <= ${epoch}::bigint)`;
}

/**
 * For an upsert's `DO UPDATE … WHERE`: the row in `table` is replaced unless the same conversation
 * wrote it under a newer placement than the incoming write's (a row with no epoch, or another
 * conversation's, is replaced).
 */
export function notOlderThanStored(table: string): string {
  return `(${table}.epoch IS NULL OR EXCLUDED.epoch IS NULL OR ${table}.conversation_id IS DISTINCT FROM EXCLUDED.conversation_id OR ${table}.epoch <= EXCLUDED.epoch)`;
}
