// What a worker refuses at a conversation's first step, whatever the CLI checked (a client, a
// schedule or another CLI version may start it): `--env` names this worker does not pass, and a
// workspace that would expose the worker. Each ends the conversation with its one line. And, on
// every step that touches a placed local workspace, a directory that is not the one placed.
import { ApplicationFailure } from '@temporalio/common';
import { envRefusal, unsandboxedRefusal } from '../src/sandbox/policy.js';
import type { RunConfig } from '../src/config.js';
import { idRefusal, runIdentifiersRefusal } from '../src/ids.js';
import { hostId, rerunWorkspaceDir, workspaceDir } from '../src/workspace/host.js';
import { assertWorkspaceSafe, real, UnsafeWorkspaceError, workerPlaces } from '../src/workspace/guard.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { localSourcePath, repositorySourceRefusal, repositorySourcesFromEnv } from '../src/workspace/sources.js';
import { DEFAULT_TENANT } from '../src/model/pool-names.js';
import { testModelRefusal } from '../src/model/scripted/allowed.js';
import { checkPlacement } from '../src/workspace/identity.js';
import { WORKSPACE_IDENTITY_FAILURE } from '../src/workspace/routing.js';
import { activityLog, type ActivityDeps } from './deps.js';

/**
 * A conversation's id and the names among its options (ref, result branch, schedule), checked by
 * the rules the CLI and the SDK apply (src/ids.ts): a client of any version, a schedule or a
 * hand-made Temporal start reaches the worker too. Before the workspace directory is named.
 */
export function refuseBadIdentifiers(conversationId: string, config: Pick<RunConfig, 'ref' | 'branch' | 'scheduleId'>): void {
  const refused = idRefusal('conversation id', conversationId) ?? runIdentifiersRefusal(config);
  if (refused) throw ApplicationFailure.nonRetryable(refused, 'InvalidIdentifier');
}

/**
 * A repository job's source, checked again on the worker that clones it (src/workspace/sources.ts),
 * and, for a local path, never another tenant's local workspace.
 */
export async function refuseRepositorySource(deps: Pick<ActivityDeps, 'home' | 'store'>, repo: string, tenant: string | undefined): Promise<void> {
  let refused = repositorySourceRefusal(repo, repositorySourcesFromEnv(), workerPlaces(deps.home));
  const local = !refused && localSourcePath(repo);
  if (local) {
    const theirs = await deps.store.otherTenantsWorkspacesAt(local, tenant ?? DEFAULT_TENANT);
    if (theirs.length) refused = `repository ${JSON.stringify(repo)} is refused: it is, holds or lies inside the workspace of another tenant's conversation`;
  }
  if (refused) throw ApplicationFailure.nonRetryable(refused, 'RepositoryNotAllowed');
}

/**
 * A local workspace that is, holds or lies inside another tenant's conversation's workspace: the
 * agent would read and write that tenant's files (the worker binds the workspace into the sandbox
 * whatever the starter's tenant). Repository jobs work in their own directory, which no other
 * conversation's workspace is.
 */
export async function refuseOtherTenantsWorkspace(deps: Pick<ActivityDeps, 'store'>, workspace: string, tenant: string | undefined): Promise<void> {
  if (!path.isAbsolute(workspace)) return;
  // Stored as each starter named it: asked by the real path and by the path as given (a link to it).
  const names = [...new Set([real(workspace), workspace])];
  const theirs = (await Promise.all(names.map((dir) => deps.store.otherTenantsWorkspacesAt(dir, tenant ?? DEFAULT_TENANT)))).flat();
  if (theirs.length)
    throw ApplicationFailure.nonRetryable(
      `workspace ${JSON.stringify(workspace)} is refused: it is, holds or lies inside the workspace of another tenant's conversation`,
      'WorkspaceOfAnotherTenant',
    );
}

/** A scripted or recorded model this worker was not started to serve (src/model/scripted/allowed.ts). */
export function refuseTestModel(model: string): void {
  const refused = testModelRefusal(model);
  if (refused) throw ApplicationFailure.nonRetryable(refused, 'TestModelNotAllowed');
}

export function refuseEnv(deps: Pick<ActivityDeps, 'allowEnv'>, env: readonly string[] | undefined): void {
  const refused = envRefusal(env ?? [], deps.allowEnv ?? []);
  if (refused) throw ApplicationFailure.nonRetryable(refused, 'EnvNotAllowed');
}

/**
 * The one line when `workspace` would expose this worker (src/workspace/guard.ts), else undefined.
 * `placed`: the directories inside the worker's own that this conversation may use (see placedFor).
 */
