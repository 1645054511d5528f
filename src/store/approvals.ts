// Approvals given or refused for a conversation's calls, as recorded for audit.
import type { ApprovalRow } from './types.js';
import { Tables } from './tables.js';

export abstract class ApprovalTables extends Tables {
  /** A conversation's connections, oldest first (at most `limit`, the newest ones). */
  /** Record a decision on a call that waited for approval (again: the same row). */
  async recordApproval(conversationId: string, a: ApprovalRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO approvals (conversation_id, call_id, approved, decided_by, reason, timed_out, at) VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7 / 1000.0))
       ON CONFLICT (conversation_id, call_id) DO UPDATE SET approved = EXCLUDED.approved, decided_by = EXCLUDED.decided_by, reason = EXCLUDED.reason, timed_out = EXCLUDED.timed_out, at = EXCLUDED.at`,
      [conversationId, a.callId, a.approved, a.by ?? null, a.reason ?? null, a.timedOut ?? false, a.atMs],
    );
  }

  /** The decisions on a conversation's calls, oldest first. */
  async getApprovals(conversationId: string): Promise<ApprovalRow[]> {
    const { rows } = await this.pool.query('SELECT * FROM approvals WHERE conversation_id = $1 ORDER BY at, call_id', [conversationId]);
    return rows.map((r) => ({
      callId: r.call_id,
      approved: r.approved,
      ...(r.decided_by ? { by: r.decided_by } : {}),
      ...(r.reason ? { reason: r.reason } : {}),
      ...(r.timed_out ? { timedOut: true } : {}),
      atMs: (r.at as Date).getTime(),
    }));
  }
}
