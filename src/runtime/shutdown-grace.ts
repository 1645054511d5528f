// The shutdown grace of a worker (`agentrun worker --shutdown-grace`, AGENTRUN_SHUTDOWN_GRACE): on
// SIGTERM the worker stops taking work and gives the activities it runs this long to finish; then
// they are cancelled and retried on another worker (every activity is safe to run twice), and the
// worker hands the conversations whose workspaces it held to other hosts. Longer: a model stream or
// a command more often finishes instead of being redone, and a drain takes that much longer; the
// container's own grace (Kubernetes terminationGracePeriodSeconds, compose stop_grace_period) must
// exceed it. Light: the CLI validates the value without loading the worker.
import { durationSettingFromEnv, parseDurationSetting, type DurationRange } from '../duration.js';

/** `agentrun worker`'s (and `run`'s and `dev`'s) unless the operator sets one. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;
const RANGE: DurationRange = { minMs: 0, maxMs: 60 * 60_000, example: '30s' };

/** Milliseconds of a shutdown grace given as `text` by `source` (a flag or a variable); a clear one-line error otherwise. */
export function parseShutdownGrace(text: string, source: string): number {
  return parseDurationSetting(text, source, RANGE);
}

/** AGENTRUN_SHUTDOWN_GRACE in milliseconds, or undefined (the caller's default) when unset. */
export function shutdownGraceFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return durationSettingFromEnv(env, 'AGENTRUN_SHUTDOWN_GRACE', RANGE);
}
