// Whole conversations through the real workflow on a real Temporal server, real PostgreSQL,
// real git and the scripted model over real HTTP.
import { conversationResult } from '../../src/client/outcome.js';
import { WorkflowFailedError } from '@temporalio/client';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerUpdate, cancelSignal, sendMessageSignal } from '../../workflows/api.js';
import { createHarness, checkpointGit, gitOut, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('conversation workflow', () => {
  it('edits files over several turns in a git repository and completes', async () => {
    const workspace = await tempRepo({ 'README.md': '# demo\n' });
    const model = 'scripted:' + join(import.meta.dirname, '../fixtures/edit-and-complete.yaml');
    const result = await h.run({ task: 'Add a greet function in src/greet.ts', workspace, config: { model } });
    expect(result.status).toBe('completed');
    expect(result.turns).toBe(4);
    expect(result.result).toContain('Hello');
    expect(result.usage.totalTokens).toBeGreaterThan(0);
    const file = await readFile(join(workspace, 'src/greet.ts'), 'utf8');
    expect(file).toContain('return `Hello, ${name}!`;');
    expect(file).not.toContain("'Hello, ' + name");

    // The transcript holds each turn once: task, then assistant + tool result per turn.
    const messages = await h.store.getMessages(result.conversationId);
    expect(messages.map((m) => m.seq)).toEqual([...messages.keys()]);
    expect(messages.filter((m) => m.role === 'assistant')).toHaveLength(4);
    expect(messages.filter((m) => m.kind === 'tool_result').map((m) => m.toolName)).toEqual([
      'write_to_file',
      'read_file',
      'replace_in_file',
      'attempt_completion',
    ]);
    const read = messages.find((m) => m.toolName === 'read_file')!;
    expect(read.content).toContain("return 'Hello, ' + name;");

    // Checkpoints in a private repository under AGENTRUN_HOME; the user's branch and index are untouched.
    const checkpoints = await h.store.getCheckpoints(result.conversationId);
    expect(checkpoints.map((c) => c.turn)).toEqual([0, 1, 3]);
    expect(gitOut(workspace, 'log', '--format=%s', 'main')).toBe('initial');
    expect(gitOut(workspace, 'status', '--porcelain')).toBe('?? src/');
    expect(checkpointGit(h.home, workspace, 'show', `${checkpoints[2]!.commit}:src/greet.ts`)).toContain('Hello, ${name}!');

    const row = await h.store.getConversation(result.conversationId);
    expect(row?.status).toBe('completed');
    expect(row?.turns).toBe(4);
    const stream = await h.store.readStream(result.conversationId, 0, 10_000);
    const text = stream
      .filter((r) => r.event.type === 'delta')
      .map((r) => (r.event as { text: string }).text)
      .join('');
    expect(text).toContain("I'll create the greeting module first.");
    expect(stream.at(-1)?.event).toMatchObject({ type: 'finished', status: 'completed' });
  });

  it('asks a question, waits, and goes on with the answer', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        { say: '<ask_followup_question>\n<question>Which file name should I use?</question>\n</ask_followup_question>' },
        { say: '<write_to_file>\n<path>notes.txt</path>\n<content>\nanswered\n</content>\n</write_to_file>' },
        { say: '<attempt_completion>\n<result>wrote notes.txt</result>\n</attempt_completion>' },
      ],
    });
    const handle = await h.start({ task: 'Write a note', workspace, config: { model } });
    const waiting = await h.waitForState(handle.workflowId, (s) => s.status === 'waiting');
    expect(waiting.pendingQuestion?.question).toBe('Which file name should I use?');
    await expect(handle.executeUpdate(answerUpdate, { args: [{ text: '' }] })).rejects.toMatchObject({ cause: { message: expect.stringMatching(/empty/) } });
    await handle.executeUpdate(answerUpdate, { args: [{ text: 'notes.txt please' }] });
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');
    const messages = await h.store.getMessages(handle.workflowId);
    const answer = messages.find((m) => m.toolName === 'ask_followup_question');
    expect(answer?.content).toContain('notes.txt please');
    expect(await readFile(join(workspace, 'notes.txt'), 'utf8')).toBe('answered');
  });

  it('cancels gracefully with a recorded reason', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [{ say: '<ask_followup_question>\n<question>Go on?</question>\n</ask_followup_question>' }],
    });
    const handle = await h.start({ task: 'Wait for me', workspace, config: { model } });
    await h.waitForState(handle.workflowId, (s) => s.status === 'waiting');
    await handle.signal(cancelSignal, { reason: 'operator changed plans' });
    const result = await conversationResult(handle);
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('operator changed plans');
    expect((await h.store.getConversation(handle.workflowId))?.status).toBe('cancelled');
    // A stop the operator asked for by signal is a clean end: Temporal's status stays Completed.
    expect((await handle.describe()).status.name).toBe('COMPLETED');
  });

  it('ends CANCELED when Temporal cancels it, its full result kept in the memo', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [{ say: '<ask_followup_question>\n<question>Go on?</question>\n</ask_followup_question>' }],
    });
    const handle = await h.start({ task: 'Wait for me', workspace, config: { model } });
    await h.waitForState(handle.workflowId, (s) => s.status === 'waiting');
    await handle.cancel();
    const result = await conversationResult(handle);
    expect(result).toMatchObject({ conversationId: handle.workflowId, status: 'cancelled', reason: 'the workflow was cancelled', turns: 1 });
    expect((await handle.describe()).status.name).toBe('CANCELLED');
  });

  it('reminds the model to use a tool, then fails after repeated replies without one', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [{ say: 'Just chatting.' }], repeat_last: true });
    const result = await h.run({ task: 'Do something', workspace, config: { model, maxNoToolReplies: 3 } });
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/3 times in a row without using a tool/);
    const reminders = (await h.store.getMessages(result.conversationId)).filter((m) => m.kind === 'reminder');
    expect(reminders).toHaveLength(2);
    // Temporal's own status says so: a FAILED workflow (what the UI's filter and alerts look for)
    // whose non-retryable failure carries the same result agentrun printed.
    const handle = h.client.workflow.getHandle(result.conversationId);
    expect((await handle.describe()).status.name).toBe('FAILED');
    const failure = (await handle.result().catch((e: unknown) => e)) as WorkflowFailedError;
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(failure.cause).toMatchObject({ type: 'ConversationFailed', nonRetryable: true, message: result.reason, details: [result] });
    const query = `WorkflowId = '${result.conversationId}' AND ExecutionStatus = 'Failed'`;
    let listed = 0;
    for (let i = 0; i < 100 && !listed; i++) {
      for await (const _ of h.client.workflow.list({ query })) listed++;
      if (!listed) await new Promise((r) => setTimeout(r, 100));
    }
    expect(listed).toBe(1);
  });

  it('continues as new mid-conversation and finishes with the full transcript', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        { repeat: 5, turn: { say: 'step {{n}}\n<write_to_file>\n<path>steps/{{n}}.txt</path>\n<content>\n{{n}}\n</content>\n</write_to_file>' } },
        { say: '<attempt_completion>\n<result>five steps</result>\n</attempt_completion>' },
      ],
    });
    const handle = await h.start({ task: 'Five steps', workspace, config: { model, continueAsNewEveryTurns: 2 } });
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');
    expect(result.turns).toBe(6);
    const first = await h.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory();
    expect(first.events?.some((e) => e.workflowExecutionContinuedAsNewEventAttributes)).toBe(true);
    const assistants = (await h.store.getMessages(handle.workflowId)).filter((m) => m.role === 'assistant');
    expect(assistants.map((m) => m.turn)).toEqual([1, 2, 3, 4, 5, 6]);
    for (let n = 1; n <= 5; n++) expect(await readFile(join(workspace, `steps/${n}.txt`), 'utf8')).toBe(`${n}`);
  });

  it('takes a message sent while it runs into the next turn', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        { say: '<ask_followup_question>\n<question>Ready?</question>\n</ask_followup_question>' },
        { say: '<attempt_completion>\n<result>ok</result>\n</attempt_completion>' },
      ],
    });
    const handle = await h.start({ task: 'Chat', workspace, config: { model } });
    await h.waitForState(handle.workflowId, (s) => s.status === 'waiting');
    await handle.signal(sendMessageSignal, { text: 'also: keep it short' });
    await handle.executeUpdate(answerUpdate, { args: [{ text: 'yes' }] });
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');
    const user = (await h.store.getMessages(handle.workflowId)).find((m) => m.kind === 'user');
    expect(user?.content).toBe('also: keep it short');
    expect(user?.turn).toBe(1);
  });
});
