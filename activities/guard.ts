// What a worker refuses at a conversation's first step, whatever the CLI checked (a client, a
// schedule or another CLI version may start it): `--env` names this worker does not pass, and a
// workspace that would expose the worker. Each ends the conversation with its one line.
import { ApplicationFailure } from '@temporalio/common';
import { envRefusal } from '../src/sandbox/policy.js';
import { assertWorkspaceSafe, UnsafeWorkspaceError, workerPlaces } from '../src/workspace/guard.js';
import type { ActivityDeps } from './deps.js';

export function refuseEnv(deps: Pick<ActivityDeps, 'allowEnv'>, env: readonly string[] | undefined): void {
  const refused = envRefusal(env ?? [], deps.allowEnv ?? []);
  if (refused) throw ApplicationFailure.nonRetryable(refused, 'EnvNotAllowed');
}

/** The one line when `workspace` would expose this worker (src/workspace/guard.ts), else undefined. */
export function unsafeWorkspace(deps: Pick<ActivityDeps, 'home'>, workspace: string): string | undefined {
  try {
    assertWorkspaceSafe(workspace, workerPlaces(deps.home));
    return undefined;
  } catch (err) {
    if (err instanceof UnsafeWorkspaceError) return err.message;
    throw err;
  }
}

export function refuseUnsafeWorkspace(deps: Pick<ActivityDeps, 'home'>, workspace: string): void {
  const refused = unsafeWorkspace(deps, workspace);
  if (refused) throw ApplicationFailure.nonRetryable(refused, 'UnsafeWorkspace');
}
