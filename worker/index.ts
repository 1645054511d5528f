// Wires the workflow bundle and the activities into a Temporal worker.
import { NativeConnection, Runtime, Worker, bundleWorkflowCode, makeTelemetryFilterString, type WorkerOptions } from '@temporalio/worker';
import { temporalLogger } from '../src/log.js';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActivities } from '../activities/index.js';
import { allowedEnv, assertSandboxUsable, unsandboxedAllowed } from '../src/sandbox/index.js';
import type { Store } from '../src/store/index.js';
import type { WorkerExtensions } from '../src/extensions/worker.js';
import { repositoryExtensionsFromEnv } from '../src/extensions/repository.js';
import { turnPort } from '../src/extensions/observer.js';
import { DEFAULT_TASK_QUEUE } from '../workflows/api.js';
import { workerTracing, type WorkerTracing } from '../src/tracing/index.js';
import { hostId, markHostQueuePolled, setUsageInterval, usageIntervalFromEnv } from '../src/workspace/host.js';
import { hostQueue } from '../src/workspace/routing.js';
import { DEFAULT_ACTIVITY_SLOTS } from '../src/runtime/capacity.js';
import { refuseWhileRetiredRunsOpen } from '../src/retired.js';
import { stickyQueueTimeoutFromEnv } from '../src/runtime/sticky-queue.js';
import { DEFAULT_SHUTDOWN_GRACE_MS, shutdownGraceFromEnv } from '../src/runtime/shutdown-grace.js';
import { buildId as agentrunBuildId } from '../src/runtime/version.js';

