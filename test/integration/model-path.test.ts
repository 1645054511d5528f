// The model path through the real workflow: provider faults, continuation on length in both
// strategies and both tool formats, context-length recovery, hung streams and cancellation.
import { conversationResult } from '../../src/client/outcome.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timelineOf } from '../../src/client/inspection.js';
import { cancelSignal } from '../../workflows/api.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const fixture = (name: string) => 'scripted:' + join(import.meta.dirname, '../fixtures', name);
const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };
const write = (path: string, content: string) => `<write_to_file>\n<path>${path}</path>\n<content>\n${content}\n</content>\n</write_to_file>`;

async function modelAttempts(id: string) {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  return timelineOf(history, 1).activities.filter((a) => a.type === 'modelTurn');
}

describe('provider failures', () => {
  it('waits out a 429 with retry-after, continues a dropped stream from what it streamed', async () => {
    const workspace = await tempRepo();
    const result = await h.run({ task: 'notes', workspace, config: { model: fixture('faults.yaml') } });
    expect(result.status).toBe('completed');
    const calls = await modelAttempts(result.conversationId);
    expect(calls[0]!.attempts).toBe(3);
    expect(await readFile(join(workspace, 'NOTES.md'), 'utf8')).toBe('# Notes\nWritten once, whatever the retries.');
    const stream = (await h.store.readStream(result.conversationId, 0, 10_000)).map((r) => r.event);
    // The 429 came before any output: attempt 2 starts over (a reset). The stream dropped mid-answer:
    // attempt 3 goes on from what attempt 2 streamed, no token asked for twice (a continuation, no reset).
    expect(stream.filter((e) => e.type === 'reset').map((e) => (e as { attempt: number }).attempt)).toEqual([2]);
    expect(stream.filter((e) => e.type === 'continuation')).toEqual([expect.objectContaining({ segment: 1, resumedAfter: 2 })]);
    // Only the final attempt's text survives in the store.
    const assistant = await h.store.getMessage(result.conversationId, 1);
    expect(assistant?.content.match(/I'll write the notes file/g)).toHaveLength(1);
  });

  it('fails fast on a 400 with a typed, non-retryable failure', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [{ say: 'x', faults: [{ attempt: 1, http: 400, body: { error: { message: 'bad field "foo"', type: 'invalid_request_error' } } }] }],
    });
    const result = await h.run({ task: 't', workspace, config: { model } });
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/rejected the request \(400\).*bad field/);
    expect((await modelAttempts(result.conversationId))[0]!.attempts).toBe(1);
  });

  it('fails fast on 401 naming the credentials', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [{ say: 'x', faults: [{ attempt: 1, http: 401 }] }] });
    const result = await h.run({ task: 't', workspace, config: { model } });
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/credentials.*OPENAI_API_KEY/);
  });

  it('retries 5xx and a malformed SSE line, quoting the line in the failure', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        {
          say: write('a.txt', 'ok'),
          faults: [
            { attempt: 1, http: 503 },
            { attempt: 2, malformed_line: 'data: {not json' },
          ],
        },
        complete,
      ],
    });
    const result = await h.run({ task: 't', workspace, config: { model } });
    expect(result.status).toBe('completed');
    expect((await modelAttempts(result.conversationId))[0]!.attempts).toBe(3);
    // The history keeps the last failure of a retried activity: the malformed line, quoted.
    const history = await h.client.workflow.getHandle(result.conversationId).fetchHistory();
    const lastFailure = history.events?.find((e) => e.activityTaskStartedEventAttributes?.lastFailure)?.activityTaskStartedEventAttributes?.lastFailure;
    expect(lastFailure?.message).toContain('Offending line: "{not json"');
  });

  it('detects a hung stream by the heartbeat timeout and retries', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [{ say: write('a.txt', 'ok'), faults: [{ attempt: 1, hang_after_chars: 10 }] }, complete] });
    const result = await h.run({ task: 't', workspace, config: { model, heartbeatTimeoutMs: 2000 } });
    expect(result.status).toBe('completed');
    const first = (await modelAttempts(result.conversationId))[0]!;
    expect(first.attempts).toBe(2);
  });

  it('prunes harder and retries once after a context-length error', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [{ say: write('a.txt', 'ok'), faults: [{ attempt: 1, context_length_exceeded: true }] }, complete] });
    const result = await h.run({ task: 't', workspace, config: { model } });
    expect(result.status).toBe('completed');
    const calls = await modelAttempts(result.conversationId);
    // The first callModel failed without retry; the workflow prepared the context again and called anew.
    expect(calls[0]!.outcome).toBe('failed');
    expect(calls[0]!.failure).toMatch(/context window/);
    expect(calls.filter((c) => c.outcome === 'completed')).toHaveLength(2);
  });

  it('cancelling the conversation aborts the model request', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [{ say: 'slow '.repeat(2000), chunk: 5, delay_ms: 50 }] });
    // The cancellation reaches the activity with its next heartbeat, which the SDK sends at most
    // every 80% of the heartbeat timeout: 1.6 s here, 24 s at the default 30 s (the stream takes 100 s).
    const handle = await h.start({ task: 't', workspace, config: { model, heartbeatTimeoutMs: 2000 } });
    for (;;) {
      const rows = await h.store.readStream(handle.workflowId, 0, 100);
      if (rows.some((r) => r.event.type === 'delta')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await handle.signal(cancelSignal, { reason: 'stop now' });
    await handle.cancel();
    const result = await conversationResult(handle);
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('stop now');
    // The answer never completed: the stream was aborted, not drained.
    expect(await h.store.getMessage(handle.workflowId, 1)).toBeNull();
  });
});

