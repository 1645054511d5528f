// prepareDelegate: what the workflow needs to start a sub-agent for one `delegate` call — the
// agent read from the workspace (or AGENTRUN_HOME), its tools resolved, the task. Read-only:
// safe to run twice. An unknown agent or a broken agent file is an answer, not a failure.
import { AgentDefinitionError, findAgent, isReadOnlyAgent, loadAgents, resolveAgentTools } from '../src/extensions/agents.js';
import { isScripted } from '../src/model/client.js';
import { callPreview } from '../src/parser/calls.js';
import { activityLog, keepAlive, type ActivityDeps } from './deps.js';
import { onPlacedWorkspace } from './guard.js';
import { configFor } from './session.js';
import { stallOnInfrastructure } from './infra-errors.js';

export interface PrepareDelegateInput {
  conversationId: string;
  workspace: string;
  callId: string;
}

export type PrepareDelegateResult =
  | { error: string }
  | {
      agent: { name: string; systemPrompt: string; model?: string; maxTurns?: number; tools?: string[] };
      task: string;
      /** Its tools only read: it may run beside other read-only agents. */
      readOnly: boolean;
    };

export function delegateActivities({ store, home }: ActivityDeps) {
  return {
    // On the workspace's host it heartbeats (keepAlive): the workflow gives host-queue steps a heartbeat timeout.
    prepareDelegate: stallOnInfrastructure(
      keepAlive(
        onPlacedWorkspace(home, async (input: PrepareDelegateInput): Promise<PrepareDelegateResult> => {
          const call = await store.getToolCall(input.conversationId, input.callId);
          if (!call) throw new Error(`tool call ${input.callId} of ${input.conversationId} is not in the store`);
          const name = String(call.args.agent);
          // A delegate call starts in the stream like every tool call; its answer (recordToolResult) ends it there.
          await store.appendStream(input.conversationId, [{ type: 'tool_started', callId: input.callId, name: call.name, preview: callPreview(call) }]);
          try {
            const agent = findAgent(await loadAgents(input.workspace, home), name);
            const tools = resolveAgentTools(agent);
            // A repository is untrusted: its agents may not point the worker at local script files unless the parent is scripted too (tests).
            if (agent.model && isScripted(agent.model) && !isScripted((await configFor(store, input.conversationId)).model)) {
              throw new AgentDefinitionError(
                `${agent.file}: model: a scripted model is only for conversations that run on one; name a provider model or remove the key`,
              );
            }
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
  };
}

export type DelegateActivities = ReturnType<typeof delegateActivities>;
