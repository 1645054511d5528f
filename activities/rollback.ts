// rollbackWorkspace: restore the files of an earlier checkpoint (the session's rollback update).
import { ApplicationFailure } from '@temporalio/common';
import { restoreCheckpoint } from '../src/workspace/checkpoint.js';
import { activityKey, activityLog, keepAlive, withHeartbeat, type ActivityDeps } from './deps.js';
import type { RollbackInput } from './types.js';

export function rollbackActivities({ store, home }: ActivityDeps) {
  // Runs on the workspace's host and heartbeats while it runs (keepAlive).
  return {
    rollbackWorkspace: keepAlive(async (input: RollbackInput) => {
      const commit = input.commit ?? (await store.getCheckpoints(input.conversationId)).find((c) => c.turn === input.toTurn)?.commit;
      if (!commit) throw ApplicationFailure.nonRetryable(`no checkpoint for turn ${input.toTurn}`, 'NoCheckpoint');
      const r = await withHeartbeat(() =>
        restoreCheckpoint(input.workspace, commit, home, { conversationId: input.conversationId, key: input.key ?? activityKey() }),
      );
      await store.appendStream(input.conversationId, [{ type: 'rollback', toTurn: input.toTurn, commit, ...r }]);
      activityLog(input.conversationId).info({ toTurn: input.toTurn, ...r }, 'workspace rolled back');
      return { ...r, commit };
    }),
  };
}
