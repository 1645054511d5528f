import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { isLivePoller } from '../../src/client/pollers.js';

describe('isLivePoller', () => {
  const now = Date.now();
  const recent = { seconds: Math.floor(now / 1000) - 5 };

  it('does not count the poller of a process of this host that has exited (a `run` that returned)', () => {
    const exited = spawnSync(process.execPath, ['-e', '0']).pid!;
    expect(isLivePoller({ identity: `${exited}@${hostname()}`, lastAccessTime: recent }, now)).toBe(false);
    expect(isLivePoller({ identity: `${process.pid}@${hostname()}`, lastAccessTime: recent }, now)).toBe(true);
  });

  it('counts another host’s recent poller, not one silent for longer than a long poll', () => {
    expect(isLivePoller({ identity: '12345@another-host', lastAccessTime: recent }, now)).toBe(true);
    expect(isLivePoller({ identity: '12345@another-host', lastAccessTime: { seconds: Math.floor(now / 1000) - 200 } }, now)).toBe(false);
    // Protobuf's Long, as the client returns it.
    const long = { toNumber: () => Math.floor(now / 1000) - 200 };
    expect(isLivePoller({ identity: 'worker-a', lastAccessTime: { seconds: long } }, now)).toBe(false);
  });
});
