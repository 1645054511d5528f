// Custom tools: `defineTool({ name, description, schema, kind, run })`. The zod schema gives the
// XML usage text and the JSON Schema exactly as for the built-in tools; `kind` places the tool in
// the approval policy; a `run` that throws becomes an error result the model sees.
import { z } from 'zod';
import { coerceXmlValue, xmlExample, type JsonSchema } from './json-schema.js';
import { executeCommandTool } from '../tools/execute-command.js';
import { TOOL_NAMES } from '../tools/builtin.js';
import { TOOL_KINDS, type ToolContext, type ToolDefinition, type ToolKind, type ToolResult } from '../tools/types.js';

/** The kinds an extension tool may have: every one but `control` (the workflow's own answers). */
export type CustomToolKind = Exclude<ToolKind, 'control'>;
const CUSTOM_KINDS = TOOL_KINDS.filter((k): k is CustomToolKind => k !== 'control');

export interface CustomToolSpec<S extends z.ZodObject> {
  /** Letters, digits and "_" (it is an XML tag and a function name); must not be a built-in's name. */
  name: string;
  description: string;
  schema: S;
  /**
   * read: no effects (may run in parallel, allowed in plan mode); edit: changes the workspace
   * (approval under `--approval always`); execute/network: effects beyond the workspace (approval
   * under the default `dangerous` policy too, unless `needsApproval: false`).
   */
  kind: CustomToolKind;
  /** Ask a person before each call under the default policy (default: true for execute and network). */
  needsApproval?: boolean;
  /** An XML usage example for the prompt; one is made from the schema when absent. */
  example?: string;
  /** Repeat the call after a worker crash interrupted it (default: only for `read`). */
  repeatable?: boolean;
  /** The text the model sees, or a full result. */
  run(args: z.output<S>, ctx: CustomToolContext): Promise<string | ToolResult> | string | ToolResult;
}

/** What a custom tool's `run` gets: the call's context, and a way to run commands as execute_command does. */
export interface CustomToolContext extends ToolContext {
  /**
   * Run a shell command in the workspace exactly as execute_command runs it: inside the command
   * sandbox of the conversation, with its limits, timeout, heartbeats and cancellation. A tool's
   * own code runs in the worker; the commands it starts should go through here.
   */
  exec(command: string, opts?: { timeoutSec?: number }): Promise<ToolResult & { exitCode: number | null }>;
}

function customContext(ctx: ToolContext): CustomToolContext {
  return {
    ...ctx,
    exec: async (command, opts) => {
      // The tool's own command, not the call: it is checked on its own (safety: undefined).
      const r = await executeCommandTool(
        { command, requires_approval: false, ...(opts?.timeoutSec ? { timeout_seconds: opts.timeoutSec } : {}) },
        { ...ctx, safety: undefined },
      );
      return { ...r, exitCode: (r.meta?.exitCode as number | null | undefined) ?? null };
    },
  };
}

/** A tool that cannot be registered: a clash with a built-in, a bad name or kind. */
export class ToolDefinitionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolDefinitionError';
  }
}

const NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
export const MCP_PREFIX = 'mcp__';

function checkToolName(name: string, taken: Iterable<string> = []): void {
  if (!NAME.test(name)) throw new ToolDefinitionError(`tool name "${name}" is not usable: use a letter, then letters, digits or "_" (at most 64 characters)`);
  if (TOOL_NAMES.includes(name)) throw new ToolDefinitionError(`tool name "${name}" clashes with the built-in tool of that name; choose another name`);
  if (name.startsWith(MCP_PREFIX))
    throw new ToolDefinitionError(`tool name "${name}" starts with "${MCP_PREFIX}", which is kept for MCP server tools; choose another name`);
  for (const t of taken) if (t === name) throw new ToolDefinitionError(`tool name "${name}" is registered twice; each tool needs its own name`);
}

const HEARTBEAT_MS = 2_000;

/**
 * Heartbeat while extension code runs: it does not report progress itself, and the tool
 * activity's heartbeat timeout would otherwise take a slow call for a dead worker.
 */
export async function withHeartbeat<T>(beat: ((detail?: unknown) => void) | undefined, fn: () => Promise<T>): Promise<T> {
  if (!beat) return fn();
  const started = Date.now();
  beat({ elapsedMs: 0 });
  const timer = setInterval(() => beat({ elapsedMs: Date.now() - started }), HEARTBEAT_MS);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/** Turns whatever `run` did into a result: thrown errors are the model's to see, with the tool's name. */
async function guardedRun(name: string, run: () => Promise<string | ToolResult> | string | ToolResult): Promise<ToolResult> {
  try {
    const r = await run();
    return typeof r === 'string' ? { ok: true, output: r } : r;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, output: `Error: ${name} failed: ${message}`, meta: { error: true, threw: true } };
  }
}

function exampleFor<S extends z.ZodObject>(spec: CustomToolSpec<S>): string {
  return xmlExample(spec.name, z.toJSONSchema(spec.schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema);
}

export function defineTool<S extends z.ZodObject>(spec: CustomToolSpec<S>): ToolDefinition<S> {
  checkToolName(spec.name);
  if (!CUSTOM_KINDS.includes(spec.kind))
    throw new ToolDefinitionError(`tool "${spec.name}": kind must be one of ${CUSTOM_KINDS.join(', ')}, got "${String(spec.kind)}"`);
  if (!spec.description?.trim()) throw new ToolDefinitionError(`tool "${spec.name}" needs a description: the model chooses tools by it`);
  return {
    name: spec.name,
    description: spec.description,
    schema: acceptXmlStrings(spec.schema),
    kind: spec.kind,
    example: spec.example ?? exampleFor(spec),
    repeatable: spec.repeatable ?? spec.kind === 'read',
    ...((spec.needsApproval ?? (spec.kind === 'execute' || spec.kind === 'network'))
      ? { approvalReason: `${spec.name} is a custom ${spec.kind} tool: its effects reach beyond the workspace` }
      : {}),
    run: (args, ctx) => withHeartbeat(ctx.heartbeat, () => guardedRun(spec.name, () => spec.run(args, customContext(ctx)))),
  };
}

/**
 * XML calls deliver strings: each top-level parameter first reads a string as the number, boolean,
 * array or object its schema wants, so tool authors write plain zod (z.number(), z.array(…)).
 */
function acceptXmlStrings<S extends z.ZodObject>(schema: S): S {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const js = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    const optional = field.safeParse(undefined).success;
    const coerced = z.preprocess((v) => coerceXmlValue(v, js), field);
    shape[key] = optional ? coerced.optional() : coerced;
    if (field.description) shape[key] = shape[key]!.describe(field.description);
  }
  return z.object(shape) as unknown as S;
}

/** Check a worker's custom tools together (names unique, none clashing). */
export function checkCustomTools(tools: ToolDefinition[]): void {
  const seen: string[] = [];
  for (const t of tools) {
    checkToolName(t.name, seen);
    seen.push(t.name);
  }
}
