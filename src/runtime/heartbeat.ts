// The running activity's heartbeat, throttled at its start: every layer that beats (the turn's
// steps, the extensions' MCP calls and hooks) beats through this one function.
import { Context } from '@temporalio/activity';

/** The shortest heartbeat timeout whose first half goes unbeaten. */
const QUIET_START_MIN_MS = 10_000;

/** When each running attempt first beat, on this worker's clock. */
const firstBeat = new WeakMap<Context, number>();

/**
 * The activity's heartbeat, from half its heartbeat timeout on. Every heartbeat that reaches the
 * server is a billed action on Temporal Cloud, and the SDK sends an attempt's first one at once
 * (later ones at most one per 80% of the timeout): a step shorter than half its timeout then sends
 * none, a longer one is still beaten well within it. Cancellation, which a heartbeat's answer
 * carries, arrives no later than before (the SDK held the second beat for 80% of the timeout).
 * A timeout under QUIET_START_MIN_MS beats from the start: callers beat every 1–2 s (the sandbox
 * runner every 2 s), so a 2 s timeout's first beat sent would land on the timeout itself.
 */
export function heartbeat(details?: unknown): void {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return; // outside an activity
  }
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  const now = Date.now();
  const since = firstBeat.get(ctx) ?? (firstBeat.set(ctx, now), now);
  if (timeoutMs && timeoutMs >= QUIET_START_MIN_MS && now - since < timeoutMs / 2) return;
  ctx.heartbeat(details);
}
