// The SDK on the real stack: the example under examples/sdk runs as its own process (worker and
// client embedded), and the client's calls drive conversations on a harness worker.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, ConversationError, type AgentrunClient, type WatchEvent } from '../../src/index.js';
import { Store } from '../../src/store/index.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';

const run = promisify(execFile);
let h: Harness;
let client: AgentrunClient;

beforeAll(async () => {
  h = await createHarness();
  client = await createClient({ temporal: h.client, database: h.store, taskQueue: h.taskQueue, home: h.home });
});
afterAll(async () => {
  await client?.close();
  await h?.close();
});

async function until(events: AsyncIterable<WatchEvent>, type: WatchEvent['type']): Promise<WatchEvent[]> {
  const seen: WatchEvent[] = [];
  for await (const e of events) {
    seen.push(e);
    if (e.type === type) return seen;
  }
  throw new Error(`the stream ended without a ${type} event`);
}

describe('SDK', () => {
  it('the example embeds a worker with a custom tool and a client, and runs a conversation', async () => {
    const workspace = await tempRepo();
    const schema = uid('sdk').replace('-', '_');
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../../examples/sdk/main.ts'), workspace], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: h.temporalAddress,
        DATABASE_URL: h.databaseUrl,
        AGENTRUN_DB_SCHEMA: schema,
        AGENTRUN_WORKFLOW_BUNDLE: h.workflowBundlePath,
        AGENTRUN_HOME: h.home,
      },
      timeout: 120_000,
    });
    expect(stdout).toContain('tool open_tickets: ok #12 crash on empty input');
    expect(stdout).toContain('tool write_to_file: ok');
    expect(stdout).toContain('finished: completed');
    expect(stdout).toContain('result: Listed the 2 open bugs in BUGS.md.');
    expect(await readFile(join(workspace, 'BUGS.md'), 'utf8')).toBe('# Open bugs\n- #12 crash on empty input\n- #15 wrong exit code');
    const store = await Store.connect(h.databaseUrl, { schema });
    await store.pool.query(`drop schema if exists ${schema} cascade`);
    await store.close();
  });

  it('start, watch from an offset, answer, send, inspect, list', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        { say: '<ask_followup_question>\n<question>Which name?</question>\n</ask_followup_question>' },
        { say: '<write_to_file>\n<path>name.txt</path>\n<content>ada</content>\n</write_to_file>' },
        { say: '<attempt_completion>\n<result>named</result>\n</attempt_completion>' },
      ],
    });
    const { conversationId } = await client.start({ task: 'Pick a name', workspace, model, config: { maxTurns: 10 } });
    const first = await until(client.watch(conversationId), 'question_asked');
    expect(first[0]).toMatchObject({ conversationId, type: 'conversation_started', offset: expect.any(Number) });
    await h.waitForState(conversationId, (s) => s.status === 'waiting');
    expect((await client.state(conversationId)).pendingQuestion?.question).toBe('Which name?');
    await client.send(conversationId, 'keep it short');
    expect(await client.answer(conversationId, 'ada')).toMatchObject({ callId: expect.any(String) });
    // Resume after the last event seen: nothing seen twice, up to the end.
    const rest: WatchEvent[] = [];
    for await (const e of client.watch(conversationId, { from: first.at(-1)!.offset })) rest.push(e);
    expect(rest[0]!.offset).toBeGreaterThan(first.at(-1)!.offset);
    expect(rest.at(-1)).toMatchObject({ type: 'finished', status: 'completed' });
    const result = await client.result(conversationId);
    expect(result).toMatchObject({ status: 'completed', result: 'named' });

    const inspection = await client.inspect(conversationId);
    expect(inspection.conversation?.status).toBe('completed');
    expect(inspection.transcript.flatMap((t) => t.messages).some((m) => m.content.includes('keep it short'))).toBe(true);
    const listed = await client.list({ limit: 500 });
    expect(listed.find((c) => c.conversationId === conversationId)).toMatchObject({ status: 'completed', turns: result.turns });

    // Roll the finished conversation back to before the agent started.
    const r = await client.rollback(conversationId, 0);
    expect(r.removed).toContain('name.txt');
  });

  it('approve and deny, cancel, and clear errors for bad input', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        { say: '<write_to_file>\n<path>a.txt</path>\n<content>a</content>\n</write_to_file>' },
        { say: '<write_to_file>\n<path>b.txt</path>\n<content>b</content>\n</write_to_file>' },
        { say: '<ask_followup_question>\n<question>More?</question>\n</ask_followup_question>' },
      ],
    });
    const { conversationId } = await client.start({ task: 'Write files', workspace, model, config: { approval: 'always' } });
    await h.waitForState(conversationId, (s) => !!s.pendingApproval);
    await client.approve(conversationId, { reason: 'fine' });
    await h.waitForState(conversationId, (s) => s.pendingApproval?.preview.includes('b.txt') === true);
    await client.deny(conversationId, { reason: 'not b' });
    await h.waitForState(conversationId, (s) => !!s.pendingQuestion);
    await expect(client.start({ task: 'again', workspace, model, id: conversationId })).rejects.toThrow(
      new ConversationError(`a conversation with id ${conversationId} already exists; choose another id or inspect it`),
    );
    await client.cancel(conversationId, 'enough');
    const result = await client.result(conversationId);
    expect(result.status).toBe('cancelled');
    expect(await readFile(join(workspace, 'a.txt'), 'utf8')).toBe('a');
    await expect(readFile(join(workspace, 'b.txt'), 'utf8')).rejects.toThrow(/ENOENT/);

    await expect(client.start({ task: 'x', workspace })).rejects.toThrow(
      new ConversationError('invalid run option model: Invalid input: expected string, received undefined (give `model`, e.g. "gpt-4o" or "scripted:FILE")'),
    );
    await expect(client.start({ task: ' ', workspace, model: 'gpt-4o' })).rejects.toThrow(/the task is empty/);
    await expect(client.watch('no-such-conversation')[Symbol.asyncIterator]().next()).rejects.toThrow(
      new ConversationError('no conversation with id no-such-conversation'),
    );
    await expect(client.answer('no-such-conversation', 'x')).rejects.toThrow(new ConversationError('no conversation with id no-such-conversation'));
    await expect(client.answer(conversationId, 'late')).rejects.toThrow(/is not running any more/);
  });
});
