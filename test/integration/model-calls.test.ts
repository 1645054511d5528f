// Model calls through the real workflow and the scripted (or a raw node:http) server: a model
// slow to start is not retried, a first-token timeout abandons the attempt, billed failures are
// counted, a stream that never closes still completes, summaries are retried and counted, and
// per-call settings reach the server named as the provider expects.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timelineOf } from '../../src/client/inspection.js';
import { summaryOutputTokens } from '../../src/context/summarise.js';
import { serveScriptedFile } from '../../src/model/scripted/cli.js';
import type { RecordedRequest } from '../../src/model/scripted/server.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { prose } from '../helpers/prose.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };
const write = (path: string, content: string) => `<write_to_file>\n<path>${path}</path>\n<content>\n${content}\n</content>\n</write_to_file>`;

async function activityAttempts(id: string, type: string) {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  return timelineOf(history, 1).activities.filter((a) => a.type === type);
}

async function requestsOf(model: string, id: string): Promise<RecordedRequest[]> {
  const server = await serveScriptedFile(model.slice('scripted:'.length));
  return server.requests.filter((r) => r.conversation === id);
}

async function usageTotals(id: string) {
  const rows = await h.store.getUsage(id);
  return { tokens: rows.reduce((n, r) => n + r.usage.totalTokens, 0), cost: rows.reduce((n, r) => n + r.costUsd, 0), rows };
}

describe('slow first token', () => {
  it('heartbeats while the model has not started: one request, no retry', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [{ ...complete, first_token_delay_ms: 3500 }] });
    const id = uid('slow');
    const result = await h.run({ id, task: 't', workspace, config: { model, heartbeatTimeoutMs: 1000 } });
    expect(result.status).toBe('completed');
    expect((await requestsOf(model, id)).filter((r) => r.purpose === 'turn')).toHaveLength(1);
    expect((await activityAttempts(id, 'modelTurn'))[0]!.attempts).toBe(1);
  });

  it('abandons an attempt after the first-token timeout and retries', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [{ ...complete, faults: [{ attempt: 1, first_token_delay_ms: 60_000 }] }] });
    const id = uid('ftt');
    const started = Date.now();
    const result = await h.run({ id, task: 't', workspace, config: { model, heartbeatTimeoutMs: 1000, firstTokenTimeoutMs: 1500 } });
    expect(result.status).toBe('completed');
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await requestsOf(model, id)).map((r) => r.attempt)).toEqual([1, 2]);
    const call = (await activityAttempts(id, 'modelTurn'))[0]!;
    expect(call.attempts).toBe(2);
  });
});

describe('billed failures', () => {
  it('counts the usage a failed attempt reported (stream cut after its usage, error body with usage)', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        {
          say: write('a.txt', 'ok'),
          usage: { prompt_tokens: 1000, completion_tokens: 100 },
          faults: [
            { attempt: 1, disconnect_after_chars: 10, with_usage: true },
            { attempt: 2, http: 500, with_usage: true },
          ],
        },
        complete,
      ],
    });
    const id = uid('billed');
    const result = await h.run({ id, task: 't', workspace, config: { model } });
    expect(result.status).toBe('completed');
    const { tokens, cost, rows } = await usageTotals(id);
    // Turn 1: three attempts billed (1100 + the error body's prompt tokens + 1100), turn 2 once.
    expect(rows.filter((r) => r.purpose === 'turn' && r.seq === 1).map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(rows.find((r) => r.attempt === 1)!.usage.totalTokens).toBe(1100);
    expect(result.usage.totalTokens).toBe(tokens);
    expect(result.costUsd).toBeCloseTo(cost, 6);
  });
});

