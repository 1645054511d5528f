// The x-agentrun-* headers go to the scripted model only, never to a real provider.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resolveModel } from '../../src/model/client.js';

const seen: IncomingHttpHeaders[] = [];
const server = createServer((req, res) => {
  seen.push(req.headers);
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      id: 'x',
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    }),
  );
});
const saved = { key: process.env.OPENAI_API_KEY, base: process.env.OPENAI_BASE_URL };
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.env.OPENAI_API_KEY = 'sk-test';
  process.env.OPENAI_BASE_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => {
  server.close();
  process.env.OPENAI_API_KEY = saved.key;
  process.env.OPENAI_BASE_URL = saved.base;
  if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
  if (saved.base === undefined) delete process.env.OPENAI_BASE_URL;
});

it('a real provider gets the request without x-agentrun-* headers', async () => {
  const m = await resolveModel('gpt-4o');
  await m.client.chat.completions.create(
    { model: m.model, messages: [{ role: 'user', content: 'hi' }] },
    { headers: { 'x-agentrun-conversation': 'c1', 'x-agentrun-turn': '3', 'x-other': 'kept' } },
  );
  expect(seen).toHaveLength(1);
  expect(Object.keys(seen[0]!).filter((k) => k.startsWith('x-agentrun-'))).toEqual([]);
  expect(seen[0]!['x-other']).toBe('kept');
  expect(seen[0]!.authorization).toBe('Bearer sk-test');
});
