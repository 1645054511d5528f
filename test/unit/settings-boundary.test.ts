// What a repository's settings and a conversation's injected settings cannot get past the worker:
// an MCP server's or hook's env that would load code or find programs in the workspace, a
// workspace inside the worker's own directories (except the one placed for the conversation), a
// `sandbox: off` the worker does not allow.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unsandboxedAllowed } from '../../src/sandbox/preflight.js';
import { unsandboxedRefusal } from '../../src/sandbox/policy.js';
import { findProgram } from '../../src/sandbox/programs.js';
import { settingsEnvRefusal } from '../../src/sandbox/wrap.js';
import { assertWorkspaceSafe, workerPlaces } from '../../src/workspace/guard.js';
import { tempDir } from '../helpers/temp.js';

describe("a workspace command's env", () => {
  const ws = '/srv/ws';
  it('refuses loader variables and a PATH into the workspace or relative; passes the rest', () => {
    expect(settingsEnvRefusal({ FOO: 'bar', PATH: '/usr/local/bin:/usr/bin' }, ws, 'MCP server "x"')).toBeUndefined();
    for (const name of ['LD_PRELOAD', 'LD_LIBRARY_PATH', 'NODE_OPTIONS', 'BASH_ENV', 'ENV'])
      expect(settingsEnvRefusal({ [name]: '/x' }, ws, 'MCP server "x"')).toMatch(new RegExp(`^MCP server "x": its env sets ${name}, which loads code`));
    expect(settingsEnvRefusal({ PATH: 'tools:/usr/bin' }, ws, 'h')).toMatch(/"tools", a relative entry/);
    expect(settingsEnvRefusal({ PATH: '/usr/bin::/bin' }, ws, 'h')).toMatch(/"", a relative entry/);
    expect(settingsEnvRefusal({ PATH: '/srv/ws/bin:/usr/bin' }, ws, 'h')).toMatch(/inside the workspace/);
    expect(settingsEnvRefusal({ PATH: '/srv/ws/../ws/bin' }, ws, 'h')).toMatch(/inside the workspace/);
    expect(settingsEnvRefusal({ 'A=B': 'x' }, ws, 'h')).toMatch(/not a variable name/);
  });

  it('programs are found on absolute PATH entries only', () => {
    expect(findProgram('sh', '.:bin:/bin')).toBe('/bin/sh');
    expect(findProgram('no-such-program-here', '/usr/bin:/bin')).toBeUndefined();
  });
});

describe("the worker's own directories", () => {
  it('a workspace inside AGENTRUN_HOME, the cache or the workspaces directory is refused, except the one placed for the conversation', async () => {
    const home = await tempDir('agentrun-guard-home-');
    const inside = ['checkpoints/abc.git', 'cache/0123', 'workspaces/other-conversation'];
    for (const d of inside) {
      await mkdir(join(home, d), { recursive: true });
      expect(() => assertWorkspaceSafe(join(home, d), workerPlaces(home))).toThrow(/is inside AGENTRUN_HOME/);
    }
    expect(() => assertWorkspaceSafe(join(home, 'workspaces/mine'), workerPlaces(home, [join(home, 'workspaces/mine')]))).not.toThrow();
    expect(() => assertWorkspaceSafe(join(home, 'workspaces/other-conversation'), workerPlaces(home, [join(home, 'workspaces/mine')]))).toThrow();
    // A cache or workspaces directory outside AGENTRUN_HOME is named as such.
    const elsewhere = await tempDir('agentrun-guard-cache-');
    await mkdir(join(elsewhere, 'entry'));
    process.env.AGENTRUN_CACHE_DIR = elsewhere;
    try {
      expect(() => assertWorkspaceSafe(join(elsewhere, 'entry'), workerPlaces(home))).toThrow(/is inside the dependency cache directory/);
      expect(() => assertWorkspaceSafe(elsewhere, workerPlaces(home))).toThrow(/is the dependency cache directory/);
    } finally {
      delete process.env.AGENTRUN_CACHE_DIR;
    }
  });
});

describe('sandbox off', () => {
  it('only where the worker allows it', () => {
    expect(unsandboxedRefusal('off', false)).toMatch(/^--sandbox off: this worker does not run commands unconfined.*--allow-unsandboxed/);
    expect(unsandboxedRefusal('off', true)).toBeUndefined();
    expect(unsandboxedRefusal('read-only', false)).toBeUndefined();
    expect(unsandboxedAllowed({})).toBe(false);
    expect(unsandboxedAllowed({ AGENTRUN_ALLOW_UNSANDBOXED: '1' })).toBe(true);
    expect(unsandboxedAllowed({ AGENTRUN_SANDBOX: 'off' })).toBe(true);
  });
});
