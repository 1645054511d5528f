// Ctrl-C, SIGTERM and SIGHUP to every command that starts servers (run, watch, rerun, batch,
// schedule trigger, dev, ui): each stops what it started (its worker, embedded Temporal and
// PostgreSQL, its page), says how to follow what goes on, exits 128 + the signal, and leaves no
// process behind, neither in its process group nor anywhere under its AGENTRUN_HOME.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';
import { processesInGroup, processesWith } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ worker: false });
});
afterAll(async () => {
  await h?.close();
});

type Signal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** The CLI's environment: embedded Temporal and PostgreSQL under `home`, or the harness's where given. */
function envFor(home: string, queue: string, use: { temporal?: boolean; database?: boolean } = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AGENTRUN_HOME: home,
    AGENTRUN_LOG_LEVEL: 'warn',
    OPENAI_API_KEY: '',
    AGENTRUN_TASK_QUEUE: queue,
    AGENTRUN_SHUTDOWN_GRACE: '1s',
  };
  for (const k of ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'DATABASE_URL', 'AGENTRUN_DB_SCHEMA']) delete env[k];
  if (use.temporal) env.TEMPORAL_ADDRESS = h.temporalAddress;
  if (use.database) Object.assign(env, { DATABASE_URL: h.databaseUrl, AGENTRUN_DB_SCHEMA: h.schema });
  return env;
}

/**
 * Start `agentrun ARGS` in its own process group, wait until its output shows `ready`, send `signal`;
 * its exit code and output once it has exited, and what is left of its process group.
 */
async function stopWith(
  signal: Signal,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ code: number | null; stdout: string; stderr: string; leftInGroup: number[] }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/agentrun.js'), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const check = () => ready.test(stdout) && resolve();
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      check();
    });
    void exited.then(() => reject(new Error(`${args.join(' ')} ended first: ${stdout}${stderr}`)));
  });
  child.kill(signal);
  const code = await exited;
  return { code, stdout, stderr, leftInGroup: processesInGroup(child.pid!) };
}

// A turn that streams for about a minute: what was started is still going when the signal comes.
const slow = () =>
  scriptModel({ turns: [{ say: `${'slowly '.repeat(60)}\n<attempt_completion>\n<result>done</result>\n</attempt_completion>`, chunk: 4, delay_ms: 600 }] });

