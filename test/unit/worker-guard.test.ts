// What a worker never hands a conversation: variables it did not allow (`--allow-env`) or that
// are its own, and a workspace that is, or contains, its home, AGENTRUN_HOME or `/`.
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/errors.js';
import { runRequestFromFlags } from '../../src/cli/options.js';
import { allowedEnv, commandEnv } from '../../src/sandbox/env.js';
import { envRefusal, neverPassed, type SandboxSettings } from '../../src/sandbox/policy.js';
import { assertWorkspaceSafe, UnsafeWorkspaceError } from '../../src/workspace/guard.js';
import { tempDir } from '../helpers/temp.js';

const settings = (env: string[], allowedEnv?: string[]): SandboxSettings => ({
  policy: 'workspace-write',
  network: 'off',
  env,
  ...(allowedEnv ? { allowedEnv } : {}),
});
const BASE = {
  PATH: '/usr/bin',
  FOO: 'foo',
  BAR: 'bar',
  DATABASE_URL: 'postgres://x',
  TEMPORAL_ADDRESS: 'h:7233',
  AGENTRUN_X: 'x',
  PGPASSWORD: 'pw',
  NPM_TOKEN: 't',
};

describe('--env and --allow-env', () => {
  it.each([
    // [asked, allowed, passed]
    [['FOO'], ['FOO'], ['FOO']],
    [['FOO', 'BAR'], ['FOO'], ['FOO']],
    [['FOO'], undefined, []],
    [['FOO'], [], []],
    [['NPM_TOKEN'], ['NPM_TOKEN'], ['NPM_TOKEN']],
    // Never, even when a list (built by hand, not by allowedEnv) names them.
    [['DATABASE_URL', 'TEMPORAL_ADDRESS', 'AGENTRUN_X', 'PGPASSWORD'], ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'AGENTRUN_X', 'PGPASSWORD'], []],
    [['bad-name'], ['bad-name'], []],
  ])('asked %j, allowed %j → passes %j', (asked, allowed, passed) => {
    const env = commandEnv(settings(asked, allowed), '/tmp/home', BASE);
    const extra = Object.keys(env).filter((k) => k in BASE && k !== 'PATH');
    expect(extra.sort()).toEqual([...passed].sort());
  });

  it("a command's PATH keeps only the sandbox root's and the operator's toolchain directories: the worker's layout stays unknown", () => {
    const workerPath = '/root/.nvm/versions/node/v22/bin:/work/agentrun/node_modules/.bin:/usr/local/bin:/usr/bin:/opt/go/bin:/home/ci/bin:/bin:/usr/bin';
    expect(commandEnv(settings([], []), '/tmp/home', { PATH: workerPath }).PATH).toBe('/usr/local/bin:/usr/bin:/bin');
    expect(commandEnv(settings([], []), '/tmp/home', { PATH: workerPath, AGENTRUN_SANDBOX_PATHS: '/opt/go' }).PATH).toBe(
      '/usr/local/bin:/usr/bin:/opt/go/bin:/bin',
    );
    expect(commandEnv(settings([], []), '/tmp/home', { PATH: '/root/bin' }).PATH).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
  });

  it('names the worker can never pass, with why', () => {
    for (const n of ['OPENAI_API_KEY', 'DATABASE_URL', 'PGPASSWORD', 'TEMPORAL_API_KEY', 'TEMPORAL_ADDRESS', 'AGENTRUN_HOME'])
      expect(neverPassed(n)).toBeTruthy();
    for (const n of ['NPM_TOKEN', 'GITHUB_TOKEN', 'OPENAI_BASE_URL', 'MY_DATABASE_URL', 'FOO']) expect(neverPassed(n)).toBeUndefined();
  });

  it('refuses with one line: the worker does not allow it, or it is the worker’s own', () => {
    expect(envRefusal(['FOO'], ['FOO'])).toBeUndefined();
    expect(envRefusal(['FOO', 'BAR'], ['FOO'])).toBe('--env BAR: this worker does not pass BAR to commands; start the worker with --allow-env BAR');
    expect(envRefusal(['DATABASE_URL'], ['FOO'])).toBe(
      "--env DATABASE_URL: commands never get DATABASE_URL (the worker's database); pass a variable of their own instead",
    );
    // Without a worker list (the CLI): only the worker's own names are refused.
    expect(envRefusal(['FOO'])).toBeUndefined();
    expect(envRefusal(['TEMPORAL_TLS_KEY'])).toMatch(/^--env TEMPORAL_TLS_KEY: commands never get TEMPORAL_TLS_KEY \(the worker's Temporal connection\)/);
  });

  it('reads the worker list from --allow-env or AGENTRUN_ALLOW_ENV, refusing bad and own names', () => {
    expect(allowedEnv(undefined, {})).toEqual([]);
    expect(allowedEnv(undefined, { AGENTRUN_ALLOW_ENV: 'FOO, BAR,,FOO' })).toEqual(['FOO', 'BAR']);
    expect(allowedEnv(['NPM_TOKEN'], { AGENTRUN_ALLOW_ENV: 'FOO' })).toEqual(['NPM_TOKEN']);
    expect(() => allowedEnv(['DATABASE_URL'])).toThrow("--allow-env DATABASE_URL: DATABASE_URL is the worker's database and is never passed to commands");
    expect(() => allowedEnv(undefined, { AGENTRUN_ALLOW_ENV: 'AGENTRUN_HOME' })).toThrow(/never passed/);
    expect(() => allowedEnv(['A-B'])).toThrow('--allow-env "A-B": expected an environment variable name');
  });

  it('the CLI refuses the worker’s own names up front with one line', async () => {
    const ws = await tempDir('guard-ws-');
    const model = 'scripted:examples/quickstart.yaml';
    await expect(runRequestFromFlags({ task: 't', workspace: ws, model, env: ['FOO', 'DATABASE_URL'] })).rejects.toThrow(CliError);
    await expect(runRequestFromFlags({ task: 't', workspace: ws, model, env: ['OPENAI_API_KEY'] })).rejects.toThrow(
      /^--env OPENAI_API_KEY: commands never get/,
    );
    // Any other name is the worker's to decide.
    expect((await runRequestFromFlags({ task: 't', workspace: ws, model, env: ['FOO'] })).config.env).toEqual(['FOO']);
  });
});

describe('assertWorkspaceSafe', () => {
  async function places() {
    const root = await tempDir('guard-');
    const home = join(root, 'home', 'u');
    const agentrunHome = join(root, 'state', '.agentrun');
    await mkdir(join(home, 'project'), { recursive: true });
    await mkdir(agentrunHome, { recursive: true });
    await symlink(home, join(root, 'link-to-home'));
    await symlink(join(home, 'project'), join(root, 'link-to-project'));
    return { root, home, agentrunHome, p: { home: [home], agentrunHome } };
  }

  it('refuses /, a home directory, AGENTRUN_HOME and what contains them, by real path', async () => {
    const { root, home, agentrunHome, p } = await places();
    const refused: [string, RegExp][] = [
      ['/', /^workspace \/ is the root directory/],
      [home, /is the home directory/],
      [join(home, '..'), /contains the home directory/],
      [join(home, 'project', '..'), /is the home directory/],
      [join(root, 'link-to-home'), /is the home directory/],
      [agentrunHome, /is AGENTRUN_HOME/],
      [join(agentrunHome, '..'), /contains AGENTRUN_HOME/],
      [root, /contains the home directory/],
    ];
    for (const [dir, why] of refused) {
      let err: unknown;
      try {
        assertWorkspaceSafe(dir, p);
      } catch (e) {
        err = e;
      }
      expect(err, dir).toBeInstanceOf(UnsafeWorkspaceError);
      expect((err as Error).message, dir).toMatch(why);
      expect((err as Error).message).not.toContain('\n');
    }
  });

  it('lets a project inside the home through, also through a symlink', async () => {
    const { root, home, agentrunHome, p } = await places();
    for (const dir of [join(home, 'project'), join(root, 'link-to-project'), join(agentrunHome, 'workspaces', 'conv-1')]) {
      expect(() => assertWorkspaceSafe(dir, p), dir).not.toThrow();
    }
  });

  it('the CLI refuses such a workspace with exit 2 and one line', async () => {
    const { home, agentrunHome } = await places();
    const saved = { HOME: process.env.HOME, AGENTRUN_HOME: process.env.AGENTRUN_HOME };
    process.env.HOME = home;
    process.env.AGENTRUN_HOME = agentrunHome;
    try {
      const err = await runRequestFromFlags({ task: 't', workspace: join(agentrunHome, '..'), model: 'scripted:examples/quickstart.yaml' }).catch((e) => e);
      expect(err).toBeInstanceOf(CliError);
      expect((err as CliError).exitCode).toBe(2);
      expect((err as Error).message).toMatch(/contains AGENTRUN_HOME/);
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });
});
