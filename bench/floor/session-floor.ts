// The smallest workflow over agentrun's real activities: the session workflow's own steps for a
// local workspace (placement on the shared queue, then initConversation, turn 0's bundle, and per
// turn modelTurn and toolCall on the host's queue, with the inputs the session gives them) and no
// policy, budgets, handlers, routing or cancellation scopes. bench/overhead.ts runs it beside the
// session workflow: the difference is what the session workflow's own code costs per turn.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities, EndTurnRecordInput, SessionActivities } from '../../activities/types.js';
import type { RunConfig } from '../../src/config.js';
import { hostQueue } from '../../src/workspace/routing.js';

export interface SessionFloorInput {
  conversationId: string;
  workspace: string;
  config: RunConfig;
  /** The queue `agentrun worker` polls; its host queue is derived from it. */
  sharedQueue: string;
}

const options = { startToCloseTimeout: '5m', heartbeatTimeout: 10_000, retry: { maximumAttempts: 3 } } as const;

/** Returns the number of turns. */
export async function sessionFloor({ conversationId, workspace, config, sharedQueue }: SessionFloorInput): Promise<number> {
  const shared = proxyActivities<Activities>({ ...options, taskQueue: sharedQueue });
  const placed = await shared.placeLocalWorkspace({ conversationId, workspace, epoch: 1 });
  if (!placed) throw new Error('the workspace was not placed on a host');
  const host = proxyActivities<Activities & SessionActivities>({
    ...options,
    taskQueue: hostQueue(sharedQueue, placed.hostId),
    scheduleToStartTimeout: 20_000,
  });
  const ref = { conversationId, workspace: placed.workspace, epoch: 1 };
  const init = await host.initConversation({ ...ref, config, task: 'bench' });
  if (init.checkpoint)
    await host.saveCheckpointOffHost({ conversationId, workspace: placed.workspace, turn: 0, commit: init.checkpoint.commit, epoch: 1, lease: '' });
  let nextSeq = 1;
  let endTurn: EndTurnRecordInput | undefined;
  for (let turn = 1; ; turn++) {
    const answer = await host.modelTurn({ ...ref, turn, seq: nextSeq++, appends: [], ...(endTurn ? { endTurn } : {}) });
    let done = false;
    for (const call of answer.calls) {
      const resultSeq = nextSeq++;
      if (call.name === 'attempt_completion') done = true;
      else {
        const classified = call.safety && { target: call.target ?? '', safety: call.safety };
        await host.toolCall({ ...ref, turn, callId: call.id, resultSeq, classified, checkpoint: call.mutating, offHost: true, lease: '' });
      }
    }
    endTurn = { conversationId, turn, usage: answer.usage, costUsd: 0, status: 'running' };
    if (done) return turn;
  }
}
