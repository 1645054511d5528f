// The sticky queue timeout of a worker (`agentrun worker --sticky-queue-timeout`,
// AGENTRUN_STICKY_QUEUE_TIMEOUT). A worker keeps the conversations it ran in its cache, and Temporal
// sends their next workflow task to that worker's own (sticky) queue first. When the worker is gone
// without saying so (SIGKILL, a lost host), the task waits there this long before it goes to the
// shared queue, where any worker picks it up and replays the history. Too low, and a busy worker's
// tasks move on before it polls them: more replays and more history (a timed-out task each time).
// Light: the CLI validates the value without loading the worker.
import { parseDuration } from '../duration.js';

/** Temporal's own default, kept unless the operator sets one. */
export const DEFAULT_STICKY_QUEUE_TIMEOUT = '10s';
const MIN_MS = 1000;
const MAX_MS = 10 * 60_000;

/** Milliseconds of a sticky queue timeout given as `text` by `source` (a flag or a variable); a clear one-line error otherwise. */
export function parseStickyQueueTimeout(text: string, source: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch {
    ms = Number.NaN;
  }
  if (!(ms >= MIN_MS && ms <= MAX_MS)) throw new Error(`${source} must be a duration from 1s to 10m (e.g. 10s), got "${text}"`);
  return ms;
}

/** AGENTRUN_STICKY_QUEUE_TIMEOUT in milliseconds, or undefined (Temporal's default) when unset. */
export function stickyQueueTimeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const text = env.AGENTRUN_STICKY_QUEUE_TIMEOUT?.trim();
  return text ? parseStickyQueueTimeout(text, 'AGENTRUN_STICKY_QUEUE_TIMEOUT') : undefined;
}
