// A budget shared by many conversations (a batch's `--budget`), kept in PostgreSQL so every worker
// sees one account: before a model call is made it reserves its worst case (its prompt at the
// input price and its whole max_output_tokens at the output price) with one conditional UPDATE,
// and after the call it settles what the call cost. Spend plus reservations never pass the limit,
// so the spend never does. A call that cannot reserve is not made: its conversation waits for the
// pool to be raised. Reservations are keyed by the call's attempt (idempotent on retry); one left
// open by a killed attempt goes back to the pool after RESERVATION_TTL_MS.
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import type { RunConfig } from '../config.js';
import { countTokens } from './tokens.js';
import { BUDGET_POOL_EMPTY } from './error-types.js';
import { priceFor } from './pricing.js';

/** Longer than the model activity's start-to-close (20 min): an open reservation older than this belongs to a dead attempt. */
const RESERVATION_TTL_MS = 25 * 60_000;

/** The output cap of a pooled call without --max-output-tokens: its worst case must be bounded. */
export const POOLED_OUTPUT_TOKENS = 8192;

export interface PoolState {
  pool: string;
  limitUsd: number;
  reservedUsd: number;
  spentUsd: number;
}

export interface CallKey {
  pool: string;
  conversationId: string;
  seq: number;
  segment: number;
  /** The attempt of the call, unique across re-runs of the step (activity id and attempt). */
  attempt: string;
}

type Db = Pick<pg.Pool, 'query'>;

/** Create the pool, or leave it as it is (a batch that starts again keeps its spend). */
export async function openPool(db: Db, pool: string, limitUsd: number): Promise<PoolState> {
  await db.query('INSERT INTO budget_pools (pool, limit_usd) VALUES ($1, $2) ON CONFLICT (pool) DO NOTHING', [pool, limitUsd]);
  return (await poolState(db, pool))!;
}

export async function poolState(db: Db, pool: string): Promise<PoolState | undefined> {
  const { rows } = await db.query('SELECT pool, limit_usd, reserved_usd, spent_usd FROM budget_pools WHERE pool = $1', [pool]);
  const r = rows[0];
  return r ? { pool: r.pool, limitUsd: r.limit_usd, reservedUsd: r.reserved_usd, spentUsd: r.spent_usd } : undefined;
}

/** Raise the limit by `addUsd`, once per `raiseId` (the batch's update id): a retried raise adds nothing more. */
export async function raisePool(db: Db, pool: string, addUsd: number, raiseId: string): Promise<PoolState> {
  await db.query(
    `WITH once AS (INSERT INTO budget_pool_raises (pool, raise_id, add_usd) VALUES ($1, $3, $2) ON CONFLICT DO NOTHING RETURNING 1)
     UPDATE budget_pools SET limit_usd = limit_usd + $2, at = now() WHERE pool = $1 AND EXISTS (SELECT 1 FROM once)`,
    [pool, addUsd, raiseId],
  );
  const state = await poolState(db, pool);
  if (!state) throw new Error(`no budget pool ${pool}`);
  return state;
}

/** A call's worst case in USD: its prompt and its whole output cap at the model's prices. */
function worstCaseUsd(config: Pick<RunConfig, 'model' | 'maxOutputTokens'>, promptText: string): number {
  const price = priceFor(config.model);
  if (!price) return 0;
  const prompt = countTokens(promptText, config.model);
  return (prompt * price.input + (config.maxOutputTokens ?? POOLED_OUTPUT_TOKENS) * price.output) / 1_000_000;
}

/**
 * Reserve `usd` for the call `key`, in one statement: the pool's reservations grow only where the
 * limit still covers spend, reservations and this call. True when reserved (now or by an earlier
 * run of the same attempt); otherwise the call must not be made.
 */
