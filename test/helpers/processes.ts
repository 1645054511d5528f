// Processes seen from the host, for tests that check nothing of a command survived.
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Host pids of running processes whose command line contains `marker` (a command's own pids are
 * those of its PID namespace, so it cannot report them; a zombie awaiting its reaper counts as dead).
 */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (cmdline.includes(marker) && !cmdline.includes('bwrap') && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** Host pids of running processes of process group `pgid` (a zombie awaiting its reaper counts as dead). */
export function processesInGroup(pgid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command name: state, ppid, pgrp.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}
