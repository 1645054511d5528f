// A real worker on the shared test Temporal server, with its own task queue and its own
// PostgreSQL schema, plus helpers for workspaces (real git) and scripts.
import { conversationResult } from '../../src/client/outcome.js';
import { Client, Connection, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { inject } from 'vitest';
import { privateGitDir } from '../../src/workspace/checkpoint.js';
import YAML from 'yaml';
import { runConfigSchema, type RunConfigInput } from '../../src/config.js';
import { Store } from '../../src/store/index.js';
import type { WorkerExtensions } from '../../src/extensions/worker.js';
import { createWorker, installRuntime } from '../../worker/index.js';
import { stateQuery, WORKFLOW_TYPE, type ConversationInput, type ConversationResult, type ConversationState } from '../../workflows/api.js';
import type { WorkspaceOrigin } from '../../src/workspace/identity.js';
import { commitTree } from './git.js';
import { tempDir } from './temp.js';
import { sessionStartMetadata } from '../../workflows/summaries.js';

export const uid = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/**
 * The environment of an agentrun process (the CLI, a child worker) against harness `h`: its Temporal,
 * PostgreSQL schema, task queue and home, quiet logs and no API key (a test never reaches a provider). `overrides` win; a key
 * overridden with `undefined` is removed (e.g. DATABASE_URL, to make the CLI start its own).
 */
export function agentrunEnv(h: Harness, overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: h.temporalAddress,
    DATABASE_URL: h.databaseUrl,
    AGENTRUN_DB_SCHEMA: h.schema,
    AGENTRUN_TASK_QUEUE: h.taskQueue,
    AGENTRUN_HOME: h.home,
    AGENTRUN_LOG_LEVEL: 'warn',
    OPENAI_API_KEY: '',
    ...overrides,
  };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete env[key];
  return env;
}

export interface Harness {
  store: Store;
  client: Client;
  taskQueue: string;
  schema: string;
  home: string;
  temporalAddress: string;
  databaseUrl: string;
  workflowBundlePath: string;
  /** Whether its workers (in-process and child) run repositories' own extensions (`--repository-extensions`; default off, as a worker's). */
  repositoryExtensions: boolean;
  startWorker(opts?: { extensions?: WorkerExtensions; allowEnv?: string[]; repositoryExtensions?: boolean; allowUnsandboxed?: boolean }): Promise<Worker>;
  stopWorker(): Promise<void>;
  start(input: {
    task: string;
    workspace: string;
    config: RunConfigInput;
    id?: string;
    origin?: WorkspaceOrigin;
    /** Another task queue than the harness's own (a worker started with that AGENTRUN_TASK_QUEUE takes it). */
    taskQueue?: string;
    /**
     * Temporal's workflow task timeout (10 s by default): how long a workflow task taken by a
     * worker that never answers (one stopped with SIGSTOP still holds its long polls) blocks the
     * conversation before it is offered to another worker.
     */
    workflowTaskTimeout?: Duration;
  }): Promise<WorkflowHandleWithFirstExecutionRunId>;
  run(input: { task: string; workspace: string; config: RunConfigInput; id?: string }): Promise<ConversationResult>;
  /** Poll the state query until `pred` holds. */
  waitForState(id: string, pred: (s: ConversationState) => boolean, timeoutMs?: number): Promise<ConversationState>;
  close(): Promise<void>;
}

/**
 * `allowEnv`: the worker's `--allow-env` (default none); `repositoryExtensions`: its `--repository-extensions on`
 * (default off); `allowUnsandboxed`: its `--allow-unsandboxed` (default: refused).
 */
