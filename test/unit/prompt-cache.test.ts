// Keeping the provider's prompt cache: consecutive requests under pruning pressure share their
// prefix byte for byte except at pruning steps, and the steps are turns apart; the cache hints each
// provider gets (prompt_cache_key, cache_control breakpoints) over real HTTP; cached tokens as
// providers report them, summed per turn, priced at the cached price.
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import { cacheSummary, usageByTurn } from '../../src/client/usage.js';
import { mergeSegments } from '../../src/model/merge.js';
import { continuationMessages } from '../../src/context/request.js';
import { costUsd } from '../../src/model/pricing.js';
import { cacheBody, needsCacheBreakpoints, PROVIDERS, providerProfile, settingsBody, withCacheBreakpoints } from '../../src/model/providers.js';
import { streamChat, toUsage } from '../../src/model/stream.js';
import { startScriptedServer, type ScriptedServer } from '../../src/model/scripted/server.js';
import { cacheHitRate } from '../../src/types.js';
import { requestText, sessionRequests, sharedPrefix, type SessionTurn } from '../helpers/cache-session.js';

const servers: ScriptedServer[] = [];
const quiet = { onText: () => {}, onReasoning: () => {} };
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('requests under pruning pressure', () => {
  // 4,000-token files read under a 24k safe zone: pruning must act every few turns.
  const turns: SessionTurn[] = [...sessionRequests({ conversationId: 'cache-snap', turns: 30, safeZone: 24_000, outputTokens: () => 4_000 })];

  it('each request starts with the previous one byte for byte, except at a pruning step', () => {
    const rows: string[] = [];
    for (let i = 1; i < turns.length; i++) {
      const before = requestText(turns[i - 1]!.messages);
      const now = requestText(turns[i]!.messages);
      const t = turns[i]!;
      // The previous request, without the closing bracket of its message list, is a prefix of this one.
      const appended = now.startsWith(before.slice(0, -1));
      if (!t.step) expect(appended, `turn ${t.turn} changed the request without a pruning step`).toBe(true);
      expect(t.fits).toBe(true);
      // The safe zone is never exceeded.
      expect(t.plan.tokensAfter).toBeLessThanOrEqual(24_000);
      rows.push(
        `${t.turn}: ${t.step ? 'step  ' : 'append'} ${((100 * sharedPrefix(before, now)) / now.length).toFixed(0)}% shared, ${t.plan.tokensAfter} tokens`,
      );
    }
    expect(rows).toMatchSnapshot();
  });

  it('pruning steps are at least 3 turns apart at 4,000 tokens a turn (60% of 24k: 9.6k of room)', () => {
    const steps = turns.filter((t) => t.step).map((t) => t.turn);
    expect(steps.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < steps.length; i++) expect(steps[i]! - steps[i - 1]!).toBeGreaterThanOrEqual(3);
    // A step goes down to the low-water mark.
    for (const t of turns.filter((x) => x.step)) expect(t.plan.tokensAfter).toBeLessThanOrEqual(0.6 * 24_000);
  });

  it('a continuation of an answer cut off by length starts with the same request, in both modes', () => {
    const base = turns.at(-1)!.messages;
    const partial = mergeSegments([{ content: 'Reading the', toolCalls: [], usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } }], 'prompt');
    for (const mode of ['prefill', 'prompt'] as const) {
      const { messages } = continuationMessages(base, partial, mode, { message: { prefix: true }, body: {} });
      expect(requestText(messages).startsWith(requestText(base).slice(0, -1))).toBe(true);
    }
  });

  it('the system prompt, the tools and the message ids are the same in every request', () => {
    const systems = new Set(turns.map((t) => JSON.stringify(t.messages[0])));
    expect(systems.size).toBe(1);
    const first = turns.at(-1)!.messages[1]!.content as string;
    for (const t of turns) expect(t.messages[1]!.content).toBe(first);
  });
});

