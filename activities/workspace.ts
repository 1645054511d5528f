// Repository jobs across hosts: clone / re-materialise here (the worker that takes the task
// becomes the workspace host), push each checkpoint off the host, and the result branch.
// Thin adapters over src/workspace/.
import { existsSync } from 'node:fs';
import { IdentifierError } from '../src/ids.js';
import { tenantOfRun } from '../src/runtime/tenant.js';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { isConversationCommit } from '../src/workspace/checkpoint.js';
import { restoreFromBundles } from '../src/workspace/bundle.js';
import { cloneRepository, materializeCheckpoint, WorkspaceInputError } from '../src/workspace/clone.js';
import { checkPlacement, markPlacement, originMismatch } from '../src/workspace/identity.js';
import { hostId, hostIncarnation, pollsHostQueue, recordWorkspaceUsage, workspaceDir } from '../src/workspace/host.js';
import { bundleBaseParts, checkpointBundles, checkpointRemote, saveCheckpointOffHost, type OffHostSaved } from '../src/workspace/offhost.js';
import { commitResultBranch, PushRejectedError, type BranchResult } from '../src/workspace/result-branch.js';
import { turnRef } from '../src/workspace/routing.js';
import { releaseWhenFinished } from '../src/environment/disk.js';
import { activityLog, heartbeat, keepAlive, type ActivityDeps } from './deps.js';
import type { SetupCreated } from '../src/workspace/setup-created.js';
import { refuseBadIdentifiers, refuseTestModel, refuseEnv, refuseRepositorySource, refuseUnsandboxed, unsafeWorkspace } from './guard.js';
import { fenced } from './fence.js';
import { captureRepositoryExtensions, copyRepositoryExtensions } from './repository.js';
import type {
  ForkCopy,
  ForkInput,
  MaterializeInput,
  OffHostInput,
  PlacedWorkspace,
  PlaceLocalInput,
  PrepareWorkspaceInput,
  ResultBranchInput,
  WorkspaceActivities,
} from './types.js';

/** Conversations whose workspace this process holds: a draining worker hands these over. */
export const hostedConversations = new Set<string>();

/** A placement on this worker process. */
function placedHere(workspace: string, base: string, kept?: boolean): PlacedWorkspace {
  return { hostId: hostId(), incarnation: hostIncarnation(), workspace, base, ...(kept ? { kept } : {}) };
}

/** Errors retrying cannot fix end the conversation with their message. */
async function final<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof WorkspaceInputError) throw ApplicationFailure.nonRetryable(err.message, 'WorkspaceInput');
    if (err instanceof IdentifierError) throw ApplicationFailure.nonRetryable(err.message, 'InvalidIdentifier');
    if (err instanceof PushRejectedError) throw ApplicationFailure.nonRetryable(err.message, 'PushRejected');
    throw err;
  }
}

