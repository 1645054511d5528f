// MCP servers (stdio and Streamable HTTP) through @modelcontextprotocol/sdk. One connection per
// server configuration lives as long as the worker: it is opened on first use, reopened after it
// drops, and a server that does not answer within its start timeout gives a clear error (the
// conversation goes on without its tools; the model is told). Tools appear as
// `mcp__<server>__<tool>` with the server's input schema, read-only only when annotated so.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { log } from '../log.js';
import type { ToolDefinition, ToolResult } from '../tools/types.js';
import { expandEnv, prepareCommand, type CommandWrapper, type CommandSpec } from './commands.js';
import { xmlExample, zodFromJsonSchema, type JsonSchema } from './json-schema.js';
import type { McpServerConfig, SettingsOrigin } from './settings.js';
import { MCP_PREFIX, withHeartbeat } from './tools.js';

export interface McpServerEntry {
  name: string;
  config: McpServerConfig;
  origin: SettingsOrigin;
  /** The workspace whose settings name the server (stdio servers of a workspace start in it). */
  workspace?: string;
  /** The conversation a workspace's server serves: it stops when that conversation ends (closeConversation). */
  conversationId?: string;
  /** The conversation may not write its workspace (plan mode, `--sandbox read-only`): nor may a workspace's server. */
  readOnly?: boolean;
}

/** No server gets longer than this to start, whatever its settings say. */
const MAX_MCP_START_SEC = 300;

export interface McpOptions {
  /** Default seconds to wait for a server to start and list its tools. */
  startTimeoutSec?: number;
  /** Seconds a tool call may take. */
  callTimeoutSec?: number;
  /** Seconds before a server that failed is tried again. */
  retryAfterSec?: number;
  /** Runs workspace commands inside the command sandbox (see commands.ts). */
  wrapCommand?: CommandWrapper;
  /** Start stdio servers from workspace settings without a sandbox (only for trusted repositories). */
  trustWorkspaceCommands?: boolean;
  /** Seconds a workspace's server may go unused before it is closed (default 600); the operator's stay open. */
  idleCloseSec?: number;
}

interface McpTool {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean; title?: string };
}

interface Connection {
  key: string;
  entry: McpServerEntry;
  client?: Client;
  tools: McpTool[];
  /** Set while connecting; every caller awaits the same attempt. */
  connecting?: Promise<void>;
  error?: string;
  failedAt?: number;
  stderr: string;
  lastUsed: number;
  /** The tool definitions made from `tools` (kept: the registry caches schemas per definition). */
  defs?: ToolDefinition[];
  /** Removes what the sandbox wrapper made for the running server (its cgroup, and whatever is left in it). */
  cleanup?: () => void;
}

export interface McpToolSet {
  tools: ToolDefinition[];
  /** One line per server that is not available, for the model and the log. */
  problems: string[];
}

