// A worker's extensions: custom tools, code hooks, MCP servers (from code and from the settings
// files), combined per activity into the scope the tool registry and the prompt read. Connections
// to MCP servers are the worker's: they open on first use and close with the worker.
import { log } from '../log.js';
import { fileVersion } from '../workspace/identity.js';
import type { StepScope, TurnObserver } from './observer.js';
import type { ToolDefinition } from '../tools/types.js';
import { sandboxCommandWrapper } from '../sandbox/wrap.js';
import { DEFAULT_SANDBOX } from '../sandbox/policy.js';
import { McpConnections, type McpOptions, type McpServerEntry } from './mcp.js';
import { runInExtensionScope, type ExtensionScope } from './scope.js';
import {
  loadSettingsFile,
  operatorSettingsPath,
  parseSettings,
  RUNNING_HOOK_EVENTS,
  SettingsError,
  WORKSPACE_SETTINGS,
  type McpServerInput,
  type Settings,
} from './settings.js';
import { checkCustomTools, withHeartbeat } from './tools.js';
import { heartbeat } from '../runtime/heartbeat.js';
import { HookRunner, type CodeHooks } from './hooks.js';
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
  /** Use the repository settings a step is given (kept at its conversation's start); false: never (default true). */
  workspaceSettings?: boolean;
  /** Seconds a shell hook may run before it is killed (default 60). */
  hookTimeoutSec?: number;
}

export class WorkerExtensions {
  readonly mcp: McpConnections;
  private readonly tools: ToolDefinition[];
  private readonly codeServers: McpServerEntry[];
  /** Settings files already warned about (once per worker, not per activity). */
  private readonly warned = new Set<string>();

  private readonly opts: ExtensionOptions;
  /** The operator's settings as last parsed, with the file's version then. */
  private operatorSettings?: { key: string; settings: Settings };

  constructor(opts: ExtensionOptions = {}) {
    // A workspace's hooks and MCP servers run in the command sandbox unless the worker trusts them.
    // Its sandbox hides this worker's AGENTRUN_HOME like a command's does.
    const wrap = () => sandboxCommandWrapper({ ...DEFAULT_SANDBOX, ...(opts.home ? { home: opts.home } : {}) });
    this.opts = { ...opts, wrapCommand: opts.wrapCommand ?? (opts.trustWorkspaceCommands ? undefined : wrap()) };
    this.tools = opts.tools ?? [];
    checkCustomTools(this.tools);
    const fromCode = parseSettings({ mcpServers: opts.mcpServers ?? {} }, 'createWorker({ mcpServers })');
    this.codeServers = Object.entries(fromCode.mcpServers).map(([name, config]) => ({ name, config, origin: 'operator' as const }));
    this.mcp = new McpConnections(this.opts);
  }

  /**
   * The operator's settings file, read again only when it changed: every tool call and model step
   * asks for it, and it changes about never. A file whose version (fileVersion) is that of the last
   * read is that read's content; a file that cannot be stat'ed or parsed is read every time (a bad
   * file's error is not kept).
   */
  private async operatorSettingsFile(file: string): Promise<Settings> {
    const key = await fileVersion(file);
    if (key && this.operatorSettings?.key === key) return this.operatorSettings.settings;
    const settings = await loadSettingsFile(file);
    if (key) this.operatorSettings = { key, settings };
    return settings;
  }

