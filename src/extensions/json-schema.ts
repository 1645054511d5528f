// Tool parameters described by JSON Schema (MCP servers) as a zod schema the tool registry can
// validate with. XML tool calls deliver every value as a string, so each top-level parameter
// first turns a string into the number, boolean, array or object its schema asks for.
import { z } from 'zod';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  [k: string]: unknown;
}

const TRUE = new Set(['true', 'yes', '1', 'on']);
const FALSE = new Set(['false', 'no', '0', 'off']);

function typesOf(s: JsonSchema): string[] {
  return Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
}

/** A string from an XML call, read as the type the schema wants; anything else passes unchanged. */
export function coerceXmlValue(value: unknown, schema: JsonSchema): unknown {
  if (typeof value !== 'string') return value;
  const types = typesOf(schema);
  if (types.includes('string') || !types.length) return value;
  const s = value.trim();
  if ((types.includes('integer') || types.includes('number')) && /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(s)) return Number(s);
  if (types.includes('boolean')) {
    if (TRUE.has(s.toLowerCase())) return true;
    if (FALSE.has(s.toLowerCase())) return false;
  }
  if (types.includes('array') || types.includes('object')) {
    try {
      return JSON.parse(s) as unknown;
    } catch {
      return value; // the schema reports the wrong type
    }
  }
  if (types.includes('null') && s === 'null') return null;
  return value;
}

function valueSchema(schema: JsonSchema): z.ZodType {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    // A schema zod cannot read (exotic keywords): the server validates the value itself.
    return z.unknown();
  }
}

/** A zod object for a tool's `inputSchema` (an object schema), coercing XML strings per parameter. */
export function zodFromJsonSchema(schema: JsonSchema): z.ZodObject {
  const required = new Set(schema.required ?? []);
  const shape: Record<string, z.ZodType> = {};
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    let field: z.ZodType = z.preprocess((v) => coerceXmlValue(v, prop), valueSchema(prop));
    if (prop.description) field = field.describe(prop.description);
    shape[key] = required.has(key) ? field : field.optional();
  }
  return z.object(shape);
}

/** An XML usage example from a JSON Schema: each required parameter with a placeholder. */
export function xmlExample(toolName: string, schema: JsonSchema): string {
  const props = schema.properties ?? {};
  const keys = Object.keys(props).filter((k) => (schema.required ?? []).includes(k));
  const value = (k: string, p: JsonSchema): string => {
    const t = typesOf(p)[0];
    if (Array.isArray(p.enum) && p.enum.length) return String(p.enum[0]);
    if (t === 'integer' || t === 'number') return '1';
    if (t === 'boolean') return 'true';
    if (t === 'array') return '["…"]';
    if (t === 'object') return '{"…": "…"}';
    return `${k.replace(/_/g, ' ')} here`;
  };
  return [`<${toolName}>`, ...keys.map((k) => `<${k}>${value(k, props[k]!)}</${k}>`), `</${toolName}>`].join('\n');
}
