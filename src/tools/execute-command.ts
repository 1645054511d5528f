// execute_command: `bash -c` in the workspace, in its own process group, with a timeout, a
// bounded head+tail output buffer (streamed, never the whole output), secret-free environment,
// heartbeats, and the whole group killed on timeout, cancel, or when the shell exits.
import { spawn } from 'node:child_process';
import { z } from 'zod';
import { workspaceRoot } from './confine.js';
import { checkCommand } from './dangerous.js';
import { boolParam, intParam } from './params.js';
import type { ToolContext, ToolDefinition, ToolResult } from './types.js';
import { formatBytes, HeadTailBuffer } from './util.js';

export const COMMAND_LIMITS = {
  defaultTimeoutSec: 600,
  maxTimeoutSec: 4 * 3600,
  headBytes: 20 * 1024,
  tailBytes: 20 * 1024,
  /** Between SIGTERM and SIGKILL. */
  killGraceMs: 2_000,
  heartbeatMs: 2_000,
};

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@/i;

/** The environment a command sees: the base env minus anything that looks like a secret. */
export function stripSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (SECRET_NAME.test(k) || /^OPENAI_/i.test(k) || k === 'DATABASE_URL' || URL_WITH_PASSWORD.test(v)) continue;
    out[k] = v;
  }
  return out;
}

const schema = z.object({
  command: z
    .string({ error: 'expected a shell command' })
    .trim()
    .min(1, { error: 'expected a non-empty shell command' })
    .describe('The shell command to run (bash). It runs in the workspace root; chain steps with && rather than writing scripts.'),
  requires_approval: boolParam(
    'true if the command has side effects a person should approve: installing or removing packages, deleting or overwriting files, changing system configuration, network operations. false for reading, building, testing and other safe operations.',
  ),
  timeout_seconds: intParam(`Seconds before the command is killed (default ${COMMAND_LIMITS.defaultTimeoutSec}).`, 1, COMMAND_LIMITS.maxTimeoutSec).optional(),
});

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

export async function executeCommandTool(args: z.output<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  const root = await workspaceRoot(ctx.workspace);
  const timeoutSec = args.timeout_seconds ?? COMMAND_LIMITS.defaultTimeoutSec;
  const check = checkCommand(args.command, root);
  const env = {
    ...stripSecrets(ctx.env ?? process.env),
    // Nothing may wait for a terminal: there is none.
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
  };
  const started = Date.now();
  const buf = new HeadTailBuffer(COMMAND_LIMITS.headBytes, COMMAND_LIMITS.tailBytes);
  if (ctx.signal?.aborted) return { ok: false, output: 'The command was cancelled before it started.', meta: { cancelled: true } };

  const child = spawn('bash', ['-c', args.command], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  let timedOut = false;
  let cancelled = false;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (why: 'timeout' | 'cancel') => {
    if (why === 'timeout') timedOut = true;
    else cancelled = true;
    if (pid === undefined || killTimer) return;
    killGroup(pid, 'SIGTERM');
    killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), COMMAND_LIMITS.killGraceMs);
  };
  const onAbort = () => stop('cancel');
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  const timeout = setTimeout(() => stop('timeout'), timeoutSec * 1000);
  ctx.heartbeat?.({ elapsedMs: 0, outputBytes: 0 });
  const beat = setInterval(() => ctx.heartbeat?.({ elapsedMs: Date.now() - started, outputBytes: buf.total }), COMMAND_LIMITS.heartbeatMs);
  child.stdout!.on('data', (c: Buffer) => buf.push(c));
  child.stderr!.on('data', (c: Buffer) => buf.push(c));

  let exitCode: number | null = null;
  let exitSignal: NodeJS.Signals | null = null;
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        exitCode = code;
        exitSignal = signal;
        // Background children may still hold the pipes open: end the group so 'close' comes.
        if (pid !== undefined) {
          killGroup(pid, 'SIGTERM');
          setTimeout(() => killGroup(pid, 'SIGKILL'), COMMAND_LIMITS.killGraceMs).unref();
        }
      });
      child.once('close', () => resolve());
    });
  } finally {
    clearTimeout(timeout);
    clearInterval(beat);
    if (killTimer) clearTimeout(killTimer);
    ctx.signal?.removeEventListener('abort', onAbort);
    // Whatever is left of the group does not outlive the call.
    if (pid !== undefined) killGroup(pid, 'SIGKILL');
  }

  const durationMs = Date.now() - started;
  const text = buf.render((n) => `[... ${formatBytes(n)} of output omitted; the first ${formatBytes(COMMAND_LIMITS.headBytes)} and the last ${formatBytes(COMMAND_LIMITS.tailBytes)} are shown ...]`);
  let status: string;
  if (timedOut) status = `The command timed out after ${timeoutSec} s; it and its child processes were killed.`;
  else if (cancelled) status = 'The command was cancelled; it and its child processes were killed.';
  else if (exitSignal) status = `The command was killed by signal ${exitSignal}.`;
  else status = `The command exited with code ${exitCode}.`;
  const output = `${status}\n${text.length ? `Output:\n${text}` : '(no output)'}`;
  return {
    ok: !timedOut && !cancelled && exitCode === 0,
    output,
    meta: {
      exitCode,
      signal: exitSignal,
      timedOut,
      cancelled,
      durationMs,
      outputBytes: buf.total,
      droppedBytes: buf.dropped,
      dangerous: check.dangerous,
      repeatable: check.repeatable,
      requiresApproval: args.requires_approval,
    },
  };
}

export const executeCommand: ToolDefinition<typeof schema> = {
  name: 'execute_command',
  description:
    'Run a shell command (bash) in the workspace root and return its exit code and output (stdout and stderr together). ' +
    `Long output is shortened to its first and last ${formatBytes(COMMAND_LIMITS.headBytes)}. The command is killed after timeout_seconds (default ${COMMAND_LIMITS.defaultTimeoutSec}). ` +
    'There is no terminal and no input: use non-interactive flags (e.g. -y). Processes started in the background end with the command. ' +
    'Secrets are removed from the environment.',
  schema,
  readOnly: false,
  mutating: true,
  control: false,
  example: '<execute_command>\n<command>npm test</command>\n<requires_approval>false</requires_approval>\n</execute_command>',
  run: executeCommandTool,
};
