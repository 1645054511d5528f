// A conversation's full result, whatever Temporal status its workflow ended with: a completed one
// returns it, a failed one carries it in the failure's details, a cancelled one in its memo
// (workflows/session/outcome.ts). The CLI, the SDK and the page print and return the same result either way.
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { RESULT_MEMO, resultFromFailure, type ConversationResult } from '../../workflows/api.js';

export async function conversationResult(handle: Pick<WorkflowHandle, 'result' | 'describe'>): Promise<ConversationResult> {
  try {
    return (await handle.result()) as ConversationResult;
  } catch (err) {
    const failed = resultFromFailure(err);
    if (failed) return failed;
    if (err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure) {
      const memo = (await handle.describe()).memo?.[RESULT_MEMO] as ConversationResult | undefined;
      if (memo) return memo;
    }
    throw err;
  }
}

/** What an operator looks for first: the result branch, its commit, pushed, verified; setup and verify in short. */
export function outcomeOf(r: ConversationResult | undefined) {
  if (!r) return undefined;
  const b = r.branch;
  return {
    status: r.status,
    ...(b
      ? {
          branch: b.branch,
          commit: b.commit,
          pushed: b.pushed,
          ...(b.keptAt ? { keptAt: b.keptAt } : {}),
          ...(b.empty ? { empty: true } : {}),
          ...(b.verified !== undefined ? { verified: b.verified } : {}),
          files: b.diffstat.files,
          insertions: b.diffstat.insertions,
          deletions: b.diffstat.deletions,
        }
      : {}),
    ...(r.verify ? { verify: { command: r.verify.command, passed: r.verify.passed, exitCode: r.verify.exitCode, attempts: r.verify.attempts } } : {}),
    ...(r.setup ? { setup: { ok: r.setup.ok, cached: r.setup.cached, ms: r.setup.ms } } : {}),
  };
}

export type Outcome = NonNullable<ReturnType<typeof outcomeOf>>;

/**
 * The outcomes of finished conversations, by id, read back from Temporal (the close event, the
 * failure's details or the memo), at most 8 at a time and each within a deadline, so one slow or
 * vanished workflow leaves its row without an outcome instead of stalling the list.
 */
export async function finishedOutcomes(client: Client, ids: string[]): Promise<Map<string, Outcome>> {
  const out = new Map<string, Outcome>();
  const queue = [...ids];
  const next = async (): Promise<void> => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      const r = await client.withDeadline(Date.now() + 5_000, () => conversationResult(client.workflow.getHandle(id))).catch(() => undefined);
      const o = outcomeOf(r);
      if (o) out.set(id, o);
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, ids.length) }, next));
  return out;
}

/** The outcome in one short phrase for a list line: "branch x@abc1234 pushed verified", or why there is none. */
export function outcomePhrase(o: Outcome | undefined): string {
  if (!o) return '';
  if (o.empty) return 'no change';
  if (!o.branch) return '';
  return [
    `${o.branch}@${o.commit?.slice(0, 7) ?? '?'}`,
    o.pushed ? 'pushed' : 'not pushed',
    ...(o.verified === undefined ? [] : [o.verified ? 'verified' : 'unverified']),
  ].join(' ');
}
