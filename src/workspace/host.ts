// This worker's identity as a workspace host, and where it keeps workspaces.
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

/** AGENTRUN_HOST_ID, else the hostname: stable per pod (StatefulSet name) so its queue is too. */
export function hostId(): string {
  return process.env.AGENTRUN_HOST_ID?.trim() || hostname();
}

/** AGENTRUN_WORKSPACES, else `$AGENTRUN_HOME/workspaces`. */
export function workspacesDir(home: string): string {
  const fromEnv = process.env.AGENTRUN_WORKSPACES?.trim();
  return fromEnv ? resolve(fromEnv) : join(home, 'workspaces');
}

export function workspaceDir(home: string, conversationId: string): string {
  return join(workspacesDir(home), conversationId.replace(/[^A-Za-z0-9._-]/g, '_'));
}
