// The shared budgets' accounts in PostgreSQL (a batch's `--budget`, a schedule's month): the pool's
// limit, spend and open reservations, and the statements that move money between them, each one
// conditional or idempotent so concurrent workers on many hosts keep one account. When a call
// reserves and settles is the model's business (src/model/budget-pool.ts).
import type pg from 'pg';

/** Longer than the model activity's start-to-close (20 min): an open reservation older than this belongs to a dead attempt. */
const RESERVATION_TTL_MS = 25 * 60_000;

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

export type Db = Pick<pg.Pool, 'query'>;

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

/**
 * Reserve `usd` for the call `key`, in one statement: the pool's reservations grow only where the
 * limit still covers spend, reservations and this call. True when reserved (now or by an earlier
 * run of the same attempt); otherwise the call must not be made.
 */
export async function reserve(db: Db, key: CallKey, usd: number): Promise<boolean> {
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
export async function settle(db: Db, key: CallKey, costUsd: number): Promise<void> {
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
