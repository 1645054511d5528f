// A cgroup per command, where the worker may create one: `pids` (cgroup v1, or a v2 subtree with
// the pids controller enabled) so a fork bomb meets `pids.max` and the worker keeps its own process
// slots (RLIMIT_NPROC alone does not bind uid 0 and counts every process of the user), and `memory`
// so the command's processes together meet one limit and the kernel's OOM killer chooses among
// them, not the worker (RLIMIT_AS binds each process alone). In v1 the two are separate
// hierarchies, so a command joins a directory in each; in v2 one directory holds both.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

type Controller = 'pids' | 'memory';
/** The file that limits a controller in v1 and in v2. */
const LIMIT_FILE: Record<Controller, [v1: string, v2: string]> = {
  pids: ['pids.max', 'pids.max'],
  memory: ['memory.limit_in_bytes', 'memory.max'],
};

const bases = new Map<Controller, { dir: string; v2: boolean } | null>();
let counter = 0;

/** This process's own cgroup directory that can hold `controller`-limited children, or null. */
function findBase(controller: Controller): { dir: string; v2: boolean } | null {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch {
    return null;
  }
  const candidates: { dir: string; v2: boolean }[] = [];
  for (const line of lines) {
    const [, controllers, rel] = line.split(':') as [string, string, string];
    if (controllers.split(',').includes(controller)) candidates.push({ dir: path.join('/sys/fs/cgroup', controller, rel), v2: false });
    if (controllers === '') {
      for (const root of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
        const dir = path.join(root, rel);
        if (safeRead(path.join(dir, 'cgroup.subtree_control'))?.split(/\s+/).includes(controller)) candidates.push({ dir, v2: true });
      }
    }
  }
  for (const c of candidates) {
    const mine = path.join(c.dir, `agentrun-${process.pid}`);
    const limit = path.join(mine, LIMIT_FILE[controller][c.v2 ? 1 : 0]);
    try {
      mkdirSync(mine, { recursive: true });
      if (!existsSync(limit)) continue;
      if (controller === 'pids') writeFileSync(limit, 'max');
      // v2: the children of agentrun-<pid> get the controller too (where it is not on already).
      if (c.v2) tryWrite(path.join(mine, 'cgroup.subtree_control'), `+${controller}`);
      return { dir: mine, v2: c.v2 };
    } catch {
      // Not writable here (an unprivileged worker, a read-only /sys): try the next one.
    }
  }
  return null;
}

function tryWrite(p: string, text: string): void {
  try {
    writeFileSync(p, text);
  } catch {
    // Left as it is: the limit below says whether the controller works.
  }
}

function safeRead(p: string): string | undefined {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
}

function baseOf(controller: Controller): { dir: string; v2: boolean } | null {
  if (!bases.has(controller)) bases.set(controller, findBase(controller));
  return bases.get(controller)!;
}

/** The directories a command joins (one per hierarchy), each with its limit. */
export interface CommandCgroup {
  dirs: string[];
}

/**
 * Fresh cgroups limiting a command to `limits.processes` processes and `limits.memoryKb` of memory
 * together, or undefined when none can be made (each controller is used where it can be).
 */
export function createCommandCgroup(limits: { processes: number; memoryKb: number }): CommandCgroup | undefined {
  const made = new Map<string, string[]>();
  const name = `c${++counter}`;
  const wanted: [Controller, string][] = [
    ['pids', String(limits.processes)],
    ['memory', String(limits.memoryKb * 1024)],
  ];
  for (const [controller, value] of wanted) {
    const base = baseOf(controller);
    if (!base) continue;
    const dir = path.join(base.dir, name);
    try {
      if (!made.has(dir)) mkdirSync(dir);
      writeFileSync(path.join(dir, LIMIT_FILE[controller][base.v2 ? 1 : 0]), value);
      made.set(dir, [...(made.get(dir) ?? []), controller]);
    } catch {
      // This controller cannot limit here: the others still do.
    }
  }
  return made.size ? { dirs: [...made.keys()] } : undefined;
}

/** `argv` run after its shell joined the cgroups: before anything forks, then exec keeps the pid. */
export function joiningCgroup(cgroup: CommandCgroup | undefined, argv: string[]): string[] {
  if (!cgroup) return argv;
  const join = 'n=$0; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || exit 125; shift; n=$((n-1)); done; exec "$@"';
  return ['/bin/sh', '-c', join, String(cgroup.dirs.length), ...cgroup.dirs, ...argv];
}

/** Kill what is left in each of the command's cgroups, then remove them. */
export function removeCommandCgroup(cgroup: CommandCgroup): void {
  for (const dir of cgroup.dirs) removeCgroupDir(dir);
}

/**
 * Kill whatever is left in the cgroup, then remove it, retried in the background while the dead
 * are reaped (the command's result does not wait for that).
 */
function removeCgroupDir(dir: string, attempt = 0): void {
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
      if (attempt < 100) setTimeout(() => removeCgroupDir(dir, attempt + 1), 20).unref();
    }
  }
}
