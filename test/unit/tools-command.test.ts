// execute_command with real processes (in the real sandbox): exit codes, timeouts that kill every
// process of the command, 1 GB of output kept as head and tail, cancellation, an allowlisted
// environment, heartbeats.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/sandbox/index.js';
import { COMMAND_LIMITS } from '../../src/tools/execute-command.js';
import { checkCommand, runTool, type ToolContext } from '../../src/tools/index.js';
import { processesWith } from '../helpers/processes.js';
import { tempDirSync } from '../helpers/temp.js';
import { launcherPid } from '../../src/runtime/launcher.js';

let ws: string;
beforeAll(() => {
  ws = tempDirSync('agentrun-cmd-');
  execFileSync('git', ['init', '-q', ws]);
});
afterAll(() => rmSync(ws, { recursive: true, force: true }));

const run = (args: Record<string, unknown>, ctx: Partial<ToolContext> = {}) =>
  runTool('execute_command', { requires_approval: 'false', ...args }, { workspace: ws, ...ctx });

describe('execute_command', () => {
  it('runs in the workspace and reports the exit code', async () => {
    const r = await run({ command: 'pwd && echo out && echo err >&2' });
    expect(r.ok).toBe(true);
    expect(r.output).toMatch(/^The command exited with code 0\.\nOutput:\n/);
    // Every workspace is at one fixed path inside the sandbox.
    expect(r.output).toContain('/workspace\n');
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
    const r = await run({ command: "(trap '' TERM; exec sleep 301.5) & sleep 300", timeout_seconds: '1' });
    const took = Date.now() - t0;
    expect(r.ok).toBe(false);
    expect(r.meta?.timedOut).toBe(true);
    expect(r.output).toMatch(/timed out after 1 s; it and its child processes were killed/);
    expect(took).toBeLessThan(1000 + COMMAND_LIMITS.killGraceMs + 3000);
    expect(processesWith('sleep 301.5')).toEqual([]);
  });

  it('ends background processes left behind when the shell exits', async () => {
    const r = await run({ command: 'sleep 302.5 & echo started' });
    expect(r.ok).toBe(true);
    await new Promise((res) => setTimeout(res, 200));
    expect(processesWith('sleep 302.5')).toEqual([]);
  });

  it('keeps 1 GB of output as head and tail with bounded memory', async () => {
    const before = process.memoryUsage().rss;
    const t0 = Date.now();
    const r = await run({ command: 'yes | head -c 1G; echo; echo THE-END' }, { limits: { ...DEFAULT_LIMITS, outputBytes: 2 * 1024 ** 3 } });
    const took = Date.now() - t0;
    expect(r.ok).toBe(true);
    expect(r.meta?.outputBytes).toBe(1024 ** 3 + 1 + 8);
    expect(r.output).toMatch(/\[\.\.\. 1\.00 GB of output omitted; the first 20\.0 KB and the last 20\.0 KB are shown \.\.\.\]/);
    expect(r.output.trimEnd().endsWith('THE-END')).toBe(true);
    expect(r.output.length).toBeLessThan(45_000);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    // Nor does the launcher process that relays it hold it: its peak RSS stays small.
    const peakKb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${launcherPid()}/status`, 'utf8'))![1]);
    expect(peakKb).toBeLessThan(150 * 1024);
    expect(took).toBeLessThan(60_000);
  });

  it('kills a command whose output passes the output limit', async () => {
    const r = await run({ command: 'yes' }, { limits: { ...DEFAULT_LIMITS, outputBytes: 10 * 1024 * 1024 } });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^The command was killed after 10\.0 MB of output\./);
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

  it('gives commands an allowlisted environment with a fake HOME, plus the names passed with --env', async () => {
    const env = {
      // The worker's own layout (a home's shims, the project's node_modules/.bin) stays out of the sandbox's PATH.
      PATH: '/usr/local/bin:/root/.pyenv/shims:/usr/bin:/srv/agentrun/node_modules/.bin:/bin',
      HOME: '/home/x',
      OPENAI_API_KEY: 'sk-1',
      OPENAI_BASE_URL: 'http://x',
      GITHUB_TOKEN: 't',
      DATABASE_URL: 'postgres://u:p@h/db',
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      KEEP_ME: 'yes',
      PASSED: 'through',
      NOT_ALLOWED: 'asked-but-not-allowed',
    };
    // The worker allows PASSED (and, wrongly, DATABASE_URL: never passed whatever the list says); NOT_ALLOWED is only asked for.
    const sandbox = {
      policy: 'workspace-write',
      network: 'off',
      env: ['PASSED', 'DATABASE_URL', 'NOT_ALLOWED'],
      allowedEnv: ['PASSED', 'DATABASE_URL'],
    } as const;
    const r = await run({ command: 'env | sort' }, { env, sandbox: { ...sandbox, env: [...sandbox.env] } });
    expect(r.output).toContain('HOME=/tmp/home');
    expect(r.output).toContain('PASSED=through');
    expect(r.output).toContain('PATH=/usr/local/bin:/usr/bin:/bin\n');
    for (const k of [
      '.pyenv',
      'node_modules',
      'OPENAI_API_KEY',
      'OPENAI_BASE_URL',
      'GITHUB_TOKEN',
      'DATABASE_URL',
      'TEMPORAL_ADDRESS',
      'KEEP_ME',
      '/home/x',
      'NOT_ALLOWED',
    ]) {
      expect(r.output).not.toContain(k);
    }
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
