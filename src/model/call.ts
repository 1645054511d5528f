// One model call attempt as every caller (turns, summaries) makes it: the provider profile
// shapes the body, the x-agentrun-* headers go to the scripted model only, the attempt
// heartbeats while the model has not started and is abandoned after the first-token timeout,
// and what it cost is stored per attempt, also when it failed after the provider billed it.
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { RunConfig } from '../config.js';
import type { Store } from '../store/index.js';
import { addUsage, type Usage } from '../types.js';
import { MalformedLineTrap, resolveModel } from './client.js';
import { ApplicationFailure } from '@temporalio/common';
import { testModelRefusal } from './scripted/allowed.js';
import { checkRecorded, isRecorded, recordedId, refuseForeignRecording } from './scripted/recorded.js';
import { userModel } from './models.js';
import { toModelFailure } from './errors.js';
import { throughPool } from './pool-call.js';
import { costUsd } from './pricing.js';
import {
  cacheBody,
  needsCacheBreakpoints,
  prefillMarks,
  providerProfile,
  settingsBody,
  withCacheBreakpoints,
  type CallSettings,
  type ProviderProfile,
} from './providers.js';
import { DEFAULT_MAX_ANSWER_BYTES, failedAttemptUsage, streamChat, type StreamResult } from './stream.js';

export interface ModelCallInput {
  store: Store;
  config: RunConfig;
  conversationId: string;
  turn: number;
  seq: number;
  segment: number;
  attempt: number;
  purpose: 'turn' | 'summary';
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[];
  /** Body fields of the request itself (a prefill's flags), besides the call settings. */
  extraBody?: Record<string, unknown>;
  /** Settings of this call over the run's (a summary caps its own answer). */
  settings?: CallSettings;
  /** x-agentrun-* headers; sent only to the scripted model. */
  headers: Record<string, string>;
  signal?: AbortSignal;
  /** The activity's heartbeat timeout: waiting beats come at a third of it. */
  heartbeatTimeoutMs?: number;
  heartbeat(details?: unknown): void;
  onText(text: string): void;
  onReasoning(text: string): void;
  /** Names the call in failure messages, e.g. `model call (turn 3, segment 0, attempt 2)`. */
  what: string;
}

export interface ModelCallResult {
  result: StreamResult;
  /** This attempt's cost. */
  costUsd: number;
  /** What the workflow should count: this attempt plus billed usage not reported before (see Store.putUsage). */
  reported: { usage: Usage; costUsd: number };
}

/** The profile a call uses: the configured provider, else inferred from the worker's OPENAI_BASE_URL. */
export function profileFor(config: Pick<RunConfig, 'model' | 'provider'>, baseUrl = process.env.OPENAI_BASE_URL || undefined): ProviderProfile {
  return providerProfile({ provider: config.provider ?? userModel(config.model)?.provider, model: config.model, baseUrl });
}

/** How this call's provider marks a prefill continuation (message fields and body fields). */
export function prefillFor(config: Pick<RunConfig, 'model' | 'provider'>) {
  return prefillMarks(profileFor(config));
}

/**
 * The run options a call is made with: a fork of a recording (`replayFirst`, set by `eval run
 * --fork-at K`) has its first K turns answered by the recording, at no cost, and the rest by its model.
 */
export function answeringConfig<C extends Pick<RunConfig, 'model' | 'replayFirst'>>(config: C, purpose: string, turn: number): C {
  const first = config.replayFirst;
  return first && purpose === 'turn' && turn <= first.turns ? { ...config, model: `recorded:${first.recording}` } : config;
}

/** AGENTRUN_MAX_ANSWER_BYTES: the most one answer may hold on this worker (default 1 MiB). */
function maxAnswerBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.AGENTRUN_MAX_ANSWER_BYTES?.trim());
  return Number.isInteger(n) && n >= 1024 ? n : DEFAULT_MAX_ANSWER_BYTES;
}

