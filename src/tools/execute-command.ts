// execute_command: `bash -c` in the workspace inside the command sandbox (src/sandbox/), with
// a timeout, resource limits, a bounded head+tail output buffer (streamed, never the whole
// output), an environment built from an allowlist, heartbeats, and every process of the
// command killed on timeout, cancel, too much output, or when the shell exits.
import { stripAnsi } from '../sandbox/ansi.js';
import { z } from 'zod';
import { DEFAULT_LIMITS, DEFAULT_SANDBOX, LIFECYCLE, networkPolicy, refusalNote, runInSandbox, type SandboxSettings } from '../sandbox/index.js';
import { workspaceRoot } from './confine.js';
import { checkCommand, type CheckOptions } from '../command-safety/dangerous.js';
import { boolParam, intParam } from './params.js';
import type { ToolContext, ToolDefinition, ToolResult } from './types.js';
import { formatBytes, HeadTailBuffer } from './util.js';

export const COMMAND_LIMITS = {
  defaultTimeoutSec: 600,
  maxTimeoutSec: 4 * 3600,
  headBytes: 20 * 1024,
  tailBytes: 20 * 1024,
  /** Between SIGTERM and SIGKILL. */
  killGraceMs: LIFECYCLE.killGraceMs,
  heartbeatMs: LIFECYCLE.heartbeatMs,
};

/**
 * Unsandboxed, nothing but the checker stands between a command and the host: a program it does not
 * know needs a person. In the sandbox it is judged by what its arguments point at (docs/decisions.md).
 */
function commandCheckOptions(unsandboxed: boolean): CheckOptions {
  return { unknownPrograms: unsandboxed ? 'ask' : 'judge' };
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

export async function executeCommandTool(args: z.output<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  const root = await workspaceRoot(ctx.workspace);
  const timeoutSec = args.timeout_seconds ?? COMMAND_LIMITS.defaultTimeoutSec;
  const settings = ctx.sandbox ?? DEFAULT_SANDBOX;
  // Classified as the call was parsed; a direct caller's command is checked here.
  const check = ctx.safety ?? checkCommand(args.command, root, commandCheckOptions(settings.policy === 'off'));
  const limits = ctx.limits ?? DEFAULT_LIMITS;
  const started = Date.now();
  const buf = new HeadTailBuffer(COMMAND_LIMITS.headBytes, COMMAND_LIMITS.tailBytes);
  if (ctx.signal?.aborted) return { ok: false, output: 'The command was cancelled before it started.', meta: { cancelled: true } };

  const r = await runInSandbox(
    {
      command: args.command,
      workspace: root,
      settings,
      timeoutSec,
      limits,
      baseEnv: ctx.env,
      ...(ctx.recordConnection ? { recordConnection: ctx.recordConnection } : {}),
      ...(ctx.tenant ? { tenant: ctx.tenant } : {}),
    },
    {
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      heartbeat: () => ctx.heartbeat?.({ elapsedMs: Date.now() - started, outputBytes: buf.total }),
      onOutput: (c) => {
        buf.push(c);
        return buf.total > limits.outputBytes;
      },
    },
  );
  const { exitCode, signal: exitSignal, timedOut, cancelled, stopped: tooMuchOutput, error: spawnError, refusals } = r;
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
  // Colours and cursor moves cost the model tokens and hide the text; the result is also what --json, pipes and the page show.
  const text = stripAnsi(
    buf.render(
      (n) =>
        `[... ${formatBytes(n)} of output omitted; the first ${formatBytes(COMMAND_LIMITS.headBytes)} and the last ${formatBytes(COMMAND_LIMITS.tailBytes)} are shown ...]`,
    ),
  );
  let status: string;
  if (timedOut) status = `The command timed out after ${timeoutSec} s; it and its child processes were killed.`;
  else if (cancelled) status = 'The command was cancelled; it and its child processes were killed.';
  else if (tooMuchOutput) status = `The command was killed after ${formatBytes(limits.outputBytes)} of output.`;
  else if (exitSignal) status = `The command was killed by signal ${exitSignal}.`;
  else status = `The command exited with code ${exitCode}.`;
  const ok = !timedOut && !cancelled && !tooMuchOutput && exitCode === 0;
  const output = `${status}\n${text.length ? `Output:\n${text}` : '(no output)'}${networkNote(settings, ok, text, refusals)}`;
  return {
    ok,
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
      ...(refusals.length ? { networkRefused: refusals.length } : {}),
    },
  };
}

