// The host side of fencing (src/store/fence.ts): an activity given the epoch of its placement
// writes under it, watches the fence while it runs (a superseded attempt's command is killed at
// once, not when it next writes), and leaves as a non-retryable `Fenced` failure that the workflow
// ignores: a newer placement has taken over.
import { ApplicationFailure } from '@temporalio/common';
import { activeFence, FencedError, underFence, type Fence } from '../src/store/fence.js';
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
 * fence kills them; the others (the model step, git steps) find out at their next write. A watched
 * step that is stale (a retry that reached a host after the workspace moved) starts nothing: the
 * fence is read before it, or, with `checkedByStep`, brought by the step's own first read, which
 * it hands to startsUnder before anything else.
 */
export function fenced<I, R>(store: Store, fn: (input: I) => Promise<R>, opts: { watch?: boolean; checkedByStep?: boolean } = {}): (input: I) => Promise<R> {
  return async (input: I) => {
    const { conversationId, epoch } = (input ?? {}) as { conversationId?: string; epoch?: number };
    if (conversationId === undefined || epoch === undefined) return fn(input);
    const fence: Fence = { conversationId, epoch, superseded: new AbortController() };
    const watch = opts.watch ? setInterval(() => superseded(), FENCE_WATCH_MS) : undefined;
    const superseded = () =>
      store.fenceEpoch(conversationId).then(
        (current) => supersede(fence, current),
        () => undefined, // the database is away: the next write finds out
      );
    try {
      if (opts.watch && !opts.checkedByStep) await timedWait('the fence', superseded());
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

/**
 * In a step fenced with `checkedByStep`: the fence's epoch (`current`) as its first read found it.
 * Superseded, the step starts nothing: FencedError is thrown (counted, logged, its signal aborted).
 */
export function startsUnder(conversationId: string, current: number): void {
  const fence = activeFence();
  if (fence?.conversationId !== conversationId) return;
  supersede(fence, current);
  if (fence.superseded.signal.aborted) throw fence.superseded.signal.reason as FencedError;
}

/** The fence read at `current`: above the step's epoch, the step is superseded and its running command killed. */
function supersede(fence: Fence, current: number): void {
  if (current <= fence.epoch || fence.superseded.signal.aborted) return;
  inc('agentrun_fenced_total', { kind: 'step' });
  activityLog(fence.conversationId).warn({ epoch: fence.epoch, current }, 'superseded by a newer placement of the workspace: its running command is killed');
  fence.superseded.abort(new FencedError(fence.conversationId, fence.epoch, current, 'the running step'));
}
