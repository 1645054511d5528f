// The frozen `conversation` workflow's own steps (prepareContext, callModel, parseResponse, runTool,
// endTurn, finishConversation), called at the turn port's named points as the session's are. They
// serve runs started before the `session` workflow and go with the frozen workflow.
import { observeModel, observeTool } from '../src/observer.js';
import { contextActivities } from './context.js';
import { conversationActivities } from './conversation.js';
import { currentAttempt, portOf, type ActivityDeps } from './deps.js';
import { modelActivities } from './model.js';
import { toolActivities } from './tools.js';
import { turnActivities } from './turn.js';
import type { Activities } from './types.js';

type FrozenSteps = Pick<Activities, 'prepareContext' | 'callModel' | 'parseResponse' | 'runTool' | 'endTurn' | 'finishConversation'>;

export function frozenActivities(deps: ActivityDeps) {
  const { store } = deps;
  const port = portOf(deps);
  const conversation = conversationActivities(deps);
  const context = contextActivities(deps);
  const model = modelActivities(deps);
  const tools = toolActivities(deps);
  const turn = turnActivities(deps);
  const workspaceOf = async (conversationId: string) => (await store.getConversation(conversationId))?.workspace ?? '';
  const steps: FrozenSteps = {
    prepareContext: (input) => port.inWorkspace(input.workspace, () => context.prepareContext(input)),
    // One segment of the answer per activity: afterModel's `answered` once the answer is whole.
    callModel: (input) =>
      port.inWorkspace(input.workspace, () =>
        observeModel(
          port,
          {
            conversationId: input.conversationId,
            turn: input.turn,
            workspace: input.workspace,
            seq: input.seq,
            model: input.config.model,
            attempt: currentAttempt(),
          },
          () => model.callModel(input),
          (r) => ({
            ok: true,
            answered: r.merged,
            usage: r.usage,
            costUsd: r.costUsd,
            finishReason: r.finishReason,
            content: async () => (await store.getMessage(input.conversationId, input.seq))?.content ?? '',
          }),
        ),
      ),
    parseResponse: (input) => port.inWorkspace(input.workspace, () => tools.parseResponse(input)),
    runTool: (input) =>
      port.inWorkspace(input.workspace, async () => {
        const call = await store.getToolCall(input.conversationId, input.callId);
        const step = {
          conversationId: input.conversationId,
          turn: input.turn,
          workspace: input.workspace,
          callId: input.callId,
          name: call?.name ?? 'unknown',
          attempt: currentAttempt(),
          answeredByWorkflow: Boolean(input.override),
        };
        return observeTool(port, step, () => tools.runTool(input));
      }),
    endTurn: async (input) => {
      const r = await turn.endTurn(input);
      await port.onTurnEnd({ conversationId: input.conversationId, turn: input.turn, workspace: input.workspace });
      return r;
    },
    finishConversation: async (input) => {
      const r = await conversation.finishConversation(input);
      await port.onFinish({
        conversationId: input.conversationId,
        workspace: await workspaceOf(input.conversationId),
        status: input.status,
        result: input.result,
      });
      return r;
    },
  };
  return { ...conversation, ...context, ...model, ...tools, ...turn, ...steps };
}
