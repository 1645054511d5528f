// The summary request of prepareContext: sized from the model's window, made like a model call
// (same profile, heartbeats, first-token timeout, usage stored per attempt), and retried like
// one: a retryable failure (429 with retry-after, 5xx, network) fails the activity so Temporal
// retries it after the delay the provider asked for; only the last attempts, or a failure that
// retrying cannot fix, give up on the summary and let the turn go on without it.
import type { ApplicationFailure } from '@temporalio/common';
import type { RunConfig } from '../config.js';
import { log } from '../log.js';
import { pooledCall } from '../model/budget-pool.js';
import { modelCall } from '../model/call.js';
import { BUDGET_POOL_EMPTY, MODEL_STEP_ATTEMPTS } from '../model/error-types.js';
import type { Store } from '../store/index.js';
import type { StoredMessage } from '../types.js';
import { extractSnapshot, summaryRequest } from './summary.js';
import { contextWindowFor, countTokens } from '../model/tokens.js';

/**
 * From this attempt of the enclosing activity on, a failed summary is given up instead of
 * retried: its last but one, leaving the last for the model call without a summary.
 */
export function summaryGiveUpAttempt(activityAttempts = MODEL_STEP_ATTEMPTS): number {
  return Math.max(1, activityAttempts - 1);
}
/** Characters per token assumed when sizing the transcript: low, so the request fits even for code. */
const CHARS_PER_TOKEN = 3;
/** Tokens kept for the system prompt, framing and the task around the transcript. */
const FRAMING_TOKENS = 1_500;

/** Room for the snapshot the model writes: a quarter of the window, at most 8k tokens. */
export function summaryOutputTokens(window: number): number {
  return Math.min(8_192, Math.floor(window / 4));
}

/** The transcript budget in characters for a window: what is left after the answer and framing. */
export function summaryBudgetChars(window: number): number {
  return Math.max(4_000, (window - summaryOutputTokens(window) - FRAMING_TOKENS) * CHARS_PER_TOKEN);
}

export interface SummariseInput {
  store: Store;
  config: RunConfig;
  conversationId: string;
  turn: number;
  attempt: number;
  /** The attempt as a key unique across re-runs of the step, for the shared budget's reservation (default: `attempt`). */
  attemptKey?: string;
  /** The enclosing activity's maximum attempts (its retry policy); the model step's by default. */
  maxAttempts?: number;
  history: StoredMessage[];
  throughSeq: number;
  previous?: { throughSeq: number; content: string };
  headers: Record<string, string>;
  signal?: AbortSignal;
  heartbeat(details?: unknown): void;
}

export interface Summary {
  content: string;
  tokens: number;
  costUsd: number;
}

/** A snapshot of seqs 1..throughSeq, or undefined when it could not be had (the turn goes on without). */
export async function summarise(input: SummariseInput): Promise<Summary | undefined> {
  const { config, conversationId, turn, attempt } = input;
  const window = config.contextWindow ?? contextWindowFor(config.model);
  const maxOutputTokens = summaryOutputTokens(window);
  const messages = summaryRequest(input.history, input.throughSeq, { previous: input.previous, maxChars: summaryBudgetChars(window) });
  try {
    // A shared budget (a batch's) pays for summaries as for turns: the worst case reserved first, the cost settled after.
    const pooled = { ...config, maxOutputTokens };
    const key = { conversationId, seq: input.throughSeq, segment: -1, attempt: input.attemptKey ?? String(attempt) };
    const { result, costUsd } = await pooledCall(input.store.pool, pooled, key, JSON.stringify(messages), () =>
      modelCall({
        store: input.store,
        config,
        conversationId,
        turn,
        seq: input.throughSeq,
        segment: -1,
        attempt,
        purpose: 'summary',
        messages,
        settings: { maxOutputTokens },
        headers: input.headers,
        signal: input.signal,
        heartbeat: input.heartbeat,
        onText: () => input.heartbeat(),
        onReasoning: () => input.heartbeat(),
        what: `summary request (turn ${turn}, attempt ${attempt})`,
      }),
    );
    const snapshot = extractSnapshot(result.content);
    return snapshot ? { content: snapshot, tokens: countTokens(snapshot, config.model), costUsd } : undefined;
  } catch (err) {
    const failure = err as ApplicationFailure;
    // No room in the shared budget: the model step waits for a raise and asks again (not given up for this range).
    if (failure.type === BUDGET_POOL_EMPTY) throw failure;
    if (!failure.nonRetryable && attempt < summaryGiveUpAttempt(input.maxAttempts)) throw failure;
    log.warn({ conversationId, turn, attempt, type: failure.type, err: failure.message }, 'summary request failed; going on without a summary');
    return undefined;
  }
}