/** An OpenAI-compatible server that sends the whole answer and `[DONE]` but never closes. */
async function openEndedServer(answer: string) {
  const requests: { headers: IncomingMessage['headers']; body: any }[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (b) => (raw += b));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: JSON.parse(raw) });
      // No content-length, no chunked encoding, no close: the body only ends when the socket does.
      res.useChunkedEncodingByDefault = false;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (obj: unknown) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
      const base = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'open-ended' };
      chunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
      chunk({ ...base, choices: [{ index: 0, delta: { content: answer }, finish_reason: null }] });
      chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      chunk({ ...base, choices: [], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } });
      res.write('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A server whose first answer stops after a few words and then sends nothing, the connection held open; later requests are answered whole. */
async function silentMidAnswerServer(answer: string) {
  let requests = 0;
  let silentClosed = false;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const n = ++requests;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (obj: unknown) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
      const base = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'silent' };
      chunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
      if (n === 1) {
        chunk({ ...base, choices: [{ index: 0, delta: { content: 'I will now' }, finish_reason: null }] });
        res.on('close', () => (silentClosed = true));
        return;
      }
      chunk({ ...base, choices: [{ index: 0, delta: { content: answer }, finish_reason: null }] });
      chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      chunk({ ...base, choices: [], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } });
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: () => requests,
    silentClosed: () => silentClosed,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Point the in-process worker's model client at a real server for one test. */
async function withProvider<T>(url: string, fn: () => Promise<T>): Promise<T> {
  const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
  process.env.OPENAI_API_KEY = 'test-key';
  process.env.OPENAI_BASE_URL = url;
  try {
    return await fn();
  } finally {
    if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved.key;
    if (saved.url === undefined) delete process.env.OPENAI_BASE_URL;
    else process.env.OPENAI_BASE_URL = saved.url;
  }
}

