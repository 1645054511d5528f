// One command's life cycle, the same for every command the worker runs for a conversation
// (execute_command, setup, verify, the package-info git log, shell hooks): started through the
// launcher (src/infra/launcher.ts) as the leader of its own process group, stopped on timeout,
// cancel or too much output with SIGTERM and then SIGKILL to the whole group, and the group ended
// when its first process exits, so background children cannot hold the pipes open or outlive it.
import { stripAnsi } from './ansi.js';
import { FailureExcerpt } from './failure-excerpt.js';
import { launchCommand, type CommandProcess } from '../runtime/launcher.js';
import { startCommand, type CommandSpec } from './spawn.js';
import type { ConnectionRecord } from './proxy.js';
import type { SandboxSettings } from './policy.js';

export const LIFECYCLE = {
  /** Between SIGTERM and SIGKILL. */
  killGraceMs: 2_000,
  heartbeatMs: 2_000,
};

export interface Lifecycle {
  timeoutMs: number;
  /** Between SIGTERM and SIGKILL when the command is stopped; 0: SIGKILL at once (default LIFECYCLE.killGraceMs). */
  killGraceMs?: number;
  signal?: AbortSignal;
  /** Called at the start and every LIFECYCLE.heartbeatMs while the command runs. */
  heartbeat?: () => void;
  /** Every chunk of output as it comes; returning true stops the command (too much output). */
  onOutput?: (chunk: Buffer, fd: 1 | 2) => boolean | void;
  /**
   * Processes the command left in the background outlive it, as a shell hook's may (Claude Code's
   * do): the group is not ended when the first process exits, nor after.
   */
  keepBackground?: boolean;
  /** After a stop, how long to wait for the pipes to close (a process that left the group may hold them); default: until they close. */
  closeWaitMs?: number;
}

export interface Ended {
  /** The first process's exit code; null when it was killed or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  /** Stopped because onOutput asked (too much output). */
  stopped: boolean;
  /** It could not start. */
  error?: Error;
  ms: number;
}

/**
 * The end of a command whose step was cancelled or superseded while it was preparing: it is never started,
 * since a command started only to be killed may run for the kill's grace period, and a slow machine lets
 * it do work in that time.
 */
const CANCELLED_BEFORE_START: Ended = { exitCode: null, signal: null, timedOut: false, cancelled: true, stopped: false, ms: 0 };

/** Follow a started command to its end under `o`; never rejects. `kill` signals its whole group. */
async function superviseCommand(child: CommandProcess, kill: (signal: NodeJS.Signals) => void, o: Lifecycle): Promise<Ended> {
  const started = Date.now();
  const grace = o.killGraceMs ?? LIFECYCLE.killGraceMs;
  const end: Ended = { exitCode: null, signal: null, timedOut: false, cancelled: false, stopped: false, ms: 0 };
  let stopping = false;
  let killTimer: NodeJS.Timeout | undefined;
  let closeWait: NodeJS.Timeout | undefined;
  let done: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    done = resolve;
  });
  const stop = (why: 'timedOut' | 'cancelled' | 'stopped') => {
    end[why] = true;
    if (stopping) return;
    stopping = true;
    kill(grace > 0 ? 'SIGTERM' : 'SIGKILL');
    if (grace > 0) killTimer = setTimeout(() => kill('SIGKILL'), grace);
    if (o.closeWaitMs !== undefined) closeWait = setTimeout(done, o.closeWaitMs);
  };
  const onAbort = () => stop('cancelled');
  o.signal?.addEventListener('abort', onAbort, { once: true });
  const timeout = setTimeout(() => stop('timedOut'), o.timeoutMs);
  o.heartbeat?.();
  const beat = o.heartbeat ? setInterval(o.heartbeat, LIFECYCLE.heartbeatMs) : undefined;
  const onData = (fd: 1 | 2) => (c: Buffer) => {
    if (o.onOutput?.(c, fd) === true) stop('stopped');
  };
  child.stdout.on('data', onData(1));
  child.stderr.on('data', onData(2));
  child.once('error', (e: Error) => {
    end.error = e;
    done();
  });
  child.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
    end.exitCode = code;
    end.signal = signal;
    if (o.keepBackground) return;
    // Background children may still hold the pipes open: end the group so 'close' comes.
    kill('SIGTERM');
    setTimeout(() => kill('SIGKILL'), grace).unref();
  });
  child.once('close', () => done());
  try {
    await closed;
  } finally {
    clearTimeout(timeout);
    clearInterval(beat);
    clearTimeout(killTimer);
    clearTimeout(closeWait);
    o.signal?.removeEventListener('abort', onAbort);
    // Whatever is left of the command does not outlive it.
    if (!o.keepBackground) kill('SIGKILL');
  }
  end.ms = Date.now() - started;
  return end;
}

