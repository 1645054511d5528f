// Programs started from a few worker threads instead of the main thread. Node's spawn waits on the
// calling thread until the child has exec'd; on a busy host that wait (for the child to get a CPU)
// blocked the worker's event loop for every git process of a checkpoint, about five a turn, and
// stalled every other conversation's steps with it (bench/concurrency.ts: at 200 conversations the
// loop was 94% busy while the process used 46% of a core). A thread that waits blocks only itself.
import { Worker } from 'node:worker_threads';

export interface OffThreadResult {
  stdout: Buffer;
  stderr: Buffer;
  /** execFile's error: `code` is the exit code (a number) or the spawn error's code ('ENOENT'). */
  error?: { code?: number | string; message: string };
}

export interface OffThreadOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  maxBuffer: number;
  timeout: number;
  input?: string | Buffer;
}

// Plain JavaScript evaluated by the thread: no module of ours to resolve (tsx, dist and vitest alike).
const THREAD = `
const { parentPort } = require('node:worker_threads');
const { execFile } = require('node:child_process');
parentPort.on('message', ({ id, file, args, options, input }) => {
  let child;
  try {
    child = execFile(file, args, { ...options, encoding: 'buffer' }, (err, stdout, stderr) => {
      parentPort.postMessage({ id, stdout, stderr, error: err ? { code: err.code, message: err.message } : undefined });
    });
  } catch (err) {
    parentPort.postMessage({ id, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), error: { code: err.code, message: err.message } });
    return;
  }
  if (input !== undefined) child.stdin?.end(input);
});
`;

const THREADS = 4;

interface Thread {
  worker: Worker;
  pending: Map<number, (r: OffThreadResult) => void>;
}

const pool: (Thread | undefined)[] = [];
let next = 0;
let ids = 0;

function thread(): Thread {
  const i = next++ % THREADS;
  const existing = pool[i];
  if (existing) return existing;
  const worker = new Worker(THREAD, { eval: true });
  const t: Thread = { worker, pending: new Map() };
  worker.unref(); // an idle pool keeps no process alive; a call in flight refs it (below)
  worker.on('message', (m: { id: number; stdout: Uint8Array; stderr: Uint8Array; error?: OffThreadResult['error'] }) => {
    const done = t.pending.get(m.id);
    t.pending.delete(m.id);
    if (t.pending.size === 0) worker.unref();
    done?.({ stdout: Buffer.from(m.stdout), stderr: Buffer.from(m.stderr), error: m.error });
  });
  const fail = (message: string) => {
    if (pool[i] === t) pool[i] = undefined;
    for (const done of t.pending.values()) done({ stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), error: { message } });
    t.pending.clear();
  };
  worker.on('error', (err) => fail(`the thread that starts programs failed: ${err.message}`));
  worker.on('exit', (code) => fail(`the thread that starts programs exited (${code})`));
  pool[i] = t;
  return t;
}

/** execFile(file, args) with a Buffer result, started from one of the pool's threads. */
export function execFileOffThread(file: string, args: string[], options: OffThreadOptions): Promise<OffThreadResult> {
  const { input, ...rest } = options;
  const t = thread();
  const id = ids++;
  return new Promise((resolve) => {
    t.pending.set(id, resolve);
    t.worker.ref();
    t.worker.postMessage({ id, file, args, options: rest, input });
  });
}
