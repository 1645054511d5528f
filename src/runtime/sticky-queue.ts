// The sticky queue timeout of a worker (`agentrun worker --sticky-queue-timeout`,
// AGENTRUN_STICKY_QUEUE_TIMEOUT). A worker keeps the conversations it ran in its cache, and Temporal
// sends their next workflow task to that worker's own (sticky) queue first. When the worker is gone
// without saying so (SIGKILL, a lost host), the task waits there this long before it goes to the
// shared queue, where any worker picks it up and replays the history. Too low, and a busy worker's
// tasks move on before it polls them: more replays and more history (a timed-out task each time).
// Light: the CLI validates the value without loading the worker.
import { durationSettingFromEnv, parseDurationSetting, type DurationRange } from '../duration.js';

const RANGE: DurationRange = { minMs: 1000, maxMs: 10 * 60_000, example: '10s' };

/** Milliseconds of a sticky queue timeout given as `text` by `source` (a flag or a variable); a clear one-line error otherwise. */
export function parseStickyQueueTimeout(text: string, source: string): number {
  return parseDurationSetting(text, source, RANGE);
}

/** AGENTRUN_STICKY_QUEUE_TIMEOUT in milliseconds, or undefined (Temporal's default) when unset. */
export function stickyQueueTimeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return durationSettingFromEnv(env, 'AGENTRUN_STICKY_QUEUE_TIMEOUT', RANGE);
}
