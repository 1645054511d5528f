// endTurn: checkpoint the workspace if the turn changed files, record progress.
// rollbackWorkspace: restore the files of an earlier checkpoint.
import { ApplicationFailure } from '@temporalio/common';
import { createCheckpoint, restoreCheckpoint } from '../src/workspace/checkpoint.js';
import { activityKey, activityLog, keepAlive, withHeartbeat, type ActivityDeps } from './deps.js';
import { inc } from '../src/metrics.js';
import type { EndTurnInput, EndTurnResult, RollbackInput } from './types.js';

export function turnActivities({ store, home }: ActivityDeps) {
  // Both run on the workspace's host and heartbeat while they run (keepAlive).
  return {
    endTurn: keepAlive(async (input: EndTurnInput): Promise<EndTurnResult> => {
      const { conversationId, turn, workspace, usage, costUsd, status } = input;
      let checkpoint: EndTurnResult['checkpoint'];
      if (input.changed) {
        const cp = await createCheckpoint(workspace, conversationId, turn, home);
        if (cp) {
          await store.putCheckpoint(conversationId, turn, cp.commit, cp.files);
          checkpoint = cp;
        }
      }
      await store.updateConversation(conversationId, { turns: turn, usage, costUsd, status });
      await store.appendStream(conversationId, [
        ...(checkpoint ? [{ type: 'checkpoint' as const, turn, commit: checkpoint.commit, files: checkpoint.files }] : []),
        { type: 'turn_completed', turn, usage, costUsd },
      ]);
      activityLog(conversationId, turn).info({ checkpoint: checkpoint?.commit, files: checkpoint?.files.length }, 'turn ended');
      inc('agentrun_turns_total');
      return { checkpoint };
    }),

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
