// Sub-agent definitions, as in Claude Code: `.agentrun/agents/<name>.md`, YAML front matter
// (`description`, `tools`, `model`, `max_turns`) and the body as the agent's system prompt.
// Parsing only; running an agent as a child workflow is the workflow's business.
import { readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { FRONT_MATTER, readConfined } from '../context/rules.js';

export const AGENTS_DIR = '.agentrun/agents';
const NAME = /^[a-z0-9][a-z0-9_-]*$/i;

export interface AgentDefinition {
  name: string;
  /** Workspace-relative file. */
  file: string;
  description: string;
  /** Tool names the agent may use; undefined: the parent's tools. */
  tools?: string[];
  /** Model spec; undefined: the parent's model. */
  model?: string;
  maxTurns?: number;
  systemPrompt: string;
}

const frontMatterSchema = z.strictObject({
  name: z.string().optional(),
  description: z.string({ error: 'is required: the parent chooses agents by it' }).trim().min(1, { error: 'is required: the parent chooses agents by it' }),
  // Claude Code writes `tools: Read, Grep`; a YAML list works too.
  tools: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((t) => (t === undefined ? undefined : (Array.isArray(t) ? t : t.split(',')).map((s) => s.trim()).filter(Boolean))),
  model: z.string().trim().min(1).optional(),
  max_turns: z.number().int().positive().optional(),
});

export class AgentDefinitionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentDefinitionError';
  }
}

/** Parse one agent file; errors name the file and the key. */
export function parseAgentDefinition(name: string, file: string, text: string): AgentDefinition {
  if (!NAME.test(name)) throw new AgentDefinitionError(`${file}: the agent name "${name}" (from the file name) must be letters, digits, "-" or "_"`);
  const m = FRONT_MATTER.exec(text);
  if (!m) throw new AgentDefinitionError(`${file}: no front matter; start the file with ---, a "description:" line, and --- before the system prompt`);
  let data: unknown;
  try {
    data = parseYaml(m[1]!) ?? {};
  } catch (err) {
    throw new AgentDefinitionError(`${file}: front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const parsed = frontMatterSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : issue.path.join('.');
    const detail = issue.code === 'unrecognized_keys' ? `unknown key (known: name, description, tools, model, max_turns)` : issue.message;
    throw new AgentDefinitionError(`${file}: ${key}: ${detail}`);
  }
  const fm = parsed.data;
  if (fm.name !== undefined && fm.name !== name) throw new AgentDefinitionError(`${file}: name: "${fm.name}" differs from the file name "${name}"; rename one of them`);
  const systemPrompt = text.slice(m[0].length).trim();
  if (!systemPrompt) throw new AgentDefinitionError(`${file}: the body (the agent's system prompt) is empty`);
  return {
    name,
    file,
    description: fm.description,
    ...(fm.tools ? { tools: fm.tools } : {}),
    ...(fm.model && fm.model !== 'inherit' ? { model: fm.model } : {}),
    ...(fm.max_turns ? { maxTurns: fm.max_turns } : {}),
    systemPrompt,
  };
}

export interface LoadedAgents {
  agents: AgentDefinition[];
  /** Files that could not be read, one clear line each. */
  problems: string[];
}

/** Every agent of the workspace, sorted by name; broken files are reported, not fatal. */
export async function loadAgents(workspace: string): Promise<LoadedAgents> {
  const root = await realpath(workspace);
  let names: string[];
  try {
    names = await readdir(join(root, AGENTS_DIR));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { agents: [], problems: [] };
    throw err;
  }
  const agents: AgentDefinition[] = [];
  const problems: string[] = [];
  for (const entry of names.filter((n) => n.endsWith('.md')).sort()) {
    const file = `${AGENTS_DIR}/${entry}`;
    const text = await readConfined(root, file);
    if (text === undefined) continue;
    try {
      agents.push(parseAgentDefinition(entry.slice(0, -3), file, text));
    } catch (err) {
      if (!(err instanceof AgentDefinitionError)) throw err;
      problems.push(err.message);
    }
  }
  return { agents, problems };
}

/** One agent by name; an unknown name is an error that lists the agents there are. */
export async function getAgent(workspace: string, name: string): Promise<AgentDefinition> {
  const { agents, problems } = await loadAgents(workspace);
  const found = agents.find((a) => a.name === name);
  if (found) return found;
  const broken = problems.find((p) => p.startsWith(`${AGENTS_DIR}/${name}.md:`));
  if (broken) throw new AgentDefinitionError(broken);
  const known = agents.map((a) => a.name);
  throw new AgentDefinitionError(`there is no agent named "${name}"; ${known.length ? `the agents of this workspace are: ${known.join(', ')}` : `this workspace defines none (add ${AGENTS_DIR}/${name}.md)`}`);
}
