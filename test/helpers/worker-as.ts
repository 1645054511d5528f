// A child worker as root or as the unprivileged user `arun`: the unprivileged one gets its own
// AGENTRUN_HOME and a copy of the workflow bundle it can read, and sees the project through a bind
// mount (test/helpers/as-user.ts).
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startChildWorker, type ChildWorker } from './child-worker.js';
import type { Harness } from './harness.js';
import { unprivilegedTestUser } from './prerequisites.js';

export interface User {
  uid: number;
  gid: number;
}

/** The unprivileged user the tests run workers as. */
export function arun(): User {
  return unprivilegedTestUser();
}

export interface WorkerAs {
  worker: ChildWorker;
  /** The worker's AGENTRUN_HOME. */
  home: string;
  /** Removes what was made for an unprivileged worker (its home, the mount point). */
  cleanup(): void;
}

/** `env` adds to the worker's environment; `own` are more directories handed to `user`. */
export async function startWorkerAs(h: Harness, env: NodeJS.ProcessEnv, user?: User, own: string[] = []): Promise<WorkerAs> {
  if (!user) return { worker: await startChildWorker(h, env), home: h.home, cleanup() {} };
  const home = mkdtempSync('/var/tmp/agentrun-worker-home-');
  const mount = mkdtempSync(path.join(tmpdir(), 'agentrun-src-'));
  chmodSync(mount, 0o755);
  const bundle = path.join(home, 'workflow-bundle.js');
  copyFileSync(h.workflowBundlePath, bundle);
  // Its own temporary directory: the run's TMPDIR need not be one the user can write in.
  const tmp = path.join(home, 'tmp');
  mkdirSync(tmp);
  handTo(user, home, ...own);
  const worker = await startChildWorker(h, { ...env, AGENTRUN_HOME: home, AGENTRUN_WORKFLOW_BUNDLE: bundle, TMPDIR: tmp }, { ...user, mount });
  return {
    worker,
    home,
    cleanup() {
      for (const d of [home, mount]) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** Make `dirs` the user's (no-op for a root worker). */
export function handTo(user: User | undefined, ...dirs: string[]): void {
  if (user && dirs.length) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, ...dirs]);
}
