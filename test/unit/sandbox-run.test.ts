// The one command runner (src/sandbox/run.ts) with real processes through the launcher: a shell
// hook's input on stdin, its background processes left alone, a command's ended with it, and a
// timeout that kills the group.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX, runInSandbox, runProgram } from '../../src/sandbox/index.js';
import { tempDirSync } from '../helpers/temp.js';

let ws: string;
beforeAll(() => {
  ws = tempDirSync('agentrun-run-');
  execFileSync('git', ['init', '-q', ws]);
});
afterAll(() => rmSync(ws, { recursive: true, force: true }));

const waitFor = async (check: () => boolean, ms: number) => {
  for (const end = Date.now() + ms; Date.now() < end && !check();) await new Promise((r) => setTimeout(r, 100));
  return check();
};

describe('runProgram', () => {
  it('gives the program its input on stdin and reports its exit code and outputs apart', async () => {
    let out = '';
    let err = '';
    const r = await runProgram(
      { command: '/bin/sh', args: ['-c', 'read line; echo "got $line"; echo oops >&2; exit 4'], cwd: ws, input: 'hello\n' },
      { timeoutMs: 10_000, onOutput: (c, fd) => void (fd === 1 ? (out += c) : (err += c)) },
    );
    expect(r).toMatchObject({ exitCode: 4, timedOut: false, cancelled: false });
    expect(out).toBe('got hello\n');
    expect(err).toBe('oops\n');
  });

  it('leaves what the program started in the background when asked to (keepBackground)', async () => {
    const mark = join(ws, 'background-done');
    const r = await runProgram(
      { command: '/bin/sh', args: ['-c', `(sleep 1; touch ${mark}) >/dev/null 2>&1 &`], cwd: ws },
      { timeoutMs: 10_000, keepBackground: true },
    );
    expect(r.exitCode).toBe(0);
    expect(await waitFor(() => existsSync(mark), 5000)).toBe(true);
  });

  it('kills the whole group on timeout and says so', async () => {
    const mark = join(ws, 'timeout-survivor');
    const r = await runProgram(
      { command: '/bin/sh', args: ['-c', `(sleep 2; touch ${mark}) & sleep 30`], cwd: ws },
      { timeoutMs: 300, killGraceMs: 0, closeWaitMs: 1000 },
    );
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(await waitFor(() => existsSync(mark), 3000)).toBe(false);
  });

  it('starts nothing when its step was cancelled before it started, and still releases what was prepared for it', async () => {
    const mark = join(ws, 'program-aborted-before-start');
    const aborted = new AbortController();
    aborted.abort();
    let cleanedUp = 0;
    const r = await runProgram(
      { command: '/bin/sh', args: ['-c', `sleep 2; touch ${mark}`], cwd: ws, cleanup: () => void cleanedUp++ },
      { timeoutMs: 20_000, signal: aborted.signal },
    );
    expect(r).toMatchObject({ cancelled: true, exitCode: null, ms: 0 });
    expect(cleanedUp).toBe(1);
    expect(await waitFor(() => existsSync(mark), 3000)).toBe(false);
  });

  it('reports a program that cannot start', async () => {
    const r = await runProgram({ command: join(ws, 'no-such-program'), args: [], cwd: ws }, { timeoutMs: 5000 });
    expect(r.error?.message).toMatch(/ENOENT/);
  });
});

describe('runInSandbox', () => {
  it('ends what the command left in the background when it exits', async () => {
    const mark = join(ws, 'sandbox-survivor');
    const r = await runInSandbox({
      command: '(sleep 1; touch sandbox-survivor) >/dev/null 2>&1 & echo started',
      workspace: execFileSync('realpath', [ws]).toString().trim(),
      settings: DEFAULT_SANDBOX,
      timeoutSec: 20,
    });
    expect(r.exitCode).toBe(0);
    expect(await waitFor(() => existsSync(mark), 2500)).toBe(false);
  });

  it('a signal aborted before the command started (its step was cancelled or superseded while preparing) ends it at once', async () => {
    const mark = join(ws, 'aborted-before-start');
    const aborted = new AbortController();
    aborted.abort();
    const r = await runInSandbox(
      {
        command: 'sleep 2; touch aborted-before-start',
        workspace: execFileSync('realpath', [ws]).toString().trim(),
        settings: DEFAULT_SANDBOX,
        timeoutSec: 20,
      },
      { signal: aborted.signal },
    );
    // Never started: no time ran, and the command's file never appears.
    expect(r).toMatchObject({ cancelled: true, exitCode: null, ms: 0 });
    expect(await waitFor(() => existsSync(mark), 3000)).toBe(false);
  });
});
