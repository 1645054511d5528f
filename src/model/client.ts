// Resolve a model spec into an OpenAI client. `scripted:FILE` is served by a real local
// HTTP server in this process (src/scripted), so the whole client path runs without a provider;
// `recorded:<id>` serves conversation <id>'s answers from the store the same way.
import OpenAI from 'openai';
import { resolve } from 'node:path';
import { serveScriptedFile } from './scripted/cli.js';
import { isRecorded, recordedId, serveRecorded } from './scripted/recorded.js';
import type { Store } from '../store/index.js';

export interface ResolvedModel {
  client: OpenAI;
  /** The model name sent to the provider. */
  model: string;
  scripted: boolean;
  /** The provider's base URL (OPENAI_BASE_URL), undefined for OpenAI itself. */
  baseUrl?: string;
}

export function isScripted(model: string): boolean {
  return model.startsWith('scripted:');
}

export function scriptedFile(model: string): string {
  return resolve(model.slice('scripted:'.length));
}

/** Captures the SDK's report of an unparsable SSE line, so the failure can quote it. */
export class MalformedLineTrap {
  last?: string;
  readonly logger = {
    error: (msg: string, data?: unknown) => {
      if (String(msg).startsWith('Could not parse message') && typeof data === 'string') this.last = data;
    },
    warn: () => {},
    info: () => {},
    debug: () => {},
  };
}

export async function resolveModel(spec: string, trap?: MalformedLineTrap, timeoutMs = 10 * 60_000, store?: Store): Promise<ResolvedModel> {
  const common = { maxRetries: 0, timeout: timeoutMs, logger: trap?.logger, logLevel: 'error' as const };
  if (isScripted(spec) || isRecorded(spec)) {
    if (isRecorded(spec) && !store) throw new Error(`model ${spec} is served from the store, and this call has none`);
    const server = isRecorded(spec) ? await serveRecorded(store!, recordedId(spec)) : await serveScriptedFile(scriptedFile(spec));
    return { client: new OpenAI({ ...common, baseURL: server.url, apiKey: 'scripted' }), model: 'scripted', scripted: true, baseUrl: server.url };
  }
  const apiKey = process.env.OPENAI_API_KEY;
  if (!apiKey) {
    throw new Error(`model "${spec}" needs OPENAI_API_KEY on the worker (and OPENAI_BASE_URL for a non-OpenAI provider), or use --model scripted:FILE`);
  }
  const baseUrl = process.env.OPENAI_BASE_URL || undefined;
  return { client: new OpenAI({ ...common, apiKey, baseURL: baseUrl, fetch: withoutAgentrunHeaders }), model: spec, scripted: false, baseUrl };
}

/** The x-agentrun-* headers steer the scripted model only; a real provider never sees them. */
const withoutAgentrunHeaders: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  for (const name of [...headers.keys()]) if (name.startsWith('x-agentrun-')) headers.delete(name);
  return fetch(input, { ...init, headers });
};