export interface SandboxedEnd extends Ended {
  /** Connections the egress proxy refused during the command, one line each. */
  refusals: string[];
}

/** One shell command in the command sandbox (src/sandbox/spawn.ts) to its end; its time limit is the spec's. */
export async function runInSandbox(spec: CommandSpec, o: Omit<Lifecycle, 'timeoutMs' | 'keepBackground'> = {}): Promise<SandboxedEnd> {
  if (o.signal?.aborted) return { ...CANCELLED_BEFORE_START, refusals: [] };
  const cmd = startCommand(spec);
  try {
    return { ...(await superviseCommand(cmd.child, cmd.kill, { ...o, timeoutMs: spec.timeoutSec * 1000 })), refusals: cmd.refusals() };
  } finally {
    cmd.cleanup();
  }
}

/** A program (not a shell text) started as the worker would spawn it, with `input` on its stdin; `cleanup` runs once it ended. */
export interface ProgramSpec {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  input?: string;
  cleanup?: () => void;
}

/** Run a program (a shell hook, already wrapped in the sandbox when it must be) through the launcher to its end. */
export async function runProgram(spec: ProgramSpec, o: Lifecycle): Promise<Ended> {
  // What was prepared for a command never started is released all the same.
  if (o.signal?.aborted) {
    spec.cleanup?.();
    return { ...CANCELLED_BEFORE_START };
  }
  const child = launchCommand({
    file: spec.command,
    args: spec.args,
    // The launcher has no environment or directory of the worker's: a spec without them gets the worker's, as spawn would.
    cwd: spec.cwd ?? process.cwd(),
    env: spec.env ?? process.env,
    ipc: false,
    ...(spec.input !== undefined ? { input: spec.input } : {}),
  });
  try {
    return await superviseCommand(child, (s) => child.killGroup(s), o);
  } finally {
    spec.cleanup?.();
  }
}

/** The last bytes of a setup or verify log kept in the result, the terminal and `inspect`. */
export const TAIL_BYTES = 4 * 1024;

export interface SandboxRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The last TAIL_BYTES of the output (stdout and stderr together), without terminal escapes. */
  tail: string;
  /** What a failed check shows: the lines that name failures, then the tail (src/sandbox/failure-excerpt.ts). */
  excerpt: string;
  outputBytes: number;
  ms: number;
  spawnError?: string;
  /** Connections the egress proxy refused, one line each. */
  refusals: string[];
}

export interface RunOptions {
  command: string;
  workspace: string;
  settings: SandboxSettings;
  timeoutSec: number;
  baseEnv?: NodeJS.ProcessEnv;
  onOutput?: (text: string) => void;
  heartbeat?: () => void;
  signal?: AbortSignal;
  recordConnection?: (r: ConnectionRecord) => void;
  /** The conversation's tenant (its egress proxy cap). */
  tenant?: string;
}

/** One command in the sandbox to its end, keeping the tail of its output (setup and verify). */
export async function runSandboxed(o: RunOptions): Promise<SandboxRun> {
  let tail = '';
  let outputBytes = 0;
  const excerpt = new FailureExcerpt(TAIL_BYTES);
  const r = await runInSandbox(
    {
      command: o.command,
      workspace: o.workspace,
      settings: o.settings,
      timeoutSec: o.timeoutSec,
      baseEnv: o.baseEnv,
      ...(o.recordConnection ? { recordConnection: o.recordConnection } : {}),
      ...(o.tenant ? { tenant: o.tenant } : {}),
    },
    {
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.heartbeat ? { heartbeat: o.heartbeat } : {}),
      onOutput: (c) => {
        const text = c.toString('utf8');
        outputBytes += c.length;
        tail = (tail + text).slice(-TAIL_BYTES);
        excerpt.push(text);
        o.onOutput?.(text);
      },
    },
  );
  const { exitCode, signal, timedOut, cancelled, ms, refusals } = r;
  return {
    exitCode,
    signal,
    timedOut,
    cancelled,
    tail: stripAnsi(tail),
    excerpt: excerpt.text(),
    outputBytes,
    ms,
    refusals,
    ...(r.error ? { spawnError: r.error.message } : {}),
  };
}

const MAX_REFUSALS_SHOWN = 5;

/** `[agentrun: the egress proxy refused N connections (FLAG): …]` on a line of its own, or '' when none was refused. */
export function refusalNote(flag: string, refusals: string[]): string {
  if (!refusals.length) return '';
  const shown = refusals
    .slice(0, MAX_REFUSALS_SHOWN)
    .map((r) => `\n  ${r}`)
    .join('');
  const more = refusals.length > MAX_REFUSALS_SHOWN ? `\n  … and ${refusals.length - MAX_REFUSALS_SHOWN} more` : '';
  return `\n[agentrun: the egress proxy refused ${refusals.length} connection${refusals.length === 1 ? '' : 's'} (${flag}):${shown}${more}]`;
}
