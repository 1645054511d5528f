// Usage per model call: tokens and cost, and which rows the usage reporter has not sent yet.
import type { Usage } from '../types.js';
import { epochOf, fenceAllows } from './fence.js';
import { json } from './rows.js';
import type { UsageInput, UsageRow } from './types.js';
import { Tables } from './tables.js';

export abstract class UsageTables extends Tables {
  /**
   * Fenced like the other model-step writes: the new placement's step for the same message starts
   * again at attempt 1, so a superseded step's late row would overwrite the current one's. What
   * the refused call cost is in the log line.
   *
   * Returns the usage billed but not yet reported to the workflow, which counts what a call's
   * successful result reports: for a turn's call, the earlier attempts of this (seq, segment)
   * (failed, or whose result was lost) and, for the turn's first segment, the summaries made while
   * preparing the turn; nothing for other purposes. Read in the same round trip as the write (the
   * statement's snapshot holds neither this row, which is a later attempt, nor anything else it writes).
   */
  async putUsage(row: UsageInput): Promise<{ usage: Usage; costUsd: number }[]> {
    const epoch = epochOf(row.conversationId);
    const attempt = row.attempt ?? 1;
    const { rows } = await this.pool.query<{ written: number; usage: Usage | null; cost_usd: number | null }>(
      `WITH ins AS (
         INSERT INTO usage (conversation_id, purpose, seq, segment, attempt, turn, model, usage, cost_usd)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9 WHERE ${fenceAllows('$1', '$10')}
         ON CONFLICT (conversation_id, purpose, seq, segment, attempt) DO UPDATE SET
           turn = EXCLUDED.turn, model = EXCLUDED.model, usage = EXCLUDED.usage, cost_usd = EXCLUDED.cost_usd
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM ins)::int AS written, u.usage, u.cost_usd
       FROM (SELECT 1) one LEFT JOIN usage u ON $2 = 'turn' AND u.conversation_id = $1 AND (
         (u.purpose = 'turn' AND u.seq = $3 AND u.segment = $4 AND u.attempt < $5) OR ($4 = 0 AND u.purpose = 'summary' AND u.turn = $6))`,
      [row.conversationId, row.purpose, row.seq, row.segment, attempt, row.turn, row.model, json(row.usage), row.costUsd, epoch],
    );
    await this.refusedUnless(row.conversationId, epoch, rows[0]?.written ?? 0, `the usage of message ${row.seq} (${row.model}, $${row.costUsd.toFixed(4)})`);
    return rows.filter((r) => r.usage !== null).map((r) => ({ usage: r.usage!, costUsd: r.cost_usd! }));
  }

  /** In call order: by time, then seq, segment and attempt. */
  async getUsage(conversationId: string): Promise<UsageRow[]> {
    const { rows } = await this.pool.query('SELECT * FROM usage WHERE conversation_id = $1 ORDER BY at, seq, segment, attempt', [conversationId]);
    return rows.map((r) => ({
      turn: r.turn,
      seq: r.seq,
      segment: r.segment,
      attempt: r.attempt,
      model: r.model,
      usage: r.usage as Usage,
      costUsd: r.cost_usd,
      purpose: r.purpose,
      at: r.at,
    }));
  }
}
