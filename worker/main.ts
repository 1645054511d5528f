// A worker process: `node --import tsx worker/main.ts`. Used by `agentrun worker`'s tests,
// the crash tests (killed with SIGKILL) and the benchmarks. Configured by the environment:
// TEMPORAL_ADDRESS, DATABASE_URL, AGENTRUN_DB_SCHEMA, AGENTRUN_TASK_QUEUE, AGENTRUN_HOME,
// AGENTRUN_WORKFLOW_BUNDLE.
import { NativeConnection } from '@temporalio/worker';
import { agentrunHome } from '../src/infra/home.js';
import { log } from '../src/log.js';
import { Store } from '../src/store/index.js';
import { createWorker, installRuntime } from './index.js';

const address = process.env.TEMPORAL_ADDRESS;
const databaseUrl = process.env.DATABASE_URL;
if (!address || !databaseUrl) {
  console.error('worker/main.ts needs TEMPORAL_ADDRESS and DATABASE_URL (or use `agentrun worker`)');
  process.exit(2);
}
const store = await Store.connect(databaseUrl, { schema: process.env.AGENTRUN_DB_SCHEMA });
installRuntime();
const connection = await NativeConnection.connect({ address });
const worker = await createWorker({
  connection,
  namespace: process.env.TEMPORAL_NAMESPACE,
  taskQueue: process.env.AGENTRUN_TASK_QUEUE,
  store,
  home: agentrunHome(),
  shutdownGraceTime: '5s',
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => worker.shutdown());
log.info({ taskQueue: process.env.AGENTRUN_TASK_QUEUE, pid: process.pid }, 'worker ready');
process.stdout.write('worker ready\n');
await worker.run();
await connection.close();
await store.close();
process.exit(0);
