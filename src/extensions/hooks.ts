// Hooks: typed code hooks (beforeModel, afterModel, beforeTool, afterTool, onTurnEnd, onFinish) and
// Claude-Code-style shell hooks from settings.json (PreToolUse, PostToolUse, Stop, …): a matcher on
// the tool name, a shell command with the event as JSON on stdin; exit 2 blocks and stderr is the
// reason the model sees; exit 0 may print a JSON decision; a hook that outlives its timeout is
// killed with its process group and recorded as an error. Each run returns a typed decision plus a
// record of every hook that ran, so the caller can store what was decided and why.
import type { ToolResult } from '../tools/types.js';
import { runProgram } from '../sandbox/run.js';
import { prepareCommand, type CommandPolicy, type CommandSpec } from './commands.js';
import type { HookEvent, Settings, SettingsOrigin } from './settings.js';
import { withHeartbeat } from './tools.js';
import { matcherSelects } from './matcher.js';
import { SANDBOX_WORKSPACE } from '../sandbox/policy.js';

export interface ToolHookEvent {
  conversationId: string;
  turn: number;
  workspace: string;
  callId: string;
  tool: string;
  args: Record<string, unknown>;
}

export interface ModelHookEvent {
  conversationId: string;
  turn: number;
  workspace: string;
}

type HookVerdict<T = undefined> = void | undefined | { block: string } | (T extends undefined ? never : T);

export interface CodeHooks {
  beforeModel?(e: ModelHookEvent): void | Promise<void>;
  afterModel?(e: ModelHookEvent & { content: string }): void | Promise<void>;
  /** Block the call (the reason is the model's tool result) or rewrite its arguments. */
  beforeTool?(e: ToolHookEvent): HookVerdict<{ args: Record<string, unknown> }> | Promise<HookVerdict<{ args: Record<string, unknown> }>>;
  /** Replace the output the model sees. */
  afterTool?(e: ToolHookEvent & { result: ToolResult }): HookVerdict<{ output: string }> | Promise<HookVerdict<{ output: string }>>;
  onTurnEnd?(e: { conversationId: string; turn: number; workspace: string }): void | Promise<void>;
  onFinish?(e: { conversationId: string; workspace: string; status: string; result?: string }): void | Promise<void>;
}

type HookSource = 'code' | SettingsOrigin;

export interface HookRecord {
  source: HookSource;
  event: string;
  /** The shell command, for settings hooks. */
  command?: string;
  outcome: 'allow' | 'block' | 'rewrite' | 'error' | 'timeout';
  detail?: string;
  ms: number;
}

export type BeforeToolDecision =
  { action: 'allow'; args: Record<string, unknown>; records: HookRecord[] } | { action: 'block'; reason: string; records: HookRecord[] };
export interface AfterToolDecision {
  output?: string;
  records: HookRecord[];
}
export type StopDecision = { action: 'stop'; records: HookRecord[] } | { action: 'continue'; reason: string; records: HookRecord[] };

export interface HookRunnerOptions extends CommandPolicy {
  code?: CodeHooks;
  operator?: Settings['hooks'];
  workspace?: Settings['hooks'];
  workspacePath?: string;
  /** Seconds a shell hook may run (per hook `timeout` wins, up to MAX_HOOK_TIMEOUT_SEC; default 60). */
  timeoutSec?: number;
  /** The conversation may not write its workspace (plan mode, `--sandbox read-only`): nor may a workspace's hooks. */
  readOnly?: boolean;
  /** Called every few seconds while a shell hook runs (the activity's heartbeat). */
  heartbeat?: (detail?: unknown) => void;
}

interface ShellRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  error?: string;
}

const CAP = 64 * 1024;

/** No hook runs longer than this, whatever its settings say: a turn waits for it. */
const MAX_HOOK_TIMEOUT_SEC = 600;

/**
 * Run one command with `input` on stdin, through the worker's command runner (src/sandbox/run.ts);
 * kill its process group after `timeoutMs`. What it leaves in the background may outlive it, as a
 * Claude Code hook's may. Never rejects.
 */
async function runShellCommand(spec: CommandSpec, input: string, timeoutMs: number): Promise<ShellRun> {
  let stdout = '';
  let stderr = '';
  const r = await runProgram(
    { ...spec, input },
    {
      timeoutMs,
      killGraceMs: 0,
      keepBackground: true,
      // A process that left the group may still hold the pipes open: do not wait for it.
      closeWaitMs: 1000,
      onOutput: (d, fd) => {
        if (fd === 1 && stdout.length < CAP) stdout += d.toString();
        if (fd === 2 && stderr.length < CAP) stderr += d.toString();
      },
    },
  );
  return { code: r.timedOut ? null : r.exitCode, stdout, stderr, timedOut: r.timedOut, ...(r.error ? { error: r.error.message } : {}) };
}