describe('streams that do not end', () => {
  it('completes once the answer and usage are in, though the server keeps the connection open', async () => {
    const server = await openEndedServer(complete.say);
    try {
      const workspace = await tempRepo();
      const id = uid('open');
      const result = await withProvider(server.url, () => h.run({ id, task: 't', workspace, config: { model: 'open-ended-model', heartbeatTimeoutMs: 2000 } }));
      expect(result.status).toBe('completed');
      expect(server.requests).toHaveLength(1);
      expect((await activityAttempts(id, 'modelTurn'))[0]!.attempts).toBe(1);
      expect(result.usage.totalTokens).toBe(60);
      // The x-agentrun-* headers are for the scripted model only, never for a provider.
      expect(Object.keys(server.requests[0]!.headers).filter((k) => k.startsWith('x-agentrun'))).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('streams that go silent', () => {
  it('a stream silent mid-answer is abandoned within the heartbeat timeout: the attempt is retried and the silent request closed, not left holding a connection and a call slot', async () => {
    const server = await silentMidAnswerServer(complete.say);
    try {
      const workspace = await tempRepo();
      const id = uid('silent');
      const result = await withProvider(server.url, () => h.run({ id, task: 't', workspace, config: { model: 'silent-model', heartbeatTimeoutMs: 2000 } }));
      expect(result.status).toBe('completed');
      expect(server.requests()).toBe(2);
      expect((await activityAttempts(id, 'modelTurn'))[0]!.attempts).toBe(2);
      // The worker let go of the silent request (its socket closed), rather than awaiting it for ever.
      const until = Date.now() + 30_000;
      while (!server.silentClosed() && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect(server.silentClosed()).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('streams that trickle', () => {
  it('an answer that trickles for ever is cut at the longest time one answer may stream: its calls are not run, the model is told, the conversation goes on', async () => {
    let requests = 0;
    let trickleClosed = false;
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const n = ++requests;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const base = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'trickle' };
        const chunk = (content: string, finish: string | null = null) =>
          res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`);
        if (n === 1) {
          // A tool call begins, then a few bytes every 100 ms, never finishing.
          chunk(write('pwned.txt', 'x'));
          const timer = setInterval(() => chunk(' .'), 100);
          res.on('close', () => {
            clearInterval(timer);
            trickleClosed = true;
          });
          return;
        }
        chunk(complete.say, 'stop');
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const saved = process.env.AGENTRUN_MAX_ANSWER_SECONDS;
    process.env.AGENTRUN_MAX_ANSWER_SECONDS = '2';
    try {
      const workspace = await tempRepo();
      const id = uid('trickle');
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const result = await withProvider(url, () => h.run({ id, task: 't', workspace, config: { model: 'trickle-model', heartbeatTimeoutMs: 2000 } }));
      expect(result.status).toBe('completed');
      expect(requests).toBe(2);
      expect(trickleClosed).toBe(true);
      const first = (await h.store.getMessages(id)).find((m) => m.role === 'assistant');
      expect(first?.content).toContain('[agentrun: this answer was cut at 2 s, the longest one answer may stream; its tool calls were not run.');
      expect((await h.store.getMessages(id)).some((m) => m.toolName === 'write_to_file')).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.AGENTRUN_MAX_ANSWER_SECONDS;
      else process.env.AGENTRUN_MAX_ANSWER_SECONDS = saved;
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('summaries', () => {
  it('retries a summary on 429 (honouring retry-after) and 5xx, and counts its tokens and cost', async () => {
    // Long answers fill a small window: cleanup cannot help (it clears tool results), a summary must.
    const turns = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => ({ say: `${prose(n, 4_000)}\n${write(`f${n}.txt`, 'x')}` }));
    const model = await scriptModel({
      turns: [...turns, complete],
      summaries: [
        {
          say: '<state_snapshot><overall_goal>write files</overall_goal></state_snapshot>',
          faults: [
            { attempt: 1, http: 429, retry_after_ms: 2000 },
            { attempt: 2, http: 503 },
          ],
        },
      ],
    });
    const workspace = await tempRepo();
    const id = uid('sum');
    const result = await h.run({ id, task: 'write files', workspace, config: { model, contextWindow: 20_000, safeZone: 9_000, keepRecentTurns: 1 } });
    expect(result.status).toBe('completed');
    const summaries = (await requestsOf(model, id)).filter((r) => r.purpose === 'summary');
    expect(summaries.map((r) => r.attempt).slice(0, 3)).toEqual([1, 2, 3]);
    expect(summaries[1]!.at - summaries[0]!.at).toBeGreaterThanOrEqual(2000);
    expect((await h.store.getPruneState(id)).summary).not.toBeNull();
    // Sized from the window: its answer is capped at a quarter of the 20k window.
    expect(summaries[0]!.body.max_tokens).toBe(summaryOutputTokens(20_000));
    const { tokens, cost, rows } = await usageTotals(id);
    expect(rows.some((r) => r.purpose === 'summary')).toBe(true);
    expect(result.usage.totalTokens).toBe(tokens);
    expect(result.costUsd).toBeCloseTo(cost, 6);
  });
});

describe('summaries that cannot succeed', () => {
  it('does not retry a summary refused with 400: the turn goes on without it', async () => {
    const turns = [1, 2, 3, 4, 5, 6].map((n) => ({ say: `${prose(n, 4_000)}\n${write(`f${n}.txt`, 'x')}` }));
    const model = await scriptModel({ turns: [...turns, complete], summaries: [{ say: 'unused', faults: [{ attempt: 1, http: 400 }] }] });
    const workspace = await tempRepo();
    const id = uid('sum400');
    await h.run({ id, task: 'write files', workspace, config: { model, contextWindow: 20_000, safeZone: 9_000, keepRecentTurns: 1 } });
    const summaries = (await requestsOf(model, id)).filter((r) => r.purpose === 'summary');
    expect(summaries.map((r) => r.attempt)).toEqual([1]);
    const steps = await activityAttempts(id, 'modelTurn');
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.every((a) => a.attempts === 1)).toBe(true);
    const records = await h.store.getPruneRecords(id);
    expect(records.some((r) => r.actions.includes('summary request failed'))).toBe(true);
  });
});

describe('per-call settings', () => {
  for (const [provider, param] of [
    ['openai', 'max_completion_tokens'],
    ['vllm', 'max_tokens'],
  ] as const) {
    it(`sends --max-output-tokens as ${param}, temperature and reasoning effort (${provider})`, async () => {
      const workspace = await tempRepo();
      const model = await scriptModel({ turns: [complete] });
      const id = uid('settings');
      const result = await h.run({ id, task: 't', workspace, config: { model, provider, maxOutputTokens: 321, temperature: 0.2, reasoningEffort: 'low' } });
      expect(result.status).toBe('completed');
      const body = (await requestsOf(model, id))[0]!.body;
      expect(body[param]).toBe(321);
      expect(body[param === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens']).toBeUndefined();
      expect(body.temperature).toBe(0.2);
      expect(body.reasoning_effort).toBe('low');
      expect(body.stream_options).toEqual({ include_usage: true });
    });
  }
});
