// The tool registry: definitions, argument validation, and the two renderings of the same zod
// schemas (XML docs for the prompt, JSON Schema for native tool calls).
import { z } from 'zod';
import { extensionTools } from './scope.js';
import { BY_NAME, TOOLS } from './builtin.js';
import type { ToolDefinition } from './types.js';

export { TOOLS, TOOL_NAMES } from './builtin.js';

export function getTool(name: string): ToolDefinition | undefined {
  return BY_NAME.get(name) ?? extensionTools().find((t) => t.name === name);
}

/** The built-in tools plus the worker's extension tools (custom, MCP) for the running activity. */
export function allTools(): ToolDefinition[] {
  const extra = extensionTools();
  return extra.length ? [...TOOLS, ...extra] : TOOLS;
}

export function toolNames(): string[] {
  return allTools().map((t) => t.name);
}

interface JsonSchemaObject {
  type?: string;
  properties?: Record<string, { type?: string; description?: string; enum?: unknown[]; items?: unknown }>;
  required?: string[];
  [k: string]: unknown;
}

const schemaCache = new WeakMap<ToolDefinition, JsonSchemaObject>();

/** The JSON Schema of a tool's parameters, as the model should send them (input side of the zod schema). */
export function toolJsonSchema(tool: ToolDefinition): JsonSchemaObject {
  let js = schemaCache.get(tool);
  if (!js) {
    const raw = (tool.jsonSchema ?? z.toJSONSchema(tool.schema, { io: 'input', unrepresentable: 'any' })) as JsonSchemaObject;
    const { $schema: _drop, ...rest } = raw;
    void _drop;
    js = { ...rest, type: 'object', properties: rest.properties ?? {}, required: rest.required ?? [], additionalProperties: false };
    // zod writes Number.MAX_SAFE_INTEGER bounds for ints; they only add noise for the model.
    for (const p of Object.values(js.properties!)) {
      const q = p as Record<string, unknown>;
      if (q.maximum === Number.MAX_SAFE_INTEGER) delete q.maximum;
      if (q.minimum === Number.MIN_SAFE_INTEGER) delete q.minimum;
    }
    schemaCache.set(tool, js);
  }
  return js;
}

function paramList(tool: ToolDefinition): string {
  const js = toolJsonSchema(tool);
  const names = Object.keys(js.properties ?? {});
  if (!names.length) return 'none';
  return names.map((n) => `${n} (${js.required?.includes(n) ? 'required' : 'optional'})`).join(', ');
}

export function validateToolArgs(name: string, raw: Record<string, unknown>): { ok: true; args: Record<string, unknown> } | { ok: false; error: string } {
  const tool = getTool(name);
  if (!tool) return { ok: false, error: `There is no tool named "${name}". Available tools: ${toolNames().join(', ')}.` };
  const input = raw ?? {};
  const known = new Set(Object.keys(toolJsonSchema(tool).properties ?? {}));
  const problems: string[] = [];
  for (const k of Object.keys(input)) {
    if (!known.has(k)) problems.push(`Unknown parameter "${k}".`);
  }
  const r = tool.schema.safeParse(input);
  if (r.success && !problems.length) return { ok: true, args: r.data as Record<string, unknown> };
  if (!r.success) {
    for (const issue of r.error.issues) {
      const param = issue.path.length ? String(issue.path[0]) : undefined;
      const where = issue.path.length > 1 ? ` (at ${issue.path.join('.')})` : '';
      if (param !== undefined && issue.path.length === 1 && input[param] === undefined) problems.push(`Missing value for required parameter "${param}".`);
      else if (param !== undefined) problems.push(`Parameter "${param}"${where}: ${issue.message}.`);
      else problems.push(issue.message);
    }
  }
  return {
    ok: false,
    error: `Invalid arguments for ${name}: ${[...new Set(problems)].join(' ')}\nParameters of ${name}: ${paramList(tool)}.\nExample:\n${tool.example}`,
  };
}

function placeholder(name: string, p: { type?: string; enum?: unknown[] }): string {
  if (p.type === 'boolean') return 'true or false';
  if (p.type === 'integer' || p.type === 'number') return 'number';
  if (p.enum) return p.enum.join(' or ');
  if (p.type === 'array') return `${name.replace(/_/g, ' ')} as a JSON array`;
  return `${name.replace(/_/g, ' ')} here`;
}

/** Each tool's section of the docs, made once per definition: the system prompt is rebuilt every turn. */
const docsCache = new WeakMap<ToolDefinition, string>();

/** Seed-style tool docs for the system prompt: description, parameters, usage, example. */
export function renderXmlToolDocs(tools: ToolDefinition[] = allTools()): string {
  return tools.map((t) => docsCache.get(t) ?? docsCache.set(t, toolDocs(t)).get(t)!).join('\n\n');
}

function toolDocs(t: ToolDefinition): string {
  const js = toolJsonSchema(t);
  const props = js.properties ?? {};
  const names = Object.keys(props);
  const params = names.length
    ? names.map((n) => `- ${n}: (${js.required?.includes(n) ? 'required' : 'optional'}) ${props[n]!.description ?? ''}`.trimEnd()).join('\n')
    : '(none)';
  const usage = [
    `<${t.name}>`,
    ...names.map((n) => `<${n}>${placeholder(n, props[n]!)}${js.required?.includes(n) ? '' : ' (optional)'}</${n}>`),
    `</${t.name}>`,
  ].join('\n');
  return `## ${t.name}\nDescription: ${t.description}\nParameters:\n${params}\nUsage:\n${usage}\nExample:\n${t.example}`;
}

export function toOpenAITools(
  tools: ToolDefinition[] = allTools(),
): Array<{ type: 'function'; function: { name: string; description: string; parameters: object } }> {
  return tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: toolJsonSchema(t) } }));
}