export function workspaceActivities(deps: ActivityDeps): WorkspaceActivities {
  const { home, store } = deps;
  /** A placement: earlier placements' writes are refused from here on (before anything of this one is written). */
  async function raiseFence(input: { conversationId: string; epoch?: number }): Promise<void> {
    if (input.epoch === undefined) return;
    const now = await store.raiseFence(input.conversationId, input.epoch);
    activityLog(input.conversationId).info({ host: hostId(), epoch: input.epoch, fence: now }, 'placement fence raised');
  }
  /**
   * A local workspace whose host was lost. Where its directory is reachable here with this
   * conversation's checkpoint in it (the same machine after a restart, or a shared volume) it is
   * kept as it is; else it is rebuilt from the stored bundles under this host's AGENTRUN_WORKSPACES.
   */
  async function materializeLocal(input: MaterializeInput, dir: string): Promise<PlacedWorkspace> {
    const { conversationId, turn, commit } = input;
    if (input.workspace && existsSync(input.workspace)) {
      // By identity, never by path alone: kept only where this host placed that very directory
      // (or, placed before markers existed, this AGENTRUN_HOME checkpointed it); else another
      // machine's tree at the same path is left alone and the workspace is rebuilt in our own.
      const placed = await checkPlacement(home, input.workspace, conversationId);
      if ((placed.marked ? !placed.why : true) && (await isConversationCommit(input.workspace, conversationId, commit, home))) {
        activityLog(conversationId).info({ host: hostId(), workspace: input.workspace }, 'workspace reachable on this host: kept as it is');
        recordWorkspaceUsage(store, conversationId, input.workspace, input.epoch ?? null);
        return placedHere(input.workspace, '', true);
      }
      if (placed.why)
        activityLog(conversationId).warn({ host: hostId(), workspace: input.workspace }, `directory declined, rebuilt from the bundles instead: ${placed.why}`);
    }
    const bundles = await store.getBundledCommits(conversationId);
    const skipped = bundles.find((b) => b.skipped);
    if (skipped)
      throw ApplicationFailure.nonRetryable(
        `the workspace of ${conversationId} cannot be rebuilt on another host: it has no off-host checkpoint since turn ${skipped.turn} (${skipped.base ? "its repository's bundle base was above AGENTRUN_MAX_BASE_BUNDLE_BYTES" : 'its bundle was above AGENTRUN_MAX_BUNDLE_BYTES'}); restart its host, where the directory is`,
        'NoOffHostCheckpoint',
      );
    // The first bundle starts from its repository's bundle base (stored once, in parts).
    const base = bundles[0]?.base;
    await final(() =>
      restoreFromBundles(
        dir,
        conversationId,
        checkpointBundles(store, conversationId, bundles),
        commit,
        home,
        base !== undefined ? bundleBaseParts(store, base) : undefined,
      ),
    );
    await markPlacement(home, dir, conversationId);
    await store.appendStream(conversationId, [{ type: 'workspace_restored', host: hostId(), turn, commit, ...drainOf(input) }]);
    activityLog(conversationId).info(
      { host: hostId(), turn, commit, bundles: bundles.length, base, dir },
      'local workspace rebuilt from its checkpoint bundles',
    );
    recordWorkspaceUsage(store, conversationId, dir, input.epoch ?? null);
    return placedHere(dir, '');
  }

  // Each runs on a workspace host and heartbeats while it runs (keepAlive): the workflow gives them a short heartbeat timeout.
  return {
    prepareWorkspace: keepAlive(async (input: PrepareWorkspaceInput): Promise<PlacedWorkspace> => {
      const { conversationId, task, config } = input;
      const repo = config.repo!;
      // Registered before the clone, so a job whose clone fails still ends with its reason in the store.
      await store.upsertConversation({ id: conversationId, task, workspace: repo, model: config.model, config, scheduleId: config.scheduleId });
      refuseBadIdentifiers(conversationId, config);
      refuseTestModel(config.model);
      await refuseRepositorySource(deps, repo, config.tenant);
      refuseEnv(deps, config.env);
      refuseUnsandboxed(deps, config.sandbox);
      await raiseFence(input);
      const dir = await final(async () => workspaceDir(home, conversationId));
      heartbeat();
      const { base } = await final(() => cloneRepository(repo, config.ref, dir, home));
      // The cloned ref is the starting tree: its extensions are kept now, before anything else runs in it.
      await captureRepositoryExtensions(deps, conversationId, dir);
      hostedConversations.add(conversationId);
      activityLog(conversationId, 0).info({ repo, ref: config.ref, base, host: hostId() }, 'repository cloned');
      recordWorkspaceUsage(store, conversationId, dir, input.epoch ?? null);
      return placedHere(dir, base);
    }),

    /**
     * Local workspaces: whichever worker takes this becomes the workspace host (its directory must be
     * on that host). null from a worker that polls no host queue (an SDK or test worker): the
     * conversation then stays on the shared queue, as before hosts existed.
     */
    placeLocalWorkspace: keepAlive(async (input: PlaceLocalInput): Promise<PlacedWorkspace | null> => {
      if (!pollsHostQueue()) return null;
      if (!existsSync(input.workspace)) {
        // Declined so that a host that has it takes it; on the last try, no host did: initConversation
        // (on the shared queue) records the conversation, then refuses it with its line.
        if (lastTry()) return null;
        throw ApplicationFailure.retryable(`workspace ${input.workspace} does not exist on host ${hostId()}`, 'WorkspaceNotHere');
      }
      // Not held here: initConversation (on the shared queue) records the conversation, then refuses it with its line.
      if (unsafeWorkspace(deps, input.workspace)) return null;
      // A placement again (a retry, or after the first host died before the job started): only
      // the directory placed the first time, if this host placed it; else the marker is written now.
      const placed = await checkPlacement(home, input.workspace, input.conversationId);
      if (placed.marked && placed.why)
        throw ApplicationFailure.retryable(`workspace ${input.workspace} on host ${hostId()} declined: ${placed.why}`, 'WorkspaceNotHere');
      // The first placement, by identity: the machine and directory the conversation was started on, never a tree at the same path elsewhere.
      const elsewhere = !placed.marked && input.origin ? await originMismatch(input.workspace, input.origin) : undefined;
      if (elsewhere) {
        activityLog(input.conversationId).info(
          { host: hostId(), workspace: input.workspace },
          `first placement declined, left to a host where it was started: ${elsewhere}`,
        );
        throw ApplicationFailure.retryable(`workspace ${input.workspace} on host ${hostId()} declined: ${elsewhere}`, 'WorkspaceNotHere');
      }
      if (!placed.marked) await markPlacement(home, input.workspace, input.conversationId);
      await raiseFence(input);
      // Not handed over on drain: a worker restarted on this machine finds the directory as it was.
      recordWorkspaceUsage(store, input.conversationId, input.workspace, input.epoch ?? null);
      return placedHere(input.workspace, '');
    }),

    materializeWorkspace: keepAlive(async (input: MaterializeInput): Promise<PlacedWorkspace> => {
      await raiseFence(input);
      const dir = await final(async () => workspaceDir(home, input.conversationId));
      heartbeat();
      const repo = input.repo;
      if (repo === undefined) return materializeLocal(input, dir);
      const tenant = ((await store.getConversation(input.conversationId))?.config as { tenant?: string } | undefined)?.tenant;
      await refuseRepositorySource(deps, repo, tenant);
      const from = input.fromConversationId ?? input.conversationId;
      const { base } = await final(() =>
        materializeCheckpoint({
          repo,
          checkpointRemote: checkpointRemote(),
          remoteRef: turnRef(from, input.turn),
          commit: input.commit,
          dir,
          conversationId: input.conversationId,
          fromConversationId: from,
          base: input.base,
          home,
        }),
      );
      hostedConversations.add(input.conversationId);
      await store.appendStream(input.conversationId, [
        { type: 'workspace_restored', host: hostId(), turn: input.turn, commit: input.commit, ...drainOf(input) },
      ]);
      activityLog(input.conversationId).info(
        { host: hostId(), turn: input.turn, commit: input.commit },
        'workspace re-materialised from the off-host checkpoint',
      );
      recordWorkspaceUsage(store, input.conversationId, dir, input.epoch ?? null);
      return placedHere(dir, base);
    }),

    /** Answers at once: a host that runs it is not frozen (the workflow's probe, workflows/session/steps.ts). */
    probeHost: async (): Promise<void> => undefined,

    /** A fork's transcript: the parent's first `atTurn` turns, copied under the new id (safe to repeat). */
    forkConversation: keepAlive(async (input: ForkInput): Promise<ForkCopy> => {
      const { conversationId, parentId, atTurn, task, config } = input;
      await store.upsertConversation({ id: conversationId, task, workspace: config.repo ?? '', model: config.model, config });
      refuseBadIdentifiers(conversationId, config);
      refuseTestModel(config.model);
      // A fork copies its parent's transcript and checkpoints: only within the parent's tenant.
      const parent = await store.getConversation(parentId);
      if (!parent || tenantOfRun(parent.config) !== tenantOfRun(config))
        throw ApplicationFailure.nonRetryable(`no conversation with id ${parentId} of tenant ${tenantOfRun(config)} to fork`, 'ForeignConversation');
      refuseEnv(deps, config.env);
      refuseUnsandboxed(deps, config.sandbox);
      const messages = (await store.getMessages(parentId)).filter((m) => m.turn <= atTurn);
      for (const m of messages) await store.putMessage({ ...m, conversationId });
      const checkpoints = (await store.getCheckpoints(parentId)).filter((c) => c.turn <= atTurn);
      for (const c of checkpoints) await store.putCheckpoint(conversationId, c.turn, c.commit, c.files);
      await copyRepositoryExtensions(store, parentId, conversationId);
      await store.appendStream(conversationId, [{ type: 'conversation_started', task: task.slice(0, 2000), model: config.model }]);
      activityLog(conversationId, atTurn).info({ parentId, atTurn, messages: messages.length }, 'conversation forked');
      return {
        index: messages.map((m) => ({ seq: m.seq, turn: m.turn, role: m.role, kind: m.kind, tokens: m.tokens, toolName: m.toolName })),
        nextSeq: Math.max(0, ...messages.map((m) => m.seq)) + 1,
        checkpoints: checkpoints.map((c) => ({ turn: c.turn, commit: c.commit, files: c.files.length })),
      };
    }),

    saveCheckpointOffHost: fenced(
      store,
      keepAlive(async (input: OffHostInput): Promise<OffHostSaved> => {
        if (input.repo !== undefined) hostedConversations.add(input.conversationId);
        return saveCheckpointOffHost(store, home, input);
      }),
    ),

    commitResultBranch: fenced(
      store,
      keepAlive(async (input: ResultBranchInput): Promise<BranchResult> => {
        // A superseded host must not push the branch (its commit would be of a workspace the job left).
        await store.checkFence(input.conversationId, input.epoch ?? null, 'the result branch');
        // Read from the conversation's settings: the workflow's input to this step stays as it was.
        const pushEmpty = ((await store.getConversation(input.conversationId))?.config as { pushEmpty?: boolean } | undefined)?.pushEmpty === true;
        const { dirs: setupOutputs, created: setupCreated } = await setupOutputsOf(store, input.conversationId);
        const r = await final(() =>
          commitResultBranch({
            dir: input.workspace,
            home,
            conversationId: input.conversationId,
            task: input.task,
            base: input.base,
            branch: input.branch,
            push: input.push,
            pushEmpty,
            setupOutputs,
            setupCreated,
            ...(input.verify ? { verify: input.verify } : {}),
          }),
        );
        await store.appendStream(input.conversationId, [
          {
            type: 'result_branch',
            branch: r.branch,
            commit: r.commit,
            pushed: r.pushed,
            files: r.diffstat.files,
            insertions: r.diffstat.insertions,
            deletions: r.diffstat.deletions,
            ...(r.verified !== undefined ? { verified: r.verified } : {}),
          },
        ]);
        activityLog(input.conversationId).info({ branch: r.branch, commit: r.commit, pushed: r.pushed }, 'result branch');
        // Nothing of the job lives only here now: its workspace goes once the job has ended, as its --keep-workspace says.
        if (r.pushed)
          void releaseWhenFinished(store, home, input.conversationId, input.workspace).then(
            (gone) => gone && activityLog(input.conversationId).info({ workspace: input.workspace }, 'workspace removed: its branch is pushed'),
            (err: unknown) => activityLog(input.conversationId).warn({ err: (err as Error).message }, 'workspace not removed; the next disk pass tries again'),
          );
        return r;
      }),
    ),
  };
}

