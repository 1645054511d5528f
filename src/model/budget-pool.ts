// A budget shared by many conversations (a batch's `--budget`), kept in PostgreSQL so every worker
// sees one account: before a model call is made it reserves its worst case (its prompt at the
// input price and its whole max_output_tokens at the output price) with one conditional UPDATE,
// and after the call it settles what the call cost. Spend plus reservations never pass the limit,
// so the spend never does. A call that cannot reserve is not made: its conversation waits for the
// pool to be raised. Reservations are keyed by the call's attempt (idempotent on retry); one left
// open by a killed attempt goes back to the pool (the accounts and their statements: src/store/budget-pools.ts).
import { ApplicationFailure } from '@temporalio/common';
import type { RunConfig } from '../config.js';
import { countTokens } from './tokens.js';
import { BUDGET_POOL_EMPTY } from './error-types.js';
import { priceFor } from './pricing.js';
import { poolState, reserve, settle, type CallKey, type Db, type PoolState } from '../store/budget-pools.js';

/** The output cap of a pooled call without --max-output-tokens: its worst case must be bounded. */
export const POOLED_OUTPUT_TOKENS = 8192;

/** A call's worst case in USD: its prompt and its whole output cap at the model's prices. */
function worstCaseUsd(config: Pick<RunConfig, 'model' | 'maxOutputTokens'>, promptText: string): number {
  const price = priceFor(config.model);
  if (!price) return 0;
  const prompt = countTokens(promptText, config.model);
  return (prompt * price.input + (config.maxOutputTokens ?? POOLED_OUTPUT_TOKENS) * price.output) / 1_000_000;
}

/** What a call its pool had no room for throws: the model step ends with it and the session waits for a raise. */
function poolEmpty(state: PoolState | undefined, pool: string, usd: number): ApplicationFailure {
  const left = state ? state.limitUsd - state.spentUsd - state.reservedUsd : 0;
  return ApplicationFailure.nonRetryable(
    `the budget ${pool} has no room for this call's worst case ($${usd.toFixed(4)}; $${Math.max(0, left).toFixed(4)} left of $${(state?.limitUsd ?? 0).toFixed(4)})`,
    BUDGET_POOL_EMPTY,
  );
}

/**
 * Make `call` within the conversation's pool (`config.budgetPool`), if it has one: reserve its
 * worst case first (or throw BUDGET_POOL_EMPTY without calling), settle its cost after. A call
 * that failed settles at nothing: its reservation goes back to the pool.
 */
export async function pooledCall<T extends { costUsd: number }>(
  db: Db,
  config: Pick<RunConfig, 'model' | 'maxOutputTokens' | 'budgetPool'>,
  key: Omit<CallKey, 'pool'>,
  promptText: string,
  call: () => Promise<T>,
): Promise<T> {
  const pool = config.budgetPool;
  if (!pool) return call();
  const k = { ...key, pool };
  const usd = worstCaseUsd(config, promptText);
  if (!(await reserve(db, k, usd))) throw poolEmpty(await poolState(db, pool), pool, usd);
  let result: T;
  try {
    result = await call();
  } catch (err) {
    await settle(db, k, 0).catch(() => undefined);
    throw err;
  }
  await settle(db, k, result.costUsd);
  return result;
}
