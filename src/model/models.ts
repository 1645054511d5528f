// The user's model table: context window, prices and provider per model name, for models the
// built-in tables do not know (a local GGUF, a new provider model). Read from
// $AGENTRUN_HOME/models.json and AGENTRUN_MODELS (JSON, wins), e.g.
//   { "smollm2": { "contextWindow": 8192, "input": 0, "output": 0, "provider": "llamacpp" } }
// Names match by prefix, the longest first, like the built-in tables.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { PROVIDERS } from './providers.js';

const entrySchema = z.strictObject({
  contextWindow: z.number().int().positive().optional(),
  /** USD per million tokens, as in pricing.json. */
  input: z.number().min(0).optional(),
  output: z.number().min(0).optional(),
  cachedInput: z.number().min(0).optional(),
  provider: z.enum(PROVIDERS).optional(),
  /** The provider pool its calls share (src/model/pool.ts); default: one per provider base URL. */
  pool: z.string().min(1).optional(),
});
export type ModelEntry = z.infer<typeof entrySchema>;

const tableSchema = z.record(z.string(), entrySchema);
const cache = new Map<string, Record<string, ModelEntry>>();

function defaultHome(): string {
  return process.env.AGENTRUN_HOME ?? join(process.env.HOME ?? '.', '.agentrun');
}

export function userModels(home = defaultHome()): Record<string, ModelEntry> {
  const file = join(home, 'models.json');
  const env = process.env.AGENTRUN_MODELS ?? '';
  const key = `${file}\0${env}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const merged: Record<string, ModelEntry> = {};
  for (const [where, text] of [
    [file, existsSync(file) ? readFileSync(file, 'utf8') : ''],
    ['AGENTRUN_MODELS', env],
  ] as const) {
    if (!text.trim()) continue;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new Error(`model table ${where} is not valid JSON: ${(err as Error).message}`);
    }
    const parsed = tableSchema.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new Error(`model table ${where}: ${issue.path.join('.')}: ${issue.message} (fields: contextWindow, input, output, cachedInput, provider, pool)`);
    }
    for (const [name, entry] of Object.entries(parsed.data)) merged[name.toLowerCase()] = { ...merged[name.toLowerCase()], ...entry };
  }
  cache.set(key, merged);
  return merged;
}

/** The entry whose name is the longest prefix of the model name (lower-cased), if any. */
export function userModel(model: string, home?: string): ModelEntry | undefined {
  const name = model.trim().toLowerCase();
  const table = userModels(home);
  let best: string | undefined;
  for (const key of Object.keys(table)) if (name.startsWith(key) && (!best || key.length > best.length)) best = key;
  return best === undefined ? undefined : table[best];
}

/** Context windows from the user's table, as overrides for contextWindowFor. */
export function userContextWindows(home?: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, e] of Object.entries(userModels(home))) if (e.contextWindow) out[name] = e.contextWindow;
  return out;
}