/** `mcp__<server>__<tool>`, kept to what XML tags and function names allow. */
function mcpToolName(server: string, tool: string): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${MCP_PREFIX}${clean(server)}__${clean(tool)}`.slice(0, 64);
}

/** How often a host asks whether the conversations its workspace servers serve have ended. */
const ENDED_SWEEP_MS = 5_000;

export class McpConnections {
  private readonly connections = new Map<string, Connection>();
  private closed = false;
  private ended?: (conversationIds: string[]) => Promise<string[]>;
  private sweep?: NodeJS.Timeout;

  constructor(private readonly opts: McpOptions = {}) {}

  /**
   * Stop a conversation's workspace servers once `ended` names it. A conversation's last step
   * (which stops them through closeConversation) may run on another host of a fleet than the one
   * that holds its workspace and started them: this host then learns the end from the store.
   */
  watchConversations(ended: (conversationIds: string[]) => Promise<string[]>, everyMs = ENDED_SWEEP_MS): void {
    this.ended = ended;
    clearInterval(this.sweep);
    this.sweep = setInterval(
      () => void this.closeEnded().catch((err) => log.warn({ err: (err as Error).message }, 'could not check which conversations ended')),
      everyMs,
    );
    this.sweep.unref();
  }

  /** Close the workspace servers of the conversations that ended (watchConversations). */
  async closeEnded(): Promise<void> {
    const ids = [...new Set([...this.connections.values()].map((c) => (c.entry.origin === 'workspace' ? c.entry.conversationId : undefined)))];
    const live = ids.filter((id): id is string => id !== undefined);
    if (!this.ended || live.length === 0) return;
    for (const id of await this.ended(live)) await this.closeConversation(id);
  }

  /** The tools of these servers, connecting to those not connected yet (in parallel). */
  async toolsFor(servers: McpServerEntry[]): Promise<McpToolSet> {
    const conns = servers.map((s) => this.connection(s));
    const now = Date.now();
    for (const c of conns) c.lastUsed = now;
    await this.closeIdle(new Set(conns));
    await Promise.all(conns.map((c) => this.ensure(c)));
    const tools: ToolDefinition[] = [];
    const problems: string[] = [];
    for (const c of conns) {
      if (c.error) problems.push(`MCP server "${c.entry.name}" (${c.entry.origin} settings) is not available: ${c.error}`);
      else tools.push(...(c.defs ??= c.tools.map((t) => this.definition(c, t))));
    }
    return { tools, problems };
  }

  /** Status of every server this worker has seen (for logs and tests). */
  status(): Array<{ name: string; origin: SettingsOrigin; connected: boolean; tools: number; error?: string }> {
    return [...this.connections.values()].map((c) => ({
      name: c.entry.name,
      origin: c.entry.origin,
      connected: !!c.client,
      tools: c.tools.length,
      error: c.error,
    }));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweep);
    await Promise.all([...this.connections.values()].map((c) => this.disconnect(c)));
    this.connections.clear();
  }

  /** Stop the workspace servers started for this conversation (it ended). */
  async closeConversation(conversationId: string): Promise<void> {
    const mine = [...this.connections.values()].filter((c) => c.entry.origin === 'workspace' && c.entry.conversationId === conversationId);
    for (const c of mine) this.connections.delete(c.key);
    await Promise.all(mine.map((c) => this.disconnect(c)));
  }

  private connection(entry: McpServerEntry): Connection {
    // A workspace's server is its conversation's, started under that conversation's sandbox mode.
    const scope = entry.origin === 'workspace' ? [entry.workspace, entry.conversationId ?? '', entry.readOnly === true] : [''];
    const key = JSON.stringify([entry.origin, ...scope, entry.name, entry.config]);
    let c = this.connections.get(key);
    if (!c) {
      c = { key, entry, tools: [], stderr: '', lastUsed: Date.now() };
      this.connections.set(key, c);
    }
    return c;
  }

  /** A worker serves many workspaces over its life: close the servers of those no longer in use. */
  private async closeIdle(inUse: Set<Connection>): Promise<void> {
    const idleMs = (this.opts.idleCloseSec ?? 600) * 1000;
    const idle = [...this.connections.values()].filter((c) => c.entry.origin === 'workspace' && !inUse.has(c) && Date.now() - c.lastUsed > idleMs);
    for (const c of idle) this.connections.delete(c.key);
    await Promise.all(idle.map((c) => this.disconnect(c)));
  }

  private async ensure(c: Connection): Promise<void> {
    if (c.client) return;
    if (c.connecting) return c.connecting;
    const retryAfter = (this.opts.retryAfterSec ?? 30) * 1000;
    if (c.error && c.failedAt && Date.now() - c.failedAt < retryAfter) return;
    c.connecting = this.connect(c).finally(() => {
      c.connecting = undefined;
    });
    return c.connecting;
  }

  private async connect(c: Connection): Promise<void> {
    if (this.closed) throw new Error('the MCP connections of this worker are closed');
    const { entry } = c;
    const timeoutMs = Math.min(entry.config.timeout ?? this.opts.startTimeoutSec ?? 30, MAX_MCP_START_SEC) * 1000;
    c.stderr = '';
    let transport: Transport;
    try {
      transport = this.transport(c);
    } catch (err) {
      c.error = (err as Error).message;
      c.failedAt = Date.now();
      log.warn({ server: entry.name, origin: entry.origin, err: c.error }, 'MCP server not started');
      return;
    }
    const client = new Client({ name: 'agentrun', version: '0.1.0' });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`it did not answer within ${timeoutMs / 1000}s of starting; check the command or raise "timeout" in its settings`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([
        (async () => {
          await client.connect(transport, { timeout: timeoutMs });
          const tools: McpTool[] = [];
          let cursor: string | undefined;
          do {
            const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
            tools.push(...(page.tools as McpTool[]));
            cursor = page.nextCursor;
          } while (cursor);
          c.tools = tools;
          c.defs = undefined;
        })(),
        timeout,
      ]);
      // A dropped connection is reopened on next use.
      client.onclose = () => {
        if (c.client === client) {
          c.client = undefined;
          this.cleanup(c);
          log.warn({ server: entry.name }, 'MCP server connection closed; it is reopened on next use');
        }
      };
      c.client = client;
      c.error = undefined;
      c.failedAt = undefined;
      log.info({ server: entry.name, origin: entry.origin, tools: c.tools.length }, 'MCP server connected');
    } catch (err) {
      await client.close().catch(() => {});
      await transport.close().catch(() => {});
      this.cleanup(c);
      const stderr = c.stderr.trim().split('\n').slice(-3).join(' | ');
      c.error = `${describeError(err)}${stderr ? ` (stderr: ${stderr.slice(0, 500)})` : ''}`;
      c.failedAt = Date.now();
      c.tools = [];
      log.warn({ server: entry.name, origin: entry.origin, err: c.error }, 'MCP server did not start');
    } finally {
      clearTimeout(timer);
    }
  }

  private transport(c: Connection): Transport {
    const { config, origin, workspace } = c.entry;
    if ('url' in config) {
      if (origin === 'workspace' && !this.opts.trustWorkspaceCommands) {
        // The worker's network is not the sandbox's: a repository must not make the worker call inside it.
        throw new Error(
          `it comes from the workspace's .agentrun/settings.json and would connect from the worker's network; move it to the operator's settings.json in AGENTRUN_HOME or run the worker with trustWorkspaceCommands`,
        );
      }
      const expand = origin === 'operator' ? expandEnv : (v: string) => v;
      const headers = Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k, expand(v)]));
      return new StreamableHTTPClientTransport(new URL(expand(config.url)), { requestInit: { headers } });
    }
    const spec: CommandSpec = prepareCommand(
      { command: config.command, args: config.args, env: config.env, cwd: config.cwd ?? (origin === 'workspace' ? workspace : undefined) },
      { origin, workspace, what: `MCP server "${c.entry.name}"`, readOnly: c.entry.readOnly },
      this.opts,
    );
    c.cleanup = spec.cleanup;
    const transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, cwd: spec.cwd, stderr: 'pipe' });
    transport.stderr?.on('data', (d: Buffer) => {
      c.stderr = (c.stderr + d.toString()).slice(-4000);
    });
    return transport;
  }

  private async disconnect(c: Connection): Promise<void> {
    const client = c.client;
    c.client = undefined;
    await client?.close().catch(() => {});
    this.cleanup(c);
  }

  private cleanup(c: Connection): void {
    const cleanup = c.cleanup;
    c.cleanup = undefined;
    cleanup?.();
  }

  /** A repository cannot vouch for its own servers: only the operator's settings (and code) may trust one. */
  private trusted(c: Connection): boolean {
    return c.entry.origin === 'operator' && c.entry.config.trust === true;
  }

  private definition(c: Connection, t: McpTool): ToolDefinition {
    const name = mcpToolName(c.entry.name, t.name);
    const schema: JsonSchema = { ...t.inputSchema, type: 'object', properties: t.inputSchema.properties ?? {} };
    const readOnly = t.annotations?.readOnlyHint === true;
    return {
      name,
      description: `${t.description?.trim() || t.annotations?.title || t.name} (tool "${t.name}" of MCP server "${c.entry.name}")`,
      schema: zodFromJsonSchema(schema),
      jsonSchema: schema,
      // Without the server's word that it only reads, a call may have effects beyond the workspace.
      kind: readOnly ? 'read' : 'network',
      example: xmlExample(name, schema),
      repeatable: readOnly || t.annotations?.idempotentHint === true,
      ...(readOnly || this.trusted(c)
        ? {}
        : {
            approvalReason: `${name} is an MCP tool that may have effects: server "${c.entry.name}" does not mark "${t.name}" read-only (set "trust": true on the server in the operator's settings.json to run its tools without asking)`,
          }),
      run: (args, ctx) =>
        withHeartbeat(ctx.heartbeat, async () => {
          await this.ensure(c);
          if (!c.client) return { ok: false, output: `Error: MCP server "${c.entry.name}" is not available: ${c.error ?? 'not connected'}` };
          try {
            const r = await c.client.callTool({ name: t.name, arguments: args }, undefined, {
              signal: ctx.signal,
              timeout: (this.opts.callTimeoutSec ?? 300) * 1000,
            });
            return callResult(r as CallResult);
          } catch (err) {
            return { ok: false, output: `Error: ${name} failed: ${describeError(err)}`, meta: { error: true } };
          }
        }),
    };
  }
}

