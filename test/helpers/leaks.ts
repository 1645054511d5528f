// What a test run left behind: files in its temporary directory and processes still running.
// The global setup gives the run its own TMPDIR and marks every process it starts through the
// environment, so a leak is attributed to this run even when other runs share the machine.
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Set in the environment of everything the run starts (inherited by each child process). */
export const RUN_MARKER = 'AGENTRUN_TEST_RUN';

export interface LeakedProcess {
  pid: number;
  cmdline: string;
  cwd: string;
}

/** Entries under `dir` with their size, e.g. `agentrun-ws-AbC123 (1.2 MB)`. */
export function leakedEntries(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((name) => `${join(dir, name)} (${(diskBytes(join(dir, name)) / 1e6).toFixed(1)} MB)`);
}

function diskBytes(path: string): number {
  try {
    const s = statSync(path, { throwIfNoEntry: false });
    if (!s) return 0;
    if (!s.isDirectory()) return s.size;
    return readdirSync(path).reduce((n, e) => n + diskBytes(join(path, e)), 0);
  } catch {
    return 0;
  }
}

/**
 * Live processes of this run other than `exclude`: those whose environment carries the run's
 * marker (children of children too, even once their parent is gone and init adopted them) and
 * those whose command line or working directory is under the run's TMPDIR (a sandbox clears
 * the environment but runs in a workspace there). Zombies count as gone.
 */
export function runProcesses(runTmp: string, exclude: Set<number>): LeakedProcess[] {
  const found: LeakedProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || exclude.has(Number(entry))) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${entry}/cwd`);
      } catch {
        // Another user's process, or gone: its environment and command line decide.
      }
      const mine = environ.includes(`${RUN_MARKER}=${runTmp}`) || cmdline.includes(runTmp) || cwd.startsWith(runTmp);
      if (mine) found.push({ pid: Number(entry), cmdline: cmdline.slice(0, 160), cwd });
    } catch {
      // Gone while we looked, or not ours to read.
    }
  }
  return found;
}

/** Pids of `pid` and its ancestors: the vitest process itself and what started it are not leaks. */
export function ancestry(pid: number): Set<number> {
  const out = new Set<number>();
  for (let p = pid; p > 1 && !out.has(p);) {
    out.add(p);
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return out;
}
