// Crash tests: the worker is a child process killed with SIGKILL mid-stream and mid-tool.
// A new worker finishes the conversation; nothing is lost and nothing is done twice.
import { conversationResult } from '../../src/client/outcome.js';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationResult } from '../../workflows/api.js';
import { startChildWorker } from '../helpers/child-worker.js';
import { LOST_WORKER_TASK_TIMEOUT } from '../helpers/fleet.js';
import { crashGates, type CrashGates, type GateSpec } from '../helpers/crash-gate.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';

let h: Harness;
let gates: CrashGates;
beforeAll(async () => {
  h = await createHarness({ worker: false });
  gates = await crashGates(h.databaseUrl, h.schema);
});
afterAll(async () => {
  await gates?.close();
  await h?.close();
});

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir, { recursive: true })) as string[]) {
    if (name === '.git' || name.startsWith('.git/')) continue;
    const p = join(dir, name);
    try {
      out[name] = await readFile(p, 'utf8');
    } catch {
      // directories
    }
  }
  return out;
}

const longText = Array.from({ length: 60 }, (_, i) => `line ${i} of a long explanation`).join('\n');

const streamScript = {
  turns: [
    { say: `${longText}\n<write_to_file>\n<path>out.txt</path>\n<content>\nfrom turn 1\n</content>\n</write_to_file>`, chunk: 8, delay_ms: 25 },
    { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
  ],
};

const toolScript = {
  turns: [
    { say: '<execute_command>\n<command>echo ran >> side.txt; sleep 4</command>\n<requires_approval>false</requires_approval>\n</execute_command>' },
    { say: '<write_to_file>\n<path>after.txt</path>\n<content>\nafter the command\n</content>\n</write_to_file>' },
    { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
  ],
};

const config = (model: string) => ({ model, heartbeatTimeoutMs: 2000, approval: 'never' as const });

/**
 * How long each workflow task that waited on a vanished worker's sticky queue waited there before
 * it went to the shared queue (ms, by the server's clock): the worker's --sticky-queue-timeout.
 */
const TIMEOUT_TYPE_SCHEDULE_TO_START = 2; // temporal.api.enums.v1.TimeoutType
async function stickyWaits(id: string): Promise<number[]> {
  const events = (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
  const ms = (e: (typeof events)[number] | undefined) => Number(e?.eventTime?.seconds ?? 0) * 1000 + Math.floor((e?.eventTime?.nanos ?? 0) / 1e6);
  return events.flatMap((e) => {
    const timedOut = e.workflowTaskTimedOutEventAttributes;
    if (timedOut?.timeoutType !== TIMEOUT_TYPE_SCHEDULE_TO_START) return [];
    const scheduled = events.find((s) => Number(s.eventId) === Number(timedOut.scheduledEventId));
    return [ms(e) - ms(scheduled)];
  });
}

/**
 * An uncrashed run of the same script in its own workspace, for comparison: on a worker of a task
 * queue of its own, so it can run beside the crash without taking any of its work.
 */
async function referenceRun(model: string, task: string): Promise<string> {
  const reference = await tempRepo();
  const taskQueue = `${h.taskQueue}-reference-${Math.random().toString(36).slice(2, 8)}`;
  const worker = await startChildWorker(h, { AGENTRUN_TASK_QUEUE: taskQueue });
  try {
    const clean = (await (await h.start({ task, workspace: reference, config: config(model), taskQueue })).result()) as ConversationResult;
    expect(clean.status).toBe('completed');
  } finally {
    await worker.kill('SIGTERM');
  }
  return reference;
}

/** Start the conversation on a worker, wait for `ready`, kill the worker, finish on a new one. */
async function crashAndRecover(
  model: string,
  task: string,
  workspace: string,
  ready: (id: string) => Promise<boolean>,
): Promise<{ id: string; result: ConversationResult }> {
  const doomed = await startChildWorker(h);
  const handle = await h.start({ task, workspace, config: config(model), workflowTaskTimeout: LOST_WORKER_TASK_TIMEOUT });
  await until('the moment to crash', () => ready(handle.workflowId));
  await doomed.kill('SIGKILL');
  const survivor = await startChildWorker(h);
  const result = await conversationResult(handle);
  await survivor.kill('SIGTERM');
  return { id: handle.workflowId, result };
}

// Each test starts two or three child workers: generous under load (two shared cores).
describe('crash recovery (SIGKILL)', { timeout: 300_000 }, () => {
  it('finishes a conversation whose worker died in the middle of a model stream', async () => {
    const model = await scriptModel(streamScript);
    const reference = referenceRun(model, 'write out.txt');
    reference.catch(() => {}); // awaited below; a failure before that is the test's
    const workspace = await tempRepo();
    const { id, result } = await crashAndRecover(model, 'write out.txt', workspace, async (cid) => {
      const rows = await h.store.readStream(cid, 0, 1000);
      return rows.filter((r) => r.event.type === 'delta').length >= 5;
    });
    expect(result.status).toBe('completed');
    const messages = await h.store.getMessages(id);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.turn)).toEqual([1, 2]);
    expect(messages.find((m) => m.seq === 1)?.content).toContain('line 59 of a long explanation');
    // The new worker continued the text the dead one had streamed instead of asking again from the
    // start: one answer in the stream (no reset), one continuation naming the dead attempt, and the
    // stored message the scripted answer exactly, stitched from the two segments.
    const stream = await h.store.readStream(id, 0, 10_000);
    expect(stream.some((r) => r.event.type === 'reset' && r.event.seq === 1)).toBe(false);
    expect(stream.filter((r) => r.event.type === 'continuation' && r.event.seq === 1).map((r) => r.event)).toEqual([
      { type: 'continuation', seq: 1, segment: 1, resumedAfter: 1 },
    ]);
    expect(messages.find((m) => m.seq === 1)?.content).toBe(streamScript.turns[0]!.say);
    const segments = await h.store.getSegments(id, 1);
    expect(segments.map((s) => s.finishReason)).toEqual(['length', 'stop']);
    const streamedText = stream.flatMap((r) => (r.event.type === 'delta' && r.event.seq === 1 ? [r.event.text] : [])).join('');
    expect(streamedText).toBe(streamScript.turns[0]!.say);
    expect(await snapshot(workspace)).toEqual(await snapshot(await reference));
    // A workflow task sent to the dead worker's sticky queue moved on after its
    // AGENTRUN_STICKY_QUEUE_TIMEOUT (1 s, test/helpers/child-worker.ts), not Temporal's 10 s. When
    // the server already knew that worker's poller gone (the model step's heartbeat timeout ran out
    // first), it skips the sticky queue and there is no wait at all: none or one, never a long one.
    const waits = await stickyWaits(id);
    expect(waits.length).toBeLessThanOrEqual(1);
    for (const wait of waits) expect(wait).toBeLessThan(5000);
  });

  it('runs a command exactly once when the worker dies during it', async () => {
    const model = await scriptModel(toolScript);
    const reference = referenceRun(model, 'run it');
    reference.catch(() => {}); // awaited below; a failure before that is the test's
    const workspace = await tempRepo();
    // Once the command's echo landed (the file appears a moment before its line is written).
    const { id, result } = await crashAndRecover(
      model,
      'run it',
      workspace,
      async () => (await readFile(join(workspace, 'side.txt'), 'utf8').catch(() => '')) === 'ran\n',
    );
    expect(result.status).toBe('completed');
    expect(await readFile(join(workspace, 'side.txt'), 'utf8')).toBe('ran\n');
    const messages = await h.store.getMessages(id);
    const commandResult = messages.find((m) => m.toolName === 'execute_command')!;
    expect(commandResult.meta?.status).toBe('interrupted');
    expect(commandResult.content).toMatch(/interrupted/i);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.turn)).toEqual([1, 2, 3]);
    expect(await snapshot(workspace)).toEqual(await snapshot(await reference));
  });

  it('loses nothing when a worker is stopped with SIGTERM in the middle of a run', async () => {
    const model = await scriptModel(streamScript);
    const workspace = await tempRepo();
    const leaving = await startChildWorker(h);
    const handle = await h.start({ task: 'write out.txt', workspace, config: config(model) });
    await until('deltas of turn 1', async () => {
      const rows = await h.store.readStream(handle.workflowId, 0, 1000);
      return rows.filter((r) => r.event.type === 'delta').length >= 5;
    });
    // Graceful: the worker stops polling, gives the running stream its grace period, then exits 0.
    expect(await leaving.kill('SIGTERM')).toBe(0);
    const next = await startChildWorker(h);
    const result = await conversationResult(handle);
    await next.kill('SIGTERM');
    expect(result.status).toBe('completed');
    const messages = await h.store.getMessages(handle.workflowId);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.turn)).toEqual([1, 2]);
    expect(messages.find((m) => m.seq === 1)?.content).toContain('line 59 of a long explanation');
    expect(await readFile(join(workspace, 'out.txt'), 'utf8')).toBe('from turn 1');
  });
});

