// Cost per model in USD per million tokens. Users extend or override it with
// AGENTRUN_PRICING (JSON) or $AGENTRUN_HOME/pricing.json: { "model": { "input": 2.5, "output": 10 } },
// or with prices in the model table (src/model/models.ts), which also holds context windows.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Usage } from '../types.js';
import { userModels } from './models.js';

export interface Price {
  input: number;
  output: number;
  /** Price of cached prompt tokens, when the provider reports them. */
  cachedInput?: number;
}

const BUILTIN: Record<string, Price> = {
  'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
  'gpt-5': { input: 1.25, output: 10, cachedInput: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cachedInput: 0.025 },
  o3: { input: 2, output: 8, cachedInput: 0.5 },
  'o4-mini': { input: 1.1, output: 4.4, cachedInput: 0.275 },
  'deepseek-chat': { input: 0.27, output: 1.1, cachedInput: 0.07 },
  'deepseek-reasoner': { input: 0.55, output: 2.19, cachedInput: 0.14 },
};

/** Nobody bills the scripted and recorded models: they cost $0 unless the user prices `scripted` (e.g. to test a cost budget). */
const UNBILLED: Price = { input: 0, output: 0 };

let table: Record<string, Price> | undefined;

export function pricingTable(home = process.env.AGENTRUN_HOME ?? join(process.env.HOME ?? '.', '.agentrun')): Record<string, Price> {
  if (table) return table;
  const merged: Record<string, Price> = { ...BUILTIN };
  for (const [name, e] of Object.entries(userModels(home))) {
    if (e.input !== undefined && e.output !== undefined) merged[name] = { input: e.input, output: e.output, cachedInput: e.cachedInput };
  }
  const file = join(home, 'pricing.json');
  try {
    if (existsSync(file)) Object.assign(merged, JSON.parse(readFileSync(file, 'utf8')));
    if (process.env.AGENTRUN_PRICING) Object.assign(merged, JSON.parse(process.env.AGENTRUN_PRICING));
  } catch (err) {
    throw new Error(`pricing configuration is not valid JSON (${file} or AGENTRUN_PRICING): ${(err as Error).message}`);
  }
  table = merged;
  return merged;
}

/** Longest table key that prefixes the model name (`gpt-4o-2024-08-06` → `gpt-4o`). */
export function priceFor(model: string): Price | undefined {
  const t = pricingTable();
  if (model.startsWith('scripted:') || model.startsWith('recorded:')) return t.scripted ?? UNBILLED;
  const name = model;
  if (t[name]) return t[name];
  let best: string | undefined;
  for (const key of Object.keys(t)) if (name.startsWith(key) && (!best || key.length > best.length)) best = key;
  return best ? t[best] : undefined;
}

export function costUsd(model: string, usage: Usage): number {
  const p = priceFor(model);
  if (!p) return 0;
  const cached = usage.cachedTokens ?? 0;
  const fresh = usage.promptTokens - cached;
  const cost = (fresh * p.input + cached * (p.cachedInput ?? p.input) + usage.completionTokens * p.output) / 1_000_000;
  return Math.round(cost * 1e8) / 1e8;
}
