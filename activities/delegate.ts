// prepareDelegate: what the workflow needs to start a sub-agent for one `delegate` call — the
// agent read from the workspace (or AGENTRUN_HOME), its tools resolved, the task. Read-only:
// safe to run twice. An unknown agent or a broken agent file is an answer, not a failure.
import { AGENTS_DIR, AgentDefinitionError, findAgent, isReadOnlyAgent, resolveAgentTools } from '../src/extensions/agents.js';
import { isScripted } from '../src/model/client.js';
import { userModel } from '../src/model/models.js';
import { agentsOf } from './repository.js';
import { callPreview } from '../src/turn/calls.js';
import { activityLog, keepAlive, type ActivityDeps } from './deps.js';
import { onPlacedWorkspace } from './guard.js';
import { configFor } from './session.js';
import { stallOnInfrastructure } from './infra-errors.js';
import { fenced } from './fence.js';
import type { DelegateActivities, PrepareDelegateInput, PrepareDelegateResult } from './types.js';

/**
 * Why an agent file's model may not run, if it may not: a repository names only models the operator
 * allows (its parent's, or one in the worker's model table); `recorded:<id>` replays another
 * conversation's answers and needs its own entry there; a scripted model only under a scripted parent (tests).
 */
function refusedAgentModel(model: string, parentModel: string, home: string, fromRepository: boolean): string | undefined {
  if (isScripted(model))
    return isScripted(parentModel) ? undefined : 'a scripted model is only for conversations that run on one; name a provider model or remove the key';
  if (!fromRepository || model === parentModel) return undefined;
  if (userModel(model, home)) return undefined;
  return `"${model}" is not a model this worker's operator allows (the parent's model, or one in $AGENTRUN_HOME/models.json or AGENTRUN_MODELS); remove the key to use the parent's model`;
}

export function delegateActivities(deps: ActivityDeps): DelegateActivities {
  const { store, home } = deps;
  return {
    // On the workspace's host it heartbeats (keepAlive): the workflow gives host-queue steps a heartbeat timeout.
    prepareDelegate: stallOnInfrastructure(
      fenced(
        store,
        keepAlive(
          onPlacedWorkspace(home, async (input: PrepareDelegateInput): Promise<PrepareDelegateResult> => {
            const call = await store.getToolCall(input.conversationId, input.callId);
            if (!call) throw new Error(`tool call ${input.callId} of ${input.conversationId} is not in the store`);
            const name = String(call.args.agent);
            // A delegate call starts in the stream like every tool call; its answer (recordToolResult) ends it there.
            await store.appendStream(input.conversationId, [{ type: 'tool_started', callId: input.callId, name: call.name, preview: callPreview(call) }]);
            try {
              const agent = findAgent(await agentsOf(deps, input.conversationId, input.workspace), name);
              const tools = resolveAgentTools(agent);
              const refused =
                agent.model && refusedAgentModel(agent.model, (await configFor(store, input.conversationId)).model, home, agent.file.startsWith(AGENTS_DIR));
              if (refused) throw new AgentDefinitionError(`${agent.file}: model: ${refused}`);
              activityLog(input.conversationId).info({ callId: input.callId, agent: name, tools }, 'sub-agent prepared');
              return {
                agent: { name, systemPrompt: agent.systemPrompt, model: agent.model, maxTurns: agent.maxTurns, tools },
                task: String(call.args.task),
                readOnly: isReadOnlyAgent(tools),
              };
            } catch (err) {
              if (!(err instanceof AgentDefinitionError)) throw err;
              return { error: `${err.message}. Call delegate with one of those agents, or do the task yourself.` };
            }
          }),
        ),
      ),
    ),
  };
}
