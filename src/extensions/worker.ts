// A worker's extensions: custom tools, code hooks, MCP servers (from code and from the settings
// files), combined per activity into the scope the tool registry and the prompt read. Connections
// to MCP servers are the worker's: they open on first use and close with the worker.
import type { CallModelInput, CallModelResult, EndTurnInput, FinishInput } from '../../activities/types.js';
import type { EndTurnRecordInput, FinishSessionInput, ModelTurnInput } from '../../activities/session.js';
import { log } from '../log.js';
import type { Store } from '../store/index.js';
import type { ToolDefinition } from '../tools/types.js';
import { sandboxCommandWrapper } from '../sandbox/wrap.js';
import { McpConnections, type McpOptions, type McpServerEntry } from './mcp.js';
import { runInExtensionScope, type ExtensionScope } from './scope.js';
import {
  loadSettingsFile,
  operatorSettingsPath,
  parseSettings,
  RUNNING_HOOK_EVENTS,
  SettingsError,
  workspaceSettingsPath,
  type McpServerInput,
  type Settings,
} from './settings.js';
import { checkCustomTools, withHeartbeat } from './tools.js';
import { Context } from '@temporalio/activity';
import { HookRunner, type CodeHooks, type HookRecord } from './hooks.js';
import { extensionHooks } from './scope.js';

export interface ExtensionOptions extends McpOptions {
  /** Custom tools (`defineTool`). */
  tools?: ToolDefinition[];
  /** Code hooks: beforeTool, afterTool, … */
  hooks?: CodeHooks;
  /** MCP servers given in code; they count as the operator's. */
  mcpServers?: Record<string, McpServerInput>;
  /** AGENTRUN_HOME, whose settings.json is the operator's. */
  home?: string;
  /** Read `.agentrun/settings.json` of each workspace (default true). */
  workspaceSettings?: boolean;
  /** Seconds a shell hook may run before it is killed (default 60). */
  hookTimeoutSec?: number;
}

/** The running activity's heartbeat; a no-op outside an activity (tests, benchmarks). */
function activityHeartbeat(detail?: unknown): void {
  try {
    Context.current().heartbeat(detail);
  } catch {
    // not in an activity
  }
}

/** Activities that build the prompt, stream the answer, read tool calls or run them. */
// The `session` workflow's activities (modelTurn, toolCall, recordToolResult) and the frozen `conversation` workflow's.
const TOOL_AWARE = new Set(['modelTurn', 'toolCall', 'recordToolResult', 'prepareContext', 'callModel', 'parseResponse', 'runTool', 'stopHook']);

export interface StopHookInput {
  conversationId: string;
  workspace: string;
  turn: number;
  /** How often Stop hooks kept this conversation going already (Claude Code's `stop_hook_active` when > 0). */
  blocked: number;
}

/** `continue`: the reason a Stop hook gave for not ending (the model reads it); else the conversation ends. */
export interface StopHookResult {
  continue?: string;
  records: HookRecord[];
}

/** The activity a worker with extensions adds: the Stop hooks, run when the model is about to finish. */
export interface ExtensionActivities {
  stopHook(input: StopHookInput): Promise<StopHookResult>;
}

/**
 * What the Stop hooks decided, kept with the attempt_completion result they answered (as tool hooks
 * are kept with theirs), so `inspect` shows it. A retry replaces the records of the earlier attempt.
 */
async function keepStopRecords(store: Pick<Store, 'getMessages' | 'putMessage'>, conversationId: string, turn: number, records: HookRecord[]): Promise<void> {
  const result = (await store.getMessages(conversationId))
    .filter((m) => m.kind === 'tool_result' && m.turn === turn && m.toolName === 'attempt_completion')
    .at(-1);
  if (!result) return;
  const kept = ((result.meta?.hooks as HookRecord[] | undefined) ?? []).filter((r) => r.event !== 'Stop');
  await store.putMessage({ ...result, meta: { ...result.meta, hooks: [...kept, ...records] } });
}

export class WorkerExtensions {
  readonly mcp: McpConnections;
  private readonly tools: ToolDefinition[];
  private readonly codeServers: McpServerEntry[];
  /** Settings files already warned about (once per worker, not per activity). */
  private readonly warned = new Set<string>();

