// Wires the workflow bundle and the activities into a Temporal worker.
import { NativeConnection, Runtime, Worker, bundleWorkflowCode, makeTelemetryFilterString, type WorkerOptions } from '@temporalio/worker';
import { temporalLogger } from '../src/log.js';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createActivities } from '../activities/index.js';
import type { Store } from '../src/store/index.js';
import { DEFAULT_TASK_QUEUE } from '../workflows/api.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  store: Store;
  home: string;
  /** A prebuilt bundle (from `bundleWorkflows`) saves the few seconds of bundling at start. */
  workflowBundlePath?: string;
  maxConcurrentActivities?: number;
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  identity?: string;
}

let runtimeInstalled = false;

/**
 * Install the Temporal runtime once per process: SDK logs through pino, core logs at WARN,
 * and optionally Prometheus metrics of the runtime on `metricsBind` (host:port).
 */
export function installRuntime(opts: { metricsBind?: string } = {}): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: temporalLogger,
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      ...(opts.metricsBind ? { metrics: { prometheus: { bindAddress: opts.metricsBind } } } : {}),
    },
  });
}

export async function bundleWorkflows(): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundlerLogger });
  return code;
}

const quietBundlerLogger = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error(message: string, meta?: Record<string, unknown>) {
    console.error(message, meta ?? '');
  },
};

export async function createWorker(opts: AgentWorkerOptions): Promise<Worker> {
  installRuntime();
  const bundlePath = opts.workflowBundlePath ?? process.env.AGENTRUN_WORKFLOW_BUNDLE;
  const workflowSource = bundlePath ? { workflowBundle: { code: await readFile(bundlePath, 'utf8') } } : { workflowsPath: WORKFLOWS_PATH };
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    ...workflowSource,
    activities: createActivities({ store: opts.store, home: opts.home }),
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? 100,
    shutdownGraceTime: opts.shutdownGraceTime ?? '30s',
    ...(opts.identity ? { identity: opts.identity } : {}),
  });
}
