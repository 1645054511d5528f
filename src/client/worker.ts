// createWorker: run an agentrun worker inside the caller's process, with its own custom tools,
// hooks and MCP servers. Wraps worker/index.ts (the same worker `agentrun worker` runs).
import { allowTestModels, type TestModels } from '../model/scripted/allowed.js';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { agentrunHome } from '../runtime/home.js';
import { Store } from '../store/index.js';
import { WorkerExtensions, type ExtensionOptions } from '../extensions/worker.js';
import { createWorker as createTemporalWorker, installRuntime } from '../../worker/index.js';
import { DEFAULT_TASK_QUEUE } from '../../workflows/api.js';
import { parseStickyQueueTimeout } from '../runtime/sticky-queue.js';
import type { TemporalOptions } from './client.js';

export interface WorkerOptions extends Omit<ExtensionOptions, 'home'> {
  temporal: TemporalOptions;
  /** PostgreSQL URL of agentrun's store (or a connected Store, which the caller closes). */
  database: string | Store;
  schema?: string;
  taskQueue?: string;
  /** AGENTRUN_HOME: checkpoints, and the operator's settings.json (default: $AGENTRUN_HOME or ~/.agentrun). */
  home?: string;
  maxConcurrentActivities?: number;
  /** A prebuilt workflow bundle saves the seconds of bundling at start. */
  workflowBundlePath?: string;
  /** Seconds running activities get to finish on shutdown (default AGENTRUN_SHUTDOWN_GRACE, else 30). */
  shutdownGraceSec?: number;
  /**
   * Seconds a conversation this worker has cached waits for it after it vanished, before another
   * worker replays it (1 to 600; default AGENTRUN_STICKY_QUEUE_TIMEOUT, else Temporal's 10).
   */
  stickyQueueTimeoutSec?: number;
  /**
   * Run conversations that ask for `sandbox: off` (their commands run as this worker: a trust
   * decision). Default AGENTRUN_ALLOW_UNSANDBOXED (or AGENTRUN_SANDBOX=off); else they fail at their first step.
   */
  allowUnsandboxed?: boolean;
  /**
   * The test models this worker serves: `scripted:FILE` with FILE beneath one of `scriptsDirs`, and
   * `recorded:<id>` when `recorded`. Default AGENTRUN_SCRIPTS_DIR and AGENTRUN_RECORDED_MODELS; else neither.
   */
  testModels?: TestModels;
}

export interface AgentrunWorker {
  readonly worker: Worker;
  readonly extensions: WorkerExtensions;
  /** Poll until shutdown(); then close the MCP servers and connections it opened. */
  run(): Promise<void>;
  shutdown(): void;
}

export async function createWorker(options: WorkerOptions): Promise<AgentrunWorker> {
  const home = options.home ?? agentrunHome();
  if (options.testModels) allowTestModels(options.testModels);
  const stickyQueueTimeoutMs =
    options.stickyQueueTimeoutSec === undefined ? undefined : parseStickyQueueTimeout(`${options.stickyQueueTimeoutSec}s`, 'stickyQueueTimeoutSec');
  const extensions = new WorkerExtensions({ ...options, home });
  installRuntime();
  const connection = await NativeConnection.connect({ address: options.temporal.address });
  const store = typeof options.database === 'string' ? await Store.connect(options.database, { schema: options.schema }) : options.database;
  let worker: Worker;
  try {
    worker = await createTemporalWorker({
      connection,
      namespace: options.temporal.namespace,
      taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
      store,
      home,
      extensions,
      workflowBundlePath: options.workflowBundlePath,
      maxConcurrentActivities: options.maxConcurrentActivities,
      ...(options.shutdownGraceSec !== undefined ? { shutdownGraceTime: `${options.shutdownGraceSec}s` } : {}),
      stickyQueueTimeoutMs,
      ...(options.allowUnsandboxed !== undefined ? { allowUnsandboxed: options.allowUnsandboxed } : {}),
    });
  } catch (err) {
    await connection.close();
    if (typeof options.database === 'string') await store.close();
    throw err;
  }
  return {
    worker,
    extensions,
    async run() {
      try {
        await worker.run();
      } finally {
        await extensions.close();
        await connection.close().catch(() => {});
        if (typeof options.database === 'string') await store.close().catch(() => {});
      }
    },
    shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    },
  };
}