describe.each(['SIGTERM', 'SIGHUP', 'SIGINT'] as const)('%s', (signal) => {
  const code = 128 + constants.signals[signal];
  // One home per signal: its embedded PostgreSQL and Temporal keep their data between the commands.
  let home: string;
  let queue: string;
  let workspace: string;
  const runId = () => `signal-run-${signal}-${h.taskQueue}`;
  beforeAll(async () => {
    home = await tempDir(`agentrun-signal-${signal}-`);
    queue = `${h.taskQueue}-${signal}`;
    workspace = await tempRepo({ 'README.md': '# s\n' });
  });

  /** Nothing of the command is left: in its group, under its home, nor its record of embedded servers. */
  function leftNothing(r: { leftInGroup: number[]; stderr: string }) {
    expect(r.leftInGroup, r.stderr).toEqual([]);
    expect(processesWith(home), r.stderr).toEqual([]);
    expect(existsSync(join(home, 'embedded.json'))).toBe(false);
  }

  it('run: stops its worker and embedded servers, says how to follow', async () => {
    const r = await stopWith(
      signal,
      ['run', '--workspace', workspace, '--task', 't', '--model', await slow(), '--id', runId(), '--approval', 'never'],
      envFor(home, queue),
      /slowly slowly/,
    );
    expect(r.code, r.stderr).toBe(code);
    expect(r.stdout).toContain(`${signal}: detached; the conversation is durable: agentrun watch ${runId()}`);
    leftNothing(r);
  }, 180_000);

  it('watch: says no worker is running, then stops the servers it started', async () => {
    const r = await stopWith(signal, ['watch', runId()], envFor(home, queue), /no worker polls task queue/);
    expect(r.stdout).toContain(`no worker polls task queue ${queue}: the conversation waits until one runs`);
    expect(r.code, r.stderr).toBe(code);
    expect(r.stdout).toContain(`detached; the conversation is durable: agentrun watch ${runId()}`);
    leftNothing(r);
  }, 180_000);

  it('rerun: stops its worker and embedded servers, says how to follow', async () => {
    const id = `signal-rerun-${signal}-${h.taskQueue}`;
    const r = await stopWith(signal, ['rerun', runId(), '--model', await slow(), '--id', id], envFor(home, queue), /slowly slowly/);
    expect(r.code, r.stderr).toBe(code);
    expect(r.stdout).toContain(`${signal}: detached; the conversation is durable: agentrun watch ${id}`);
    leftNothing(r);
  }, 180_000);

  it('batch: stops its worker and embedded servers, says how to follow', async () => {
    const id = `signal-batch-${signal}-${h.taskQueue}`;
    const list = join(await tempDir('agentrun-signal-list-'), 'repos.txt');
    await writeFile(list, `${await tempRepo({ 'README.md': '# b\n' })}\n`);
    const r = await stopWith(
      signal,
      ['batch', '--repos', list, '--task', 't', '--model', await slow(), '--id', id, '--approval', 'never'],
      envFor(home, queue),
      /: running/,
    );
    expect(r.code, r.stderr).toBe(code);
    expect(r.stdout).toContain(`${signal}: detached; the batch is durable: agentrun inspect ${id}`);
    expect(r.stderr).not.toContain('MaxListenersExceededWarning');
    leftNothing(r);
  }, 180_000);

  it('schedule trigger: stops its worker and the PostgreSQL it started, says how to follow', async () => {
    const name = `signal-trigger-${signal}-${h.taskQueue}`;
    const triggerQueue = `${queue}-trigger`;
    // The schedule lives in the harness's Temporal, where the trigger looks for it; its PostgreSQL is its own.
    execFileSync(
      process.execPath,
      [join(ROOT, 'bin/agentrun.js'), 'schedule', 'create', name, '--cron', '0 2 1 1 *', '--workspace', workspace, '--task', 't', '--model', await slow()],
      { cwd: ROOT, env: envFor(home, triggerQueue, { temporal: true, database: true }), stdio: 'pipe' },
    );
    const schedule = h.client.schedule.getHandle(name);
    let started: string | undefined;
    try {
      const r = await stopWith(signal, ['schedule', 'trigger', name], envFor(home, triggerQueue, { temporal: true }), /slowly slowly/);
      started = /started (\S+)/.exec(r.stdout)?.[1];
      expect(r.code, r.stderr).toBe(code);
      expect(r.stdout).toContain(`${signal}: detached; the conversation is durable: agentrun watch ${started}`);
      leftNothing(r);
    } finally {
      if (started)
        await h.client.workflow
          .getHandle(started)
          .terminate('test over')
          .catch(() => undefined);
      await schedule.delete();
    }
  }, 180_000);

  it('dev: stops its page, worker, Temporal and PostgreSQL', async () => {
    const r = await stopWith(signal, ['dev'], envFor(home, queue), /agentrun dev is up/);
    expect(r.code, r.stderr).toBe(code);
    expect(r.stdout).toContain(`${signal}: agentrun dev stopped its servers and its worker`);
    leftNothing(r);
    expect(existsSync(join(home, 'dev.json'))).toBe(false);
  }, 180_000);

  it('ui: stops its page', async () => {
    const r = await stopWith(signal, ['ui', '--port', '0'], envFor(home, queue, { temporal: true, database: true }), /agentrun UI: http/);
    expect(r.code, r.stderr).toBe(code);
    expect(r.stdout).toContain(`${signal}: the page is stopped`);
    leftNothing(r);
  }, 60_000);
});
