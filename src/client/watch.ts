// A conversation's live stream from an offset: `followStream` yields the stored rows (the web
// page's SSE writes them with their offsets and times), `watchEvents` the typed events of `--json`
// (`agentrun watch`/`run` print them, the SDK's `watch` yields them). One loop for both: read what
// is there, wait for the store's notification (or a second), and end with the `finished` event, or
// when the workflow is found not running (a terminated workflow writes no `finished`).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { connectionLost } from '../store/errors.js';
import type { Store } from '../store/index.js';
import type { StreamEvent } from '../types.js';

/** One event of the stream: the same object as a `--json` line of `agentrun watch`. */
export type WatchEvent = StreamEvent & { offset: number; conversationId: string };

/** One stored row of the stream. */
export interface FollowedRow {
  offset: number;
  at: Date;
  event: StreamEvent;
}

export interface WatchOptions {
  /** Stream offset to resume after (0: from the start). */
  from?: number;
  /** End when the conversation waits for a person (approval or question). */
  stopWhenWaiting?: boolean;
  signal?: AbortSignal;
  /** While nothing new comes, ask this often whether the workflow still runs (ms; default 2000). */
  runningCheckMs?: number;
  /** PostgreSQL is away (a restart): called on each failed read before it is tried again. */
  onStoreOutage?(err: Error): void;
}

export interface WatchEnd {
  offset: number;
  finished?: { status: string; reason: string };
  waiting?: boolean;
  /** Ended without a `finished` event: the conversation's status in the store, when it has one. */
  status?: string;
}

const BATCH = 500;
/**
 * A read that fails because PostgreSQL restarts or is unreachable is tried again: the conversation
 * stalls meanwhile and goes on after, so its follower waits too, this long at most.
 */
const STORE_OUTAGE_MS = 10 * 60_000;
const STORE_RETRY_MS = 1000;
/** How long a describe may take before the check counts as "still running" (a slow server ends nothing). */
const DESCRIBE_TIMEOUT_MS = 5000;

export async function* followStream(
  deps: { client: Client; store: Pick<Store, 'subscribe' | 'readStream' | 'getConversation'> },
  conversationId: string,
  opts: WatchOptions = {},
): AsyncGenerator<FollowedRow, WatchEnd> {
  const handle = deps.client.workflow.getHandle(conversationId);
  let offset = opts.from ?? 0;
  let wake: (() => void) | undefined;
  // A notification that comes while a read is under way names rows that read may have missed: the
  // loop reads again at once instead of waiting for the next one (or the second).
  let notified = false;
  const unsubscribe = await deps.store.subscribe(conversationId, () => {
    notified = true;
    wake?.();
  });
  const onAbort = () => wake?.();
  opts.signal?.addEventListener('abort', onAbort);
  let lastCheck = 0;
  /**
   * The workflow ended: the status the store has ('' without one); undefined while it runs. Asked
   * of Temporal, not the store: the store's status is written before the `finished` event.
   */
  const ended = async (): Promise<string | undefined> => {
    try {
      const d = await deps.client.withDeadline(Date.now() + DESCRIBE_TIMEOUT_MS, () => handle.describe());
      if (d.status.name === 'RUNNING') return undefined;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) return undefined;
    }
    return (await deps.store.getConversation(conversationId).catch(() => undefined))?.status ?? '';
  };
  /** `read`, again while PostgreSQL is away (restarting), until it answers or the outage outlasts STORE_OUTAGE_MS. */
  const fromStore = async <T>(read: () => Promise<T>): Promise<T> => {
    let since: number | undefined;
    for (;;) {
      try {
        return await read();
      } catch (err) {
        if (!connectionLost(err) || opts.signal?.aborted) throw err;
        since ??= Date.now();
        if (Date.now() - since > STORE_OUTAGE_MS) throw err;
        opts.onStoreOutage?.(err as Error);
        await new Promise((r) => setTimeout(r, STORE_RETRY_MS));
      }
    }
  };
  try {
    for (;;) {
      if (opts.signal?.aborted) return { offset };
      notified = false;
      const rows = await fromStore(() => deps.store.readStream(conversationId, offset, BATCH));
      let sawWaiting = false;
      for (const row of rows) {
        offset = row.offset;
        yield row;
        const e = row.event;
        if (e.type === 'finished') return { offset, finished: { status: e.status, reason: e.reason } };
        if (e.type === 'question_asked' || e.type === 'approval_requested' || e.type === 'budget_paused') sawWaiting = true;
      }
      if (rows.length === BATCH) continue;
      if (opts.stopWhenWaiting && sawWaiting) {
        // The event is written just before the workflow starts waiting; give the state a moment.
        for (let i = 0; i < 20; i++) {
          const state = (await handle.query('state').catch(() => undefined)) as { status?: string } | undefined;
          if (state?.status === 'waiting' || state?.status === 'awaiting_budget') return { offset, waiting: true };
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      if (Date.now() - lastCheck > (opts.runningCheckMs ?? 2000)) {
        lastCheck = Date.now();
        const status = await ended();
        if (status !== undefined) {
          for (const row of await fromStore(() => deps.store.readStream(conversationId, offset, 100_000))) {
            offset = row.offset;
            yield row;
          }
          return { offset, ...(status ? { status } : {}) };
        }
      }
      if (notified) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    await unsubscribe();
  }
}

/** The stream as `--json` events (`agentrun watch`, the SDK). */
export async function* watchEvents(
  deps: { client: Client; store: Store },
  conversationId: string,
  opts: WatchOptions = {},
): AsyncGenerator<WatchEvent, WatchEnd> {
  const rows = followStream(deps, conversationId, opts);
  try {
    for (;;) {
      const next = await rows.next();
      if (next.done) return next.value;
      yield { offset: next.value.offset, conversationId, ...next.value.event };
    }
  } finally {
    await rows.return({ offset: 0 });
  }
}