  private readonly opts: ExtensionOptions;

  constructor(opts: ExtensionOptions = {}) {
    // A workspace's hooks and MCP servers run in the command sandbox unless the worker trusts them.
    this.opts = { ...opts, wrapCommand: opts.wrapCommand ?? (opts.trustWorkspaceCommands ? undefined : sandboxCommandWrapper()) };
    this.tools = opts.tools ?? [];
    checkCustomTools(this.tools);
    const fromCode = parseSettings({ mcpServers: opts.mcpServers ?? {} }, 'createWorker({ mcpServers })');
    this.codeServers = Object.entries(fromCode.mcpServers).map(([name, config]) => ({ name, config, origin: 'operator' as const }));
    this.mcp = new McpConnections(this.opts);
  }

  /** The tools, notes and hooks for an activity on this workspace. */
  async scopeFor(workspace: string | undefined): Promise<ExtensionScope> {
    const notes: string[] = [];
    const read = async (file: string): Promise<Settings | undefined> => {
      try {
        return await loadSettingsFile(file);
      } catch (err) {
        if (!(err instanceof SettingsError)) throw err;
        log.warn({ file, err: err.message }, 'settings file ignored');
        notes.push(`The settings file ${err.message.replace(/; fix the file or remove it$/, '')}; its MCP servers and hooks are not in use.`);
        return undefined;
      }
    };
    const operator = this.opts.home ? await read(operatorSettingsPath(this.opts.home)) : undefined;
    const ws = workspace && this.opts.workspaceSettings !== false ? await read(workspaceSettingsPath(workspace)) : undefined;
    for (const [file, settings] of [
      [this.opts.home && operatorSettingsPath(this.opts.home), operator],
      [workspace && workspaceSettingsPath(workspace), ws],
    ] as const) {
      const idle = Object.keys(settings?.hooks ?? {}).filter((e) => !RUNNING_HOOK_EVENTS.includes(e));
      if (idle.length && !this.warned.has(`${file}:${idle}`)) {
        this.warned.add(`${file}:${idle}`);
        log.warn({ file, events: idle }, `hooks for ${idle.join(', ')} are accepted but not run yet (only ${RUNNING_HOOK_EVENTS.join(', ')})`);
      }
    }
    const servers: McpServerEntry[] = [
      ...this.codeServers,
      ...Object.entries(operator?.mcpServers ?? {}).map(([name, config]) => ({ name, config, origin: 'operator' as const })),
      ...Object.entries(ws?.mcpServers ?? {}).map(([name, config]) => ({ name, config, origin: 'workspace' as const, workspace })),
    ];
    const mcp = servers.length ? await this.mcp.toolsFor(servers) : { tools: [], problems: [] };
    for (const p of mcp.problems) notes.push(`${p}. Its tools are missing from your tool list; do the task without them.`);
    const hooks = new HookRunner({
      code: this.opts.hooks,
      operator: operator?.hooks ?? {},
      workspace: ws?.hooks ?? {},
      workspacePath: workspace,
      timeoutSec: this.opts.hookTimeoutSec,
      wrapCommand: this.opts.wrapCommand,
      trustWorkspaceCommands: this.opts.trustWorkspaceCommands,
      heartbeat: activityHeartbeat,
    });
    return { tools: [...this.tools, ...mcp.tools], notes, hooks };
  }