describe('continuation on length', () => {
  for (const strategy of ['prompt', 'prefill'] as const) {
    it(`merges three segments cut inside an XML tool call (${strategy})`, async () => {
      const workspace = await tempRepo();
      const result = await h.run({ task: 't', workspace, config: { model: fixture('continuation.yaml'), continuation: strategy } });
      expect(result.status).toBe('completed');
      expect(await readFile(join(workspace, 'src/long.ts'), 'utf8')).toBe("export const lines = [\n  'one',\n  'two',\n  'three',\n  'four',\n];");
      const message = await h.store.getMessage(result.conversationId, 1);
      expect(message?.meta?.segments).toBe(3);
      const segments = await h.store.getSegments(result.conversationId, 1);
      const summed = segments.reduce((n, s) => n + s.usage.totalTokens, 0);
      expect((message?.meta?.usage as { totalTokens: number }).totalTokens).toBe(summed);
      const events = (await h.store.readStream(result.conversationId, 0, 10_000)).map((r) => r.event);
      expect(events.filter((e) => e.type === 'continuation')).toHaveLength(2);
    });
  }

  it('joins native tool-call arguments cut inside the JSON', async () => {
    const workspace = await tempRepo();
    const result = await h.run({ task: 't', workspace, config: { model: fixture('native-continuation.yaml'), toolFormat: 'native' } });
    expect(result.status).toBe('completed');
    expect(await readFile(join(workspace, 'src/long.ts'), 'utf8')).toBe("export const lines = ['one', 'two', 'three', 'four'];\n");
  });

  it('runs native tool calls end to end', async () => {
    const workspace = await tempRepo();
    const result = await h.run({ task: 't', workspace, config: { model: fixture('native-tools.yaml'), toolFormat: 'native' } });
    expect(result.status).toBe('completed');
    const results = (await h.store.getMessages(result.conversationId)).filter((m) => m.kind === 'tool_result');
    expect(results.length).toBeGreaterThan(1);
    expect(results.every((m) => m.meta?.nativeId)).toBe(true);
  });

  it('keeps reasoning apart from the answer: reasoning_content deltas and <thinking> blocks', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        { reasoning: 'provider reasoning here', say: '<thinking>\nmy private plan\n</thinking>\nWriting it now.\n' + write('a.txt', 'ok'), chunk: 5 },
        complete,
      ],
    });
    const result = await h.run({ task: 't', workspace, config: { model } });
    expect(result.status).toBe('completed');
    const events = (await h.store.readStream(result.conversationId, 0, 10_000)).map((r) => r.event).filter((e) => 'seq' in e && e.seq === 1);
    const text = events
      .filter((e) => e.type === 'delta')
      .map((e) => (e as { text: string }).text)
      .join('');
    const reasoning = events
      .filter((e) => e.type === 'reasoning')
      .map((e) => (e as { text: string }).text)
      .join('');
    expect(reasoning).toContain('provider reasoning here');
    expect(reasoning).toContain('my private plan');
    expect(text).not.toContain('my private plan');
    expect(text).toContain('Writing it now.');
    expect((await h.store.getMessage(result.conversationId, 1))?.reasoning).toBe('provider reasoning here');
  });
});