export async function createHarness(
  opts: { worker?: boolean; allowEnv?: string[]; repositoryExtensions?: boolean; allowUnsandboxed?: boolean } = {},
): Promise<Harness> {
  const temporalAddress = inject('temporalAddress');
  const databaseUrl = inject('databaseUrl');
  const workflowBundlePath = inject('workflowBundlePath');
  const schema = uid('t').replace('-', '_');
  const store = await Store.connect(databaseUrl, { schema });
  const connection = await Connection.connect({ address: temporalAddress });
  const client = new Client({ connection });
  const home = await tempDir('agentrun-home-');
  const taskQueue = uid('tq');
  let nc: NativeConnection | undefined;
  let worker: { worker: Worker; running: Promise<void> } | undefined;

  const h: Harness = {
    store,
    client,
    taskQueue,
    schema,
    home,
    temporalAddress,
    databaseUrl,
    workflowBundlePath,
    repositoryExtensions: opts.repositoryExtensions ?? false,
    async startWorker(startOpts = {}) {
      installRuntime();
      nc ??= await NativeConnection.connect({ address: temporalAddress });
      const w = await createWorker({
        connection: nc,
        taskQueue,
        store,
        home,
        workflowBundlePath,
        shutdownGraceTime: '2s',
        extensions: startOpts.extensions,
        allowEnv: startOpts.allowEnv ?? opts.allowEnv ?? [],
        repositoryExtensions: startOpts.repositoryExtensions ?? h.repositoryExtensions,
        allowUnsandboxed: startOpts.allowUnsandboxed ?? opts.allowUnsandboxed ?? false,
      });
      worker = { worker: w, running: w.run() };
      return w;
    },
    async stopWorker() {
      if (!worker) return;
      if (worker.worker.getState() === 'RUNNING') worker.worker.shutdown();
      await worker.running;
      worker = undefined;
    },
    async start({ task, workspace, config, id, origin, taskQueue: queue, workflowTaskTimeout }) {
      const input: ConversationInput = { task, workspace, config: runConfigSchema.parse(config), searchAttributes: true, ...(origin ? { origin } : {}) };
      return client.workflow.start(WORKFLOW_TYPE, {
        workflowId: id ?? uid('conv'),
        taskQueue: queue ?? taskQueue,
        args: [input],
        ...(workflowTaskTimeout ? { workflowTaskTimeout } : {}),
        ...sessionStartMetadata(input),
      });
    },
    async run(input) {
      const handle = await h.start(input);
      return await conversationResult(handle);
    },
    async waitForState(id, pred, timeoutMs = 60_000) {
      const handle = client.workflow.getHandle(id);
      const until = Date.now() + timeoutMs;
      for (;;) {
        const state = (await handle.query(stateQuery).catch(() => undefined)) as ConversationState | undefined;
        if (state && pred(state)) return state;
        if (Date.now() > until) throw new Error(`state of ${id} never matched; last: ${JSON.stringify(state)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async close() {
      await h.stopWorker();
      await nc?.close();
      await connection.close();
      await store.pool.query(`drop schema if exists ${schema} cascade`).catch(() => {});
      await store.close();
    },
  };
  if (opts.worker !== false) await h.startWorker();
  return h;
}

/** A temporary git repository with the given files committed. */
export async function tempRepo(files: Record<string, string> = {}): Promise<string> {
  const dir = await tempDir('agentrun-ws-');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  commitTree(dir, 'initial');
  return dir;
}

/** Write a scripted-model file and return the `scripted:FILE` model spec. */
export async function scriptModel(script: unknown): Promise<string> {
  const dir = await tempDir('agentrun-script-');
  const file = join(dir, 'script.yaml');
  await writeFile(file, YAML.stringify(script));
  return `scripted:${file}`;
}

/** git in a workspace (a root worker hands workspaces to the sandbox user: git would refuse another owner's repository). */
export function gitOut(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd: dir, encoding: 'utf8' }).trim();
}

/** git in the private repository that holds `workspace`'s checkpoints (under the worker's AGENTRUN_HOME). */
export function checkpointGit(home: string, workspace: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', privateGitDir(home, workspace), ...args], { encoding: 'utf8' }).trim();
}

/**
 * Price the scripted model ($1/$2 per million prompt/completion tokens) for this test file's
 * process and the workers it spawns, for tests of what costs add up to; call it before the first
 * model call (the price table is read once per process). Unpriced, scripted models cost $0.
 */
export function priceScriptedModel(): void {
  process.env.AGENTRUN_PRICING = JSON.stringify({ scripted: { input: 1, output: 2 } });
}
