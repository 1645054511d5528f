// `agentrun rerun <id>`: the same task and run options (the model too, unless --model) again, as a
// new conversation from turn 0's checkpoint of <id>. A local workspace is copied into a new
// directory (never over the user's files); a repository job is a fork of <id> at turn 0 (the clone
// at the ref it started from). With `--model recorded:<id>` it replays <id> offline.
import { runPriority } from '../model/pool-names.js';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { runConfigSchema } from '../config.js';
import { WORKFLOW_TYPE } from '../../workflows/api.js';
import { sessionStartMetadata, type SessionInput } from '../../workflows/session/api.js';
import { newConversationId } from '../client/conversations.js';
import { copyCheckpoint } from '../workspace/checkpoint.js';
import { rerunWorkspaceDir } from '../workspace/host.js';
import { claimId, emit, ensureRecording, followToEnd, startConversation, withSession, type GlobalFlags } from './commands.js';
import { CliError, EXIT } from './errors.js';
import { checkModel } from './options.js';
import { forkedJobConfig } from './fleet.js';

export interface RerunFlags extends GlobalFlags {
  model?: string;
  workspace?: string;
  id?: string;
  worker?: boolean;
  wait?: boolean;
  detach?: boolean;
}

export async function rerunCommand(sourceId: string, flags: RerunFlags): Promise<number> {
  const model = flags.model ? await checkModel(flags.model) : undefined;
  return withSession({ startIfMissing: true }, async (session) => {
    const source = await session.store.getConversation(sourceId);
    if (!source) throw new CliError(`no conversation with id ${sourceId} (see agentrun list)`);
    const config = runConfigSchema.parse({ ...(source.config as object), ...(model ? { model } : {}) });
    await ensureRecording(session, config.model);
    const id = flags.id ?? newConversationId();
    if (flags.id) await claimId(session, id, false);

    let workspace: string;
    let handle: Parameters<typeof followToEnd>[2];
    if (config.repo) {
      if (flags.workspace)
        throw new CliError(
          `conversation ${sourceId} is a repository job (--repo ${config.repo}): its rerun clones the repository on a worker, so --workspace does not apply`,
        );
      workspace = config.repo;
      // Turn 0 of a fork is the task alone on the checkpoint the job started from; its own result branch.
      const input: SessionInput = {
        task: source.task,
        workspace,
        config: forkedJobConfig(config, {}),
        searchAttributes: session.searchAttributes,
        fork: { parentId: sourceId, atTurn: 0 },
      };
      if (flags.worker !== false && !flags.detach) await session.startWorker();
      try {
        handle = await session.client.workflow.start(WORKFLOW_TYPE, {
          workflowId: id,
          taskQueue: session.taskQueue,
          args: [input],
          ...sessionStartMetadata(input, { id, atMs: Date.now() }),
          priority: runPriority(input.config),
        });
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) throw new CliError(`a conversation with id ${id} already exists; choose another --id`);
        throw err;
      }
    } else {
      const start = (await session.store.getCheckpoints(sourceId)).find((c) => c.turn === 0);
      if (!start) throw new CliError(`conversation ${sourceId} has no checkpoint of turn 0 to start from (it ended before its first turn)`);
      workspace = resolve(flags.workspace ?? rerunWorkspaceDir(session.home, id));
      if (existsSync(workspace) && (await readdir(workspace)).length) {
        throw new CliError(`--workspace ${workspace} is not empty: rerun copies turn 0 of ${sourceId} into a new or empty directory, never over files`);
      }
      try {
        await copyCheckpoint(source.workspace, start.commit, session.home, workspace);
      } catch (err) {
        throw new CliError(
          `cannot copy turn 0's checkpoint (${start.commit.slice(0, 12)}) of ${sourceId} out of ${source.workspace}: ${(err as Error).message.split('\n')[0]}`,
        );
      }
      if (flags.worker !== false && !flags.detach) await session.startWorker();
      ({ handle } = await startConversation(session, { task: source.task, workspace, config }, { id }));
    }
    emit(
      flags.json,
      { type: flags.detach ? 'started' : 'conversation', conversationId: id, rerunOf: sourceId, workspace, model: config.model },
      flags.detach ? id : `conversation ${id} (rerun of ${sourceId} in ${workspace}, model ${config.model})`,
    );
    if (flags.detach) return EXIT.completed;
    return followToEnd(session, id, handle, flags);
  });
}
