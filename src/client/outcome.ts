// A conversation's full result, whatever Temporal status its workflow ended with: a completed one
// returns it, a failed one carries it in the failure's details, a cancelled one in its memo
// (workflows/outcome.ts). The CLI, the SDK and the page print and return the same result either way.
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
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
