// Host routing names, shared by the workflow (deterministic: no Node APIs here) and the worker.
// A workspace lives on one host's disk; every activity that touches it goes to that host's queue.
import { fileNameOf } from '../ids.js';

/**
 * The failure type of a host step that found another directory at the workspace's path than the
 * one its host placed (src/workspace/identity.ts): the workflow treats it as a host loss and moves.
 */
export const WORKSPACE_IDENTITY_FAILURE = 'WorkspaceIdentity';

/** The task queue only the worker of `hostId` polls, next to the shared queue `sharedQueue`. */
export function hostQueue(sharedQueue: string, hostId: string): string {
  return `${sharedQueue}-host-${hostId.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

/** Where a conversation's workspace is: which host, its queue, and the directory on that host. */
export interface WorkspaceHost {
  hostId: string;
  queue: string;
  workspace: string;
  /** The commit the job started from (clone of --ref), the base of the result branch. */
  base: string;
  /** The worker process that holds it (src/workspace/host.ts hostIncarnation); absent in placements made before incarnations. */
  incarnation?: string;
}

/**
 * The conversation id as a part of a branch name: a scheduled run's id carries its start time
 * (`nightly-2026-11-23T02:00:00Z`), and `:` is not allowed in git refs.
 */
function branchPart(conversationId: string): string {
  return (
    conversationId
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .replace(/\.\.+/g, '.')
      .replace(/^[.-]+|[.]+$/g, '') || 'conversation'
  );
}

/**
 * `nightly/{{date}}` → `nightly/2026-11-23`; `{{id}}` → the conversation id (made safe for a ref).
 * With both, the id drops the day the branch already names (a scheduled run's `2026-11-23T`, a
 * batch's `20261123`), so `nightly/{{date}}/{{id}}` does not say the date twice.
 */
export function expandBranch(template: string, conversationId: string, startedAtMs: number): string {
  const date = new Date(startedAtMs).toISOString().slice(0, 10);
  const id = template.includes('{{date}}') ? withoutDay(conversationId, date) : conversationId;
  return template.replaceAll('{{date}}', date).replaceAll('{{id}}', branchPart(id));
}

/** The id without `date` where it stands as a timestamp's day; unchanged if that leaves nothing. */
function withoutDay(id: string, date: string): string {
  const rest = id.replace(`${date}T`, '').replace(new RegExp(`(^|\\D)${date.replaceAll('-', '')}(?=\\d{6}\\b)`), '$1');
  return /[A-Za-z0-9]/.test(rest) ? rest : id;
}

export function defaultBranch(conversationId: string): string {
  return `agentrun/${branchPart(conversationId)}`;
}

/** The off-host checkpoint ref of a turn on the job's remote. */
export function turnRef(conversationId: string, turn: number): string {
  return `refs/agentrun/${fileNameOf(conversationId)}/turn-${turn}`;
}

/** Where the result commit is kept on the remote, whatever happens to the branch push. */
export function resultRef(conversationId: string): string {
  return `refs/agentrun/${fileNameOf(conversationId)}/result`;
}