// index.ts from the sources, index.js from the compiled package (dist/).
export const WORKFLOWS_PATH = fileURLToPath(new URL(`../workflows/index${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  store: Store;
  home: string;
  /** A prebuilt bundle (from `bundleWorkflows`) saves the few seconds of bundling at start. */
  workflowBundlePath?: string;
  maxConcurrentActivities?: number;
  /** How long running activities get to finish on shutdown (default AGENTRUN_SHUTDOWN_GRACE, else 30 s; src/runtime/shutdown-grace.ts). */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  identity?: string;
  /**
   * Worker Versioning: this worker is build `buildId` of worker deployment `name` and runs
   * workflows with `behavior` (docs/decisions.md: PINNED). Unset: an unversioned worker.
   */
  deployment?: { name: string; buildId: string; behavior: 'PINNED' | 'AUTO_UPGRADE' };
  /**
   * Without a deployment: the build id the worker stamps on its workflow tasks (inspect's "worker"),
   * agentrun's version (the default) rather than the SDK's default of its bundle's hash.
   */
  buildId?: string;
  /** Custom tools, hooks and MCP servers (src/extensions/); the caller closes them after the worker stops. */
  extensions?: WorkerExtensions;
  /** The names `--env` may pass to commands (`agentrun worker --allow-env`); default AGENTRUN_ALLOW_ENV, else none. */
  allowEnv?: readonly string[];
  /**
   * Run a repository's own hooks, MCP servers, agent files and setup/verify/cache
   * (`.agentrun/settings.json`, `.agentrun/agents/`); default AGENTRUN_REPOSITORY_EXTENSIONS, else off.
   */
  repositoryExtensions?: boolean;
  /**
   * Run a conversation's `sandbox: off` (its commands as this worker, a trust decision: `agentrun
   * worker --allow-unsandboxed`); default AGENTRUN_ALLOW_UNSANDBOXED, or a worker started with
   * `--sandbox off`; else such a conversation fails at its first step.
   */
  allowUnsandboxed?: boolean;
  /**
   * How long a conversation's next workflow task waits for this worker on its sticky queue before
   * any worker may take it (`agentrun worker --sticky-queue-timeout`, src/runtime/sticky-queue.ts);
   * default AGENTRUN_STICKY_QUEUE_TIMEOUT, else Temporal's 10 s.
   */
  stickyQueueTimeoutMs?: number;
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
  // No silent fallback: a worker that cannot sandbox commands does not start (unless --sandbox off).
  assertSandboxUsable();
  const stickyQueueTimeoutMs = opts.stickyQueueTimeoutMs ?? stickyQueueTimeoutFromEnv();
  const shutdownGraceTime = opts.shutdownGraceTime ?? shutdownGraceFromEnv() ?? DEFAULT_SHUTDOWN_GRACE_MS;
  installRuntime();
  // Nor while runs of the retired `conversation` workflow are open on its queue: it has no code for them.
  const namespace = opts.namespace ?? 'default';
  const taskQueue = opts.taskQueue ?? DEFAULT_TASK_QUEUE;
  await refuseWhileRetiredRunsOpen(opts.connection.workflowService, namespace, taskQueue);
  // OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set: its workflow interceptors need our own bundle.
  const tracing = await workerTracing();
  const bundlePath = tracing ? undefined : (opts.workflowBundlePath ?? process.env.AGENTRUN_WORKFLOW_BUNDLE);
  const workflowSource = bundlePath ? { workflowBundle: { code: await readFile(bundlePath, 'utf8') } } : { workflowsPath: WORKFLOWS_PATH };
  return Worker.create({
    connection: opts.connection,
    namespace,
    taskQueue,
    ...workflowSource,
    activities: workerActivities(opts, tracing),
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? DEFAULT_ACTIVITY_SLOTS,
    shutdownGraceTime,
    ...(stickyQueueTimeoutMs !== undefined ? { stickyQueueScheduleToStartTimeout: stickyQueueTimeoutMs } : {}),
    ...(opts.identity ? { identity: opts.identity } : {}),
    ...(opts.deployment
      ? {
          workerDeploymentOptions: {
            version: { deploymentName: opts.deployment.name, buildId: opts.deployment.buildId },
            useWorkerVersioning: true,
            defaultVersioningBehavior: opts.deployment.behavior,
          },
        }
      : { buildId: opts.buildId ?? agentrunBuildId() }),
    ...tracing?.workerOptions,
  });
}

/** The activities with the turn port of this worker: its extensions' hooks and scope, then its trace spans. */
function workerActivities(opts: AgentWorkerOptions, tracing: WorkerTracing | undefined) {
  // How often this host measures a workspace's disk use (AGENTRUN_WORKSPACE_USAGE_INTERVAL): a bad value stops the worker here, before it polls.
  setUsageInterval(usageIntervalFromEnv());
  // A conversation's workspace servers stop when it ends, also where its last step ran on another host.
  opts.extensions?.mcp.watchConversations((ids) => opts.store.endedConversations(ids));
  return createActivities({
    store: opts.store,
    home: opts.home,
    allowEnv: allowedEnv(opts.allowEnv),
    repositoryExtensions: opts.repositoryExtensions ?? repositoryExtensionsFromEnv(),
    allowUnsandboxed: opts.allowUnsandboxed ?? unsandboxedAllowed(),
    observer: turnPort(opts.extensions?.observer(), tracing?.observer),
  });
}

/**
 * The worker of this host's own queue (activities only): the workflow sends every activity that
 * touches a workspace held here to it. Runs beside the shared-queue worker of `createWorker`.
 */
export async function createHostWorker(opts: AgentWorkerOptions): Promise<Worker> {
  const shutdownGraceTime = opts.shutdownGraceTime ?? shutdownGraceFromEnv() ?? DEFAULT_SHUTDOWN_GRACE_MS;
  installRuntime();
  markHostQueuePolled();
  // Activities only: the activity spans and the port's spans, not the workflow interceptors.
  const tracing = await workerTracing();
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: hostQueue(opts.taskQueue ?? DEFAULT_TASK_QUEUE, hostId()),
    // The same activities as the shared queue's, extensions and traces included: tools, hooks and
    // MCP servers run here for every workspace this host holds.
    activities: workerActivities(opts, tracing),
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? DEFAULT_ACTIVITY_SLOTS,
    shutdownGraceTime,
    ...(opts.identity ? { identity: opts.identity } : {}),
    ...tracing?.activityOptions,
  });
}
