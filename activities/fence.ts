// The host side of fencing (src/store/fence.ts): an activity given the epoch of its placement
// writes under it, watches the fence while it runs (a superseded attempt's command is killed at
// once, not when it next writes), and leaves as a non-retryable `Fenced` failure that the workflow
// ignores: a newer placement has taken over.
import { ApplicationFailure } from '@temporalio/common';
import { FencedError, underFence, type Fence } from '../src/store/fence.js';
import type { Store } from '../src/store/index.js';
import { inc, timedWait } from '../src/metrics.js';
import { activityLog } from './deps.js';

/** How often a fenced activity reads its conversation's fence while it runs. */
const FENCE_WATCH_MS = 2_000;

/** The failure type of a superseded attempt (workflows/session/host.ts treats it as a loss of that placement). */
const FENCED = 'Fenced';

/**
 * Wrap a host activity: with `epoch` in its input, its writes are conditional on it. `watch`: the
 * activity runs commands (a tool call, hooks), so it reads its fence while it runs and a raised
 * fence kills them; the others (the model step, git steps) find out at their next write.
 */
export function fenced<I, R>(store: Store, fn: (input: I) => Promise<R>, opts: { watch?: boolean } = {}): (input: I) => Promise<R> {
  return async (input: I) => {
    const { conversationId, epoch } = (input ?? {}) as { conversationId?: string; epoch?: number };
    if (conversationId === undefined || epoch === undefined) return fn(input);
    const fence: Fence = { conversationId, epoch, superseded: new AbortController() };
    const watch = opts.watch ? setInterval(() => superseded(), FENCE_WATCH_MS) : undefined;
    const superseded = () =>
      store.fenceEpoch(conversationId).then(
        (current) => {
          if (current <= epoch || fence.superseded.signal.aborted) return;
          inc('agentrun_fenced_total', { kind: 'step' });
          activityLog(conversationId).warn({ epoch, current }, 'superseded by a newer placement of the workspace: its running command is killed');
          fence.superseded.abort(new FencedError(conversationId, epoch, current, 'the running step'));
        },
        () => undefined, // the database is away: the next write finds out
      );
    try {
      // A stale attempt (a retry that reached a host after the workspace moved) starts nothing.
      if (opts.watch) await timedWait('the fence', superseded());
      if (fence.superseded.signal.aborted) throw fence.superseded.signal.reason as FencedError;
      return await underFence(fence, () => fn(input));
    } catch (err) {
      const why = err instanceof FencedError ? err : fence.superseded.signal.aborted ? (fence.superseded.signal.reason as FencedError) : undefined;
      if (why) throw ApplicationFailure.nonRetryable(why.message, FENCED);
      throw err;
    } finally {
      clearInterval(watch);
    }
  };
}