interface ShellOutcome {
  block?: string;
  args?: Record<string, unknown>;
  record: HookRecord;
}

export class HookRunner {
  constructor(private readonly opts: HookRunnerOptions = {}) {}

  /** Whether any hook would run for this event (saves the work of building events). */
  has(event: HookEvent): boolean {
    return !!(this.opts.operator?.[event]?.length || this.opts.workspace?.[event]?.length);
  }

  async beforeTool(e: ToolHookEvent): Promise<BeforeToolDecision> {
    const records: HookRecord[] = [];
    let args = e.args;
    const code = this.opts.code?.beforeTool;
    if (code) {
      const started = Date.now();
      try {
        const v = await code({ ...e, args });
        if (v && 'block' in v) {
          records.push({ source: 'code', event: 'beforeTool', outcome: 'block', detail: v.block, ms: Date.now() - started });
          return { action: 'block', reason: v.block, records };
        }
        if (v && 'args' in v) {
          args = v.args;
          records.push({ source: 'code', event: 'beforeTool', outcome: 'rewrite', detail: JSON.stringify(args).slice(0, 300), ms: Date.now() - started });
        }
      } catch (err) {
        // A code hook is the embedder's policy: a throw blocks rather than letting the call through unchecked.
        const reason = `the beforeTool hook failed: ${(err as Error).message}`;
        records.push({ source: 'code', event: 'beforeTool', outcome: 'error', detail: reason, ms: Date.now() - started });
        return { action: 'block', reason, records };
      }
    }
    for (const outcome of await this.shell('PreToolUse', e.tool, () => this.payload('PreToolUse', e, { tool_name: e.tool, tool_input: args }))) {
      records.push(outcome.record);
      if (outcome.block !== undefined) return { action: 'block', reason: outcome.block, records };
      if (outcome.args) args = outcome.args;
    }
    return { action: 'allow', args, records };
  }

  async afterTool(e: ToolHookEvent, result: ToolResult): Promise<AfterToolDecision> {
    const records: HookRecord[] = [];
    let output: string | undefined;
    const code = this.opts.code?.afterTool;
    if (code) {
      const started = Date.now();
      try {
        const v = await code({ ...e, result });
        if (v && 'output' in v) {
          output = v.output;
          records.push({ source: 'code', event: 'afterTool', outcome: 'rewrite', ms: Date.now() - started });
        } else if (v && 'block' in v) {
          output = `${result.output}\n\n${v.block}`;
          records.push({ source: 'code', event: 'afterTool', outcome: 'block', detail: v.block, ms: Date.now() - started });
        }
      } catch (err) {
        records.push({ source: 'code', event: 'afterTool', outcome: 'error', detail: (err as Error).message, ms: Date.now() - started });
      }
    }
    // Claude Code: PostToolUse cannot undo the call; exit 2 / "block" feeds the reason to the model.
    for (const outcome of await this.shell('PostToolUse', e.tool, () =>
      this.payload('PostToolUse', e, { tool_name: e.tool, tool_input: e.args, tool_response: { success: result.ok, output: result.output } }),
    )) {
      records.push(outcome.record);
      if (outcome.block !== undefined) output = `${output ?? result.output}\n\nPostToolUse hook: ${outcome.block}`;
    }
    return { output, records };
  }

  /** Stop: a hook that exits 2 (or says "block") keeps the conversation going, its reason the next message. */
  async stop(e: { conversationId: string; turn: number; workspace: string; stopHookActive: boolean }): Promise<StopDecision> {
    const records: HookRecord[] = [];
    for (const outcome of await this.shell('Stop', undefined, () =>
      this.payload('Stop', { ...e, callId: '', tool: '', args: {} }, { stop_hook_active: e.stopHookActive }),
    )) {
      records.push(outcome.record);
      if (outcome.block !== undefined) return { action: 'continue', reason: outcome.block, records };
    }
    return { action: 'stop', records };
  }

  async onTurnEnd(e: { conversationId: string; turn: number; workspace: string }): Promise<void> {
    await this.opts.code?.onTurnEnd?.(e);
  }

  async onFinish(e: { conversationId: string; workspace: string; status: string; result?: string }): Promise<void> {
    await this.opts.code?.onFinish?.(e);
  }

  async beforeModel(e: ModelHookEvent): Promise<void> {
    await this.opts.code?.beforeModel?.(e);
  }

  async afterModel(e: ModelHookEvent & { content: string }): Promise<void> {
    await this.opts.code?.afterModel?.(e);
  }