  /**
   * The tools, notes and hooks for an activity on this workspace. `step`: the conversation whose
   * step it is, with its repository's settings as kept at its start (never read from the workspace
   * here); its workspace's servers are its own (stopped when it ends) and run, like its
   * hooks, read-only when its commands do.
   */
  async scopeFor(workspace: string | undefined, step?: StepScope): Promise<ExtensionScope> {
    const notes: string[] = [];
    const read = async (file: string): Promise<Settings | undefined> => {
      try {
        return await this.operatorSettingsFile(file);
      } catch (err) {
        if (!(err instanceof SettingsError)) throw err;
        log.warn({ file, err: err.message }, 'settings file ignored');
        notes.push(`The settings file ${err.message.replace(/; fix the file or remove it$/, '')}; its MCP servers and hooks are not in use.`);
        return undefined;
      }
    };
    const operator = this.opts.home ? await read(operatorSettingsPath(this.opts.home)) : undefined;
    const useRepository = workspace && this.opts.workspaceSettings !== false;
    const ws = useRepository ? step?.repository?.settings : undefined;
    if (useRepository && step?.repository?.error) {
      log.warn({ workspace, err: step.repository.error }, 'settings file ignored');
      notes.push(`The settings file ${step.repository.error.replace(/; fix the file or remove it$/, '')}; its MCP servers and hooks are not in use.`);
    }
    for (const [file, settings] of [
      [this.opts.home && operatorSettingsPath(this.opts.home), operator],
      [workspace && WORKSPACE_SETTINGS, ws],
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
      ...Object.entries(ws?.mcpServers ?? {}).map(([name, config]) => ({
        name,
        config,
        origin: 'workspace' as const,
        workspace,
        ...(step ? { conversationId: step.conversationId, readOnly: step.readOnly } : {}),
      })),
    ];
    const mcp = servers.length ? await this.mcp.toolsFor(servers) : { tools: [], problems: [] };
    for (const p of mcp.problems) notes.push(`${p}. Its tools are missing from your tool list; do the task without them.`);
    const hooks = new HookRunner({
      code: this.opts.hooks,
      operator: operator?.hooks ?? {},
      workspace: ws?.hooks ?? {},
      workspacePath: workspace,
      timeoutSec: this.opts.hookTimeoutSec,
      readOnly: step?.readOnly,
      wrapCommand: this.opts.wrapCommand,
      trustWorkspaceCommands: this.opts.trustWorkspaceCommands,
      heartbeat,
    });
    return { tools: [...this.tools, ...mcp.tools], notes, hooks };
  }

  /**
   * This worker's part of the turn port (src/extensions/observer.ts): each step on a workspace runs inside
   * that workspace's scope (tools, notes, hooks); the code hooks that observe (beforeModel,
   * afterModel, onTurnEnd, onFinish) run at their points, at least once (a step may be retried).
   */
  observer(): TurnObserver {
    const code = this.opts.hooks ?? {};
    return {
      inWorkspace: async (workspace, step, stepScope) => {
        // Reading settings may start MCP servers (up to their start timeout): keep the activity alive.
        const scope = await withHeartbeat(heartbeat, () => this.scopeFor(workspace || undefined, stepScope));
        return runInExtensionScope(scope, step);
      },
      beforeModel: code.beforeModel && ((e) => code.beforeModel!({ conversationId: e.conversationId, turn: e.turn, workspace: e.workspace })),
      afterModel:
        code.afterModel &&
        (async (e, outcome) => {
          if (!outcome.ok || !outcome.answered) return;
          await code.afterModel!({ conversationId: e.conversationId, turn: e.turn, workspace: e.workspace, content: await outcome.content() });
        }),
      onTurnEnd: code.onTurnEnd && ((e) => code.onTurnEnd!({ conversationId: e.conversationId, turn: e.turn, workspace: e.workspace })),
      // The conversation's workspace servers stop with it, then the code hook sees the end.
      onFinish: async (e) => {
        await this.mcp.closeConversation(e.conversationId);
        await code.onFinish?.(e);
      },
      watchesStop: () => extensionHooks()?.has('Stop') ?? false,
      async onStop(e) {
        const d = await extensionHooks()?.stop({ conversationId: e.conversationId, turn: e.turn, workspace: e.workspace, stopHookActive: e.blocked > 0 });
        if (!d) return undefined;
        return d.action === 'continue' ? { continue: d.reason, records: d.records } : { records: d.records };
      },
    };
  }

  async close(): Promise<void> {
    await this.mcp.close();
  }
}
