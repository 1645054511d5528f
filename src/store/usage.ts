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
   */
  async putUsage(row: UsageInput): Promise<void> {
    const epoch = epochOf(row.conversationId);
    const { rowCount } = await this.pool.query(
      `INSERT INTO usage (conversation_id, purpose, seq, segment, attempt, turn, model, usage, cost_usd)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9 WHERE ${fenceAllows('$1', '$10')}
       ON CONFLICT (conversation_id, purpose, seq, segment, attempt) DO UPDATE SET
         turn = EXCLUDED.turn, model = EXCLUDED.model, usage = EXCLUDED.usage, cost_usd = EXCLUDED.cost_usd`,
      [row.conversationId, row.purpose, row.seq, row.segment, row.attempt ?? 1, row.turn, row.model, json(row.usage), row.costUsd, epoch],
    );
    await this.refusedUnless(row.conversationId, epoch, rowCount, `the usage of message ${row.seq} (${row.model}, $${row.costUsd.toFixed(4)})`);
  }

  /**
   * Usage billed but not yet reported to the workflow, which counts what a call's successful
   * result reports: the earlier attempts of this (seq, segment) of a turn (failed, or whose result
   * was lost), and for the turn's first segment the summaries made while preparing the turn.
   */
  async getUnreportedUsage(
    conversationId: string,
    call: { turn: number; seq: number; segment: number; attempt: number },
  ): Promise<{ usage: Usage; costUsd: number }[]> {
    const { rows } = await this.pool.query(
      `SELECT usage, cost_usd FROM usage WHERE conversation_id = $1 AND (
         (purpose = 'turn' AND seq = $2 AND segment = $3 AND attempt < $4) OR ($3 = 0 AND purpose = 'summary' AND turn = $5))`,
      [conversationId, call.seq, call.segment, call.attempt, call.turn],
    );
    return rows.map((r) => ({ usage: r.usage as Usage, costUsd: r.cost_usd }));
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
