// Infrastructure faults (database unreachable, disk full, git locked) are not the
// conversation's fault: the session stalls on them and retries until they clear, instead of
// failing. Everything else keeps its own retry policy.
import { ApplicationFailure } from '@temporalio/common';
import { BrokenCheckpointRepository } from '../src/workspace/checkpoint.js';
import { UnreadableIgnoreFile } from '../src/workspace/fifo-guard.js';
import { INFRASTRUCTURE_ERROR } from '../src/types.js';

const NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOSPC',
  'EDQUOT',
  'EROFS',
]);
const MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /connection refused/i,
  /no space left on device/i,
  /could not connect/i,
  /the database system is (starting|shutting) up/i,
  /index\.lock/i,
  /Client has encountered a connection error/i,
];

/** True for errors retrying can fix once the infrastructure is back. */
function isInfrastructureError(err: unknown): boolean {
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 6; e = e.cause as typeof e, depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (NODE_CODES.has(code)) return true;
    // SQLSTATE classes: 08 connection, 53 insufficient resources (disk full, out of memory), 57P admin shutdown / cannot connect now.
    if (/^(08|53)[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code)) return true;
    if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string))) return true;
  }
  return false;
}

/**
 * Wrap an activity: infrastructure faults leave it as a typed, retryable failure the workflow
 * recognises; a fault no retry repairs (a broken private checkpoint repository, a FIFO as the
 * workspace's root .gitignore) as a non-retryable one.
 */
export function stallOnInfrastructure<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      if (err instanceof BrokenCheckpointRepository || err instanceof UnreadableIgnoreFile) throw ApplicationFailure.nonRetryable(err.message, err.name);
      if (err instanceof ApplicationFailure || !isInfrastructureError(err)) throw err;
      throw ApplicationFailure.retryable(`infrastructure fault: ${(err as Error).message}`, INFRASTRUCTURE_ERROR);
    }
  };
}
