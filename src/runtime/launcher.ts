// Starting a program from the worker forks the worker: with a heap of hundreds of MB, fork copies
// its page tables while the main thread waits (bench/concurrency.ts: 14 ms per start at 50
// conversations, against about 1 ms from a small process), and a checkpointed turn starts five or
// six git processes, a command turn a sandbox more. Starting them from threads did not help, as fork
// stalls every thread. So git and commands are started by a small node process the worker starts
// once and talks to over an IPC channel: the fork happens in that small process, and the worker
// only sends a message. A command's output comes back as messages; the worker signals the
// command's process group itself (it knows the pid), and the sandbox's listening socket for the
// egress proxy (src/sandbox/forwarder.ts) is passed on to the worker as a raw handle.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { timedWait, waited } from '../metrics.js';

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

/** A command started through the launcher: as `spawn` would, detached (its own process group). */
export interface CommandLaunchRequest {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Give the command an IPC channel as fd 3, for the listening socket it sends back (src/sandbox/forwarder.ts). */
  ipc: boolean;
  /** Written to the command's stdin, which is then closed (a shell hook's event); absent: no stdin. */
  input?: string;
}

// The launcher's own code: execFile for a git message, spawn for a command message, the answers
// under the message's id. It exits when the worker goes (its channel closes), so it never outlives
// it, and a sandbox started with --die-with-parent ends with it.
const LAUNCHER_JS = [
  'const {execFile,spawn}=require("child_process");',
  'process.on("disconnect",()=>process.exit(0));',
  'const reply=(m,h,cb)=>{try{process.send(m,h,cb);}catch{}};',
  'function run(m){',
  'const c=execFile(m.file,m.args,{cwd:m.cwd,env:m.env,encoding:"buffer",maxBuffer:m.maxBuffer,timeout:m.timeoutMs},(e,stdout,stderr)=>{',
  'reply({id:m.id,stdout,stderr,error:e?{code:e.code,message:e.message}:undefined});});',
  'c.stdin.on("error",()=>{});',
  'if(m.input!==undefined)c.stdin.end(m.input);else c.stdin.end();}',
  // Output is passed on as it comes, at most 64 chunks unsent: past that the command's pipes are paused, so its output waits in the pipe, not here.
  'function command(m){let c,unsent=0,paused=false;',
  'const out=(fd)=>(d)=>{unsent++;reply({id:m.id,ev:"out",fd,data:d},undefined,()=>{unsent--;if(paused&&unsent<16){paused=false;c.stdout.resume();c.stderr.resume();}});',
  'if(!paused&&unsent>=64){paused=true;c.stdout.pause();c.stderr.pause();}};',
  'const i=m.input===undefined?"ignore":"pipe";',
  'try{c=spawn(m.file,m.args,{cwd:m.cwd,env:m.env,detached:true,stdio:m.ipc?[i,"pipe","pipe","ipc"]:[i,"pipe","pipe"]});}',
  'catch(e){reply({id:m.id,ev:"error",error:{code:e.code,message:e.message}});return;}',
  // A command that does not read its input (or exits first) must not fail the launcher with EPIPE.
  'if(c.stdin){c.stdin.on("error",()=>{});c.stdin.end(m.input);}',
  'c.on("spawn",()=>reply({id:m.id,ev:"spawn",pid:c.pid}));',
  'c.on("error",(e)=>reply({id:m.id,ev:"error",error:{code:e.code,message:e.message}}));',
  'c.stdout.on("data",out(1));c.stderr.on("data",out(2));',
  // A raw handle (not a listening net.Server) is passed on, and this process's copy closed once sent.
  'if(m.ipc)c.on("message",(msg,h)=>{if(h&&h.constructor&&h.constructor.name==="TCP")reply({id:m.id,ev:"message",message:msg},h,()=>h.close());else if(h&&h.close)h.close();});',
  'c.on("exit",(code,signal)=>reply({id:m.id,ev:"exit",code,signal}));',
  'c.on("close",(code,signal)=>reply({id:m.id,ev:"close",code,signal}));}',
  'process.on("message",(m)=>{if(m.command)command(m);else run(m);});',
].join('');

interface Pending {
  resolve: (r: LaunchResult) => void;
  reject: (e: Error) => void;
}

/**
 * A command started by the launcher, as the worker sees it: what `spawn` gives, over messages.
 * Events as a ChildProcess's: `spawn`, `error` (it could not start), `exit` and `close` (code,
 * signal), `message` (message, raw handle); `stdout` and `stderr` emit `data` (Buffer).
 */
export class CommandProcess extends EventEmitter {
  readonly stdout = new EventEmitter();
  readonly stderr = new EventEmitter();
  /** Set once it started. */
  pid: number | undefined;
  private signalOnStart: NodeJS.Signals | undefined;

