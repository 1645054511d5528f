// Provider profiles: what differs between OpenAI-compatible servers, in one place. A profile
// names the parameter for one answer's output cap, whether a usage chunk can be asked for, how
// an answer cut off for length is continued, and how reasoning effort is sent. docs/providers.md
// records what each family does and what was measured.
import type { ProviderName } from '../config.js';
import type { ContinuationStrategy } from '../types.js';

export { PROVIDERS, type ProviderName } from '../config.js';

export interface ProviderProfile {
  /** `scripted` for the scripted model, `generic` for an unknown OpenAI-compatible server. */
  name: ProviderName | 'scripted' | 'generic';
  /** Default strategy for continuing an answer cut off by `length` (`--continuation` wins). */
  continuation: ContinuationStrategy;
  /** How a prefill is marked: DeepSeek's `prefix: true` on the assistant message, vLLM's body flag, or both (scripted). */
  prefill: 'prefix' | 'continue_final_message' | 'both';
  /** Ask for the usage chunk (`stream_options.include_usage`); without it usage is estimated. */
  usageChunk: boolean;
  /** Body field that caps one answer's output tokens. */
  maxTokensParam: 'max_completion_tokens' | 'max_tokens';
  /** How reasoning effort is sent; undefined: the provider has no such setting (it is not sent). */
  reasoningEffort?: 'reasoning_effort' | 'reasoning.effort';
  /** Send `prompt_cache_key` (the conversation's id), which routes its requests to the same cache. Only OpenAI knows it. */
  promptCacheKey?: boolean;
  /**
   * The gateway passes `cache_control` on content parts to models that cache only at explicit
   * breakpoints (Anthropic's): the end of the stable prefix is marked for them.
   */
  cacheBreakpoints?: boolean;
}

const PROFILES: Record<ProviderProfile['name'], ProviderProfile> = {
  // OpenAI refuses max_tokens for reasoning models; max_completion_tokens works for all.
  openai: {
    name: 'openai',
    continuation: 'prompt',
    prefill: 'prefix',
    usageChunk: true,
    maxTokensParam: 'max_completion_tokens',
    reasoningEffort: 'reasoning_effort',
    promptCacheKey: true,
  },
  // DeepSeek continues a prefix (`prefix: true`, beta endpoint) and reports usage when asked.
  deepseek: { name: 'deepseek', continuation: 'prefill', prefill: 'prefix', usageChunk: true, maxTokensParam: 'max_tokens' },
  vllm: {
    name: 'vllm',
    continuation: 'prefill',
    prefill: 'continue_final_message',
    usageChunk: true,
    maxTokensParam: 'max_tokens',
    reasoningEffort: 'reasoning_effort',
  },
  // llama-cpp-python's server sends no usage chunk (measured, docs/providers.md): estimate.
  llamacpp: { name: 'llamacpp', continuation: 'prompt', prefill: 'prefix', usageChunk: false, maxTokensParam: 'max_tokens' },
  ollama: { name: 'ollama', continuation: 'prompt', prefill: 'prefix', usageChunk: true, maxTokensParam: 'max_tokens', reasoningEffort: 'reasoning_effort' },
  openrouter: {
    name: 'openrouter',
    continuation: 'prompt',
    prefill: 'prefix',
    usageChunk: true,
    maxTokensParam: 'max_tokens',
    reasoningEffort: 'reasoning.effort',
    cacheBreakpoints: true,
  },
  // LiteLLM's proxy: OpenAI's parameters, passed on to whatever model it fronts.
  litellm: {
    name: 'litellm',
    continuation: 'prompt',
    prefill: 'prefix',
    usageChunk: true,
    maxTokensParam: 'max_tokens',
    reasoningEffort: 'reasoning_effort',
    cacheBreakpoints: true,
  },
  scripted: { name: 'scripted', continuation: 'prompt', prefill: 'both', usageChunk: true, maxTokensParam: 'max_tokens', reasoningEffort: 'reasoning_effort' },
  generic: { name: 'generic', continuation: 'prompt', prefill: 'both', usageChunk: true, maxTokensParam: 'max_tokens', reasoningEffort: 'reasoning_effort' },
};

