// The scripted model server, driven by the real `openai` client over real HTTP.
import OpenAI, { APIError } from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/model/scripted/script.js';
import { startScriptedServer, type ScriptedServer } from '../../src/model/scripted/server.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(script: Script): Promise<{ server: ScriptedServer; client: OpenAI }> {
  const server = await startScriptedServer(script);
  servers.push(server);
  // logLevel off: the malformed-line test makes the SDK log the bad line on purpose.
  return { server, client: new OpenAI({ baseURL: server.url, apiKey: 'scripted', maxRetries: 0, logLevel: 'off' }) };
}

interface Headers {
  conversation?: string;
  turn?: number;
  attempt?: number;
  segment?: number;
  purpose?: string;
}

function headers(h: Headers = {}): Record<string, string> {
  return {
    'x-agentrun-conversation': h.conversation ?? 'c1',
    'x-agentrun-turn': String(h.turn ?? 1),
    'x-agentrun-attempt': String(h.attempt ?? 1),
    'x-agentrun-segment': String(h.segment ?? 0),
    'x-agentrun-purpose': h.purpose ?? 'turn',
  };
}

const USER: ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Do the task.' },
];

interface Collected {
  content: string;
  reasoning: string;
  calls: { id: string; name: string; arguments: string }[];
  finish: string | null;
  usage: ChatCompletionChunk['usage'] | undefined;
  chunks: ChatCompletionChunk[];
  order: string[];
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>, into?: Collected): Promise<Collected> {
  const out: Collected = into ?? { content: '', reasoning: '', calls: [], finish: null, usage: undefined, chunks: [], order: [] };
  for await (const chunk of stream) {
    out.chunks.push(chunk);
    if (chunk.usage) out.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    const delta = choice.delta as ChatCompletionChunk.Choice.Delta & { reasoning_content?: string };
    if (delta.reasoning_content) {
      out.reasoning += delta.reasoning_content;
      out.order.push('reasoning');
    }
    if (delta.content) {
      out.content += delta.content;
      out.order.push('content');
    }
    for (const tc of delta.tool_calls ?? []) {
      const call = (out.calls[tc.index] ??= { id: '', name: '', arguments: '' });
      if (tc.id) call.id = tc.id;
      if (tc.function?.name) call.name = tc.function.name;
      call.arguments += tc.function?.arguments ?? '';
      out.order.push('tool');
    }
    if (choice.finish_reason) out.finish = choice.finish_reason;
  }
  return out;
}

async function streamTurn(client: OpenAI, h: Headers, messages = USER, extra: Record<string, unknown> = {}, signal?: AbortSignal) {
  const stream = await client.chat.completions.create(
    { model: 'test-model', messages, stream: true, stream_options: { include_usage: true }, ...extra } as any,
    { headers: headers(h), signal },
  );
  return collect(stream as unknown as AsyncIterable<ChatCompletionChunk>);
}

