// Resolve a model spec into an OpenAI client. `scripted:FILE` is served by a real local
// HTTP server in this process (src/scripted), so the whole client path runs without a provider.
import OpenAI from 'openai';
import { resolve } from 'node:path';
import { serveScriptedFile } from '../scripted/cli.js';
import type { ContinuationStrategy } from '../types.js';

export interface ResolvedModel {
  client: OpenAI;
  /** The model name sent to the provider. */
  model: string;
  scripted: boolean;
}

/** Strategies the provider supports for continuing an answer cut off by `length`. */
export function defaultContinuation(model: string): ContinuationStrategy {
  return /deepseek|qwen|vllm/i.test(model) ? 'prefill' : 'prompt';
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

export async function resolveModel(spec: string, trap?: MalformedLineTrap, timeoutMs = 10 * 60_000): Promise<ResolvedModel> {
  const common = { maxRetries: 0, timeout: timeoutMs, logger: trap?.logger, logLevel: 'error' as const };
  if (isScripted(spec)) {
    const server = await serveScriptedFile(scriptedFile(spec));
    return { client: new OpenAI({ ...common, baseURL: server.url, apiKey: 'scripted' }), model: 'scripted', scripted: true };
  }
  const apiKey = process.env.OPENAI_API_KEY;
  if (!apiKey) {
    throw new Error(`model "${spec}" needs OPENAI_API_KEY on the worker (and OPENAI_BASE_URL for a non-OpenAI provider), or use --model scripted:FILE`);
  }
  return { client: new OpenAI({ ...common, apiKey, baseURL: process.env.OPENAI_BASE_URL || undefined }), model: spec, scripted: false };
}
