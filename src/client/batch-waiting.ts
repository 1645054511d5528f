// A batch's running jobs that wait for a person. The batch workflow only knows a job runs; the
// job's own state says it waits for an approval or an answer. Readers (the batch's progress and
// table, `inspect`, the page) show it with the exact command that answers it, as `run` does.
import type { Client } from '@temporalio/client';
import type { ConversationState } from '../../workflows/api.js';
import { queryStateWithin } from './actions.js';
import type { BatchResult, BatchRow } from '../../workflows/batch/api.js';

/** The `waiting` cell of one job, or undefined when nothing waits. */
function waitingOf(id: string, state: Pick<ConversationState, 'pendingApproval' | 'pendingQuestion'>): BatchRow['waiting'] {
  const a = state.pendingApproval;
  if (a) {
    const what = `${a.preview}${a.reasons.length ? ` (${a.reasons.join('; ')})` : ''}`;
    return { for: 'approval', what, command: `agentrun approve ${id} --call ${a.callId}${a.argsHash ? ` --args-hash ${a.argsHash}` : ''}` };
  }
  const q = state.pendingQuestion;
  if (q) return { for: 'question', what: q.question, command: `agentrun answer ${id} "…"` };
  return undefined;
}

/**
 * The batch with each running job that waits for a person marked `waiting` (status and cell).
 * A job whose worker does not answer within a few seconds stays `running`.
 */
export async function withWaiting(client: Client, batch: BatchResult): Promise<BatchResult> {
  const rows = await Promise.all(
    batch.rows.map(async (row) => {
      if (row.status !== 'running' && row.status !== 'waiting') return row;
      const state = await queryStateWithin(client, row.conversationId, 5000);
      const waiting = state ? waitingOf(row.conversationId, state) : undefined;
      return waiting ? { ...row, status: 'waiting' as const, waiting } : row;
    }),
  );
  return { ...batch, rows };
}
