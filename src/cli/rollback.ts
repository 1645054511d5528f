// Rollback of a conversation that is no longer running: restore the files directly and
// record it in the conversation's stream (a running one rolls back through an update).
import { restoreCheckpoint } from '../workspace/checkpoint.js';
import { CliError } from './errors.js';
import type { Session } from './session.js';

export async function rollbackFinished(session: Session, id: string, toTurn: number) {
  const conversation = await session.store.getConversation(id);
  if (!conversation) throw new CliError(`no conversation with id ${id} in the store`);
  const checkpoints = await session.store.getCheckpoints(id);
  const cp = checkpoints.find((c) => c.turn === toTurn);
  if (!cp) throw new CliError(`no checkpoint for turn ${toTurn}; checkpoints exist for turns ${checkpoints.map((c) => c.turn).join(', ') || '(none)'}`);
  const r = await restoreCheckpoint(conversation.workspace, cp.commit, session.home);
  await session.store.appendStream(id, [{ type: 'rollback', toTurn, commit: cp.commit, ...r }]);
  return r;
}
