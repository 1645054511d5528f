// Which pollers of a task queue are workers still running. Temporal lists a poller for minutes after
// its last poll, so a `run` that exited a moment ago still shows as a worker there.
import { hostname } from 'node:os';
import type { WorkflowService } from '@temporalio/client';

/** A live worker re-polls within about a minute (a long poll lasts at most 60 s). */
const POLL_SILENCE_MS = 90_000;

/** Whether process `pid` of this host still runs (EPERM: it runs as another user). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface Poller {
  identity?: string | null;
  lastAccessTime?: { seconds?: unknown; nanos?: number | null } | null;
}

/**
 * A poller counts as a worker unless it has not polled for longer than a live one would, or its
 * identity (`pid@host`, the SDK's default) names a process of this host that has exited.
 */
export function isLivePoller(p: Poller, now = Date.now(), thisHost = hostname()): boolean {
  const raw = p.lastAccessTime?.seconds;
  // protobuf's Long has toNumber(); a plain number or string converts directly.
  const seconds = raw && typeof raw === 'object' && 'toNumber' in raw ? (raw as { toNumber(): number }).toNumber() : Number(raw ?? NaN);
  if (Number.isFinite(seconds) && now - seconds * 1000 > POLL_SILENCE_MS) return false;
  const m = /^(\d+)@(.+)$/.exec(p.identity ?? '');
  if (m && m[2] === thisHost) return processRuns(Number(m[1]));
  return true;
}

/** The workflow pollers of `taskQueue` that are live workers. */
export async function liveWorkers(service: WorkflowService, namespace: string, taskQueue: string): Promise<Poller[]> {
  const res = await service.describeTaskQueue({ namespace, taskQueue: { name: taskQueue }, taskQueueType: 1 });
  const now = Date.now();
  return (res.pollers ?? []).filter((p) => isLivePoller(p, now));
}
