// streamChat against a real node:http server: when a call is complete, when it waits, when it gives up.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { failedAttemptUsage, FirstTokenTimeout, streamChat } from '../../src/model/stream.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

const base = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm' };
const send = (res: ServerResponse, obj: unknown) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
const text = (t: string) => ({ ...base, choices: [{ index: 0, delta: { content: t }, finish_reason: null }] });
const finish = { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
const usage = { ...base, choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } };

async function serve(handler: (res: ServerResponse) => void): Promise<OpenAI> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      handler(res);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return new OpenAI({ apiKey: 'k', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, maxRetries: 0 });
}

const call = (client: OpenAI, extra: Partial<Parameters<typeof streamChat>[0]> = {}) =>
  streamChat({ client, model: 'm', messages: [{ role: 'user', content: 'hi' }], headers: {}, onText: () => {}, onReasoning: () => {}, ...extra });

describe('streamChat', () => {
  it('cuts an answer past the byte cap, drops its calls and tells the model in the answer itself', async () => {
    const client = await serve((res) => {
      const call = (args: string) => ({
        ...base,
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'write_to_file', arguments: args } }] }, finish_reason: null }],
      });
      send(res, text('x'.repeat(3000)));
      send(res, call('{"path": "big.txt", "content": "'));
      // A provider that would go on for ever: the cut ends it.
      const more = setInterval(() => send(res, call('y'.repeat(4096))), 5);
      res.on('close', () => clearInterval(more));
    });
    const streamed: string[] = [];
    const r = await call(client, { maxAnswerBytes: 16 * 1024, onText: (t) => streamed.push(t) });
    expect(r.cut).toBe('bytes');
    expect(r.toolCalls).toEqual([]);
    expect(r.finishReason).toBe('stop');
    expect(r.content).toMatch(/^x{3000}\n\n\[agentrun: this answer was cut at 16 KiB, the most one answer may hold; its tool calls were not run\./);
    expect(streamed.join('')).toBe(r.content);
  });

  it('cuts an answer that trickles past the longest time one answer may stream, however steady its heartbeat', async () => {
    const client = await serve((res) => {
      send(res, text('a'));
      const drip = setInterval(() => send(res, text('.')), 20);
      res.on('close', () => clearInterval(drip));
    });
    let beats = 0;
    const r = await call(client, { maxAnswerMs: 1000, onChunk: () => beats++ });
    expect(r.cut).toBe('time');
    expect(r.content).toMatch(/^a\.+\n\n\[agentrun: this answer was cut at 1 s, the longest one answer may stream/);
    expect(beats).toBeGreaterThan(5);
  });

  it('completes after the finish reason when no usage comes and the connection stays open', async () => {
    const client = await serve((res) => {
      send(res, text('hello'));
      send(res, finish);
      res.write('data: [DONE]\n\n');
    });
    const started = Date.now();
    const r = await call(client, { usageGraceMs: 200 });
    expect(r.content).toBe('hello');
    expect(r.usageReported).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('keeps a whole answer when the connection breaks after the finish reason', async () => {
    const client = await serve((res) => {
      send(res, text('hello'));
      send(res, finish);
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const r = await call(client);
    expect(r.finishReason).toBe('stop');
  });

  it('gives up after the first-token timeout, heartbeating until then', async () => {
    const client = await serve(() => {});
    const beats: number[] = [];
    const err = await call(client, { firstTokenTimeoutMs: 700, waitBeatMs: 100, onWaiting: (ms) => beats.push(ms) }).catch((e) => e);
    expect(err).toBeInstanceOf(FirstTokenTimeout);
    expect(beats.length).toBeGreaterThanOrEqual(4);
  });

  it('stops the waiting heartbeat once tokens flow, so a later hang is a dead stream', async () => {
    let beatsAfterToken = 0;
    let gotToken = false;
    const client = await serve((res) => {
      send(res, text('a'));
      setTimeout(() => res.socket?.destroy(), 500);
    });
    await call(client, { waitBeatMs: 50, onWaiting: () => (gotToken ? beatsAfterToken++ : 0), onText: () => (gotToken = true) }).catch(() => {});
    expect(gotToken).toBe(true);
    expect(beatsAfterToken).toBe(0);
  });

  it('attaches usage reported before a failure to the error', async () => {
    const client = await serve((res) => {
      send(res, text('par'));
      send(res, usage);
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const err = await call(client).catch((e) => e);
    expect(failedAttemptUsage(err)).toEqual({ promptTokens: 7, completionTokens: 3, totalTokens: 10, reasoningTokens: undefined, cachedTokens: undefined });
  });
});
