// Starting a program from the worker forks the worker: with a heap of hundreds of MB, fork copies
// its page tables while the main thread waits, and a checkpointed turn starts five or six git
// processes (bench/concurrency.ts measured these spawns as the largest single cost on the worker's
// main thread; starting them from threads did not help, as fork stalls every thread). So git is
// started by a small node process the worker starts once and talks to over an IPC channel: the
// fork happens in that small process, and the worker only sends a message.
import { spawn, type ChildProcess } from 'node:child_process';

export interface LaunchRequest {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  input?: string | Buffer;
  timeoutMs: number;
  maxBuffer: number;
}

export interface LaunchResult {
  stdout: Buffer;
  stderr: Buffer;
  /** Set when the program failed to start, exited non-zero, was killed or overflowed maxBuffer. */
  error?: { code?: string | number; message: string };
}

// The launcher's own code: execFile for each message, the answer under the message's id. It exits
// when the worker goes (its channel closes), so it never outlives it.
const LAUNCHER_JS = [
  'const {execFile}=require("child_process");',
  'process.on("disconnect",()=>process.exit(0));',
  'process.on("message",(m)=>{',
  'const c=execFile(m.file,m.args,{cwd:m.cwd,env:m.env,encoding:"buffer",maxBuffer:m.maxBuffer,timeout:m.timeoutMs},(e,stdout,stderr)=>{',
  'process.send({id:m.id,stdout,stderr,error:e?{code:e.code,message:e.message}:undefined});});',
  'c.stdin.on("error",()=>{});',
  'if(m.input!==undefined)c.stdin.end(m.input);else c.stdin.end();',
  '});',
].join('');

interface Pending {
  resolve: (r: LaunchResult) => void;
  reject: (e: Error) => void;
}

let launcher: ChildProcess | undefined;
const pending = new Map<number, Pending>();
let nextId = 0;

const asBuffer = (b: Uint8Array | undefined) => (b ? Buffer.from(b.buffer, b.byteOffset, b.byteLength) : Buffer.alloc(0));

function startLauncher(): ChildProcess {
  // No environment of the worker's (secrets, NODE_OPTIONS): each request carries its program's own.
  const child = spawn(process.execPath, ['-e', LAUNCHER_JS], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'advanced', env: {} });
  child.on('message', (m: { id: number; stdout?: Uint8Array; stderr?: Uint8Array; error?: LaunchResult['error'] }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    // An idle launcher does not keep the process alive (a CLI command exits when its work is done).
    if (pending.size === 0) child.channel?.unref();
    p?.resolve({ stdout: asBuffer(m.stdout), stderr: asBuffer(m.stderr), error: m.error });
  });
  const gone = (why: string) => {
    if (launcher === child) launcher = undefined;
    const lost = [...pending.values()];
    pending.clear();
    for (const p of lost) p.reject(new Error(`the process that starts git for the worker ${why}; the step is retried`));
  };
  child.on('exit', (code, signal) => gone(`exited (${signal ?? `code ${code}`})`));
  child.on('error', (err) => gone(`failed: ${err.message}`));
  child.unref();
  child.channel?.unref();
  return child;
}

/** Run a short program (git) through the launcher process: execFile's result, without forking the worker. */
export function launch(req: LaunchRequest): Promise<LaunchResult> {
  return new Promise((resolve, reject) => {
    const child = (launcher ??= startLauncher());
    const id = nextId++;
    pending.set(id, { resolve, reject });
    child.channel?.ref();
    child.send({ id, ...req }, (err) => {
      if (!err) return;
      pending.delete(id);
      reject(new Error(`could not hand git to its launcher process: ${err.message}; the step is retried`));
    });
  });
}

/** The launcher's pid, if it runs (tests). */
export function launcherPid(): number | undefined {
  return launcher?.pid;
}
