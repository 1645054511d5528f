import { describe, expect, it } from 'vitest';
import { applyMessageIdsAction, messageIdFor, messageIdHint, messageIdIndex, parseMessageIds } from '../../src/context/message-ids.js';
import { parseSafeZone } from '../../src/context/safe-zone.js';
import { SAMPLE_ABOVE_CHARS, contextWindowFor, countTokens, encodingFor, messageTokens } from '../../src/model/tokens.js';

describe('encodingFor', () => {
  it.each([
    ['gpt-4o', 'o200k_base'],
    ['gpt-4o-mini', 'o200k_base'],
    ['gpt-4.1-nano', 'o200k_base'],
    ['gpt-5', 'o200k_base'],
    ['o1', 'o200k_base'],
    ['o3-mini', 'o200k_base'],
    ['o4-mini', 'o200k_base'],
    ['openai/gpt-4o', 'o200k_base'],
    ['azure:gpt-4.1', 'o200k_base'],
    ['gpt-4', 'cl100k_base'],
    ['gpt-3.5-turbo', 'cl100k_base'],
    ['deepseek-chat', 'cl100k_base'],
    ['claude-sonnet-4', 'cl100k_base'],
    ['qwen2.5-coder:32b', 'cl100k_base'],
    ['scripted:/tmp/o3.yaml', 'cl100k_base'],
  ])('%s → %s', (model, enc) => {
    expect(encodingFor(model)).toBe(enc);
  });
});

describe('countTokens', () => {
  it('matches known token counts of both encodings', () => {
    // cl100k: [15339, 1917]; o200k: [24912, 2375]
    expect(countTokens('hello world', 'gpt-4')).toBe(2);
    expect(countTokens('hello world', 'gpt-4o')).toBe(2);
    // cl100k: [83, 1609, 5963, 374, 2294, 0]; o200k: [83, 8251, 2488, 382, 2212, 0]
    expect(countTokens('tiktoken is great!', 'gpt-4')).toBe(6);
    expect(countTokens('tiktoken is great!', 'o3')).toBe(6);
    expect(countTokens('', 'gpt-4o')).toBe(0);
  });

  it('differs between encodings where the vocabularies differ', () => {
    const text = 'Ich möchte die Datei überprüfen und die Änderungen zusammenfassen. 这是一个测试。';
    expect(countTokens(text, 'gpt-4o')).toBeLessThan(countTokens(text, 'gpt-4'));
  });

  it('treats special-token text in tool output as plain text', () => {
    expect(countTokens('before <|endoftext|> after', 'gpt-4')).toBeGreaterThan(3);
  });

  it('counts pathological long runs fast and close to exact', () => {
    const run = 'a'.repeat(100_000);
    const t0 = performance.now();
    const n = countTokens(run, 'gpt-4');
    const ms = performance.now() - t0;
    console.log(`100,000-char single-letter run: ${n} tokens in ${ms.toFixed(1)} ms`);
    expect(ms).toBeLessThan(500);
    expect(n).toBeGreaterThan(10_000); // 8 chars/token exact for runs of 'a'
    expect(n).toBeLessThan(15_000);
    const mixed = 'xYz'.repeat(3_000) + '\n' + '='.repeat(5_000) + '\n';
    const t1 = performance.now();
    expect(countTokens(mixed, 'gpt-4o')).toBeGreaterThan(0);
    expect(performance.now() - t1).toBeLessThan(500);
  });

  it('estimates very large texts from samples within 3%', () => {
    const lines: string[] = [];
    for (let i = 0; lines.join('\n').length < 2 * SAMPLE_ABOVE_CHARS; i++) {
      lines.push(`export function handler${i}(req: Request, res: Response) { return res.status(${200 + (i % 5)}).json({ ok: true, id: ${i} }); }`);
      lines.push(`// step ${i}: validate the input, call the service, map errors to HTTP codes`);
    }
    const big = lines.join('\n');
    const t0 = performance.now();
    const estimate = countTokens(big, 'gpt-4o');
    const ms = performance.now() - t0;
    // Exact reference: the same text counted in pieces under the sampling limit.
    let exact = 0;
    const half = big.lastIndexOf('\n', big.length / 2);
    exact += countTokens(big.slice(0, half), 'gpt-4o') + countTokens(big.slice(half), 'gpt-4o');
    console.log(`${(big.length / 1024).toFixed(0)} KB: estimate ${estimate}, exact ${exact}, ${ms.toFixed(1)} ms`);
    expect(Math.abs(estimate - exact) / exact).toBeLessThan(0.03);
  });

  it('is fast on a 20 KB tool output', () => {
    const text = 'const value = compute(input, options); // explain why\n'.repeat(400);
    countTokens(text, 'gpt-4o');
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) countTokens(text, 'gpt-4o');
    const ms = (performance.now() - t0) / 10;
    console.log(`20 KB: ${ms.toFixed(2)} ms per count`);
    expect(ms).toBeLessThan(50);
  });
});

describe('messageTokens', () => {
  it('adds the per-message overhead and counts tool calls', () => {
    expect(messageTokens({ role: 'user', content: 'hello world' }, 'gpt-4')).toBe(2 + 4);
    const withCall = messageTokens({ role: 'assistant', content: '', toolCalls: [{ name: 'read_file', arguments: '{"path":"src/a.ts"}' }] }, 'gpt-4o');
    expect(withCall).toBe(4 + 4 + countTokens('read_file', 'gpt-4o') + countTokens('{"path":"src/a.ts"}', 'gpt-4o'));
  });
});