/** Output that says a network request failed (name lookup, offline cache, unreachable, no index). */
const NETWORK_FAILURE =
  /ENOTCACHED|only-if-cached|EAI_AGAIN|ENOTFOUND|getaddrinfo|could not resolve|name resolution|network is unreachable|ENETUNREACH|ECONNREFUSED|offline|--no-index|no matching distribution|connection refused|proxy|tunnel/i;

/**
 * A line after the output that says why a network request failed: the network is off for this
 * conversation (when a failed command looks network-related), or what the egress proxy refused.
 */
function networkNote(settings: SandboxSettings, ok: boolean, output: string, refusals: string[]): string {
  if (settings.policy === 'off') return '';
  const mode = networkPolicy(settings.network).mode;
  if (mode === 'off')
    return !ok && NETWORK_FAILURE.test(output)
      ? `\n[agentrun: the network is off for this conversation (--network off): commands cannot download anything; dependencies come from the setup step]`
      : '';
  return refusalNote(`--network ${settings.network}`, refusals);
}

/** What the model is told about its commands' network: the conversation's policy and where dependencies come from. */
export function networkDescription(network: string | undefined): string {
  const p = networkPolicy(network);
  const deps =
    "The project's dependencies come from the repository's setup step, which runs before you with the network; if one is missing, say so in your result instead of working around it.";
  if (p.mode === 'off') return `The network is off for this conversation: downloads fail at once (package managers are told they are offline). ${deps}`;
  if (p.mode === 'allow')
    return `The network reaches only these hosts, through a proxy (HTTP_PROXY and HTTPS_PROXY are set; tools that ignore them have no network): ${p.hosts.join(', ')}. Other hosts and private or local addresses are refused. ${deps}`;
  return `The network reaches public hosts through a proxy (HTTP_PROXY and HTTPS_PROXY are set; tools that ignore them have no network); private and local addresses are refused.`;
}

function describe(network: string | undefined): string {
  return (
    'Run a shell command (bash) in the workspace root and return its exit code and output (stdout and stderr together). ' +
    `Long output is shortened to its first and last ${formatBytes(COMMAND_LIMITS.headBytes)}. The command is killed after timeout_seconds (default ${COMMAND_LIMITS.defaultTimeoutSec}). ` +
    'There is no terminal and no input: use non-interactive flags (e.g. -y). Processes started in the background end with the command. ' +
    'It runs in a sandbox: the workspace is the only writable place besides a private /tmp (HOME is /tmp/home), and only PATH, LANG and the variables the operator passed through are in the environment. Resource limits apply (CPU time, memory, processes, file size, output). ' +
    networkDescription(network)
  );
}

export const executeCommand: ToolDefinition<typeof schema> = {
  name: 'execute_command',
  description: describe('off'),
  schema,
  kind: 'execute',
  example: '<execute_command>\n<command>npm test</command>\n<requires_approval>false</requires_approval>\n</execute_command>',
  run: executeCommandTool,
  about: ['command'],
  line: (a) => `execute_command ${oneLine(typeof a.command === 'string' ? a.command : '')}`,
  commandResult: true,
  // The command's own checker: its program rules decide whether a person must look.
  classify: (a, workspace, unsandboxed) => (typeof a.command === 'string' ? checkCommand(a.command, workspace, commandCheckOptions(unsandboxed)) : undefined),
};

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, ' ⏎ ').trim();

/** The tools as offered to one conversation: execute_command's description names its network policy. */
export function withNetworkPolicy<T extends ToolDefinition>(tools: T[], network: string | undefined): T[] {
  if (network === undefined || network === 'off') return tools;
  return tools.map((t) => (t.name === executeCommand.name ? { ...t, description: describe(network) } : t));
}
