// What a model call costs: the price table, and the models nobody bills (scripted, recorded).
import { afterEach, describe, expect, it, vi } from 'vitest';

const usage = { promptTokens: 500_000, completionTokens: 250_000, totalTokens: 750_000 };

async function pricing(env: string | undefined) {
  vi.resetModules();
  if (env === undefined) delete process.env.AGENTRUN_PRICING;
  else process.env.AGENTRUN_PRICING = env;
  // A home without pricing.json or models, so only the built-in table and the variable count.
  vi.stubEnv('AGENTRUN_HOME', '/nonexistent/agentrun-home');
  return import('../../src/model/pricing.js');
}

afterEach(() => {
  delete process.env.AGENTRUN_PRICING;
  vi.unstubAllEnvs();
});

describe('price table', () => {
  it('charges nothing for scripted and recorded models, whatever their token counts', async () => {
    const { costUsd, priceFor } = await pricing(undefined);
    expect(costUsd('scripted:/tmp/x/script.yaml', usage)).toBe(0);
    expect(costUsd('recorded:conv-1234', usage)).toBe(0);
    // A known price (not "unknown model"), so doctor does not ask for one.
    expect(priceFor('scripted:/tmp/x/script.yaml')).toEqual({ input: 0, output: 0 });
  });

  it('still prices real models by the longest matching name', async () => {
    const { costUsd } = await pricing(undefined);
    expect(costUsd('gpt-4o-2024-08-06', usage)).toBeCloseTo(0.5 * 2.5 + 0.25 * 10, 9);
    expect(costUsd('gpt-4o-mini', usage)).toBeCloseTo(0.5 * 0.15 + 0.25 * 0.6, 9);
  });

  it('prices the scripted model when the user does (to test a cost budget)', async () => {
    const { costUsd } = await pricing(JSON.stringify({ scripted: { input: 1, output: 2 } }));
    expect(costUsd('scripted:/tmp/x/script.yaml', usage)).toBeCloseTo(1, 9);
    expect(costUsd('recorded:conv-1234', usage)).toBeCloseTo(1, 9);
  });
});