/** The error a promise rejects with (fails the test if it resolves). */
async function failure(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

const TEXT = 'The quick brown fox 🦊 jumps over the lazy dog.\n<read_file>\n<path>src/a.ts</path>\n</read_file>';

describe('streaming', () => {
  for (const size of [1, 3, 24, 1000]) {
    it(`reassembles text exactly at ${size}-character chunks`, async () => {
      const { client } = await serve({ turns: [{ say: TEXT, chunk: size }] });
      const r = await streamTurn(client, {});
      expect(r.content).toBe(TEXT);
      expect(r.finish).toBe('stop');
      expect(r.chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(Math.ceil(TEXT.length / size));
      // Chunks look like OpenAI's: role first, then content, then the finish chunk, then usage.
      expect(r.chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      expect(r.chunks[0]!.object).toBe('chat.completion.chunk');
      expect(r.chunks[0]!.model).toBe('test-model');
      expect(r.chunks.at(-1)!.choices).toEqual([]);
    });
  }

  it('uses default_chunk and echoes the script model', async () => {
    const { client } = await serve({ turns: [{ say: 'x'.repeat(20) }], default_chunk: 7, model: 'scripted-model' });
    const r = await streamTurn(client, {});
    expect(r.chunks.filter((c) => c.choices[0]?.delta.content).map((c) => c.choices[0]!.delta.content!.length)).toEqual([7, 7, 6]);
    expect(r.chunks.every((c) => c.model === 'scripted-model')).toBe(true);
  });

  it('answers stream: false with one chat.completion JSON', async () => {
    const { client } = await serve({ turns: [{ say: 'Plain answer.', tool_calls: [{ name: 'read_file', arguments: { path: 'a' } }], reasoning: 'hmm' }] });
    const r = await client.chat.completions.create({ model: 'm', messages: USER }, { headers: headers() });
    expect(r.object).toBe('chat.completion');
    expect(r.choices[0]!.message.content).toBe('Plain answer.');
    expect(r.choices[0]!.message.tool_calls).toEqual([{ id: 'call_1_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }]);
    expect((r.choices[0]!.message as any).reasoning_content).toBe('hmm');
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    expect(r.usage?.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);
  });

  it('streams native tool_calls as fragments that reassemble', async () => {
    const args = { path: 'src/a.ts', content: 'export const a = 1;\n'.repeat(3) };
    const { client } = await serve({
      turns: [
        {
          say: 'Two calls.',
          chunk: 5,
          tool_calls: [
            { name: 'write_to_file', arguments: args },
            { name: 'execute_command', arguments: '{"command": "ls", broken', id: 'my-id' },
          ],
        },
      ],
    });
    const r = await streamTurn(client, { turn: 1 });
    expect(r.content).toBe('Two calls.');
    expect(r.finish).toBe('tool_calls');
    expect(r.calls).toEqual([
      { id: 'call_1_0', name: 'write_to_file', arguments: JSON.stringify(args) },
      // A string is sent verbatim, so a script can hand the runner invalid JSON.
      { id: 'my-id', name: 'execute_command', arguments: '{"command": "ls", broken' },
    ]);
    const fragments = r.chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(fragments[0]).toEqual({ index: 0, id: 'call_1_0', type: 'function', function: { name: 'write_to_file', arguments: '' } });
    expect(fragments.slice(1).every((f) => f.function!.arguments!.length <= 5)).toBe(true);
  });

  it('streams reasoning_content before the answer and counts reasoning tokens', async () => {
    const { client } = await serve({ turns: [{ reasoning: 'Let me think about the file layout first.', say: 'Done thinking.', chunk: 10 }] });
    const r = await streamTurn(client, {});
    expect(r.reasoning).toBe('Let me think about the file layout first.');
    expect(r.content).toBe('Done thinking.');
    expect(r.order.indexOf('content')).toBeGreaterThan(r.order.lastIndexOf('reasoning'));
    expect(r.usage?.completion_tokens_details?.reasoning_tokens).toBe(Math.ceil(41 / 4));
  });

  it('sends the usage chunk only with stream_options.include_usage', async () => {
    const { client } = await serve({ turns: [{ say: 'a'.repeat(40) }, { say: 'b', usage: { prompt_tokens: 1000, completion_tokens: 7 } }] });
    const plain = await collect((await client.chat.completions.create({ model: 'm', messages: USER, stream: true }, { headers: headers() })) as any);
    expect(plain.usage).toBeUndefined();
    expect(plain.chunks.every((c) => c.choices.length === 1 && !('usage' in c && c.usage))).toBe(true);

    const withUsage = await streamTurn(client, {});
    const promptChars = 'You are a coding agent.'.length + 'Do the task.'.length;
    expect(withUsage.usage).toEqual({ prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: 10, total_tokens: Math.ceil(promptChars / 4) + 10 });
    const overridden = await streamTurn(client, { turn: 2 });
    expect(overridden.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 7, total_tokens: 1007 });
  });

  it('waits first_token_delay_ms and delay_ms', async () => {
    const { client } = await serve({ turns: [{ say: 'abcdef', chunk: 2, first_token_delay_ms: 150, delay_ms: 60 }] });
    const t0 = Date.now();
    const r = await streamTurn(client, {});
    expect(r.content).toBe('abcdef');
    // 150 ms before the first chunk, then 60 ms before each of the 2 later text chunks.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150 + 2 * 60 - 10);
  });

  it('serves 30 streams at once without a MaxListenersExceededWarning', async () => {
    const { client } = await serve({ turns: [{ say: 'abcdef', chunk: 2, first_token_delay_ms: 100 }], repeat_last: true });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const all = await Promise.all(Array.from({ length: 30 }, (_, i) => streamTurn(client, { conversation: `c${i}` })));
      expect(all.map((r) => r.content)).toEqual(Array(30).fill('abcdef'));
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('serves GET /v1/models and /chat/completions without the /v1 prefix', async () => {
    const { server } = await serve({ turns: [{ say: 'hi' }], model: 'scripted-x' });
    const models = await new OpenAI({ baseURL: server.url, apiKey: 'scripted', maxRetries: 0 }).models.list();
    expect(models.data.map((m) => m.id)).toEqual(['scripted-x']);
    const bare = new OpenAI({ baseURL: server.url.replace(/\/v1$/, ''), apiKey: 'scripted', maxRetries: 0 });
    const r = await bare.chat.completions.create({ model: 'm', messages: USER }, { headers: headers() });
    expect(r.choices[0]!.message.content).toBe('hi');
    expect(server.requests.map((q) => q.path)).toEqual(['/chat/completions']);
  });

  it('rejects a body without messages with a 400', async () => {
    const { server } = await serve({ turns: [{ say: 'hi' }] });
    const res = await fetch(`${server.url}/chat/completions`, { method: 'POST', body: '{"model":"m"}' });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toMatch(/messages/);
  });
});

describe('turn selection', () => {
  it('answers by the turn header, records every request and keeps conversations apart', async () => {
    const { client, server } = await serve({ turns: [{ say: 'one' }, { say: 'two' }, { say: 'three' }] });
    const results = await Promise.all([
      streamTurn(client, { conversation: 'a', turn: 2 }),
      streamTurn(client, { conversation: 'b', turn: 1 }),
      streamTurn(client, { conversation: 'a', turn: 3, attempt: 4 }),
      streamTurn(client, { conversation: 'b', turn: 2 }),
    ]);
    expect(results.map((r) => r.content)).toEqual(['two', 'one', 'three', 'two']);
    expect(server.requests).toHaveLength(4);
    const r = server.requests.find((q) => q.conversation === 'a' && q.turn === 3)!;
    expect(r).toMatchObject({ attempt: 4, segment: 0, purpose: 'turn', path: '/v1/chat/completions' });
    expect(r.body.messages).toHaveLength(2);
    expect(r.headers['x-agentrun-conversation']).toBe('a');
    expect(r.at).toBeGreaterThan(0);
  });

  it('says clearly when the script ran out', async () => {
    const { client } = await serve({ turns: [{ say: 'one' }] });
    const r = await streamTurn(client, { turn: 2, conversation: 'conv-9' });
    expect(r.finish).toBe('stop');
    expect(r.content).toMatch(/script ran out.*1 turns.*turn 2 of conversation conv-9/);
  });

  it('expands { repeat, turn } with {{n}} and serves the last turn on with repeat_last', async () => {
    const { client } = await serve({
      turns: [
        { say: 'start' },
        { repeat: 3, turn: { say: 'pass {{n}} (turn {{turn}})', tool_calls: [{ name: 'read_file', arguments: { path: 'f{{n}}.ts' } }] } },
        { say: 'last' },
      ],
      repeat_last: 2,
    });
    const r3 = await streamTurn(client, { turn: 3 });
    expect(r3.content).toBe('pass 2 (turn 3)');
    expect(r3.calls[0]!.arguments).toBe('{"path":"f2.ts"}');
    expect((await streamTurn(client, { turn: 4 })).content).toBe('pass 3 (turn 4)');
    expect((await streamTurn(client, { turn: 5 })).content).toBe('last');
    expect((await streamTurn(client, { turn: 7 })).content).toBe('last');
    expect((await streamTurn(client, { turn: 8 })).content).toMatch(/script ran out: the script has 5 turns/);
  });

  it('repeat_last: true serves the last turn for ever', async () => {
    const { client } = await serve({ turns: [{ say: 'again' }], repeat_last: true });
    expect((await streamTurn(client, { turn: 200 })).content).toBe('again');
  });

  it('infers the turn from the assistant messages when no header came', async () => {
    const { client } = await serve({ turns: [{ say: 'one' }, { say: 'two' }] });
    const r = await client.chat.completions.create({
      model: 'm',
      messages: [...USER, { role: 'assistant', content: 'one' }, { role: 'user', content: 'go on' }],
    });
    expect(r.choices[0]!.message.content).toBe('two');
  });
});

// 'Hello' | ' world' | ', how are you' | ' today?' with cuts at 5, 11, 24.
const CUT_TEXT = 'Hello world, how are you today?';
const CUTS = [5, 11, 24];

describe('continuation', () => {
  it('prefill with prefix: true serves each segment and checks the partial', async () => {
    const { client, server } = await serve({ turns: [{ say: CUT_TEXT, truncate_at: CUTS, chunk: 4 }] });
    let partial = '';
    const finishes: string[] = [];
    for (let segment = 0; segment <= CUTS.length; segment++) {
      const messages = segment === 0 ? USER : [...USER, { role: 'assistant', content: partial, prefix: true } as any];
      const r = await streamTurn(client, { segment }, messages);
      partial += r.content;
      finishes.push(r.finish!);
    }
    expect(partial).toBe(CUT_TEXT);
    expect(finishes).toEqual(['length', 'length', 'length', 'stop']);
    expect(server.requests.map((q) => q.segment)).toEqual([0, 1, 2, 3]);
  });

  it('prefill with vLLM continue_final_message works the same', async () => {
    const { client } = await serve({ turns: [{ say: CUT_TEXT, truncate_at: CUTS }] });
    const r = await streamTurn(client, { segment: 2 }, [...USER, { role: 'assistant', content: 'Hello world' }], {
      continue_final_message: true,
      add_generation_prompt: false,
    });
    expect(r.content).toBe(', how are you');
    expect(r.finish).toBe('length');
  });

  it('answers a prefill that does not match what was served with an error text', async () => {
    const { client } = await serve({ turns: [{ say: CUT_TEXT, truncate_at: CUTS }] });
    const r = await streamTurn(client, { segment: 1 }, [...USER, { role: 'assistant', content: 'Hellx', prefix: true } as any]);
    expect(r.finish).toBe('stop');
    expect(r.content).toMatch(/\[scripted model\].*not what was served.*differ at offset 4: expected "o", got "x"/);
  });

  it('refuses an assistant prefill without prefix or continue_final_message', async () => {
    const { client } = await serve({ turns: [{ say: CUT_TEXT, truncate_at: CUTS }] });
    const r = await streamTurn(client, { segment: 1 }, [...USER, { role: 'assistant', content: 'Hello' }]);
    expect(r.content).toMatch(/no `prefix: true`.*continue_final_message/);
  });

  it('says so when a continuation segment comes without a partial answer, or beyond the last cut', async () => {
    const { client } = await serve({ turns: [{ say: CUT_TEXT, truncate_at: CUTS }] });
    expect((await streamTurn(client, { segment: 1 })).content).toMatch(/holds no partial answer/);
    const beyond = await streamTurn(client, { segment: 4 }, [...USER, { role: 'assistant', content: CUT_TEXT, prefix: true } as any]);
    expect(beyond.content).toMatch(/has 4 segments.*segment 4/);
  });

  it('prompt strategy continues after the user message, repeating continuation_overlap characters', async () => {
    const { client } = await serve({ turns: [{ say: CUT_TEXT, truncate_at: CUTS, continuation_overlap: 3 }] });
    const first = await streamTurn(client, { segment: 0 });
    expect(first.content).toBe('Hello');
    const ask = { role: 'user' as const, content: 'Continue exactly where you stopped.' };
    const second = await streamTurn(client, { segment: 1 }, [...USER, { role: 'assistant', content: 'Hello' }, ask]);
    // The model repeats "llo" before going on: the runner has to stitch it away.
    expect(second.content).toBe('llo world');
    expect(second.finish).toBe('length');
    const third = await streamTurn(client, { segment: 2 }, [...USER, { role: 'assistant', content: 'Hello world' }, ask]);
    expect(third.content).toBe('rld, how are you');
    // A runner that forgot to stitch sends the overlap back and is told.
    const unstitched = await streamTurn(client, { segment: 2 }, [...USER, { role: 'assistant', content: 'Hellollo world' }, ask]);
    expect(unstitched.content).toMatch(/\(prompt\): the partial answer sent back is not what was served/);
  });

  it('cuts inside native tool-call arguments and re-announces the call in the next segment', async () => {
    const args = { path: 'src/a.ts', content: 'abcdefghij' };
    const json = JSON.stringify(args);
    const say = 'Writing.';
    const { client } = await serve({
      turns: [{ say, tool_calls: [{ name: 'write_to_file', arguments: args }], truncate_at: [say.length + 10, say.length + 25] }],
    });
    const seg0 = await streamTurn(client, { segment: 0 });
    expect(seg0.content).toBe(say);
    expect(seg0.calls).toEqual([{ id: 'call_1_0', name: 'write_to_file', arguments: json.slice(0, 10) }]);
    expect(seg0.finish).toBe('length');
    const prefill = {
      role: 'assistant',
      content: say,
      prefix: true,
      tool_calls: [{ id: 'call_1_0', type: 'function', function: { name: 'write_to_file', arguments: json.slice(0, 10) } }],
    };
    const seg1 = await streamTurn(client, { segment: 1 }, [...USER, prefill as any]);
    expect(seg1.content).toBe('');
    expect(seg1.calls).toEqual([{ id: 'call_1_0', name: 'write_to_file', arguments: json.slice(10, 25) }]);
    // A runner may also send the partial arguments back as text; what counts is the characters.
    const seg2 = await streamTurn(client, { segment: 2 }, [...USER, { role: 'assistant', content: say + json.slice(0, 25), prefix: true } as any]);
    expect(seg2.calls[0]!.arguments).toBe(json.slice(25));
    expect(seg2.finish).toBe('tool_calls');
    expect(seg0.calls[0]!.arguments + seg1.calls[0]!.arguments + seg2.calls[0]!.arguments).toBe(json);
  });

  it('accepts a cut native call shown as text after the content, but not with wrong arguments', async () => {
    const args = { path: 'src/a.ts', content: 'abcdefghij' };
    const json = JSON.stringify(args);
    const say = 'Writing.';
    const { client } = await serve({ turns: [{ say, tool_calls: [{ name: 'write_to_file', arguments: args }], truncate_at: [say.length + 10] }] });
    const shown = (a: string) => `${say}\n[unfinished tool call write_to_file, arguments so far: ${a}]`;
    const ask = { role: 'user' as const, content: 'Continue.' };
    const ok = await streamTurn(client, { segment: 1 }, [...USER, { role: 'assistant', content: shown(json.slice(0, 10)) }, ask]);
    expect(ok.calls).toEqual([{ id: 'call_1_0', name: 'write_to_file', arguments: json.slice(10) }]);
    const bad = await streamTurn(client, { segment: 1 }, [...USER, { role: 'assistant', content: shown('{"path":"x') }, ask]);
    expect(bad.content).toMatch(/not what was served/);
    const badText = await streamTurn(client, { segment: 1 }, [...USER, { role: 'assistant', content: 'Writing!' + json.slice(0, 10) }, ask]);
    expect(badText.content).toMatch(/not what was served/);
  });

  it('continues a partial answer that ends at no cut (what a crashed attempt streamed) up to the next cut', async () => {
    const { client } = await serve({ turns: [{ say: CUT_TEXT, truncate_at: CUTS }] });
    const r = await client.chat.completions.create({ model: 'm', messages: [...USER, { role: 'assistant', content: 'Hel', prefix: true } as any] });
    expect(r.choices[0]!.message.content).toBe(CUT_TEXT.slice(3, CUTS[0]));
    expect(r.choices[0]!.finish_reason).toBe('length');
  });

  it('derives the segment from a prefill when no segment header came', async () => {
    const { client } = await serve({ turns: [{ say: CUT_TEXT, truncate_at: CUTS }] });
    const r = await client.chat.completions.create({ model: 'm', messages: [...USER, { role: 'assistant', content: 'Hello world', prefix: true } as any] });
    expect(r.choices[0]!.message.content).toBe(', how are you');
  });
});

describe('faults', () => {
  it('answers 429 with retry-after headers on the faulted attempt only', async () => {
    const { client } = await serve({
      turns: [
        {
          say: 'ok',
          faults: [
            { attempt: 1, http: 429, retry_after_ms: 1500 },
            { attempt: 2, http: 429, retry_after_s: 3 },
          ],
        },
      ],
    });
    const e1 = await failure(streamTurn(client, { attempt: 1 }));
    expect(e1).toBeInstanceOf(APIError);
    expect(e1.status).toBe(429);
    expect(e1.headers.get('retry-after-ms')).toBe('1500');
    expect(e1.headers.get('retry-after')).toBe('2');
    expect(e1.code).toBe('rate_limit_exceeded');
    const e2 = await failure(streamTurn(client, { attempt: 2 }));
    expect(e2.headers.get('retry-after')).toBe('3');
    expect(e2.headers.get('retry-after-ms')).toBeNull();
    expect((await streamTurn(client, { attempt: 3 })).content).toBe('ok');
  });

  it('answers other HTTP statuses with OpenAI-style bodies, or the scripted body', async () => {
    const { client } = await serve({
      turns: [
        {
          say: 'ok',
          faults: [
            { attempt: 1, http: 503 },
            { attempt: 2, http: 401 },
            { attempt: 3, http: 400, body: { error: { message: 'bad tools', type: 'invalid_request_error', code: 'invalid_tools' } } },
            { attempt: 4, http: 500, body: 'upstream exploded' },
          ],
        },
      ],
    });
    const e503 = await failure(streamTurn(client, { attempt: 1 }));
    expect([e503.status, e503.type]).toEqual([503, 'server_error']);
    const e401 = await failure(streamTurn(client, { attempt: 2 }));
    expect([e401.status, e401.code]).toEqual([401, 'invalid_api_key']);
    const e400 = await failure(streamTurn(client, { attempt: 3 }));
    expect([e400.status, e400.code, e400.message]).toEqual([400, 'invalid_tools', '400 bad tools']);
    const e500 = await failure(streamTurn(client, { attempt: 4 }));
    expect(e500.status).toBe(500);
    expect(e500.message).toMatch(/upstream exploded/);
  });

  it('answers context_length_exceeded like OpenAI', async () => {
    const { client } = await serve({ turns: [{ say: 'ok', faults: [{ attempt: 1, context_length_exceeded: true }] }] });
    const e = await failure(streamTurn(client, { attempt: 1 }));
    expect(e.status).toBe(400);
    expect(e.code).toBe('context_length_exceeded');
    expect(e.type).toBe('invalid_request_error');
    expect(e.message).toMatch(/maximum context length is/);
  });

  it('disconnects mid-stream after exactly N characters', async () => {
    const { client } = await serve({ turns: [{ say: TEXT, chunk: 8, faults: [{ attempt: 1, disconnect_after_chars: 20 }] }] });
    const seen: Collected = { content: '', reasoning: '', calls: [], finish: null, usage: undefined, chunks: [], order: [] };
    const stream = await client.chat.completions.create({ model: 'm', messages: USER, stream: true }, { headers: headers({ attempt: 1 }) });
    const e = await failure(collect(stream as any, seen));
    expect(e).toBeInstanceOf(Error);
    expect(seen.content).toBe(TEXT.slice(0, 20));
    expect(seen.finish).toBeNull();
    expect((await streamTurn(client, { attempt: 2 })).content).toBe(TEXT);
  });

  it('counts reasoning characters before a disconnect', async () => {
    const { client } = await serve({ turns: [{ reasoning: 'abcdefghij', say: 'klmnop', faults: [{ attempt: 1, disconnect_after_chars: 13 }] }] });
    const seen: Collected = { content: '', reasoning: '', calls: [], finish: null, usage: undefined, chunks: [], order: [] };
    await failure(collect((await client.chat.completions.create({ model: 'm', messages: USER, stream: true }, { headers: headers() })) as any, seen));
    expect([seen.reasoning, seen.content]).toEqual(['abcdefghij', 'klm']);
  });

  it('hangs after N characters until the client aborts, and close() ends hung streams', async () => {
    const { client, server } = await serve({
      turns: [
        {
          say: TEXT,
          chunk: 4,
          faults: [
            { attempt: 1, hang_after_chars: 12 },
            { attempt: 2, hang_after_chars: 0 },
          ],
        },
      ],
    });
    const controller = new AbortController();
    const seen: Collected = { content: '', reasoning: '', calls: [], finish: null, usage: undefined, chunks: [], order: [] };
    const stream = await client.chat.completions.create(
      { model: 'm', messages: USER, stream: true },
      { headers: headers({ attempt: 1 }), signal: controller.signal },
    );
    const reading = collect(stream as any, seen).catch((e) => e);
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.content).toBe(TEXT.slice(0, 12));
    expect(seen.finish).toBeNull();
    controller.abort();
    await reading;
    expect(seen.content).toBe(TEXT.slice(0, 12));

    // The second attempt hangs too; closing the server must not wait for it.
    const stream2 = await client.chat.completions.create({ model: 'm', messages: USER, stream: true }, { headers: headers({ attempt: 2 }) });
    const reading2 = collect(stream2 as any).then(
      () => 'ended',
      () => 'failed',
    );
    await new Promise((r) => setTimeout(r, 100));
    await server.close();
    expect(await reading2).toBe('failed');
  });

  it('injects a malformed SSE line that the client fails on', async () => {
    const { client } = await serve({ turns: [{ say: TEXT, chunk: 10, faults: [{ attempt: 1, malformed_line: 'data: {not json', after_chars: 10 }] }] });
    const seen: Collected = { content: '', reasoning: '', calls: [], finish: null, usage: undefined, chunks: [], order: [] };
    const stream = await client.chat.completions.create({ model: 'm', messages: USER, stream: true }, { headers: headers() });
    const e = await failure(collect(stream as any, seen));
    expect(e).toBeInstanceOf(SyntaxError);
    expect(seen.content).toBe(TEXT.slice(0, 10));
  });

  it('sends a mid-stream error event', async () => {
    const { client } = await serve({ turns: [{ say: TEXT, faults: [{ attempt: 1, stream_error: 'Overloaded', after_chars: 24 }] }] });
    const e = await failure(streamTurn(client, {}));
    expect(e).toBeInstanceOf(APIError);
    expect(e.message).toMatch(/Overloaded/);
  });

  it('applies a fault with `segment` to that continuation segment only', async () => {
    const { client } = await serve({ turns: [{ say: CUT_TEXT, truncate_at: CUTS, faults: [{ attempt: 1, segment: 1, http: 503 }] }] });
    expect((await streamTurn(client, { segment: 0 })).content).toBe('Hello');
    const e = await failure(streamTurn(client, { segment: 1 }, [...USER, { role: 'assistant', content: 'Hello', prefix: true } as any]));
    expect(e.status).toBe(503);
    const retry = await streamTurn(client, { segment: 1, attempt: 2 }, [...USER, { role: 'assistant', content: 'Hello', prefix: true } as any]);
    expect(retry.content).toBe(' world');
  });

  it('applies a fault without `segment` to every segment of that attempt', async () => {
    const { client } = await serve({ turns: [{ say: CUT_TEXT, truncate_at: CUTS, faults: [{ attempt: 1, http: 500 }] }] });
    expect((await failure(streamTurn(client, { segment: 0 }))).status).toBe(500);
    expect((await failure(streamTurn(client, { segment: 1 }, [...USER, { role: 'assistant', content: 'Hello', prefix: true } as any]))).status).toBe(500);
  });
});

describe('summary requests', () => {
  const history: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Summarise the conversation.' },
    { role: 'user', content: 'Add a greet function to src/greet.ts\nand test it.' },
    { role: 'assistant', content: '<read_file>\n<path>src/greet.ts</path>\n</read_file>' },
    { role: 'user', content: 'file contents…' },
  ];

  it('answers with a default state snapshot naming how many messages it saw', async () => {
    const { client } = await serve({ turns: [{ say: 'turn answer' }] });
    const r = await streamTurn(client, { purpose: 'summary', turn: 7 }, history);
    expect(r.content).toMatch(/^<state_snapshot>\n<overall_goal>Add a greet function to src\/greet.ts<\/overall_goal>/);
    expect(r.content).toMatch(/4 messages/);
    expect(r.content).toMatch(/<file_system_state>src\/greet.ts<\/file_system_state>/);
    expect(r.content).toMatch(/<\/state_snapshot>$/);
    expect(r.content.length).toBeGreaterThan(200);
    expect(r.content.length).toBeLessThan(800);
  });

  it('serves scripted summaries in order per conversation, the same one on a retry', async () => {
    const { client } = await serve({ turns: [{ say: 'x' }], summaries: ['first summary', { say: 'second summary', chunk: 3 }] });
    expect((await streamTurn(client, { purpose: 'summary', turn: 5, conversation: 'a' }, history)).content).toBe('first summary');
    expect((await streamTurn(client, { purpose: 'summary', turn: 5, conversation: 'a', attempt: 2 }, history)).content).toBe('first summary');
    expect((await streamTurn(client, { purpose: 'summary', turn: 9, conversation: 'b' }, history)).content).toBe('first summary');
    expect((await streamTurn(client, { purpose: 'summary', turn: 9, conversation: 'a' }, history)).content).toBe('second summary');
    // Past the end the last one is reused.
    expect((await streamTurn(client, { purpose: 'summary', turn: 12, conversation: 'a' }, history)).content).toBe('second summary');
    // Turns are unaffected by summary requests.
    expect((await streamTurn(client, { turn: 1, conversation: 'a' })).content).toBe('x');
  });
});

describe('script function', () => {
  it('is called per request, and a throwing one becomes an error text', async () => {
    let n = 0;
    const server = await startScriptedServer(() => {
      if (++n === 2) throw new Error('reload failed: bad field');
      return { turns: [{ say: `version ${n}` }] };
    });
    servers.push(server);
    const client = new OpenAI({ baseURL: server.url, apiKey: 'scripted', maxRetries: 0 });
    expect((await streamTurn(client, {})).content).toBe('version 1');
    expect((await streamTurn(client, {})).content).toMatch(/\[scripted model\] reload failed: bad field/);
    expect((await streamTurn(client, {})).content).toBe('version 3');
  });
});