/** AGENTRUN_MAX_ANSWER_SECONDS: the longest one answer may stream on this worker (default 20 minutes). */
function maxAnswerMsFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const n = Number(env.AGENTRUN_MAX_ANSWER_SECONDS?.trim());
  return Number.isFinite(n) && n >= 1 ? n * 1000 : undefined;
}

export async function modelCall(input: ModelCallInput): Promise<ModelCallResult> {
  const { store, conversationId, turn, seq, segment, attempt, purpose } = input;
  const config = answeringConfig(input.config, purpose, turn);
  const trap = new MalformedLineTrap();
  // A replay goes on only while this run saw what the recording saw (src/model/scripted/recorded.ts).
  const notServed = testModelRefusal(config.model);
  if (notServed) throw ApplicationFailure.nonRetryable(notServed, 'TestModelNotAllowed');
  if (isRecorded(config.model) && purpose === 'turn' && segment === 0) await checkRecorded(store, recordedId(config.model), conversationId, turn, seq);
  else if (isRecorded(config.model)) await refuseForeignRecording(store, recordedId(config.model), conversationId);
  const model = await resolveModel(config.model, trap, undefined, store);
  const profile = profileFor(config, model.baseUrl);
  // The call's place in its provider pool's line, the same for every retry of it.
  const place = `${conversationId}:${seq}:${segment}:${purpose}`;
  const gated = { store, config, model, place, heartbeat: input.heartbeat, signal: input.signal };
  const result: StreamResult = await throughPool(gated, async (onHeaders) => {
    try {
      return await streamChat({
        client: model.client,
        model: model.model,
        messages: profile.cacheBreakpoints && needsCacheBreakpoints(model.model) ? withCacheBreakpoints(input.messages) : input.messages,
        tools: input.tools,
        extraBody: {
          ...settingsBody(profile, { ...config, ...input.settings }),
          // The conversation's own cache (a sub-agent is a conversation of its own); a summary's prefix is another.
          ...cacheBody(profile, purpose === 'summary' ? `${conversationId}:summary` : conversationId),
          ...input.extraBody,
        },
        headers: model.scripted ? input.headers : {},
        signal: input.signal,
        firstTokenTimeoutMs: config.firstTokenTimeoutMs,
        maxAnswerBytes: maxAnswerBytesFromEnv(),
        maxAnswerMs: maxAnswerMsFromEnv(),
        waitBeatMs: Math.max(200, Math.floor((input.heartbeatTimeoutMs ?? config.heartbeatTimeoutMs) / 3)),
        onWaiting: (ms) => input.heartbeat({ waitingForFirstTokenMs: ms }),
        onChunk: () => input.heartbeat(),
        onText: input.onText,
        onReasoning: input.onReasoning,
        onHeaders,
      });
    } catch (err) {
      throw await failedAttempt(err);
    }
  });
  async function failedAttempt(err: unknown) {
    const billed = failedAttemptUsage(err);
    if (billed) {
      await store.putUsage({
        conversationId,
        turn,
        seq,
        segment,
        attempt,
        model: config.model,
        usage: billed,
        costUsd: costUsd(config.model, billed),
        purpose,
      });
    }
    return toModelFailure(err, input.what, trap.last);
  }
  const cost = costUsd(config.model, result.usage);
  // A turn's call: with the earlier attempts' and the turn's summaries' usage, in the same round trip.
  const unreported = await store.putUsage({ conversationId, turn, seq, segment, attempt, model: config.model, usage: result.usage, costUsd: cost, purpose });
  let reported = { usage: result.usage, costUsd: cost };
  if (purpose === 'turn') {
    for (const row of unreported) {
      reported = { usage: addUsage(reported.usage, row.usage), costUsd: reported.costUsd + row.costUsd };
    }
    reported.costUsd = Math.round(reported.costUsd * 1e8) / 1e8;
  }
  return { result, costUsd: cost, reported };
}
