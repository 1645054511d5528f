// Tool contracts. Tools run inside Temporal activities (Node APIs allowed), never in workflow code.
import type { ToolResult } from '../types.js';
import type { z } from 'zod';
import type { ConnectionRecord } from '../sandbox/proxy.js';
import type { CommandLimits, SandboxSettings } from '../sandbox/index.js';

/** What a call may do, decided once as it is parsed (src/tools/safety.ts callSafety). */
export interface CallSafety {
  /** The command, or the file it writes, needs a person under the `dangerous` approval policy. */
  dangerous: boolean;
  reasons: string[];
  /** May run again when a crash cut it off (the ledger); otherwise it is answered as interrupted. */
  repeatable: boolean;
}

export interface ToolContext {
  /** Absolute path of the workspace root (a git repository). */
  workspace: string;
  /** Cancellation: aborting kills the running command's process group. */
  signal?: AbortSignal;
  /** Called periodically during long work (commands) so the activity heartbeats. */
  heartbeat?: (detail?: unknown) => void;
  /** Where `--env NAME` values are looked up (default: the worker's environment). Commands get an allowlist only. */
  env?: NodeJS.ProcessEnv;
  /** The command sandbox (default: workspace-write, network off). */
  sandbox?: SandboxSettings;
  /** Per-command resource limits (default: DEFAULT_LIMITS). */
  limits?: CommandLimits;
  /** Records each connection a command makes through the egress proxy (with the conversation; default: not recorded). */
  recordConnection?: (r: ConnectionRecord) => void;
  /** The conversation's tenant: a command's egress connections count toward its cap (src/sandbox/proxy.ts). */
  tenant?: string;
  /** What the call was classified as when it was parsed (src/tools/safety.ts): a tool takes it instead of checking again. */
  safety?: CallSafety;
}

export type { ToolResult } from '../types.js';

/**
 * What a tool does, the one vocabulary of tools: `read` only reads; `edit` changes the workspace's
 * files; `execute` runs commands; `network` has effects beyond the workspace (extension tools);
 * `control` is answered by the workflow itself (a question, the completion, the plan, a delegation).
 */
export type ToolKind = 'read' | 'edit' | 'execute' | 'network' | 'control';
export const TOOL_KINDS: readonly ToolKind[] = ['read', 'edit', 'execute', 'network', 'control'];

/** Only reads: runs beside other reads, offered in plan mode. */
export function readsOnly(tool: Pick<ToolDefinition, 'kind'>): boolean {
  return tool.kind === 'read';
}

/** Has effects (the workspace or beyond): approval under `--approval always`, a checkpoint after it. */
export function mutates(tool: Pick<ToolDefinition, 'kind'>): boolean {
  return tool.kind === 'edit' || tool.kind === 'execute' || tool.kind === 'network';
}

/** Answered by the workflow itself: it has no run(). */
export function answeredByWorkflow(tool: Pick<ToolDefinition, 'kind'>): boolean {
  return tool.kind === 'control';
}

export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  schema: S;
  /** What the tool does, in one word: the facts the policy decides on follow from it (readsOnly, mutates, answeredByWorkflow). */
  kind: ToolKind;
  /** An XML usage example for the prompt. */
  example: string;
  /** The exact JSON Schema for native calls, when the tool came with one (MCP); else derived from `schema`. */
  jsonSchema?: Record<string, unknown>;
  /** false: a call interrupted by a crash is reported as interrupted, not run again (extension tools with effects). */
  repeatable?: boolean;
  /**
   * Set: every call needs a person's approval under the default `dangerous` policy, for this reason
   * (extension tools whose effects reach beyond the workspace, which the command checker cannot see).
   */
  approvalReason?: string;
  run?(args: z.output<S>, ctx: ToolContext): Promise<ToolResult>;
  // ── what a call of this tool is, for those that show or decide on it (its own facts, kept here) ──
  /** The arguments a call is about, first present wins (its target and preview); absent: DEFAULT_ABOUT. */
  about?: readonly string[];
  /** Control tools: the argument the workflow reads (the question, the completion's result, the plan, the todos). */
  workflowText?: string;
  /** A call as one readable line (`read_file a.ts (lines 3–9)`), when more than `name target` says. */
  line?(args: Record<string, unknown>): string;
  /** The edits a call makes, as search → replace text (search '' for a whole new file), for a diff. */
  edits?(args: Record<string, unknown>): { search: string; replace: string }[] | undefined;
  /** The result is a command's: an exit status, then its output (shown as head and tail). */
  commandResult?: boolean;
  /**
   * What a call may do, when the tool judges it itself (a command's danger): else the generic check
   * (safety.ts). `unsandboxed`: the conversation's commands run without the sandbox (`--sandbox off`).
   */
  classify?(args: Record<string, unknown>, workspace: string, unsandboxed: boolean): CallSafety | undefined;
}

/** A call's target when its tool names no `about`: the first of these arguments it has. */
export const DEFAULT_ABOUT: readonly string[] = ['path', 'command', 'regex', 'question', 'result'];

/** A write computed before it is done, so the ledger can record its intent (principle 3, docs/architecture.md). */
export interface PreparedWrite {
  /** Workspace-relative path (forward slashes), as recorded in the ledger. */
  path: string;
  newContent: string;
  /** sha256 of the current file, null when it does not exist. */
  beforeHash: string | null;
  afterHash: string;
  /** The result text once applied. */
  message: string;
  meta?: Record<string, unknown>;
}

/** A tool whose effect is one atomic whole-file write, prepared first and applied second. */
export interface FileWriteTool<S extends z.ZodObject = z.ZodObject> extends ToolDefinition<S> {
  prepare(args: z.output<S>, ctx: ToolContext): Promise<PreparedWrite>;
  apply(prepared: PreparedWrite, ctx: ToolContext): Promise<ToolResult>;
}

export function isFileWriteTool(t: ToolDefinition): t is FileWriteTool {
  return typeof (t as Partial<FileWriteTool>).prepare === 'function' && typeof (t as Partial<FileWriteTool>).apply === 'function';
}

export { ToolError } from '../workspace/tool-error.js';
