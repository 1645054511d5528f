// Crash tests: the worker is a child process killed with SIGKILL mid-stream and mid-tool.
// A new worker finishes the conversation; nothing is lost and nothing is done twice.
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationResult } from '../../workflows/api.js';
import { startChildWorker } from '../helpers/child-worker.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ worker: false });
});
afterAll(async () => {
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

/** An uncrashed run of the same script in its own workspace, for comparison. */
async function referenceRun(model: string, task: string): Promise<string> {
  const reference = await tempRepo();
  const worker = await startChildWorker(h);
  const clean = (await h.run({ task, workspace: reference, config: config(model) })) as ConversationResult;
  expect(clean.status).toBe('completed');
  await worker.kill('SIGTERM');
  return reference;
}

/** Start the conversation on a worker, wait for `ready`, kill the worker, finish on a new one. */
async function crashAndRecover(model: string, task: string, workspace: string, ready: (id: string) => Promise<boolean>): Promise<{ id: string; result: ConversationResult }> {
  const doomed = await startChildWorker(h);
  const handle = await h.start({ task, workspace, config: config(model) });
  await until('the moment to crash', () => ready(handle.workflowId));
  await doomed.kill('SIGKILL');
  const survivor = await startChildWorker(h);
  const result = (await handle.result()) as ConversationResult;
  await survivor.kill('SIGTERM');
  return { id: handle.workflowId, result };
}

describe('crash recovery (SIGKILL)', () => {
  it('finishes a conversation whose worker died in the middle of a model stream', async () => {
    const model = await scriptModel(streamScript);
    const reference = await referenceRun(model, 'write out.txt');
    const workspace = await tempRepo();
    const { id, result } = await crashAndRecover(model, 'write out.txt', workspace, async (cid) => {
      const rows = await h.store.readStream(cid, 0, 1000);
      return rows.filter((r) => r.event.type === 'delta').length >= 5;
    });
    expect(result.status).toBe('completed');
    const messages = await h.store.getMessages(id);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.turn)).toEqual([1, 2]);
    expect(messages.find((m) => m.seq === 1)?.content).toContain('line 59 of a long explanation');
    const stream = await h.store.readStream(id, 0, 10_000);
    expect(stream.some((r) => r.event.type === 'reset' && r.event.seq === 1)).toBe(true);
    expect(await snapshot(workspace)).toEqual(await snapshot(reference));
  });

  it('runs a command exactly once when the worker dies during it', async () => {
    const model = await scriptModel(toolScript);
    const reference = await referenceRun(model, 'run it');
    const workspace = await tempRepo();
    const { id, result } = await crashAndRecover(model, 'run it', workspace, async () => existsSync(join(workspace, 'side.txt')));
    expect(result.status).toBe('completed');
    expect(await readFile(join(workspace, 'side.txt'), 'utf8')).toBe('ran\n');
    const messages = await h.store.getMessages(id);
    const commandResult = messages.find((m) => m.toolName === 'execute_command')!;
    expect(commandResult.meta?.status).toBe('interrupted');
    expect(commandResult.content).toMatch(/interrupted/i);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.turn)).toEqual([1, 2, 3]);
    expect(await snapshot(workspace)).toEqual(await snapshot(reference));
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
    const result = (await handle.result()) as ConversationResult;
    await next.kill('SIGTERM');
    expect(result.status).toBe('completed');
    const messages = await h.store.getMessages(handle.workflowId);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.turn)).toEqual([1, 2]);
    expect(messages.find((m) => m.seq === 1)?.content).toContain('line 59 of a long explanation');
    expect(await readFile(join(workspace, 'out.txt'), 'utf8')).toBe('from turn 1');
  });
});
