// git and commands run through a small launcher process (src/runtime/launcher.ts): git's results
// and errors as a direct run's, a command's output, exit and signals as spawn's, a new launcher
// after one dies (a command it ran reported killed, none of its processes left), and no launcher
// left once the worker's process is gone.
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { git, GitError } from '../../src/workspace/git.js';
import { launchCommand, launcherPid, type CommandProcess } from '../../src/runtime/launcher.js';
import { existsSync, readFileSync } from 'node:fs';
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
      "import { git } from './src/workspace/git.ts'; import { launcherPid } from './src/runtime/launcher.ts'; await git(['--version']); console.log(launcherPid());";
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const pid = Number(r.stdout.trim().split('\n').pop());
    expect(pid).toBeGreaterThan(0);
    expect(await gone(pid)).toBe(true);
  });
});

const ended = (c: CommandProcess) =>
  new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
    c.once('error', reject);
    c.once('close', (code, signal) => resolve({ code, signal }));
  });
const parentOf = (pid: number) => Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

describe('commands through the launcher process', () => {
  it('a command started by the launcher, in its own process group: its output, exit code and cwd', async () => {
    const dir = tempDirSync('agentrun-launcher-cmd-');
    const c = launchCommand({ file: '/bin/sh', args: ['-c', 'echo out; echo err >&2; pwd; echo $$ > pid; sleep 0.2; exit 3'], cwd: dir, env: {}, ipc: false });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    c.stdout.on('data', (d: Buffer) => out.push(d));
    c.stderr.on('data', (d: Buffer) => err.push(d));
    const started = new Promise((r) => c.once('spawn', r));
    await started;
    expect(c.pid).toBeGreaterThan(0);
    // Started by the launcher, not by this process (no fork of the worker), and detached: its own group.
    expect(parentOf(c.pid!)).toBe(launcherPid());
    expect(execFileSync('ps', ['-o', 'pgid=', '-p', String(c.pid)], { encoding: 'utf8' }).trim()).toBe(String(c.pid));
    expect(await ended(c)).toEqual({ code: 3, signal: null });
    expect(Buffer.concat(out).toString()).toBe(`out\n${dir}\n`);
    expect(Buffer.concat(err).toString()).toBe('err\n');
  });

  it('a program that does not exist is an error event with its code', async () => {
    const c = launchCommand({ file: '/no/such/program', args: [], cwd: '/', env: {}, ipc: false });
    const e = await ended(c).catch((x: unknown) => x);
    expect((e as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('a signal asked for before the command started reaches it once it has', async () => {
    const c = launchCommand({ file: '/bin/sleep', args: ['30'], cwd: '/', env: {}, ipc: false });
    c.killGroup('SIGTERM');
    expect(await ended(c)).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('a launcher killed while a command runs: the command is reported killed and none of its processes is left', async () => {
    const dir = tempDirSync('agentrun-launcher-lost-');
    const c = launchCommand({ file: '/bin/sh', args: ['-c', 'sleep 60 & echo $! > child; wait'], cwd: dir, env: {}, ipc: false });
    await new Promise((r) => c.once('spawn', r));
    const launcher = launcherPid()!;
    const result = ended(c);
    // Killed once the shell has started its background child and written its pid (not before: on a
    // busy machine the kill could come first, and there would be no child to look for).
    const childPid = () => Number(existsSync(`${dir}/child`) ? readFileSync(`${dir}/child`, 'utf8') : '');
    for (const end = Date.now() + 30_000; !(childPid() > 0); await new Promise((r) => setTimeout(r, 20)))
      if (Date.now() > end) throw new Error('the command did not start its background child');
    const child = childPid();
    process.kill(launcher, 'SIGKILL');
    expect(await result).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await gone(c.pid!)).toBe(true);
    expect(await gone(child)).toBe(true);
    // The next command gets a new launcher.
    const next = launchCommand({ file: '/bin/true', args: [], cwd: '/', env: {}, ipc: false });
    expect(await ended(next)).toEqual({ code: 0, signal: null });
    expect(launcherPid()).not.toBe(launcher);
  });
});
