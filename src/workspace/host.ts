// This worker's identity as a workspace host, and where it keeps workspaces.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { childPath, fileNameOf, hostIdRefusal, IdentifierError } from '../ids.js';
import { durationSettingFromEnv, parseDurationSetting, type DurationRange } from '../duration.js';
import { log } from '../log.js';
import { epochOf, FencedError } from '../store/fence.js';
import type { Store } from '../store/index.js';
import { diskUsage } from './gc.js';

/** AGENTRUN_HOST_ID, else the hostname: stable per pod (StatefulSet name) so its queue is too. A bad AGENTRUN_HOST_ID stops the worker's start with its one line. */
export function hostId(): string {
  const given = process.env.AGENTRUN_HOST_ID?.trim();
  if (!given) return hostname();
  const refused = hostIdRefusal(given);
  if (refused) throw new IdentifierError(refused);
  return given;
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

/** A conversation's directory in the workspaces directory: always a direct child of it (src/ids.ts), whatever the id. */
export function workspaceDir(home: string, conversationId: string): string {
  return childPath(resolve(workspacesDir(home)), fileNameOf(conversationId));
}

/** Where `agentrun rerun` of a local workspace copies turn 0 by default: the rerun's own directory under AGENTRUN_HOME. */
export function rerunWorkspaceDir(home: string, conversationId: string): string {
  return childPath(resolve(home, 'reruns'), fileNameOf(conversationId));
}

/**
 * At most one measure of a conversation's workspace per this long on a host: every checkpointed
 * turn asks for one, and a walk of a 50k-file tree costs ~0.25 s of CPU (bench/disk-usage.ts). A
 * request meanwhile is served at the end of the interval, so `list` is at most this late.
 * AGENTRUN_WORKSPACE_USAGE_INTERVAL (`agentrun worker --workspace-usage-interval`) sets it.
 */
export const DEFAULT_USAGE_INTERVAL_MS = 30_000;
/** Node's timers hold at most 2^31-1 ms (~24.8 days); a day is far more than anyone needs. 0: after every checkpoint. */
const USAGE_INTERVAL_RANGE: DurationRange = { minMs: 1000, maxMs: 86_400_000, zero: true, example: '30s' };

/** A usage interval as written (`30s`, `2m`, `0`) in milliseconds; a bad one throws one line naming `what` (the variable or the flag). */
export function parseUsageInterval(raw: string, what = 'AGENTRUN_WORKSPACE_USAGE_INTERVAL'): number {
  return parseDurationSetting(raw, what, USAGE_INTERVAL_RANGE);
}

/** AGENTRUN_WORKSPACE_USAGE_INTERVAL in milliseconds (unset: 30 s). */
export function usageIntervalFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return durationSettingFromEnv(env, 'AGENTRUN_WORKSPACE_USAGE_INTERVAL', USAGE_INTERVAL_RANGE) ?? DEFAULT_USAGE_INTERVAL_MS;
}

let usageIntervalMs = DEFAULT_USAGE_INTERVAL_MS;
/** This process's interval between measures of one conversation's workspace; the worker sets it at start from usageIntervalFromEnv. */
export function setUsageInterval(ms: number): void {
  usageIntervalMs = ms;
}

interface Measuring {
  workspace: string;
  epoch: number | null;
  /** A walk is under way. */
  running: boolean;
  /** Asked for while running or resting: measured when that is over. */
  wanted: boolean;
  /** Asked for with `now` while running: measured again as soon as that walk ends. */
  urgent?: boolean;
  /** The rest after a measure; the entry goes when it ends with nothing wanted. */
  resting?: NodeJS.Timeout;
}
const measuring = new Map<string, Measuring>();

/**
 * Record that this host holds `conversationId`'s workspace and, in the background, its size on disk
 * (for `list` and the web page): a walk of a large tree must not slow the step that changed it.
 * Measures of one conversation coalesce and come at most once per usage interval (30 s); a new
 * placement (another directory or epoch) is measured at once, and so is one asked for with `now`
 * (after setup or a cache restore, which grow a workspace by hundreds of megabytes once: a short
 * job would otherwise end with the size it had before). The write carries `epoch` (the placement's; by
 * default the running activity's) and is refused once a newer placement holds the workspace.
 * Best effort: a failure is logged, never thrown.
 */
export function recordWorkspaceUsage(
  store: Store,
  conversationId: string,
  workspace: string,
  epoch: number | null = epochOf(conversationId),
  now = false,
): void {
  let m = measuring.get(conversationId);
  if (!m) {
    m = { workspace, epoch, running: false, wanted: false };
    measuring.set(conversationId, m);
  } else if ((now || m.workspace !== workspace || m.epoch !== epoch) && m.resting) {
    clearTimeout(m.resting); // another placement, or asked for now: no rest
    m.resting = undefined;
  }
  m.workspace = workspace;
  m.epoch = epoch;
  if (m.running || m.resting) {
    m.wanted = true;
    if (now) m.urgent = true;
    return;
  }
  void measure(store, conversationId, m);
}

async function measure(store: Store, conversationId: string, m: Measuring): Promise<void> {
  m.running = true;
  m.wanted = false;
  m.urgent = false;
  const { workspace, epoch } = m;
  try {
    await store.putWorkspaceUsage(conversationId, { host: hostId(), workspace, diskBytes: await diskUsage(workspace) }, epoch);
  } catch (err) {
    if (err instanceof FencedError) {
      // Superseded (the store logged the refusal): this host measures the workspace no more.
      measuring.delete(conversationId);
      return;
    }
    log.warn({ conversationId, err: (err as Error).message }, 'workspace usage not recorded');
  } finally {
    m.running = false;
  }
  if (m.wanted && (m.urgent || m.workspace !== workspace || m.epoch !== epoch)) return void measure(store, conversationId, m);
  m.resting = setTimeout(() => {
    m.resting = undefined;
    if (m.wanted) void measure(store, conversationId, m);
    else if (measuring.get(conversationId) === m) measuring.delete(conversationId);
  }, usageIntervalMs);
  m.resting.unref();
}