  /**
   * Each tool-aware activity runs inside the scope of its conversation's workspace; the code hooks
   * that observe (beforeModel, afterModel, onTurnEnd, onFinish) run around their activities, at
   * least once (an activity may be retried), and a throw there is logged, not fatal.
   */
  wrapActivities<A extends object>(activities: A, deps: { store?: Pick<Store, 'getMessage' | 'getConversation' | 'getMessages' | 'putMessage'> } = {}): A {
    const wrapped: Record<string, unknown> = { ...(activities as Record<string, unknown>) };
    const observe = async (hook: string, run: () => Promise<void> | void) => {
      try {
        await run();
      } catch (err) {
        log.warn({ hook, err: (err as Error).message }, 'code hook failed; ignored');
      }
    };
    const code = this.opts.hooks ?? {};
    const extra: ExtensionActivities = {
      async stopHook(input) {
        const d = (await extensionHooks()?.stop({
          conversationId: input.conversationId,
          turn: input.turn,
          workspace: input.workspace,
          stopHookActive: input.blocked > 0,
        })) ?? { action: 'stop', records: [] };
        log.info({ conversationId: input.conversationId, turn: input.turn, hooks: d.records, decision: d.action }, 'Stop hooks ran');
        if (deps.store && d.records.length) await keepStopRecords(deps.store, input.conversationId, input.turn, d.records);
        return d.action === 'continue' ? { continue: d.reason, records: d.records } : { records: d.records };
      },
    };
    for (const [name, fn] of Object.entries({ ...extra, ...activities })) {
      if (typeof fn !== 'function') continue;
      const call = fn as (input: any, ...rest: unknown[]) => Promise<any>;
      let run = call;
      const workspaceOf = async (conversationId: string) => (await deps.store?.getConversation(conversationId))?.workspace ?? '';
      if ((name === 'callModel' || name === 'modelTurn') && (code.beforeModel || code.afterModel)) {
        // modelTurn (session) streams the whole answer; callModel (frozen conversation) one segment.
        run = async (input: CallModelInput | ModelTurnInput) => {
          const e = { conversationId: input.conversationId, turn: input.turn, workspace: input.workspace };
          if (code.beforeModel) await observe('beforeModel', () => code.beforeModel!(e));
          const result = await call(input);
          const done = name === 'modelTurn' ? (result as { fits?: boolean }).fits !== false : (result as CallModelResult).merged;
          if (code.afterModel && done && deps.store) {
            const message = await deps.store.getMessage(input.conversationId, input.seq);
            await observe('afterModel', () => code.afterModel!({ ...e, content: message?.content ?? '' }));
          }
          return result;
        };
      } else if ((name === 'endTurn' || name === 'endTurnRecord') && code.onTurnEnd) {
        run = async (input: EndTurnInput | EndTurnRecordInput) => {
          const result = await call(input);
          const workspace = 'workspace' in input ? input.workspace : await workspaceOf(input.conversationId);
          await observe('onTurnEnd', () => code.onTurnEnd!({ conversationId: input.conversationId, turn: input.turn, workspace }));
          return result;
        };
      } else if ((name === 'finishConversation' || name === 'finishSession') && code.onFinish) {
        run = async (input: FinishInput | FinishSessionInput) => {
          const result = await call(input);
          const workspace = await workspaceOf(input.conversationId);
          await observe('onFinish', () => code.onFinish!({ conversationId: input.conversationId, workspace, status: input.status, result: input.result }));
          return result;
        };
      }
      if (name === 'modelTurn' && code.onTurnEnd) {
        // The session writes a turn's record with the next model step (workflows/session.ts): the
        // turn ended there, so onTurnEnd runs there, after the record and before beforeModel.
        const recordTurn = (activities as Record<string, unknown>).endTurnRecord as (input: EndTurnRecordInput) => Promise<void>;
        const inner = run;
        run = async (input: ModelTurnInput, ...rest: unknown[]) => {
          if (!input.endTurn) return inner(input, ...rest);
          const { endTurn, ...step } = input;
          await recordTurn(endTurn);
          await observe('onTurnEnd', () => code.onTurnEnd!({ conversationId: endTurn.conversationId, turn: endTurn.turn, workspace: input.workspace }));
          return inner(step, ...rest);
        };
      }
      if (TOOL_AWARE.has(name)) {
        const inner = run;
        run = async (input: { workspace?: string }, ...rest: unknown[]) => {
          // Reading settings may start MCP servers (up to their start timeout): keep the activity alive.
          const scope = await withHeartbeat(activityHeartbeat, () => this.scopeFor(input?.workspace));
          const result = await runInExtensionScope(scope, () => inner(input, ...rest));
          // The session asks for the Stop hooks (another activity) only when this workspace has some.
          if (name === 'modelTurn' && scope.hooks?.has('Stop')) return { ...(result as object), stopHook: true };
          return result;
        };
      }
      wrapped[name] = run;
    }
    return wrapped as unknown as A;
  }

  async close(): Promise<void> {
    await this.mcp.close();
  }
}