describe('contextWindowFor', () => {
  it.each([
    ['gpt-4o', 128_000],
    ['gpt-4o-mini-2024-07-18', 128_000],
    ['gpt-4.1', 1_047_576],
    ['gpt-4.1-mini', 1_047_576],
    ['gpt-5', 400_000],
    ['gpt-5-mini', 400_000],
    ['o3', 200_000],
    ['o1-mini', 128_000],
    ['claude-3-5-sonnet-20241022', 200_000],
    ['anthropic/claude-opus-4', 200_000],
    ['deepseek-chat', 128_000],
    ['qwen2.5-coder:32b', 131_072],
    ['qwen3-coder-plus', 262_144],
    ['gemini-2.5-pro', 1_048_576],
    ['scripted:/tmp/gpt-4.1.yaml', 128_000],
    ['some-unknown-model', 128_000],
  ])('%s → %d', (model, window) => {
    expect(contextWindowFor(model)).toBe(window);
  });

  it('lets users extend and override the table (longest prefix wins)', () => {
    const overrides = { 'my-model': 32_000, 'my-model-large': 256_000, 'gpt-4o': 64_000 };
    expect(contextWindowFor('my-model-7b', overrides)).toBe(32_000);
    expect(contextWindowFor('my-model-large-v2', overrides)).toBe(256_000);
    expect(contextWindowFor('openai/gpt-4o', overrides)).toBe(64_000);
    expect(contextWindowFor('gpt-5', overrides)).toBe(400_000);
  });
});

describe('parseSafeZone', () => {
  const W = 128_000;
  it.each<[string | number | undefined, number]>([
    [undefined, 102_400],
    ['', 102_400],
    [0.8, 102_400],
    ['0.8', 102_400],
    [' 0.5 ', 64_000],
    [1.0, 128_000],
    ['1.0', 128_000],
    ['80%', 102_400],
    [80_000, 80_000],
    ['80000', 80_000],
    ['80_000', 80_000],
    ['80k', 80_000],
    ['80K', 80_000],
    ['102.4k', 102_400],
    ['1.5M', 128_000], // clamped to the window
    [90_000.7, 90_000],
    [500_000, 128_000],
  ])('%j → %d', (value, expected) => {
    expect(parseSafeZone(value, W)).toBe(expected);
  });

  it('reads 1.5M as 1,500,000 where the window allows it', () => {
    expect(parseSafeZone('1.5M', 2_000_000)).toBe(1_500_000);
    expect(parseSafeZone('1.5m', 2_000_000)).toBe(1_500_000);
  });

  it.each<[string | number, RegExp]>([
    [0, /positive/],
    ['0', /positive/],
    [-5, /positive/],
    ['-80k', /positive/],
    ['abc', /not a number/],
    ['80 kilobytes', /not a number/],
    ['0.8.1', /not a number/],
    [Number.NaN, /finite/],
    [Number.POSITIVE_INFINITY, /finite/],
    [50, /too small/],
    ['0.0001', /too small/],
    ['150%', /percentage/],
  ])('%j is refused with a clear error', (value, message) => {
    expect(() => parseSafeZone(value, W)).toThrow(message);
    expect(() => parseSafeZone(value, W)).toThrow(/invalid safe zone/);
  });
});

describe('message ids', () => {
  it('are stable 8-hex ids, distinct within a conversation', () => {
    expect(messageIdFor('conv-1', 7)).toMatch(/^[0-9a-f]{8}$/);
    expect(messageIdFor('conv-1', 7)).toBe(messageIdFor('conv-1', 7));
    expect(messageIdFor('conv-1', 7)).not.toBe(messageIdFor('conv-2', 7));
    const ids = new Set(Array.from({ length: 2_000 }, (_, i) => messageIdFor('conv-1', i)));
    expect(ids.size).toBe(2_000);
    expect(messageIdHint('1a2b3c4d')).toBe('[message_id: 1a2b3c4d]');
    const index = messageIdIndex('conv-1', [0, 1, 2]);
    expect(index.get(messageIdFor('conv-1', 2))).toBe(2);
  });

  it('parses what the model writes', () => {
    expect(parseMessageIds('9226B3A4, 204e1cd8,,abcd1234 9226b3a4')).toEqual({ ids: ['9226b3a4', '204e1cd8', 'abcd1234'], invalid: [] });
    expect(parseMessageIds('[message_id: 1a2b3c4d], [[message_id: 00ff00ff]], nothex12, 123')).toEqual({
      ids: ['1a2b3c4d', '00ff00ff'],
      invalid: ['nothex12', '123'],
    });
  });

  it('applies create, append and delete', () => {
    expect(applyMessageIdsAction(['a', 'b'], 'create', ['c', 'c'])).toEqual(['c']);
    expect(applyMessageIdsAction(['a', 'b'], 'append', ['b', 'c'])).toEqual(['a', 'b', 'c']);
    expect(applyMessageIdsAction(['a', 'b', 'c'], 'delete', ['b'])).toEqual(['a', 'c']);
  });
});
