// The retired `conversation` workflow type (src/retired.ts): while a run of it is open on a task
// queue, `agentrun doctor` reports it and a worker of that queue refuses to start with one line
// naming the run and the command that ends it; once it is terminated, the worker starts.
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorker, installRuntime } from '../../worker/index.js';
import { openRetiredRuns, RETIRED_WORKFLOW_TYPE } from '../../src/retired.js';
import { Store } from '../../src/store/index.js';
import { uid } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';
import { CLI } from '../helpers/dist.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const exec = promisify(execFile);

let connection: Connection;
let client: Client;
let store: Store;
let schema: string;
let home: string;
const taskQueue = uid('retired-tq');

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
  schema = uid('retired').replace(/-/g, '_');
  store = await Store.connect(inject('databaseUrl'), { schema });
  home = await tempDir('agentrun-retired-');
});

afterAll(async () => {
  await store?.pool.query(`drop schema if exists ${schema} cascade`).catch(() => {});
  await store?.close();
  await connection?.close();
});

const env = (): NodeJS.ProcessEnv => ({
  ...process.env,
  AGENTRUN_HOME: home,
  TEMPORAL_ADDRESS: inject('temporalAddress'),
  DATABASE_URL: inject('databaseUrl'),
  AGENTRUN_DB_SCHEMA: schema,
  AGENTRUN_TASK_QUEUE: taskQueue,
  AGENTRUN_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
  OPENAI_API_KEY: '',
  AGENTRUN_MODEL: '',
  // The worker says `worker started` at info.
  AGENTRUN_LOG_LEVEL: 'info',
});

async function doctor(): Promise<{ code: number; checks: { name: string; ok: boolean; required: boolean; detail: string; fix?: string }[] }> {
  try {
    const r = await exec(process.execPath, [CLI, 'doctor', '--json', '--model', 'scripted:x'], {
      cwd: ROOT,
      env: env(),
      timeout: 60_000,
    });
    return { code: 0, checks: JSON.parse(r.stdout).checks };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, checks: JSON.parse(e.stdout).checks };
  }
}

/** `agentrun worker` on the queue: its exit code and output; stopped as soon as it says it started. */
function cliWorker(): Promise<{ code: number | null; out: string; started: boolean }> {
  const child = spawn(process.execPath, [CLI, 'worker', '--task-queue', taskQueue, '--metrics-port', '0'], {
    cwd: ROOT,
    env: env(),
  });
  let out = '';
  let started = false;
  const seen = (d: Buffer) => {
    out += d;
    if (!started && out.includes('worker started')) {
      started = true;
      child.kill('SIGTERM');
    }
  };
  child.stdout.on('data', seen);
  child.stderr.on('data', seen);
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, started })));
}

async function until<T>(what: string, f: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the retired conversation workflow', () => {
  it('doctor reports an open run, the worker refuses to start naming it and the command; terminated, the worker starts', async () => {
    // A run of the retired type, on a queue no worker polls (as one left over from before the upgrade).
    const id = uid('legacy-conv');
    await client.workflow.start(RETIRED_WORKFLOW_TYPE, { workflowId: id, taskQueue, args: [{ task: 'old', workspace: '/nonexistent', config: {} }] });
    await until('the run in visibility', async () =>
      (await openRetiredRuns(connection.workflowService, 'default', taskQueue)).count === 1 ? true : undefined,
    );

    const before = await doctor();
    const check = before.checks.find((c) => c.name === 'retired workflow')!;
    expect(check).toMatchObject({ ok: false, required: true });
    expect(check.detail).toBe(`1 run of the retired \`conversation\` workflow is open on task queue ${taskQueue} (${id}): a worker refuses to start`);
    expect(check.fix).toContain(
      `temporal workflow terminate --query "WorkflowType = 'conversation' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue}'"`,
    );
    expect(before.code).not.toBe(0);

    // The library's worker (what the SDK's createWorker and every CLI worker build on) refuses.
    installRuntime();
    const nc = await NativeConnection.connect({ address: inject('temporalAddress') });
    try {
      await expect(createWorker({ connection: nc, taskQueue, store, home, workflowBundlePath: inject('workflowBundlePath') })).rejects.toThrow(
        `refusing to start the worker: 1 run of the retired \`conversation\` workflow is open on task queue ${taskQueue} (${id})`,
      );
    } finally {
      await nc.close();
    }

    // `agentrun worker` exits with the one line.
    const refused = await cliWorker();
    expect(refused.started).toBe(false);
    expect(refused.code).not.toBe(0);
    const line = refused.out.split('\n').find((l) => l.startsWith('agentrun: refusing to start the worker'));
    expect(line, refused.out).toBeDefined();
    expect(line).toContain(`(${id})`);
    // The command the line names ends the run, as an operator would paste it.
    const command = /temporal workflow terminate .*--yes/.exec(line!)![0];
    await exec('bash', ['-c', `temporal ${command.slice('temporal '.length)} --address ${inject('temporalAddress')}`], { timeout: 60_000 });
    // A terminate by query is a batch job: it lands a moment later.
    await until('the batch terminate', async () => ((await client.workflow.getHandle(id).describe()).status.name === 'TERMINATED' ? true : undefined));
    await until('visibility to see it closed', async () =>
      (await openRetiredRuns(connection.workflowService, 'default', taskQueue)).count === 0 ? true : undefined,
    );

    const after = await doctor();
    expect(after.checks.find((c) => c.name === 'retired workflow')).toMatchObject({
      ok: true,
      detail: `no open runs of the retired \`conversation\` workflow on task queue ${taskQueue}`,
    });
    const started = await cliWorker();
    expect(started.started, started.out).toBe(true);
  }, 180_000);
});