/** The provider a base URL points at (none: OpenAI itself); undefined when the URL says nothing. */
export function inferProvider(baseUrl: string | undefined): ProviderName | undefined {
  if (!baseUrl) return 'openai';
  const url = baseUrl.toLowerCase();
  if (url.includes('api.openai.com')) return 'openai';
  if (url.includes('deepseek')) return 'deepseek';
  if (url.includes('openrouter.ai')) return 'openrouter';
  if (url.includes('litellm')) return 'litellm';
  if (url.includes('ollama') || /:11434\b/.test(url)) return 'ollama';
  if (url.includes('vllm')) return 'vllm';
  if (url.includes('llama')) return 'llamacpp';
  return undefined;
}

/**
 * The profile for a call: the configured provider, else the scripted one for `scripted:` models,
 * else what the base URL tells, else a generic profile (max_tokens, usage chunk asked for; a model
 * name that says DeepSeek, Qwen or vLLM continues by prefill, as before profiles existed).
 */
export function providerProfile(opts: { provider?: ProviderName; model: string; baseUrl?: string }): ProviderProfile {
  if (opts.provider) return PROFILES[opts.provider];
  if (opts.model.startsWith('scripted:') || opts.model.startsWith('recorded:')) return PROFILES.scripted;
  const inferred = inferProvider(opts.baseUrl);
  if (inferred) return PROFILES[inferred];
  return /deepseek|qwen|vllm/i.test(opts.model) ? { ...PROFILES.generic, continuation: 'prefill' } : PROFILES.generic;
}

export interface CallSettings {
  maxOutputTokens?: number;
  temperature?: number;
  reasoningEffort?: string;
}

/** Body fields for one call's settings, named as the provider expects. */
export function settingsBody(profile: ProviderProfile, s: CallSettings): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (s.maxOutputTokens !== undefined) body[profile.maxTokensParam] = s.maxOutputTokens;
  if (s.temperature !== undefined) body.temperature = s.temperature;
  if (s.reasoningEffort !== undefined) {
    if (profile.reasoningEffort === 'reasoning.effort') body.reasoning = { effort: s.reasoningEffort };
    else if (profile.reasoningEffort === 'reasoning_effort') body.reasoning_effort = s.reasoningEffort;
  }
  if (profile.usageChunk) body.stream_options = { include_usage: true };
  return body;
}

/** Models that cache a prompt only up to an explicit breakpoint (Anthropic's, by any gateway's name for them). */
export function needsCacheBreakpoints(model: string): boolean {
  return /claude|anthropic/i.test(model);
}

/**
 * Body fields that help the provider keep the conversation's prompt cache: OpenAI's
 * `prompt_cache_key` (requests with one key go to the same cache; a summary's prefix differs from
 * the turns', so it gets its own). Empty for a provider that does not know the field.
 */
export function cacheBody(profile: ProviderProfile, key: string): Record<string, unknown> {
  return profile.promptCacheKey ? { prompt_cache_key: key } : {};
}

type Message = { role: string; content?: unknown };

/**
 * The request with Anthropic-style breakpoints (`cache_control: {type: 'ephemeral'}` on the last
 * content part) at the end of the system prompt and at the end of the request: everything up to
 * the last message is the prefix the next turn starts with. A trailing prefill (an assistant
 * message the model continues) is not part of it; the message before is marked instead.
 */
export function withCacheBreakpoints<M extends Message>(messages: M[]): M[] {
  let last = messages.length - 1;
  if (last > 0 && messages[last]!.role === 'assistant') last--;
  const marks = new Set<number>([last]);
  if (messages[0]?.role === 'system') marks.add(0);
  return messages.map((m, i) => (marks.has(i) ? markLastPart(m) : m));
}

function markLastPart<M extends Message>(m: M): M {
  const mark = { type: 'ephemeral' };
  if (typeof m.content === 'string') {
    if (!m.content) return m;
    return { ...m, content: [{ type: 'text', text: m.content, cache_control: mark }] };
  }
  if (Array.isArray(m.content) && m.content.length) {
    const parts = m.content as Record<string, unknown>[];
    return { ...m, content: [...parts.slice(0, -1), { ...parts[parts.length - 1], cache_control: mark }] };
  }
  return m;
}

/** How a prefill continuation is marked: on the last (assistant) message and/or in the body. */
export function prefillMarks(profile: ProviderProfile): { message: Record<string, unknown>; body: Record<string, unknown> } {
  const onMessage = profile.prefill === 'prefix' || profile.prefill === 'both';
  const inBody = profile.prefill === 'continue_final_message' || profile.prefill === 'both';
  return {
    message: onMessage ? { prefix: true } : {},
    body: inBody ? { continue_final_message: true, add_generation_prompt: false } : {},
  };
}