// One conversation that passes through every kind of step: initConversation (turn 0's
// checkpoint), modelTurn, toolCall with a checkpoint (turn 1), recordToolResult (todo_write), a
// turn's record (written by the next modelTurn, or by endTurnRecord before a pause or the end) and
// finishSession. Each test kills the worker while one of them runs.
const stepsScript = {
  turns: [
    { say: '<write_to_file>\n<path>a.txt</path>\n<content>\nfrom turn 1\n</content>\n</write_to_file>' },
    { say: '<todo_write>\n<todos>\n- [x] write a.txt\n- [ ] finish\n</todos>\n</todo_write>' },
    { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
  ],
};

/** Where each step is stopped: a store write that only that step makes, early or late in it. */
const STEP_GATES: Record<string, Omit<GateSpec, 'name'>> = {
  initConversation: { table: 'checkpoints', event: 'INSERT', when: 'NEW.turn = 0' },
  'initConversation before its first event': { table: 'stream', event: 'INSERT', when: "NEW.event->>'type' = 'conversation_started'" },
  toolCallCheckpoint: { table: 'checkpoints', event: 'INSERT', when: 'NEW.turn = 1' },
  recordToolResult: { table: 'messages', event: 'INSERT', when: "NEW.kind = 'tool_result' AND NEW.tool_name = 'todo_write'" },
  'the record of turn 1 (in the next modelTurn)': { table: 'conversations', event: 'UPDATE', when: "NEW.turns = 1 AND NEW.status = 'running'" },
  'endTurnRecord (the last turn, before the end)': {
    table: 'stream',
    event: 'INSERT',
    when: "NEW.event->>'type' = 'turn_completed' AND NEW.event->>'turn' = '3'",
  },
  finishSession: { table: 'conversations', event: 'UPDATE', when: "NEW.status = 'completed'" },
};

describe('crash recovery in every kind of step (SIGKILL while the step runs)', { timeout: 300_000 }, () => {
  let model: string;
  let reference: string;
  beforeAll(async () => {
    model = await scriptModel(stepsScript);
    reference = await referenceRun(model, 'write a.txt');
  });

  for (const [step, gate] of Object.entries(STEP_GATES)) {
    it(`resumes on a new worker after a crash in ${step}`, async () => {
      const name = `${step.toLowerCase().replace(/\W+/g, '_')}_${Math.random().toString(36).slice(2, 8)}`;
      await gates.add({ name, ...gate });
      const workspace = await tempRepo();
      const doomed = await startChildWorker(h);
      // Store steps run as local activities in a workflow task: killed in one, the worker holds that task.
      const handle = await h.start({ task: 'write a.txt', workspace, config: config(model), workflowTaskTimeout: LOST_WORKER_TASK_TIMEOUT });
      const blocked = await gates.waitBlocked(name);
      await doomed.kill('SIGKILL');
      await gates.open(name, blocked);
      const survivor = await startChildWorker(h);
      const result = await conversationResult(handle);
      await survivor.kill('SIGTERM');

      expect(result.status).toBe('completed');
      expect(result.turns).toBe(3);
      const id = handle.workflowId;
      const messages = await h.store.getMessages(id);
      expect(messages.filter((m) => m.role === 'assistant').map((m) => m.turn)).toEqual([1, 2, 3]);
      // Every call answered exactly once.
      const results = messages.filter((m) => m.kind === 'tool_result').map((m) => m.toolName);
      expect(results).toEqual(['write_to_file', 'todo_write', 'attempt_completion']);
      expect(messages.filter((m) => m.kind === 'tool_result').every((m) => m.meta?.ok !== false)).toBe(true);
      expect((await h.store.getCheckpoints(id)).map((c) => c.turn)).toEqual([0, 1]);
      const row = await h.store.getConversation(id);
      expect(row).toMatchObject({ status: 'completed', turns: 3 });
      const stream = await h.store.readStream(id, 0, 10_000);
      expect(stream.filter((r) => r.event.type === 'conversation_started')).toHaveLength(1);
      expect(stream.filter((r) => r.event.type === 'finished')).toHaveLength(1);
      expect(await snapshot(workspace)).toEqual(await snapshot(reference));
    });
  }
});
