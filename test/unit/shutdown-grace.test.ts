// The worker's shutdown grace (`agentrun worker --shutdown-grace`, AGENTRUN_SHUTDOWN_GRACE):
// parsed as a duration within bounds, a bad one named in one line.
import { describe, expect, it } from 'vitest';
import { parseShutdownGrace, shutdownGraceFromEnv } from '../../src/runtime/shutdown-grace.js';

describe('shutdown grace', () => {
  it('takes durations from 0s to 1h', () => {
    expect(parseShutdownGrace('0s', '--shutdown-grace')).toBe(0);
    expect(parseShutdownGrace('1.5s', '--shutdown-grace')).toBe(1500);
    expect(parseShutdownGrace('10m', '--shutdown-grace')).toBe(600_000);
    expect(parseShutdownGrace('1h', '--shutdown-grace')).toBe(3_600_000);
  });

  it('refuses anything else, naming where it came from', () => {
    for (const bad of ['2h', 'forever', '-1s', ''])
      expect(() => parseShutdownGrace(bad, '--shutdown-grace'), bad).toThrow(
        `--shutdown-grace must be a duration from 0s to 1h (e.g. 30s; a plain number is milliseconds), got "${bad}"`,
      );
  });

  it("reads AGENTRUN_SHUTDOWN_GRACE; unset or empty keeps the caller's default", () => {
    expect(shutdownGraceFromEnv({})).toBeUndefined();
    expect(shutdownGraceFromEnv({ AGENTRUN_SHUTDOWN_GRACE: '' })).toBeUndefined();
    expect(shutdownGraceFromEnv({ AGENTRUN_SHUTDOWN_GRACE: '2m' })).toBe(120_000);
    expect(() => shutdownGraceFromEnv({ AGENTRUN_SHUTDOWN_GRACE: 'long' })).toThrow(/^AGENTRUN_SHUTDOWN_GRACE must be a duration/);
  });
});
