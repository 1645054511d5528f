// An infrastructure outage stalls a session instead of failing it: PostgreSQL becomes
// unreachable (a real TCP proxy in front of it is stopped), the conversation shows `stalled`
// with the reason, and it goes on and completes once the database is reachable again; `agentrun
// run` following it through the outage waits with it and exits with the conversation's outcome.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { conversationResult } from '../../src/client/outcome.js';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../src/config.js';
import { Store } from '../../src/store/index.js';
import { createWorker, installRuntime } from '../../worker/index.js';
import { answerUpdate, WORKFLOW_TYPE } from '../../workflows/api.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { CLI } from '../helpers/dist.js';

let h: Harness;
let proxy: TcpProxy;
let store: Store;
let worker: { worker: Worker; running: Promise<void>; nc: NativeConnection };
const taskQueue = uid('stall');

beforeAll(async () => {
  h = await createHarness({ worker: false });
  const url = new URL(h.databaseUrl);
  proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  await proxy.start();
  url.port = String(proxy.port);
  url.hostname = '127.0.0.1';
  store = await Store.connect(url.toString(), { schema: h.schema });
  installRuntime();
  const nc = await NativeConnection.connect({ address: h.temporalAddress });
  const w = await createWorker({ connection: nc, taskQueue, store, home: h.home, workflowBundlePath: h.workflowBundlePath, shutdownGraceTime: '2s' });
  worker = { worker: w, running: w.run(), nc };
});
afterAll(async () => {
  if (worker) {
    worker.worker.shutdown();
    await worker.running;
    await worker.nc.close();
  }
  await store?.close().catch(() => {});
  await h?.close();
});

describe('infrastructure outage', () => {
  it('stalls while PostgreSQL is unreachable and completes when it is back', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        { say: '<ask_followup_question>\n<question>Ready?</question>\n</ask_followup_question>' },
        { say: '<write_to_file>\n<path>after.txt</path>\n<content>\nafter the outage\n</content>\n</write_to_file>' },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    const config = runConfigSchema.parse({ model });
    const handle = await h.client.workflow.start(WORKFLOW_TYPE, {
      workflowId: uid('stall'),
      taskQueue,
      args: [{ task: 't', workspace, config, searchAttributes: true }],
    });
    await h.waitForState(handle.workflowId, (s) => s.status === 'waiting');

    await proxy.stop();
    await handle.executeUpdate(answerUpdate, { args: [{ text: 'yes' }] });
    const stalled = await h
      .waitForState(handle.workflowId, (s) => s.status === 'stalled', 40_000)
      .catch(async (err) => {
        const failure = await handle.result().catch((e: Error) => e);
        let e = failure as Error | undefined;
        const chain: string[] = [];
        while (e) {
          chain.push(`${e.name}: ${e.message} ${(e as any).stack?.split('\n').slice(1, 4).join(' | ')}`);
          e = e.cause as Error | undefined;
        }
        throw new Error(`${(err as Error).message.slice(0, 80)}; workflow: ${chain.join(' <- ')}`);
      });
    expect((stalled as { stalledReason?: string }).stalledReason).toMatch(/infrastructure fault/);
    const desc = await handle.describe();
    expect(desc.status.name).toBe('RUNNING');

    await proxy.start();
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');
    expect(result.turns).toBe(3);
    const answer = (await h.store.getMessages(handle.workflowId)).find((m) => m.toolName === 'ask_followup_question');
    expect(answer?.content).toContain('yes');
  }, 180_000);

  it('`run` following a conversation through a PostgreSQL outage waits for it and exits 0 when the conversation completes', async () => {
    const workspace = await tempRepo();
    // The second answer streams slowly: the outage falls inside the conversation.
    const model = await scriptModel({
      turns: [
        { say: '<write_to_file>\n<path>before.txt</path>\n<content>\nbefore\n</content>\n</write_to_file>' },
        { say: '<attempt_completion>\n<result>done after the outage</result>\n</attempt_completion>', chunk: 4, delay_ms: 200 },
      ],
    });
    const url = new URL(h.databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const id = uid('run-outage');
    const child = spawn(process.execPath, [CLI, 'run', '--no-worker', '--id', id, '--task', 't', '--workspace', workspace, '--model', model], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: h.temporalAddress,
        DATABASE_URL: url.toString(),
        AGENTRUN_DB_SCHEMA: h.schema,
        AGENTRUN_HOME: h.home,
        AGENTRUN_TASK_QUEUE: taskQueue,
        AGENTRUN_LOG_LEVEL: 'warn',
        AGENTRUN_TENANT: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const until = async (what: string, cond: () => boolean) => {
      const deadline = Date.now() + 60_000;
      while (!cond()) {
        if (Date.now() > deadline) throw new Error(`${what} never happened; stdout: ${out}; stderr: ${err}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    let code: number | null;
    try {
      // The first turn is printed: `run` is following. Then PostgreSQL goes away under it and the worker.
      await until('the first turn followed', () => out.includes('before.txt'));
      await proxy.stop();
      await until('the follower noticing the outage', () => err.includes('PostgreSQL is unreachable'));
      await proxy.start();
      code = await exited;
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    expect(code, `stdout: ${out}\nstderr: ${err}`).toBe(0);
    expect(out).toMatch(/completed/);
    expect(err.match(/PostgreSQL is unreachable/g)).toHaveLength(1);
    const result = await conversationResult(h.client.workflow.getHandle(id));
    expect(result.status).toBe('completed');
  }, 180_000);
});