/** The drained host a move came from, for the `workspace_restored` event (nothing for a move after a loss). */
function drainOf(input: MaterializeInput): { from?: string; drained?: true } {
  return input.drained ? { ...(input.fromHost !== undefined ? { from: input.fromHost } : {}), drained: true } : {};
}

/** The directories setup made (its cache keeps them) and what else it created, from the conversation's setup events. */
async function setupOutputsOf(store: ActivityDeps['store'], conversationId: string): Promise<{ dirs: string[]; created: SetupCreated[] }> {
  const dirs = new Set<string>();
  const created: SetupCreated[] = [];
  for (let from = 0; ;) {
    const rows = await store.readStream(conversationId, from, 1000);
    for (const r of rows) if (r.event.type === 'setup_finished') for (const d of r.event.dirs ?? []) dirs.add(d);
    for (const r of rows) if (r.event.type === 'setup_finished' && r.event.created) created.push(r.event.created);
    if (rows.length < 1000) break;
    from = rows[rows.length - 1]!.offset + 1;
  }
  return { dirs: [...dirs], created };
}

/**
 * Whether this attempt of the running activity is its last: its retry policy's attempts are used
 * up, or its schedule-to-close time ends before another attempt (its longest wait between two) could
 * start. False when neither is known.
 */
function lastTry(): boolean {
  const info = Context.current().info;
  const attempts = info.retryPolicy?.maximumAttempts;
  if (attempts !== undefined && attempts > 0 && info.attempt >= attempts) return true;
  if (!info.scheduleToCloseTimeoutMs) return false;
  const wait = msOf(info.retryPolicy?.maximumInterval) ?? 30_000;
  return Date.now() + wait >= info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs;
}

/** A retry policy's duration in ms (a number of ms, or a string like `5s`), else undefined. */
function msOf(d: unknown): number | undefined {
  if (typeof d === 'number') return d;
  const m = typeof d === 'string' ? /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(d) : null;
  if (!m) return undefined;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] as 'ms' | 's' | 'm'];
}
