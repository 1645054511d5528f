// Servers for benches whose workers are child processes a bench may kill (test/helpers/child-worker.ts):
// a Temporal dev server, PostgreSQL in a fresh schema, the workflow bundle, and one task queue per run.
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../src/store/index.js';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../test/helpers/child-worker.js';
import type { Harness } from '../test/helpers/harness.js';
import { bundleWorkflows } from '../worker/index.js';
import { benchServers, removeBenchDirs } from './harness.js';

export interface ChildWorkerBench {
  store: Store;
  client: Client;
  databaseUrl: string;
  schema: string;
  /** A task queue of its own, for one run. */
  queue(): Harness;
  /** A child worker of `h`'s task queue (`env` added to its environment); stopped by close() if still running. */
  worker(h: Harness, env?: NodeJS.ProcessEnv): Promise<ChildWorker>;
  close(): Promise<void>;
}

/** `metricsPort`: the Temporal dev server serves its Prometheus metrics there. */
export async function childWorkerBench(opts: { metricsPort?: number } = {}): Promise<ChildWorkerBench> {
  const home = await mkdtemp(join(tmpdir(), 'agentrun-bench-'));
  const { temporal, databaseUrl, embedded } = await benchServers(home, opts);
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const store = await Store.connect(databaseUrl, { schema });
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  const workflowBundlePath = join(home, 'workflow-bundle.js');
  await writeFile(workflowBundlePath, await bundleWorkflows());
  const workers: ChildWorker[] = [];
  return {
    store,
    client,
    queue: () =>
      ({ temporalAddress: temporal.address, databaseUrl, schema, taskQueue: `bench-${randomBytes(4).toString('hex')}`, home, workflowBundlePath }) as Harness,
    databaseUrl,
    schema,
    worker: async (h, env) => {
      // A test's worker gets no provider key; a bench's gets the one it set (its SSE proxy's).
      const w = await startChildWorker(h, { OPENAI_API_KEY: process.env.OPENAI_API_KEY, ...env });
      workers.push(w);
      return w;
    },
    close: async () => {
      await stopChildWorkers(workers);
      await store.pool.query(`drop schema ${schema} cascade`);
      await store.close();
      await connection.close();
      await temporal.stop();
      await embedded?.stop();
      await rm(home, { recursive: true, force: true });
      await removeBenchDirs();
    },
  };
}
