// Conversation bookkeeping: creating it, appending messages, stream events, the end (the session's
// initConversation, appendMessage and emitEvents, and finishSession's record).
import { createCheckpoint } from '../src/workspace/checkpoint.js';
import { messageTokens } from '../src/model/tokens.js';
import type { AppendInput, FinishInput, InitInput, TurnZeroInput } from './types.js';
import { activityLog, keepAlive, withHeartbeat, type ActivityDeps } from './deps.js';
import {
  placedFor,
  refuseBadIdentifiers,
  refuseTestModel,
  refuseEnv,
  refuseMissingWorkspace,
  refuseOtherTenantsWorkspace,
  refuseUnsafeWorkspace,
  refuseUnsandboxed,
} from './guard.js';
import type { StreamEvent } from '../src/types.js';
import { operatorSettingsPath, readSettingsText } from '../src/extensions/settings.js';
import type { RepositorySnapshot } from '../src/extensions/repository.js';
import { captureRepositoryExtensions, repositoryExtensionsOf } from './repository.js';

const namesEnvironment = (data: unknown): boolean => data !== null && typeof data === 'object' && ('setup' in data || 'verify' in data);

/**
 * Whether the operator's settings file or the repository's (as kept at the start, when this worker
 * runs repository extensions) names `setup` or `verify` (read loosely: the setup step validates them).
 */
async function hasEnvironmentSettings(home: string, repository: RepositorySnapshot): Promise<boolean> {
  if (repository.enabled && namesEnvironment(repository.settings)) return true;
  try {
    return namesEnvironment(JSON.parse((await readSettingsText(operatorSettingsPath(home))) ?? ''));
  } catch {
    return false; // missing or unreadable: the setup step says so when it matters
  }
}

export function conversationActivities(deps: ActivityDeps) {
  const { store, home } = deps;
  /** What a run that stopped early leaves behind: files changed, tool calls, the last step. */
  async function finalSummary(input: FinishInput): Promise<string> {
    const files = new Set((await store.getCheckpoints(input.conversationId)).filter((c) => c.turn > 0).flatMap((c) => c.files));
    const messages = await store.getMessages(input.conversationId);
    const tools = messages.filter((m) => m.kind === 'tool_result');
    const failed = tools.filter((m) => m.meta?.ok === false).length;
    const lastText = [...messages]
      .reverse()
      .find((m) => m.role === 'assistant')
      ?.content.split('<')[0]
      ?.trim()
      .slice(0, 300);
    return [
      `Stopped after ${input.turns} turns: ${input.reason}.`,
      `Files changed: ${files.size ? [...files].join(', ') : 'none'}.`,
      `Tool calls: ${tools.length} (${failed} failed).`,
      ...(lastText ? [`Last step: ${lastText}`] : []),
    ].join(' ');
  }

  async function turnZero(conversationId: string, workspace: string) {
    const checkpoint = await withHeartbeat(() => createCheckpoint(workspace, conversationId, 0, home));
    if (checkpoint) await store.putCheckpoint(conversationId, 0, checkpoint.commit, checkpoint.files);
    return checkpoint;
  }

  return {
    // Runs on the workspace's host and heartbeats while it runs (keepAlive).
    initConversation: keepAlive(async (input: InitInput) => {
      const { conversationId, task, workspace, config } = input;
      await store.upsertConversation({ id: conversationId, task, workspace, model: config.model, config, scheduleId: config.scheduleId });
      const tokens = messageTokens({ role: 'user', content: task }, config.model);
      await store.putMessage({ conversationId, seq: 0, turn: 0, role: 'user', kind: 'task', content: task, tokens });
      // Keyed (written once): a retry after a crash between the task and this event still writes it.
      await store.appendStream(conversationId, [{ type: 'conversation_started', task: task.slice(0, 2000), model: config.model }]);
      // Recorded first (so the refusal is in the store), refused before anything runs in the workspace.
      refuseBadIdentifiers(conversationId, config);
      refuseTestModel(config.model);
      refuseEnv(deps, config.env);
      refuseUnsandboxed(deps, config.sandbox);
      refuseMissingWorkspace(workspace, config);
      refuseUnsafeWorkspace(deps, workspace, await placedFor(deps, conversationId, config, input.startedBy));
      await refuseOtherTenantsWorkspace(deps, workspace, config.tenant);
      // The repository's extensions as the tree is now, before the agent's first step (kept for the whole run).
      await captureRepositoryExtensions(deps, conversationId, workspace);
      // Turn 0 anchors rollback to the state before the agent touched anything (made here, or by checkpointTurnZero).
      const checkpoint = input.deferCheckpoint ? null : await turnZero(conversationId, workspace);
      activityLog(conversationId, 0).info({ workspace, model: config.model }, 'conversation started');
      // The workspace's settings name a setup or a check: the session runs its environment step (workflows/session/loop.ts).
      const environment = await hasEnvironmentSettings(home, await repositoryExtensionsOf(deps, conversationId, workspace));
      return { tokens, checkpoint: checkpoint ?? undefined, ...(environment ? { environment } : {}) };
    }),

    /**
     * The turn-0 checkpoint, made while the first model step runs (the workflow lets nothing change
     * the workspace before it is done). Safe to run twice: a checkpoint already made for turn 0 is
     * kept while the files are the same. Only the commit and the number of files go back to the
     * workflow (a large workspace's file list has no place in its history).
     */
    checkpointTurnZero: keepAlive(async (input: TurnZeroInput): Promise<{ commit: string; files: number } | undefined> => {
      const checkpoint = await turnZero(input.conversationId, input.workspace);
      if (checkpoint) activityLog(input.conversationId, 0).info({ commit: checkpoint.commit, files: checkpoint.files.length }, 'turn-0 checkpoint made');
      return checkpoint ? { commit: checkpoint.commit, files: checkpoint.files.length } : undefined;
    }),

    async appendMessage(input: AppendInput) {
      const tokens = messageTokens({ role: input.role, content: input.content }, input.model);
      await store.putMessage({
        conversationId: input.conversationId,
        seq: input.seq,
        turn: input.turn,
        role: input.role,
        kind: input.kind,
        content: input.content,
        toolName: input.toolName,
        toolCallId: input.toolCallId,
        meta: input.meta,
        tokens,
      });
      return { tokens };
    },

    async emitEvents(input: { conversationId: string; events: StreamEvent[] }) {
      // Decisions on approvals are kept with the conversation too: gc removes the stream.
      for (const e of input.events) if (e.type === 'approval_decided') await store.recordApproval(input.conversationId, e);
      await store.appendStream(input.conversationId, input.events);
    },

    async finishConversation(input: FinishInput) {
      const { conversationId, status, reason, turns, usage, costUsd, result } = input;
      const summary = status === 'completed' ? undefined : await finalSummary(input);
      await store.updateConversation(conversationId, { status, reason, turns, usage, costUsd, finished: true });
      await store.appendStream(conversationId, [{ type: 'finished', status, reason, summary, ...(result !== undefined ? { result } : {}) }]);
      activityLog(conversationId, turns).info({ status, reason, usage, costUsd }, 'conversation finished');
      return { summary };
    },
  };
}