interface CallResult {
  content?: Array<{
    type: string;
    text?: string;
    mimeType?: string;
    resource?: { uri: string; text?: string; mimeType?: string };
    uri?: string;
    name?: string;
  }>;
  structuredContent?: unknown;
  isError?: boolean;
  toolResult?: unknown;
}

/** What the model sees of an MCP tool result: its text parts, and a line for each other part. */
function callResult(r: CallResult): ToolResult {
  const parts: string[] = [];
  for (const p of r.content ?? []) {
    if (p.type === 'text') parts.push(p.text ?? '');
    else if (p.type === 'resource' && p.resource?.text !== undefined) parts.push(`[resource ${p.resource.uri}]\n${p.resource.text}`);
    else if (p.type === 'resource' && p.resource) parts.push(`[resource ${p.resource.uri}${p.resource.mimeType ? ` (${p.resource.mimeType})` : ''}]`);
    else if (p.type === 'resource_link') parts.push(`[resource link ${p.uri}${p.name ? ` (${p.name})` : ''}]`);
    else parts.push(`[${p.type}${p.mimeType ? ` ${p.mimeType}` : ''} content not shown]`);
  }
  if (!parts.length && r.structuredContent !== undefined) parts.push(JSON.stringify(r.structuredContent, null, 2));
  if (!parts.length && r.toolResult !== undefined) parts.push(JSON.stringify(r.toolResult, null, 2));
  const output = parts.join('\n') || '(the tool returned no content)';
  return r.isError ? { ok: false, output: `Error: ${output}`, meta: { error: true } } : { ok: true, output };
}

function describeError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return `its command was not found (${e.message})`;
  const message = e instanceof Error ? e.message : String(err);
  return message.split('\n')[0]!;
}
