// A pids cgroup per command, where the worker may create one (cgroup v1 `pids`, or a v2
// subtree with the pids controller enabled): a fork bomb meets `pids.max` and the worker
// keeps its own process slots. RLIMIT_NPROC alone does not bind uid 0 and counts every
// process of the user, so it cannot do this.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

let base: string | null | undefined;
let counter = 0;

/** This process's own cgroup directory that can hold pids-limited children, or null. */
function findBase(): string | null {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch {
    return null;
  }
  const candidates: string[] = [];
  for (const line of lines) {
    const [, controllers, rel] = line.split(':') as [string, string, string];
    if (controllers.split(',').includes('pids')) candidates.push(path.join('/sys/fs/cgroup/pids', rel));
    if (controllers === '') {
      for (const root of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
        const dir = path.join(root, rel);
        if (safeRead(path.join(dir, 'cgroup.subtree_control'))?.split(/\s+/).includes('pids')) candidates.push(dir);
      }
    }
  }
  for (const dir of candidates) {
    const mine = path.join(dir, `agentrun-${process.pid}`);
    try {
      mkdirSync(mine, { recursive: true });
      if (!existsSync(path.join(mine, 'pids.max'))) continue;
      writeFileSync(path.join(mine, 'pids.max'), 'max');
      return mine;
    } catch {
      // Not writable here (an unprivileged worker, a read-only /sys): try the next one.
    }
  }
  return null;
}

function safeRead(p: string): string | undefined {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
}

function pidsCgroupAvailable(): boolean {
  if (base === undefined) base = findBase();
  return base !== null;
}

/** A fresh cgroup limited to `maxPids` processes, or undefined when none can be made. */
export function createCommandCgroup(maxPids: number): string | undefined {
  if (!pidsCgroupAvailable()) return undefined;
  const dir = path.join(base!, `c${++counter}`);
  try {
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'pids.max'), String(maxPids));
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * Kill whatever is left in the cgroup, then remove it, retried in the background while the dead
 * are reaped (the command's result does not wait for that).
 */
export function removeCommandCgroup(dir: string, attempt = 0): void {
  {
    const procs = (safeRead(path.join(dir, 'cgroup.procs')) ?? '').split('\n').filter(Boolean);
    if (existsSync(path.join(dir, 'cgroup.kill'))) {
      try {
        writeFileSync(path.join(dir, 'cgroup.kill'), '1');
      } catch {
        // Older kernels: kill one by one below.
      }
    }
    for (const pid of procs) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    try {
      rmdirSync(dir);
    } catch {
      if (attempt < 100) setTimeout(() => removeCommandCgroup(dir, attempt + 1), 20).unref();
    }
  }
}
