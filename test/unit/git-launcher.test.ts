// git runs through a small launcher process (src/workspace/launcher.ts): the same results and errors
// as a direct run, a new launcher after one dies, and none left once the worker's process is gone.
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { git, GitError } from '../../src/workspace/git.js';
import { launcherPid } from '../../src/workspace/launcher.js';
import { tempDirSync } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function gone(pid: number, ms = 10_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

describe('git through the launcher process', () => {
  it('gives what git gives: output for input, git’s message and exit code on failure', async () => {
    const input = 'some content\n';
    const expected = execFileSync('git', ['hash-object', '--stdin'], { input, encoding: 'utf8' }).trim();
    expect(await git(['hash-object', '--stdin'], { input })).toBe(expected);
    const dir = tempDirSync('agentrun-launcher-');
    const gitDir = `${dir}/private.git`;
    await git(['init', '--bare', '--quiet', gitDir]);
    const err = await git(['rev-parse', '--verify', 'no-such-ref'], { gitDir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect((err as GitError).code).toBe(128);
    expect((err as Error).message).toContain('Needed a single revision');
    const missing = await git(['status'], { gitDir, workTree: `${dir}/not-there` }).catch((e: unknown) => e);
    expect((missing as Error).message).toContain('does not exist');
    // The launcher is not the worker: its fork is its own.
    expect(launcherPid()).toBeGreaterThan(0);
    expect(launcherPid()).not.toBe(process.pid);
  });

  it('a launcher killed mid-call fails that call saying so; the next call starts a new one', async () => {
    await git(['--version']);
    const first = launcherPid()!;
    const inFlight = git(['hash-object', '--stdin'], { input: 'x' }).catch((e: unknown) => e);
    process.kill(first, 'SIGKILL');
    const outcome = await inFlight;
    // Either it had answered already or it failed with the launcher's reason, never hanging.
    if (outcome instanceof Error) expect(outcome.message).toContain('the process that starts git for the worker exited');
    expect(await gone(first)).toBe(true);
    expect(await git(['--version'])).toMatch(/^git version/);
    expect(launcherPid()).not.toBe(first);
  });

  it('the launcher ends with the process that started it', async () => {
    const script =
      "import { git } from './src/workspace/git.ts'; import { launcherPid } from './src/workspace/launcher.ts'; await git(['--version']); console.log(launcherPid());";
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const pid = Number(r.stdout.trim().split('\n').pop());
    expect(pid).toBeGreaterThan(0);
    expect(await gone(pid)).toBe(true);
  });
});
