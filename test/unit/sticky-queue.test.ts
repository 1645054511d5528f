// The worker's sticky queue timeout (`agentrun worker --sticky-queue-timeout`,
// AGENTRUN_STICKY_QUEUE_TIMEOUT): parsed as a duration within bounds, a bad one named in one line.
import { describe, expect, it } from 'vitest';
import { parseStickyQueueTimeout, stickyQueueTimeoutFromEnv } from '../../src/runtime/sticky-queue.js';

describe('sticky queue timeout', () => {
  it('takes durations from 1s to 10m', () => {
    expect(parseStickyQueueTimeout('1s', '--sticky-queue-timeout')).toBe(1000);
    expect(parseStickyQueueTimeout('2.5s', '--sticky-queue-timeout')).toBe(2500);
    expect(parseStickyQueueTimeout('1500', '--sticky-queue-timeout')).toBe(1500);
    expect(parseStickyQueueTimeout('10m', '--sticky-queue-timeout')).toBe(600_000);
  });

  it('refuses anything else, naming where it came from', () => {
    for (const bad of ['0s', '500ms', '11m', '1h', 'soon', '-1s', ''])
      expect(() => parseStickyQueueTimeout(bad, '--sticky-queue-timeout'), bad).toThrow(
        `--sticky-queue-timeout must be a duration from 1s to 10m (e.g. 10s; a plain number is milliseconds), got "${bad}"`,
      );
  });

  it("reads AGENTRUN_STICKY_QUEUE_TIMEOUT; unset or empty keeps Temporal's default", () => {
    expect(stickyQueueTimeoutFromEnv({})).toBeUndefined();
    expect(stickyQueueTimeoutFromEnv({ AGENTRUN_STICKY_QUEUE_TIMEOUT: ' ' })).toBeUndefined();
    expect(stickyQueueTimeoutFromEnv({ AGENTRUN_STICKY_QUEUE_TIMEOUT: '3s' })).toBe(3000);
    expect(() => stickyQueueTimeoutFromEnv({ AGENTRUN_STICKY_QUEUE_TIMEOUT: 'fast' })).toThrow(/^AGENTRUN_STICKY_QUEUE_TIMEOUT must be a duration/);
  });
});
