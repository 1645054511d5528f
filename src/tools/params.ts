// zod helpers for tool parameters. XML tool calls deliver every value as a string, native calls
// deliver JSON; these accept both and keep the JSON Schema (io: 'input') honest about the type.
import { z } from 'zod';

const TRUE = new Set(['true', 'yes', '1', 'on']);
const FALSE = new Set(['false', 'no', '0', 'off']);

/** A boolean given as true/false or "true"/"false"/"yes"/"no". Not z.coerce.boolean: that makes "false" true. */
export function boolParam(description: string) {
  return z
    .preprocess(
      (v) => {
        if (typeof v !== 'string') return v;
        const s = v.trim().toLowerCase();
        if (TRUE.has(s)) return true;
        if (FALSE.has(s)) return false;
        return v;
      },
      z.boolean({ error: 'expected true or false' }),
    )
    .describe(description);
}

/** An integer given as a number or a decimal string. */
export function intParam(description: string, min: number, max: number) {
  return z
    .preprocess(
      (v) => (typeof v === 'string' && /^\s*[-+]?\d+\s*$/.test(v) ? Number(v.trim()) : v),
      z
        .number({ error: `expected a whole number between ${min} and ${max}` })
        .int({ error: `expected a whole number between ${min} and ${max}` })
        .min(min, { error: `expected a whole number >= ${min}` })
        .max(max, { error: `expected a whole number <= ${max}` }),
    )
    .describe(description);
}

/** A workspace-relative path; XML often wraps values in newlines, so it is trimmed. */
export function pathParam(description: string) {
  return z.string({ error: 'expected a path relative to the workspace root' }).trim().min(1, { error: 'expected a non-empty path' }).describe(description);
}

/**
 * A list of strings given as a JSON array, or as a string in XML: a JSON array string
 * (`["a","b"]`) or one item per line.
 */
export function stringListParam(description: string) {
  return z
    .preprocess(
      (v) => {
        if (typeof v !== 'string') return v;
        const s = v.trim();
        if (s.startsWith('[')) {
          try {
            return JSON.parse(s) as unknown;
          } catch {
            return v; // reported by the array schema below
          }
        }
        return s
          .split('\n')
          .map((l) => l.replace(/^\s*(?:[-*]|\d+[.)])\s+/, '').trim())
          .filter((l) => l.length > 0);
      },
      z.array(z.string(), { error: 'expected a JSON array of strings, e.g. ["yes","no"]' }),
    )
    .describe(description);
}