  private payload(event: HookEvent, e: ToolHookEvent, extra: Record<string, unknown>): Record<string, unknown> {
    return { session_id: e.conversationId, conversation_id: e.conversationId, turn: e.turn, cwd: e.workspace, hook_event_name: event, ...extra };
  }

  /** Every matching shell hook of the event, operator's first, until one blocks. */
  private async shell(event: HookEvent, tool: string | undefined, payload: () => Record<string, unknown>): Promise<ShellOutcome[]> {
    const outcomes: ShellOutcome[] = [];
    const sources: Array<[SettingsOrigin, Settings['hooks'] | undefined]> = [
      ['operator', this.opts.operator],
      ['workspace', this.opts.workspace],
    ];
    let input: Record<string, unknown> | undefined;
    for (const [origin, hooks] of sources) {
      for (const group of hooks?.[event] ?? []) {
        if (!(await matcherSelects(group.matcher, tool))) continue;
        for (const hook of group.hooks) {
          input ??= payload();
          const args = [...outcomes].reverse().find((o) => o.args)?.args;
          const body = args ? { ...input, tool_input: args } : input;
          const timeoutSec = Math.min(hook.timeout ?? this.opts.timeoutSec ?? 60, MAX_HOOK_TIMEOUT_SEC);
          const outcome = await this.runOne(origin, event, hook.command, timeoutSec * 1000, body);
          outcomes.push(outcome);
          if (outcome.block !== undefined) return outcomes;
        }
      }
    }
    return outcomes;
  }

  private async runOne(origin: SettingsOrigin, event: HookEvent, command: string, timeoutMs: number, input: Record<string, unknown>): Promise<ShellOutcome> {
    const started = Date.now();
    const record = (outcome: HookRecord['outcome'], detail?: string): HookRecord => ({
      source: origin,
      event,
      command,
      outcome,
      detail,
      ms: Date.now() - started,
    });
    const workspace = this.opts.workspacePath;
    // A sandboxed workspace hook gets the sandbox's PATH and home (src/sandbox/wrap.ts); only a trusted one the worker's.
    const worker =
      origin === 'operator' ? (process.env as Record<string, string>) : { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' };
    const env: Record<string, string> = {
      ...(origin === 'operator' || !this.opts.wrapCommand ? worker : {}),
      ...(workspace ? { AGENTRUN_PROJECT_DIR: workspace, CLAUDE_PROJECT_DIR: workspace } : {}),
    };
    let spec: CommandSpec;
    try {
      spec = prepareCommand(
        { command: '/bin/sh', args: ['-c', command], env, cwd: workspace },
        { origin, workspace, what: `${event} hook "${command}"`, readOnly: this.opts.readOnly, timeoutSec: Math.ceil(timeoutMs / 1000) },
        this.opts,
      );
    } catch (err) {
      return { record: record('error', (err as Error).message) };
    }
    // A sandboxed hook is told the workspace where its commands see it.
    const told = origin === 'workspace' && this.opts.wrapCommand && workspace && input.cwd === workspace ? { ...input, cwd: SANDBOX_WORKSPACE } : input;
    const r = await withHeartbeat(this.opts.heartbeat, () => runShellCommand(spec, JSON.stringify(told), timeoutMs));
    if (r.timedOut) return { record: record('timeout', `the hook did not finish within ${timeoutMs / 1000}s and was killed; ignored`) };
    if (r.error) return { record: record('error', `the hook could not start: ${r.error}`) };
    if (r.code === 2) {
      const reason = r.stderr.trim() || `blocked by the ${event} hook "${command}"`;
      return { block: reason, record: record('block', reason) };
    }
    if (r.code !== 0) return { record: record('error', `exit ${r.code}${r.stderr.trim() ? `: ${r.stderr.trim().slice(0, 500)}` : ''}; ignored`) };
    const out = r.stdout.trim();
    if (out.startsWith('{')) {
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(out) as Record<string, unknown>;
      } catch {
        // plain output that happens to start with "{": nothing to decide
      }
      const specific = json?.hookSpecificOutput as
        { permissionDecision?: string; permissionDecisionReason?: string; updatedInput?: Record<string, unknown> } | undefined;
      if (json?.decision === 'block' || specific?.permissionDecision === 'deny' || json?.continue === false) {
        const reason = String(specific?.permissionDecisionReason ?? json?.reason ?? json?.stopReason ?? `blocked by the ${event} hook "${command}"`);
        return { block: reason, record: record('block', reason) };
      }
      if (specific?.updatedInput && typeof specific.updatedInput === 'object') {
        return { args: specific.updatedInput, record: record('rewrite', JSON.stringify(specific.updatedInput).slice(0, 300)) };
      }
    }
    return { record: record('allow') };
  }
}