async function reserve(db: Db, key: CallKey, usd: number): Promise<boolean> {
  // Open reservations of dead attempts go back to the pool first.
  await db.query(
    `WITH stale AS (
       UPDATE budget_reservations SET spent_usd = 0, settled_at = now()
       WHERE pool = $1 AND settled_at IS NULL AND at < now() - make_interval(secs => $2)
       RETURNING reserved_usd)
     UPDATE budget_pools SET reserved_usd = GREATEST(0, reserved_usd - (SELECT COALESCE(sum(reserved_usd), 0) FROM stale))
     WHERE pool = $1 AND EXISTS (SELECT 1 FROM stale)`,
    [key.pool, RESERVATION_TTL_MS / 1000],
  );
  const { rows } = await db.query(
    `WITH existing AS (
       SELECT 1 FROM budget_reservations WHERE pool = $1 AND conversation_id = $2 AND seq = $3 AND segment = $4 AND attempt = $5),
     granted AS (
       UPDATE budget_pools SET reserved_usd = reserved_usd + $6, at = now()
       WHERE pool = $1 AND NOT EXISTS (SELECT 1 FROM existing) AND limit_usd - spent_usd - reserved_usd >= $6
       RETURNING pool),
     recorded AS (
       INSERT INTO budget_reservations (pool, conversation_id, seq, segment, attempt, reserved_usd)
       SELECT $1, $2, $3, $4, $5, $6 FROM granted RETURNING 1)
     SELECT (SELECT count(*) FROM existing)::int AS had, (SELECT count(*) FROM recorded)::int AS got`,
    [key.pool, key.conversationId, key.seq, key.segment, key.attempt, usd],
  );
  return rows[0].had > 0 || rows[0].got > 0;
}

/** Settle the call `key` at what it cost: its reservation leaves the pool, its cost joins the spend. Once only. */
async function settle(db: Db, key: CallKey, costUsd: number): Promise<void> {
  await db.query(
    `WITH r AS (
       UPDATE budget_reservations SET spent_usd = $6, settled_at = now()
       WHERE pool = $1 AND conversation_id = $2 AND seq = $3 AND segment = $4 AND attempt = $5 AND settled_at IS NULL
       RETURNING reserved_usd)
     UPDATE budget_pools p SET reserved_usd = GREATEST(0, p.reserved_usd - r.reserved_usd), spent_usd = p.spent_usd + $6, at = now()
     FROM r WHERE p.pool = $1`,
    [key.pool, key.conversationId, key.seq, key.segment, key.attempt, costUsd],
  );
}

/** Which budget a pool is, and the command that raises it by `usd`. */
function poolBudget(pool: string, usd: string): { name: string; raise: string } {
  const batch = /^batch:(.+)$/.exec(pool);
  if (batch) return { name: `the budget of batch ${batch[1]}`, raise: `agentrun batch raise-budget ${batch[1]} --add ${usd}` };
  const month = /^schedule:(.+):(\d{4}-\d{2})$/.exec(pool);
  if (month)
    return { name: `the ${month[2]} budget of schedule ${month[1]}`, raise: `agentrun schedule raise-budget ${month[1]} --add ${usd} --month ${month[2]}` };
  return { name: `the budget ${pool}`, raise: `raise the pool ${pool} by ${usd}` };
}

/**
 * What a call its pool had no room for throws: the model step ends with it and the session waits
 * for a raise. It names the budget, how much is missing and the command that raises it; a budget
 * smaller than one call's reservation is said to be so (no call can start until it is raised).
 */
export function poolEmpty(state: Pick<PoolState, 'limitUsd' | 'spentUsd' | 'reservedUsd'> | undefined, pool: string, usd: number): ApplicationFailure {
  const limit = state?.limitUsd ?? 0;
  const left = Math.max(0, state ? state.limitUsd - state.spentUsd - state.reservedUsd : 0);
  // Rounded up to the cent: enough, as the command takes it.
  const need = (Math.ceil((usd - left) * 100) / 100).toFixed(2);
  const { name, raise } = poolBudget(pool, need);
  const message =
    limit < usd
      ? `${name} ($${limit.toFixed(4)}) is smaller than one model call's reservation ($${usd.toFixed(4)}): no call can start until it is raised by at least $${need}: ${raise} (a reservation is the call's worst case: its prompt and --max-output-tokens at the model's price)`
      : `${name} is $${need} short of this model call's reservation ($${usd.toFixed(4)}; $${left.toFixed(4)} left of $${limit.toFixed(4)}: $${(state?.spentUsd ?? 0).toFixed(4)} spent, $${(state?.reservedUsd ?? 0).toFixed(4)} reserved by calls in flight): ${raise}`;
  return ApplicationFailure.nonRetryable(message, BUDGET_POOL_EMPTY);
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