export function unsafeWorkspace(deps: Pick<ActivityDeps, 'home'>, workspace: string, placed: string[] = []): string | undefined {
  try {
    assertWorkspaceSafe(workspace, workerPlaces(deps.home, placed));
    return undefined;
  } catch (err) {
    if (err instanceof UnsafeWorkspaceError) return err.message;
    throw err;
  }
}

/**
 * A local workspace (no `repo`) that is not on this worker's host: a start that did not come
 * through the CLI (which checks first) names a directory no host has.
 */
export function refuseMissingWorkspace(workspace: string, config: Pick<RunConfig, 'repo'>): void {
  if (config.repo !== undefined || existsSync(workspace)) return;
  throw ApplicationFailure.nonRetryable(
    `workspace ${workspace} does not exist on host ${hostId()}, the worker that took the conversation: start it again naming an existing directory, on a machine whose worker sees that directory`,
    'UnsafeWorkspace',
  );
}

export function refuseUnsafeWorkspace(deps: Pick<ActivityDeps, 'home'>, workspace: string, placed: string[] = []): void {
  const refused = unsafeWorkspace(deps, workspace, placed);
  if (refused) throw ApplicationFailure.nonRetryable(refused, 'UnsafeWorkspace');
}

/**
 * The directories under the worker's own this conversation works in by the worker's placing, not
 * by what its starter named: its own directory in the workspaces directory (a clone, a rebuilt
 * workspace), its own rerun directory (`agentrun rerun` of a local workspace copies turn 0 there) and, for a sub-agent (`<parent>.sub-<n>`, workflows/session/delegate.ts), its ancestors'
 * directories there (a moved parent's) and its parent's workspace (checked when the parent started).
 * A sub-agent is one only when Temporal started it as the child of that parent (`startedBy`, the
 * workflow's parent): an id shaped `<other>.sub-1` and a config naming a parent, which any caller
 * can send, are not enough.
 */
export async function placedFor(deps: Pick<ActivityDeps, 'home' | 'store'>, conversationId: string, config: RunConfig, startedBy?: string): Promise<string[]> {
  const placed = [workspaceDir(deps.home, conversationId), rerunWorkspaceDir(deps.home, conversationId)];
  const parentId = config.agent?.parentId;
  if (!parentId || parentId !== startedBy || !conversationId.startsWith(`${parentId}.sub-`)) return placed;
  let ancestor = parentId;
  for (;;) {
    placed.push(workspaceDir(deps.home, ancestor));
    const up = ancestor.lastIndexOf('.sub-');
    if (up < 0) break;
    ancestor = ancestor.slice(0, up);
  }
  const parent = await deps.store.getConversation(parentId);
  if (parent?.workspace) placed.push(parent.workspace);
  return placed;
}

/**
 * A conversation's `sandbox: off` runs its commands as the worker, on its network, with its files:
 * only a worker whose operator said so (`--sandbox off`, `--allow-unsandboxed`) runs it.
 */
export function refuseUnsandboxed(deps: Pick<ActivityDeps, 'allowUnsandboxed'>, sandbox: string | undefined): void {
  const refused = unsandboxedRefusal(sandbox, deps.allowUnsandboxed ?? false);
  if (refused) throw ApplicationFailure.nonRetryable(refused, 'UnsandboxedNotAllowed');
}

/**
 * Refuse a step on a local workspace whose directory is not the one this host placed for the
 * conversation: a host restarted under its id that finds another tree at the
 * path (replaced, remounted) reads, checkpoints, sets up or verifies nothing in it. The failure
 * type is one the workflow treats as a loss of the host (workflows/session/host.ts): it moves the
 * workspace, rebuilt from its bundles. Directories this host placed no marker for (repository
 * jobs, sub-agents in their parent's directory, workers without a host queue) pass.
 */
async function refuseUnplacedWorkspace(home: string, input: { conversationId?: string; workspace?: string } | undefined): Promise<void> {
  if (!input?.conversationId || !input.workspace) return;
  const placed = await checkPlacement(home, input.workspace, input.conversationId);
  if (!placed.marked || !placed.why) return;
  const why = `the workspace on host ${hostId()} is not the directory placed there: ${placed.why}`;
  activityLog(input.conversationId).warn({ workspace: input.workspace }, `${why}; nothing runs in it, the workspace moves`);
  throw ApplicationFailure.nonRetryable(why, WORKSPACE_IDENTITY_FAILURE);
}

/** `fn`, after `refuseUnplacedWorkspace` let its input through. */
export function onPlacedWorkspace<I, R>(home: string, fn: (input: I) => Promise<R>): (input: I) => Promise<R> {
  return async (input: I) => {
    await refuseUnplacedWorkspace(home, input as { conversationId?: string; workspace?: string });
    return fn(input);
  };
}
