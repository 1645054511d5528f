// Rollback of a conversation that is no longer running: restore the files directly and
// record it in the conversation's stream (a running one rolls back through an update).
// The workspace is saved first, so the rollback can be undone with `--to <saved>`.
import type { Store } from '../store/index.js';
import { isConversationCommit, restoreCheckpoint } from '../workspace/checkpoint.js';
import { ConversationError } from './conversations.js';

export async function rollbackFinished(session: { store: Store; home: string }, id: string, to: { toTurn: number } | { commit: string }) {
  const conversation = await session.store.getConversation(id);
  if (!conversation) throw new ConversationError(`no conversation with id ${id} in the store`);
  let commit: string;
  let toTurn = -1;
  if ('commit' in to) {
    if (!(await isConversationCommit(conversation.workspace, id, to.commit, session.home)))
      throw new ConversationError(`${to.commit} is not a state saved by conversation ${id}`);
    commit = to.commit;
  } else {
    const checkpoints = await session.store.getCheckpoints(id);
    const cp = checkpoints.find((c) => c.turn === to.toTurn);
    if (!cp)
      throw new ConversationError(`no checkpoint for turn ${to.toTurn}; checkpoints exist for turns ${checkpoints.map((c) => c.turn).join(', ') || '(none)'}`);
    commit = cp.commit;
    toTurn = to.toTurn;
  }
  const r = await restoreCheckpoint(conversation.workspace, commit, session.home, { conversationId: id, key: `cli ${new Date().toISOString()}` });
  await session.store.appendStream(id, [{ type: 'rollback', toTurn, commit, ...r }]);
  return r;
}
