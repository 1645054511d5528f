// execute_command: `bash -c` in the workspace inside the command sandbox (src/sandbox/), with
// a timeout, resource limits, a bounded head+tail output buffer (streamed, never the whole
// output), an environment built from an allowlist, heartbeats, and every process of the
// command killed on timeout, cancel, too much output, or when the shell exits.
import { z } from 'zod';
import { DEFAULT_LIMITS, DEFAULT_SANDBOX, startCommand } from '../sandbox/index.js';
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

export async function executeCommandTool(args: z.output<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  const root = await workspaceRoot(ctx.workspace);
  const timeoutSec = args.timeout_seconds ?? COMMAND_LIMITS.defaultTimeoutSec;
  const check = checkCommand(args.command, root);
  const settings = ctx.sandbox ?? DEFAULT_SANDBOX;
  const limits = ctx.limits ?? DEFAULT_LIMITS;
  const started = Date.now();
  const buf = new HeadTailBuffer(COMMAND_LIMITS.headBytes, COMMAND_LIMITS.tailBytes);
  if (ctx.signal?.aborted) return { ok: false, output: 'The command was cancelled before it started.', meta: { cancelled: true } };

  const cmd = startCommand({ command: args.command, workspace: root, settings, timeoutSec, limits, baseEnv: ctx.env });
  const { child } = cmd;
  let timedOut = false;
  let cancelled = false;
  let tooMuchOutput = false;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (why: 'timeout' | 'cancel' | 'output') => {
    if (why === 'timeout') timedOut = true;
    else if (why === 'cancel') cancelled = true;
    else tooMuchOutput = true;
    if (killTimer) return;
    cmd.kill('SIGTERM');
    killTimer = setTimeout(() => cmd.kill('SIGKILL'), COMMAND_LIMITS.killGraceMs);
  };
  const onAbort = () => stop('cancel');
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  const timeout = setTimeout(() => stop('timeout'), timeoutSec * 1000);
  ctx.heartbeat?.({ elapsedMs: 0, outputBytes: 0 });
  const beat = setInterval(() => ctx.heartbeat?.({ elapsedMs: Date.now() - started, outputBytes: buf.total }), COMMAND_LIMITS.heartbeatMs);
  const onData = (c: Buffer) => {
    buf.push(c);
    if (buf.total > limits.outputBytes) stop('output');
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);

  let exitCode: number | null = null;
  let exitSignal: NodeJS.Signals | null = null;
  let spawnError: Error | undefined;
  try {
    await new Promise<void>((resolve) => {
      child.once('error', (e) => {
        spawnError = e;
        resolve();
      });
      child.once('exit', (code, signal) => {
        exitCode = code;
        exitSignal = signal;
        // Background children may still hold the pipes open: end the group so 'close' comes.
        cmd.kill('SIGTERM');
        setTimeout(() => cmd.kill('SIGKILL'), COMMAND_LIMITS.killGraceMs).unref();
      });
      child.once('close', () => resolve());
    });
  } finally {
    clearTimeout(timeout);
    clearInterval(beat);
    if (killTimer) clearTimeout(killTimer);
    ctx.signal?.removeEventListener('abort', onAbort);
    // Whatever is left of the command does not outlive the call.
    cmd.kill('SIGKILL');
    cmd.cleanup();
  }
  if (spawnError) {
    const missing = (spawnError as NodeJS.ErrnoException).code === 'ENOENT';
    return {
      ok: false,
      output:
        missing && settings.policy !== 'off'
          ? 'The command could not start: bubblewrap (bwrap) is not installed on this worker, and commands never run unsandboxed unless the conversation asks for --sandbox off.'
          : `The command could not start: ${spawnError.message}`,
      meta: { sandbox: settings.policy, network: settings.network },
    };
  }

  const durationMs = Date.now() - started;
  const text = buf.render(
    (n) =>
      `[... ${formatBytes(n)} of output omitted; the first ${formatBytes(COMMAND_LIMITS.headBytes)} and the last ${formatBytes(COMMAND_LIMITS.tailBytes)} are shown ...]`,
  );
  let status: string;
  if (timedOut) status = `The command timed out after ${timeoutSec} s; it and its child processes were killed.`;
  else if (cancelled) status = 'The command was cancelled; it and its child processes were killed.';
  else if (tooMuchOutput) status = `The command was killed after ${formatBytes(limits.outputBytes)} of output.`;
  else if (exitSignal) status = `The command was killed by signal ${exitSignal}.`;
  else status = `The command exited with code ${exitCode}.`;
  const output = `${status}\n${text.length ? `Output:\n${text}` : '(no output)'}`;
  return {
    ok: !timedOut && !cancelled && !tooMuchOutput && exitCode === 0,
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
      sandbox: settings.policy,
      network: settings.network,
    },
  };
}

export const executeCommand: ToolDefinition<typeof schema> = {
  name: 'execute_command',
  description:
    'Run a shell command (bash) in the workspace root and return its exit code and output (stdout and stderr together). ' +
    `Long output is shortened to its first and last ${formatBytes(COMMAND_LIMITS.headBytes)}. The command is killed after timeout_seconds (default ${COMMAND_LIMITS.defaultTimeoutSec}). ` +
    'There is no terminal and no input: use non-interactive flags (e.g. -y). Processes started in the background end with the command. ' +
    'It runs in a sandbox: the workspace is the only writable place besides a private /tmp (HOME is /tmp/home), the network is off unless the conversation allows it, and only PATH, LANG and the variables the operator passed through are in the environment. Resource limits apply (CPU time, memory, processes, file size, output).',
  schema,
  readOnly: false,
  mutating: true,
  control: false,
  example: '<execute_command>\n<command>npm test</command>\n<requires_approval>false</requires_approval>\n</execute_command>',
  run: executeCommandTool,
};