describe('what each provider is sent to keep its cache', () => {
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Do the task.' },
  ];

  it('prompt_cache_key goes to the OpenAI profile only', () => {
    for (const name of [...PROVIDERS, 'scripted' as const]) {
      const body = cacheBody(
        name === 'scripted' ? providerProfile({ model: 'scripted:x.yaml' }) : providerProfile({ model: 'gpt-5', provider: name }),
        'conv-1',
      );
      if (name === 'openai') expect(body).toEqual({ prompt_cache_key: 'conv-1' });
      else expect(body, name).toEqual({});
    }
    expect(cacheBody(providerProfile({ model: 'my-model', baseUrl: 'http://10.0.0.2:8000/v1' }), 'conv-1')).toEqual({});
  });

  it('reaches the server as sent: the key for OpenAI, none for a generic server', async () => {
    const server = await startScriptedServer({ turns: [{ say: 'ok' }], repeat_last: true });
    servers.push(server);
    const client = new OpenAI({ baseURL: server.url, apiKey: 'scripted', maxRetries: 0 });
    for (const profile of [providerProfile({ model: 'gpt-5', provider: 'openai' }), providerProfile({ model: 'm', baseUrl: 'http://10.0.0.2:8000/v1' })]) {
      await streamChat({
        client,
        model: 'gpt-5',
        messages,
        extraBody: { ...settingsBody(profile, {}), ...cacheBody(profile, 'conv-1') },
        headers: {},
        ...quiet,
      });
    }
    const [openai, generic] = server.requests.map((r) => r.body as Record<string, unknown>);
    expect(openai!.prompt_cache_key).toBe('conv-1');
    expect(generic).not.toHaveProperty('prompt_cache_key');
  });

  it('marks the end of the system prompt and of the request for Anthropic models behind OpenRouter or LiteLLM', () => {
    expect(providerProfile({ model: 'anthropic/claude-sonnet-4.5', provider: 'openrouter' }).cacheBreakpoints).toBe(true);
    expect(providerProfile({ model: 'x', baseUrl: 'http://litellm.internal:4000' }).cacheBreakpoints).toBe(true);
    expect(providerProfile({ model: 'x', provider: 'openai' }).cacheBreakpoints).toBeFalsy();
    expect(needsCacheBreakpoints('anthropic/claude-sonnet-4.5')).toBe(true);
    expect(needsCacheBreakpoints('openai/gpt-5')).toBe(false);
    const mark = { type: 'ephemeral' };
    const marked = withCacheBreakpoints([...messages, { role: 'assistant', content: 'Sure.' }, { role: 'user', content: 'More.' }]);
    expect(marked[0]).toEqual({ role: 'system', content: [{ type: 'text', text: 'You are a coding agent.', cache_control: mark }] });
    expect(marked[1]).toEqual(messages[1]);
    expect(marked[3]).toEqual({ role: 'user', content: [{ type: 'text', text: 'More.', cache_control: mark }] });
    // A trailing prefill is what the model continues, not the prefix: the message before it is marked.
    const prefill = withCacheBreakpoints([...messages, { role: 'assistant', content: 'partial' }]);
    expect(prefill[1]).toEqual({ role: 'user', content: [{ type: 'text', text: 'Do the task.', cache_control: mark }] });
    expect(prefill[2]).toEqual({ role: 'assistant', content: 'partial' });
  });
});

describe('cached tokens as providers report them', () => {
  it('reads OpenAI and Anthropic-style fields, never more than the prompt', () => {
    expect(toUsage({ prompt_tokens: 1000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 768 } })?.cachedTokens).toBe(768);
    expect(toUsage({ prompt_tokens: 1000, completion_tokens: 10, cache_read_input_tokens: 512 })?.cachedTokens).toBe(512);
    expect(toUsage({ prompt_tokens: 100, completion_tokens: 10, cache_read_input_tokens: 512 })?.cachedTokens).toBe(100);
    expect(toUsage({ prompt_tokens: 100, completion_tokens: 10 })?.cachedTokens).toBeUndefined();
  });

  it('prices cached tokens at the cached price and sums them per turn with the hit rate', () => {
    // gpt-4o: $2.50 input, $1.25 cached, $10 output per million.
    expect(costUsd('gpt-4o', { promptTokens: 1_000_000, cachedTokens: 800_000, completionTokens: 0, totalTokens: 1_000_000 })).toBeCloseTo(
      0.2 * 2.5 + 0.8 * 1.25,
      8,
    );
    const rows = [
      { turn: 1, usage: { promptTokens: 1000, completionTokens: 50, totalTokens: 1050 }, costUsd: 0.01 },
      { turn: 2, usage: { promptTokens: 1200, cachedTokens: 1000, completionTokens: 50, totalTokens: 1250 }, costUsd: 0.004 },
      { turn: 2, usage: { promptTokens: 1300, cachedTokens: 1200, completionTokens: 20, totalTokens: 1320 }, costUsd: 0.002 },
    ];
    const turns = usageByTurn(rows);
    expect(turns).toEqual([
      { turn: 1, promptTokens: 1000, cachedTokens: 0, completionTokens: 50, totalTokens: 1050, costUsd: 0.01, requests: 1 },
      { turn: 2, promptTokens: 2500, cachedTokens: 2200, completionTokens: 70, totalTokens: 2570, costUsd: 0.006, requests: 2 },
    ]);
    expect(cacheSummary(turns)).toEqual({ promptTokens: 3500, cachedTokens: 2200, hitRate: 2200 / 3500 });
    expect(cacheHitRate({ promptTokens: 0 })).toBeUndefined();
  });

  it('the scripted model measures cached tokens as the prefix shared with the previous request of the conversation', async () => {
    const server = await startScriptedServer({ turns: [{ say: 'ok' }], repeat_last: true, prompt_cache: true });
    servers.push(server);
    const client = new OpenAI({ baseURL: server.url, apiKey: 'scripted', maxRetries: 0 });
    const call = (msgs: ChatCompletionMessageParam[], conversation: string) =>
      streamChat({
        client,
        model: 'scripted',
        messages: msgs,
        extraBody: { stream_options: { include_usage: true } },
        headers: { 'x-agentrun-conversation': conversation },
        ...quiet,
      });
    const first: ChatCompletionMessageParam[] = [
      { role: 'system', content: 'S'.repeat(4000) },
      { role: 'user', content: 'task' },
    ];
    const a = await call(first, 'c1');
    expect(a.usage.cachedTokens).toBeUndefined();
    const b = await call([...first, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }], 'c1');
    expect(b.usage.cachedTokens).toBeGreaterThan(0.9 * b.usage.promptTokens);
    expect(b.usage.cachedTokens).toBeLessThan(b.usage.promptTokens);
    // Another conversation has a cache of its own; a changed system prompt shares nothing.
    expect((await call(first, 'c2')).usage.cachedTokens).toBeUndefined();
    expect((await call([{ role: 'system', content: 'T' }, ...first.slice(1)], 'c1')).usage.cachedTokens).toBeUndefined();
  });
});
