// This worker's identity as a workspace host, and where it keeps workspaces.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { log } from '../log.js';
import type { Store } from '../store/index.js';
import { diskUsage } from './gc.js';

/** AGENTRUN_HOST_ID, else the hostname: stable per pod (StatefulSet name) so its queue is too. */
export function hostId(): string {
  return process.env.AGENTRUN_HOST_ID?.trim() || hostname();
}

/**
 * This worker process, as opposed to its host id: a pod restarted under its old name (a
 * StatefulSet) keeps the id but is a new incarnation, so a drain or loss of the old process does
 * not stick to the id for ever. Random per process start.
 */
const INCARNATION = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
export function hostIncarnation(): string {
  return INCARNATION;
}

/** Whether this process polls its host queue (createHostWorker): only then can it hold a workspace for the workflow. */
let hostQueuePolled = false;
export function markHostQueuePolled(): void {
  hostQueuePolled = true;
}
export function pollsHostQueue(): boolean {
  return hostQueuePolled;
}

/** AGENTRUN_WORKSPACES, else `$AGENTRUN_HOME/workspaces`. */
export function workspacesDir(home: string): string {
  const fromEnv = process.env.AGENTRUN_WORKSPACES?.trim();
  return fromEnv ? resolve(fromEnv) : join(home, 'workspaces');
}

export function workspaceDir(home: string, conversationId: string): string {
  return join(workspacesDir(home), conversationId.replace(/[^A-Za-z0-9._-]/g, '_'));
}

const measuring = new Map<string, { again: boolean }>();

/**
 * Record that this host holds `conversationId`'s workspace and, in the background, its size on disk
 * (for `list` and the web page): a walk of a large tree must not slow the step that changed it.
 * Measures of one conversation coalesce. Best effort: a failure is logged, never thrown.
 */
export function recordWorkspaceUsage(store: Store, conversationId: string, workspace: string): void {
  const running = measuring.get(conversationId);
  if (running) {
    running.again = true;
    return;
  }
  const state = { again: false };
  measuring.set(conversationId, state);
  void (async () => {
    try {
      do {
        state.again = false;
        await store.putWorkspaceUsage(conversationId, { host: hostId(), workspace, diskBytes: await diskUsage(workspace) });
      } while (state.again);
    } catch (err) {
      log.warn({ conversationId, err: (err as Error).message }, 'workspace usage not recorded');
    } finally {
      measuring.delete(conversationId);
    }
  })();
}
