// A conversation's live stream from an offset, as the typed events of `--json`: shared by
// `agentrun watch`/`run` (which print them) and the SDK's `watch` (which yields them).
import type { Client } from '@temporalio/client';
import type { Store } from '../store/index.js';
import type { StreamEvent } from '../types.js';

/** One event of the stream: the same object as a `--json` line of `agentrun watch`. */
export type WatchEvent = StreamEvent & { offset: number; conversationId: string };

export interface WatchOptions {
  /** Stream offset to resume after (0: from the start). */
  from?: number;
  /** End when the conversation waits for a person (approval or question). */
  stopWhenWaiting?: boolean;
  signal?: AbortSignal;
}

export interface WatchEnd {
  offset: number;
  finished?: { status: string; reason: string };
  waiting?: boolean;
}

export async function* watchEvents(
  deps: { client: Client; store: Store },
  conversationId: string,
  opts: WatchOptions = {},
): AsyncGenerator<WatchEvent, WatchEnd> {
  const handle = deps.client.workflow.getHandle(conversationId);
  let offset = opts.from ?? 0;
  let wake: (() => void) | undefined;
  const unsubscribe = await deps.store.subscribe(conversationId, () => wake?.());
  const onAbort = () => wake?.();
  opts.signal?.addEventListener('abort', onAbort);
  let lastCheck = 0;
  try {
    for (;;) {
      if (opts.signal?.aborted) return { offset };
      const rows = await deps.store.readStream(conversationId, offset, 500);
      let sawWaiting = false;
      for (const row of rows) {
        offset = row.offset;
        yield { offset: row.offset, conversationId, ...row.event };
        if (row.event.type === 'finished') return { offset, finished: { status: row.event.status, reason: row.event.reason } };
        if (row.event.type === 'question_asked' || row.event.type === 'approval_requested' || row.event.type === 'budget_paused') sawWaiting = true;
      }
      if (rows.length === 500) continue;
      if (opts.stopWhenWaiting && sawWaiting) {
        // The event is written just before the workflow starts waiting; give the state a moment.
        for (let i = 0; i < 20; i++) {
          const state = (await handle.query('state').catch(() => undefined)) as { status?: string } | undefined;
          if (state?.status === 'waiting' || state?.status === 'awaiting_budget') return { offset, waiting: true };
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      if (Date.now() - lastCheck > 2000) {
        lastCheck = Date.now();
        const desc = await handle.describe().catch(() => undefined);
        if (desc && desc.status.name !== 'RUNNING') {
          const rest = await deps.store.readStream(conversationId, offset, 10_000);
          for (const row of rest) {
            offset = row.offset;
            yield { offset: row.offset, conversationId, ...row.event };
          }
          return { offset };
        }
      }
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
