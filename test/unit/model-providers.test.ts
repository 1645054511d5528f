import { afterEach, describe, expect, it } from 'vitest';
import { QUICKSTART_SCRIPT, runRequestFromFlags } from '../../src/cli/options.js';
import { contextWindowFor } from '../../src/model/tokens.js';
import { summaryBudgetChars, summaryOutputTokens } from '../../src/context/summarise.js';
import { profileFor } from '../../src/model/call.js';
import { userModel } from '../../src/model/models.js';
import { inferProvider, prefillMarks, providerProfile, settingsBody } from '../../src/model/providers.js';
import { tempDir } from '../helpers/temp.js';

afterEach(() => {
  delete process.env.AGENTRUN_MODELS;
});

describe('provider profiles', () => {
  it('infers the provider from the base URL', () => {
    expect(inferProvider(undefined)).toBe('openai');
    expect(inferProvider('https://api.deepseek.com/beta')).toBe('deepseek');
    expect(inferProvider('https://openrouter.ai/api/v1')).toBe('openrouter');
    expect(inferProvider('http://127.0.0.1:11434/v1')).toBe('ollama');
    expect(inferProvider('http://127.0.0.1:8080/v1')).toBeUndefined();
    expect(providerProfile({ model: 'qwen2.5-coder', baseUrl: 'http://10.0.0.2:8000/v1' }).continuation).toBe('prefill');
    expect(providerProfile({ model: 'my-model', baseUrl: 'http://10.0.0.2:8000/v1' }).name).toBe('generic');
    expect(providerProfile({ model: 'scripted:/x.yaml' }).name).toBe('scripted');
    expect(providerProfile({ model: 'scripted:/x.yaml', provider: 'openai' }).name).toBe('openai');
  });

  it('names the settings as each provider expects', () => {
    const s = { maxOutputTokens: 32, temperature: 0.5, reasoningEffort: 'high' };
    expect(settingsBody(providerProfile({ model: 'gpt-5', provider: 'openai' }), s)).toEqual({
      max_completion_tokens: 32,
      temperature: 0.5,
      reasoning_effort: 'high',
      stream_options: { include_usage: true },
    });
    expect(settingsBody(providerProfile({ model: 'x', provider: 'openrouter' }), s)).toEqual({
      max_tokens: 32,
      temperature: 0.5,
      reasoning: { effort: 'high' },
      stream_options: { include_usage: true },
    });
    // llama.cpp: no usage chunk to ask for, no reasoning effort.
    expect(settingsBody(providerProfile({ model: 'x', provider: 'llamacpp' }), s)).toEqual({ max_tokens: 32, temperature: 0.5 });
    expect(prefillMarks(providerProfile({ model: 'x', provider: 'deepseek' }))).toEqual({ message: { prefix: true }, body: {} });
    expect(prefillMarks(providerProfile({ model: 'x', provider: 'vllm' }))).toEqual({
      message: {},
      body: { continue_final_message: true, add_generation_prompt: false },
    });
  });
});

describe('the model table', () => {
  it('gives context window and provider for a model users add', () => {
    process.env.AGENTRUN_MODELS = JSON.stringify({ smollm2: { contextWindow: 8192, input: 0, output: 0, provider: 'llamacpp' } });
    expect(contextWindowFor('SmolLM2-135M-Instruct')).toBe(8192);
    expect(userModel('smollm2-q8')?.provider).toBe('llamacpp');
    expect(profileFor({ model: 'smollm2' }, 'http://127.0.0.1:9/v1').name).toBe('llamacpp');
    expect(contextWindowFor('gpt-4o')).toBe(128_000);
  });

  it('refuses a table with an unknown field, naming the fields', () => {
    process.env.AGENTRUN_MODELS = JSON.stringify({ m: { window: 1 } });
    expect(() => contextWindowFor('m')).toThrow(/AGENTRUN_MODELS.*fields: contextWindow/);
  });
});

describe('summary sizing', () => {
  it('grows with the window and leaves room for the answer', () => {
    expect(summaryBudgetChars(8_192)).toBeLessThan(summaryBudgetChars(128_000));
    expect(summaryBudgetChars(8_192) / 3 + summaryOutputTokens(8_192)).toBeLessThan(8_192);
    expect(summaryOutputTokens(1_000_000)).toBe(8_192);
  });
});

describe('CLI flags', () => {
  const base = async () => ({ task: 't', workspace: await tempDir('ws-'), model: `scripted:${QUICKSTART_SCRIPT}` });

  it('reads the per-call settings and the first-token timeout', async () => {
    const { config } = await runRequestFromFlags({
      ...(await base()),
      firstTokenTimeout: '2m',
      maxOutputTokens: '32',
      temperature: '0',
      reasoningEffort: 'low',
      provider: 'deepseek',
      pruneTarget: '0.5',
    });
    expect(config).toMatchObject({
      pruneTarget: 0.5,
      firstTokenTimeoutMs: 120_000,
      maxOutputTokens: 32,
      temperature: 0,
      reasoningEffort: 'low',
      provider: 'deepseek',
      continuation: 'prefill',
    });
  });

  it('refuses bad values with one clear line', async () => {
    await expect(runRequestFromFlags({ ...(await base()), temperature: '3' })).rejects.toThrow('--temperature must be a number from 0 to 2, got "3"');
    await expect(runRequestFromFlags({ ...(await base()), provider: 'acme' })).rejects.toThrow(/--provider must be one of openai, deepseek/);
    await expect(runRequestFromFlags({ ...(await base()), pruneTarget: '1.5' })).rejects.toThrow('--prune-target must be a number from 0.1 to 1, got "1.5"');
  });
});
