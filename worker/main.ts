// A worker process: `node dist/worker/main.js` (compiled; the tests' child workers, killed with
// SIGKILL in the crash and fleet tests, and the benchmarks), or `node --import tsx worker/main.ts`
// from the sources. Configured by the
// environment: TEMPORAL_ADDRESS, DATABASE_URL, AGENTRUN_DB_SCHEMA, AGENTRUN_TASK_QUEUE,
// AGENTRUN_HOME, AGENTRUN_WORKFLOW_BUNDLE, AGENTRUN_HOST_ID, AGENTRUN_WORKSPACES,
// AGENTRUN_STICKY_QUEUE_TIMEOUT, AGENTRUN_SHUTDOWN_GRACE (default 5 s here), TEMPORAL_TLS_*.
import { NativeConnection } from '@temporalio/worker';
import { agentrunHome } from '../src/runtime/home.js';
import { tlsConnectionOptions } from '../src/runtime/tls.js';
import { log } from '../src/log.js';
import { Store } from '../src/store/index.js';
import { hostId, hostIncarnation } from '../src/workspace/host.js';
import { diskLimitsFromEnv, startDiskKeeper } from '../src/environment/disk.js';
import { handOverConversations } from './drain.js';
import { createHostWorker, createWorker, installRuntime } from './index.js';
import { WorkerExtensions } from '../src/extensions/worker.js';
import { DEFAULT_WORKER_DB_POOL } from '../src/runtime/capacity.js';
import { stickyQueueTimeoutFromEnv } from '../src/runtime/sticky-queue.js';
import { shutdownGraceFromEnv } from '../src/runtime/shutdown-grace.js';

const address = process.env.TEMPORAL_ADDRESS;
const databaseUrl = process.env.DATABASE_URL;
if (!address || !databaseUrl) {
  console.error('worker/main.ts needs TEMPORAL_ADDRESS and DATABASE_URL (or use `agentrun worker`)');
  process.exit(2);
}
let stickyQueueTimeoutMs: number | undefined;
let shutdownGraceMs: number | undefined;
try {
  stickyQueueTimeoutMs = stickyQueueTimeoutFromEnv();
  shutdownGraceMs = shutdownGraceFromEnv();
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
// Store steps are short queries: a pool far smaller than the activity slots keeps up (src/runtime/capacity.ts).
const store = await Store.connect(databaseUrl, { schema: process.env.AGENTRUN_DB_SCHEMA, max: Number(process.env.AGENTRUN_DB_POOL) || DEFAULT_WORKER_DB_POOL });
installRuntime();
const connection = await NativeConnection.connect({ address, ...tlsConnectionOptions() });
// settings.json (MCP servers, hooks) of AGENTRUN_HOME and of each workspace.
const extensions = new WorkerExtensions({ home: agentrunHome() });
const options = {
  connection,
  extensions,
  namespace: process.env.TEMPORAL_NAMESPACE,
  taskQueue: process.env.AGENTRUN_TASK_QUEUE,
  store,
  home: agentrunHome(),
  shutdownGraceTime: shutdownGraceMs ?? '5s',
  stickyQueueTimeoutMs,
};
// Finished jobs' workspaces as their --keep-workspace says, caches under their size limit: now and every AGENTRUN_GC_INTERVAL.
let diskKeeper: { stop(): Promise<void> };
try {
  diskKeeper = startDiskKeeper(store, options.home, diskLimitsFromEnv());
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
const worker = await createWorker(options);
const hostWorker = await createHostWorker(options);
let draining = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    draining = signal === 'SIGTERM';
    worker.shutdown();
    hostWorker.shutdown();
  });
}
log.info({ taskQueue: process.env.AGENTRUN_TASK_QUEUE, host: hostId(), incarnation: hostIncarnation(), pid: process.pid }, 'worker ready');
process.stdout.write('worker ready\n');
await Promise.all([worker.run(), hostWorker.run()]);
// Stopped polling and finished what ran: the conversations held here move to other hosts now.
if (draining)
  await handOverConversations({ address, namespace: process.env.TEMPORAL_NAMESPACE, hostId: hostId() }).catch((err) =>
    log.error({ err: (err as Error).message }, 'hand-over failed'),
  );
// The pass under way, and the workspaces of jobs that just pushed their branches, before the process goes.
await diskKeeper.stop();
await extensions.close();
await connection.close();
await store.close();
process.exit(0);