  /** Signal the command's process group (at once, or as soon as it has started); ESRCH ignored. */
  killGroup(signal: NodeJS.Signals): void {
    if (this.pid === undefined) {
      if (signal === 'SIGKILL' || !this.signalOnStart) this.signalOnStart = signal;
      return;
    }
    try {
      process.kill(-this.pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  }

  /** @internal A message from the launcher about this command. */
  deliver(m: CommandEvent, handle: unknown): boolean {
    switch (m.ev) {
      case 'spawn':
        this.pid = m.pid;
        this.emit('spawn');
        if (this.signalOnStart) this.killGroup(this.signalOnStart);
        return false;
      case 'out':
        (m.fd === 1 ? this.stdout : this.stderr).emit('data', asBuffer(m.data));
        return false;
      case 'message':
        this.emit('message', m.message, handle);
        return false;
      case 'exit':
        this.emit('exit', m.code ?? null, m.signal ?? null);
        return false;
      case 'close':
        this.emit('close', m.code ?? null, m.signal ?? null);
        return true;
      case 'error':
        this.emit('error', Object.assign(new Error(m.error?.message ?? 'the command could not start'), { code: m.error?.code }));
        return true;
    }
  }

  /** @internal The launcher is gone: the command (if it started) is ended and reported killed. */
  lost(why: string): void {
    if (this.pid === undefined) {
      this.emit('error', new Error(`the process that starts commands for the worker ${why} before the command started`));
      return;
    }
    this.killGroup('SIGKILL');
    this.emit('exit', null, 'SIGKILL');
    this.emit('close', null, 'SIGKILL');
  }
}

type CommandEvent =
  | { id: number; ev: 'spawn'; pid: number }
  | { id: number; ev: 'out'; fd: 1 | 2; data: Uint8Array }
  | { id: number; ev: 'message'; message: unknown }
  | { id: number; ev: 'exit' | 'close'; code?: number | null; signal?: NodeJS.Signals | null }
  | { id: number; ev: 'error'; error?: { code?: string | number; message: string } };

let launcher: ChildProcess | undefined;
const pending = new Map<number, Pending>();
const commands = new Map<number, CommandProcess>();
let nextId = 0;

const asBuffer = (b: Uint8Array | undefined) => (b ? Buffer.from(b.buffer, b.byteOffset, b.byteLength) : Buffer.alloc(0));

/** An idle launcher does not keep the process alive (a CLI command exits when its work is done). */
function refWhileBusy(child: ChildProcess): void {
  if (pending.size + commands.size === 0) child.channel?.unref();
  else child.channel?.ref();
}

function startLauncher(): ChildProcess {
  // No environment of the worker's (secrets, NODE_OPTIONS): each request carries its program's own.
  const child = spawn(process.execPath, ['-e', LAUNCHER_JS], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'advanced', env: {} });
  child.on(
    'message',
    (m: ({ id: number; stdout?: Uint8Array; stderr?: Uint8Array; error?: LaunchResult['error'] } & { ev?: undefined }) | CommandEvent, handle: unknown) => {
      if (m.ev !== undefined) {
        const command = commands.get(m.id);
        if (command?.deliver(m, handle)) commands.delete(m.id);
      } else {
        const p = pending.get(m.id);
        pending.delete(m.id);
        p?.resolve({ stdout: asBuffer(m.stdout), stderr: asBuffer(m.stderr), error: m.error });
      }
      refWhileBusy(child);
    },
  );
  const gone = (why: string) => {
    if (launcher === child) launcher = undefined;
    const lost = [...pending.values()];
    pending.clear();
    for (const p of lost) p.reject(new Error(`the process that starts git for the worker ${why}; the step is retried`));
    const running = [...commands.values()];
    commands.clear();
    for (const c of running) c.lost(why);
  };
  child.on('exit', (code, signal) => gone(`exited (${signal ?? `code ${code}`})`));
  child.on('error', (err) => gone(`failed: ${err.message}`));
  child.unref();
  child.channel?.unref();
  return child;
}

/**
 * Start a command through the launcher process (detached: its own process group), without forking
 * the worker. Its events come as a ChildProcess's would; a failure to hand it over is its `error`.
 */
export function launchCommand(req: CommandLaunchRequest): CommandProcess {
  const child = (launcher ??= startLauncher());
  const id = nextId++;
  const command = new CommandProcess();
  const t0 = performance.now();
  command.once('spawn', () => waited("a command's start, through the launcher", performance.now() - t0));
  commands.set(id, command);
  refWhileBusy(child);
  child.send({ id, command: true, ...req }, (err) => {
    if (!err || !commands.delete(id)) return;
    refWhileBusy(child);
    command.emit('error', new Error(`could not hand the command to its launcher process: ${err.message}`));
  });
  return command;
}

/** Run a short program (git) through the launcher process: execFile's result, without forking the worker. */
export function launch(req: LaunchRequest): Promise<LaunchResult> {
  return timedWait('git, through the launcher', launched(req));
}

function launched(req: LaunchRequest): Promise<LaunchResult> {
  return new Promise((resolve, reject) => {
    const child = (launcher ??= startLauncher());
    const id = nextId++;
    pending.set(id, { resolve, reject });
    refWhileBusy(child);
    child.send({ id, ...req }, (err) => {
      if (!err) return;
      pending.delete(id);
      reject(new Error(`could not hand git to its launcher process: ${err.message}; the step is retried`));
    });
  });
}

/**
 * End the launcher and wait until it has exited. It would exit by itself once this process is
 * gone, a moment after: a command that stops its workers calls this so that nothing it started
 * outlives it.
 */
export async function stopLauncher(): Promise<void> {
  const child = launcher;
  if (!child) return;
  launcher = undefined;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Its channel closing is what ends it.
  child.disconnect();
  await exited;
}

/** The launcher's pid, if it runs (tests). */
export function launcherPid(): number | undefined {
  return launcher?.pid;
}
