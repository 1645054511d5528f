// Connect a CLI command to Temporal and the store: external servers from the environment,
// a running `agentrun dev` of the same AGENTRUN_HOME, or (for `run`) embedded ones started now.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { agentrunHome } from '../infra/home.js';
import { resolveEndpoints, type Endpoints } from '../infra/endpoints.js';
import { SEARCH_ATTRIBUTES } from '../search-attributes.js';
import { Store } from '../store/index.js';
import { createWorker, installRuntime } from '../../worker/index.js';
import { DEFAULT_TASK_QUEUE } from '../../workflows/api.js';
import { CliError } from './errors.js';

export interface Session {
  endpoints: Endpoints;
  client: Client;
  store: Store;
  home: string;
  taskQueue: string;
  /** Whether the namespace has agentrun's search attributes (workflows only upsert them then). */
  searchAttributes: boolean;
  /** Start a worker in this process; it runs until close(). */
  startWorker(opts?: { maxConcurrentActivities?: number }): Promise<Worker>;
  close(): Promise<void>;
}

export async function openSession(opts: { startIfMissing?: boolean; taskQueue?: string } = {}): Promise<Session> {
  const home = agentrunHome();
  let resolved: Awaited<ReturnType<typeof resolveEndpoints>>;
  try {
    resolved = await resolveEndpoints({ home, startIfMissing: opts.startIfMissing });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const { endpoints } = resolved;
  let connection: Connection;
  try {
    connection = await Connection.connect({ address: endpoints.temporalAddress, connectTimeout: '10s' });
  } catch (err) {
    await resolved.stop();
    throw new CliError(`cannot reach Temporal at ${endpoints.temporalAddress}: ${(err as Error).message}; check TEMPORAL_ADDRESS or start \`agentrun dev\``);
  }
  let store: Store;
  try {
    store = await Store.connect(endpoints.databaseUrl);
  } catch (err) {
    await connection.close();
    await resolved.stop();
    throw new CliError((err as Error).message);
  }
  const client = new Client({ connection, namespace: endpoints.namespace });
  let searchAttributes = false;
  try {
    const res = await connection.operatorService.listSearchAttributes({ namespace: endpoints.namespace });
    searchAttributes = Object.keys(SEARCH_ATTRIBUTES).every((k) => k in (res.customAttributes ?? {}));
  } catch {
    // Temporal Cloud does not serve the operator API to every key: run without search attributes.
  }
  const workers: { worker: Worker; running: Promise<void> }[] = [];
  const nativeConnections: NativeConnection[] = [];
  const taskQueue = opts.taskQueue ?? process.env.AGENTRUN_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;
  return {
    endpoints,
    client,
    store,
    home,
    taskQueue,
    searchAttributes,
    async startWorker(opts = {}) {
      installRuntime();
      const nc = await NativeConnection.connect({ address: endpoints.temporalAddress });
      nativeConnections.push(nc);
      const worker = await createWorker({ connection: nc, namespace: endpoints.namespace, taskQueue, store, home, ...opts });
      workers.push({ worker, running: worker.run() });
      return worker;
    },
    async close() {
      for (const { worker, running } of workers) {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running.catch(() => {});
      }
      for (const nc of nativeConnections) await nc.close().catch(() => {});
      await connection.close().catch(() => {});
      await store.close().catch(() => {});
      await resolved.stop();
    },
  };
}
