// An infrastructure outage stalls a session instead of failing it: PostgreSQL becomes
// unreachable (a real TCP proxy in front of it is stopped), the conversation shows `stalled`
// with the reason, and it goes on and completes once the database is reachable again.
import { conversationResult } from '../../src/client/outcome.js';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../src/config.js';
import { Store } from '../../src/store/index.js';
import { createWorker, installRuntime } from '../../worker/index.js';
import { answerUpdate, WORKFLOW_TYPE } from '../../workflows/api.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';

/** A TCP proxy to PostgreSQL that can be taken down (all connections cut) and brought back on the same port. */
class Proxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor(private readonly target: { host: string; port: number }) {}
  async start(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

let h: Harness;
let proxy: Proxy;
let store: Store;
let worker: { worker: Worker; running: Promise<void>; nc: NativeConnection };
const taskQueue = uid('stall');

beforeAll(async () => {
  h = await createHarness({ worker: false });
  const url = new URL(h.databaseUrl);
  proxy = new Proxy({ host: url.hostname, port: Number(url.port || 5432) });
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
});
