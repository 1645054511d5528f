// Project rules: AGENTS.md at the workspace root (always applies) and rule files with YAML front
// matter (`description`, `globs`, `alwaysApply`) in `.agentrun/rules/` and, as in the seed,
// `.autocoderrules/`. Read fresh every turn, so edits to the rules take effect on the next turn.
import { realpath } from 'node:fs/promises';
import { readTreeDir, readTreeFile } from '../workspace/beneath.js';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

export interface Rule {
  /** Path relative to the workspace, `/`-separated. */
  file: string;
  description?: string;
  globs?: string[];
  alwaysApply: boolean;
  body: string;
  /** Set when the front matter could not be read; the rule is then applied always, body as found. */
  warning?: string;
}

const RULE_DIRS = ['.agentrun/rules', '.autocoderrules'] as const;
/** A rules file larger than this is cut: rules ride along in every request. */
const MAX_RULE_CHARS = 32 * 1024;

const frontMatterSchema = z
  .object({
    description: z.string().optional(),
    // Cursor-style rules write globs as one comma-separated string.
    globs: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .transform((g) => (g === undefined ? undefined : (Array.isArray(g) ? g : g.split(',')).map((s) => s.trim()).filter(Boolean))),
    alwaysApply: z.boolean().optional(),
  })
  .passthrough();

export const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

function capped(body: string, file: string): string {
  if (body.length <= MAX_RULE_CHARS) return body;
  return `${body.slice(0, MAX_RULE_CHARS)}\n[… ${body.length - MAX_RULE_CHARS} more characters; read ${file} for the rest]`;
}

/** Parse one rule file's text. Exported for tests and for tools that preview rules. */
export function parseRule(file: string, text: string, alwaysApplyDefault = false): Rule {
  const m = FRONT_MATTER.exec(text);
  // Without front matter there is nothing to choose the rule by: it always applies.
  if (!m) return { file, alwaysApply: true, body: capped(text.trim(), file) };
  const body = capped(text.slice(m[0].length).trim(), file);
  let data: unknown;
  try {
    data = parseYaml(m[1]!) ?? {};
  } catch (err) {
    return { file, alwaysApply: true, body, warning: `front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}` };
  }
  const parsed = frontMatterSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { file, alwaysApply: true, body, warning: `front matter: ${issue ? `${issue.path.join('.') || 'value'}: ${issue.message}` : 'invalid'}` };
  }
  const { description, globs, alwaysApply } = parsed.data;
  return {
    file,
    ...(description?.trim() ? { description: description.trim() } : {}),
    ...(globs?.length ? { globs } : {}),
    // A rule with neither globs nor a description could never be chosen: apply it always.
    alwaysApply: alwaysApply ?? (!globs?.length && !description?.trim() ? true : alwaysApplyDefault),
    body,
  };
}

/** A rules or agent file larger than this is read only this far (what is used is capped far below). */
const MAX_RULE_FILE_BYTES = 1024 * 1024;

/**
 * Reads `rel` beneath `root` if it is a regular file there (through symlinks that stay inside;
 * never a FIFO or device, which would block the worker's file I/O), at most MAX_RULE_FILE_BYTES.
 */
export async function readConfined(root: string, rel: string): Promise<string | undefined> {
  return readTreeFile(root, rel, MAX_RULE_FILE_BYTES);
}

export async function loadRules(workspace: string): Promise<Rule[]> {
  const root = await realpath(workspace);
  const rules: Rule[] = [];
  const agents = await readConfined(root, 'AGENTS.md');
  if (agents !== undefined && agents.trim()) {
    // AGENTS.md is plain Markdown by convention; front matter, if any, is honoured but it always applies.
    rules.push({ ...parseRule('AGENTS.md', agents, true), alwaysApply: true });
  }
  for (const dir of RULE_DIRS) {
    const names = await readTreeDir(root, dir);
    if (!names) continue;
    // Sorted: the prompt must be the same for the same files.
    for (const name of names.filter((n) => n.toLowerCase().endsWith('.md')).sort()) {
      const rel = `${dir}/${name}`;
      const text = await readConfined(root, rel);
      if (text === undefined || !text.trim()) continue;
      rules.push(parseRule(rel, text));
    }
  }
  return rules;
}
