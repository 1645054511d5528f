// A worker in a child process, so a test can kill it with SIGKILL like a crashed host.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { nodeAsUser, type UnprivilegedUser } from './as-user.js';
import { ensureBuiltOnce, WORKER_MAIN } from './dist.js';
import { agentrunEnv, type Harness } from './harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ChildWorker {
  process: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `env` adds to the worker's environment (AGENTRUN_HOST_ID, AGENTRUN_WORKSPACES … for fleet tests).
 * `user` runs the worker as that unprivileged user: the project is bind-mounted in a mount
 * namespace of its own at `user.mount` (a checkout under a 0700 directory stays out of its reach otherwise).
 */
export async function startChildWorker(h: Harness, env: NodeJS.ProcessEnv = {}, user?: UnprivilegedUser): Promise<ChildWorker> {
  // The compiled worker (test/helpers/dist.ts: built from these sources), as `agentrun worker` runs it.
  ensureBuiltOnce();
  const [file, args, cwd] = user ? [...nodeAsUser(user, 'dist/worker/main.js'), '/'] : [process.execPath, [WORKER_MAIN], ROOT];
  const child = spawn(file, args, {
    cwd,
    env: agentrunEnv(h, {
      AGENTRUN_WORKFLOW_BUNDLE: h.workflowBundlePath,
      // These workers are the ones tests kill: the conversations they had cached go to the next
      // worker after 1 s instead of Temporal's 10 s (`agentrun worker --sticky-queue-timeout`).
      AGENTRUN_STICKY_QUEUE_TIMEOUT: '1s',
      // A drain (SIGTERM) gives running activities 1 s, not worker/main.ts's 5 s: the commands tests
      // drain during sleep for minutes, so the grace always runs out (`agentrun worker --shutdown-grace`).
      AGENTRUN_SHUTDOWN_GRACE: '1s',
      AGENTRUN_REPOSITORY_EXTENSIONS: h.repositoryExtensions ? 'on' : 'off',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start in time:\n${out}`)), 60_000);
    child.stdout!.on('data', () => {
      if (out.includes('worker ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}:\n${out}`));
    });
  });
  return {
    process: child,
    output: () => out,
    kill: (signal = 'SIGKILL') =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
  };
}

/** SIGKILL every worker of `workers` that still runs. */
export async function stopChildWorkers(workers: ChildWorker[]): Promise<void> {
  for (const w of workers) if (w.process.exitCode === null && w.process.signalCode === null) await w.kill('SIGKILL');
}

/** This test process's host marks: top-level directories, which the sandbox user can always reach. */
const HOST_MARK_RUN = `${process.pid}-${randomBytes(3).toString('hex')}`;
const hostMark = (name: string) => `/agentrun-host-${HOST_MARK_RUN}-${name}`;

/**
 * The environment that lets a host's commands tell which host they run on: every workspace is at
 * the same path in the sandbox, so a directory of the host's name is bound in as a toolchain path
 * (`agentrun worker --sandbox-path`), visible only to that host's commands. See `onHost`.
 */
export function hostMarkEnv(name: string): NodeJS.ProcessEnv {
  const dir = hostMark(name);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return { AGENTRUN_SANDBOX_PATHS: dir };
}

/** A shell line that runs `what` only on the host started with `hostMarkEnv(name)`, `otherwise` elsewhere. */
export function onHost(name: string, what: string, otherwise = ':'): string {
  return `if [ -d ${hostMark(name)} ]; then ${what}; else ${otherwise}; fi`;
}
