// execute_command with real processes: exit codes, timeouts that kill the whole group, 1 GB of
// output kept as head and tail, cancellation, secrets stripped, heartbeats.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_LIMITS, stripSecrets } from '../../src/tools/execute-command.js';
import { checkCommand, runTool, type ToolContext } from '../../src/tools/index.js';

let ws: string;
beforeAll(() => {
  ws = mkdtempSync(path.join(os.tmpdir(), 'agentrun-cmd-'));
  execFileSync('git', ['init', '-q', ws]);
});
afterAll(() => rmSync(ws, { recursive: true, force: true }));

const run = (args: Record<string, unknown>, ctx: Partial<ToolContext> = {}) => runTool('execute_command', { requires_approval: 'false', ...args }, { workspace: ws, ...ctx });

/** Running (a zombie awaiting its reaper counts as dead: the container's init may never reap it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('execute_command', () => {
  it('runs in the workspace and reports the exit code', async () => {
    const r = await run({ command: 'pwd && echo out && echo err >&2' });
    expect(r.ok).toBe(true);
    expect(r.output).toMatch(/^The command exited with code 0\.\nOutput:\n/);
    expect(r.output).toContain(execFileSync('realpath', [ws]).toString().trim());
    expect(r.output).toContain('out\n');
    expect(r.output).toContain('err\n');
    const f = await run({ command: 'exit 3' });
    expect(f.ok).toBe(false);
    expect(f.output).toBe('The command exited with code 3.\n(no output)');
    expect(f.meta?.exitCode).toBe(3);
  });

  it('gives commands no stdin, so interactive ones end instead of hanging', async () => {
    const r = await run({ command: 'read x; echo "got:$x"' });
    expect(r.output).toContain('got:');
  });

  it('kills a command that never ends, and its children, at the timeout', async () => {
    const t0 = Date.now();
    // The child ignores SIGTERM, so only the SIGKILL of the whole group ends it.
    const r = await run({ command: "(trap '' TERM; sleep 300) & echo child:$!; sleep 300", timeout_seconds: '1' });
    const took = Date.now() - t0;
    expect(r.ok).toBe(false);
    expect(r.meta?.timedOut).toBe(true);
    expect(r.output).toMatch(/timed out after 1 s; it and its child processes were killed/);
    expect(took).toBeLessThan(1000 + COMMAND_LIMITS.killGraceMs + 3000);
    const child = Number(/child:(\d+)/.exec(r.output)![1]);
    expect(alive(child)).toBe(false);
  });

  it('ends background processes left behind when the shell exits', async () => {
    const r = await run({ command: 'sleep 300 & echo bg:$!' });
    expect(r.ok).toBe(true);
    const bg = Number(/bg:(\d+)/.exec(r.output)![1]);
    await new Promise((res) => setTimeout(res, 200));
    expect(alive(bg)).toBe(false);
  });

  it('keeps 1 GB of output as head and tail with bounded memory', async () => {
    const before = process.memoryUsage().rss;
    const t0 = Date.now();
    const r = await run({ command: 'yes | head -c 1G; echo; echo THE-END' });
    const took = Date.now() - t0;
    expect(r.ok).toBe(true);
    expect(r.meta?.outputBytes).toBe(1024 ** 3 + 1 + 8);
    expect(r.output).toMatch(/\[\.\.\. 1\.00 GB of output omitted; the first 20\.0 KB and the last 20\.0 KB are shown \.\.\.\]/);
    expect(r.output.trimEnd().endsWith('THE-END')).toBe(true);
    expect(r.output.length).toBeLessThan(45_000);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    expect(took).toBeLessThan(60_000);
  });

  it('is cancelled through the abort signal, killing the group', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const t0 = Date.now();
    const r = await run({ command: 'sleep 300' }, { signal: ac.signal });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r.ok).toBe(false);
    expect(r.meta?.cancelled).toBe(true);
    expect(r.output).toMatch(/cancelled/);
  });

  it('strips secrets from the environment', async () => {
    const env = { PATH: process.env.PATH, HOME: '/home/x', OPENAI_API_KEY: 'sk-1', OPENAI_BASE_URL: 'http://x', GITHUB_TOKEN: 't', DB_PASSWORD: 'p', DATABASE_URL: 'postgres://u:p@h/db', MY_SECRET: 's', AWS_SECRET_ACCESS_KEY: 'a', GOOGLE_CREDENTIALS: 'c', REDIS: 'redis://user:pw@host:6379', KEEP_ME: 'yes' };
    const r = await run({ command: 'env | sort' }, { env });
    expect(r.output).toContain('KEEP_ME=yes');
    expect(r.output).toContain('HOME=/home/x');
    for (const k of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'GITHUB_TOKEN', 'DB_PASSWORD', 'DATABASE_URL', 'MY_SECRET', 'AWS_SECRET_ACCESS_KEY', 'GOOGLE_CREDENTIALS', 'REDIS=']) {
      expect(r.output).not.toContain(k);
    }
    expect(Object.keys(stripSecrets({ A_KEY: '1', B: '2' }))).toEqual(['B']);
  });

  it('heartbeats while it runs', async () => {
    const beats: unknown[] = [];
    await run({ command: `sleep ${(COMMAND_LIMITS.heartbeatMs + 300) / 1000}` }, { heartbeat: (d) => beats.push(d) });
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats.at(-1)).toMatchObject({ elapsedMs: expect.any(Number) });
  });

  it('validates requires_approval and timeout_seconds as the model sends them', async () => {
    const r = await runTool('execute_command', { command: 'true', requires_approval: 'maybe' }, { workspace: ws });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/Parameter "requires_approval": expected true or false/);
    const t = await runTool('execute_command', { command: 'true', requires_approval: 'no', timeout_seconds: 'soon' }, { workspace: ws });
    expect(t.output).toMatch(/Parameter "timeout_seconds": expected a whole number/);
  });

  it('never runs a fork bomb in tests: the checker blocks it as dangerous', () => {
    const c = checkCommand(':(){ :|:& };:', ws);
    expect(c.dangerous).toBe(true);
    expect(c.reasons).toContain('is a fork bomb');
    expect(c.repeatable).toBe(false);
  });
});
