// Sub-agent definitions, as in Claude Code: `.agentrun/agents/<name>.md`, YAML front matter
// (`description`, `tools`, `model`, `max_turns`) and the body as the agent's system prompt.
// Parsing, and the tools offered around agents (`delegate`, a sub-agent's own tool list); running
// an agent as a child workflow is the workflow's business (workflows/session/delegate.ts).
import { realpath } from 'node:fs/promises';
import { readTreeDir } from '../workspace/beneath.js';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { RunConfig } from '../config.js';
import { FRONT_MATTER, readConfined } from '../context/rules.js';
import { delegate } from '../tools/delegate.js';
import { allTools, getTool, readsOnly, toolNames, type ToolDefinition } from '../tools/index.js';

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
  if (fm.name !== undefined && fm.name !== name)
    throw new AgentDefinitionError(`${file}: name: "${fm.name}" differs from the file name "${name}"; rename one of them`);
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

/** The agents of one directory (`dir` under `root`), files labelled `${label}/<name>.md`. */
async function loadDir(root: string, dir: string, label: string): Promise<LoadedAgents> {
  const names = await readTreeDir(root, dir);
  if (!names) return { agents: [], problems: [] };
  const agents: AgentDefinition[] = [];
  const problems: string[] = [];
  for (const entry of names.filter((n) => n.endsWith('.md')).sort()) {
    const text = await readConfined(root, `${dir}/${entry}`);
    if (text === undefined) continue;
    try {
      agents.push(parseAgentDefinition(entry.slice(0, -3), `${label}/${entry}`, text));
    } catch (err) {
      if (!(err instanceof AgentDefinitionError)) throw err;
      problems.push(err.message);
    }
  }
  return { agents, problems };
}

/**
 * Every agent of the workspace, and the operator's in `$AGENTRUN_HOME/agents/` when `home` is
 * given (a workspace agent of the same name wins), sorted by name; broken files are reported, not fatal.
 */
export async function loadAgents(workspace: string, home?: string): Promise<LoadedAgents> {
  return withOperatorAgents(await loadDir(await realpath(workspace), AGENTS_DIR, AGENTS_DIR), home);
}

/** The agents of files already read (a repository's, as kept at its conversation's start), and the operator's. */
export async function agentsFromFiles(files: ReadonlyArray<{ name: string; text: string }>, home?: string): Promise<LoadedAgents> {
  const own: LoadedAgents = { agents: [], problems: [] };
  for (const f of [...files].sort((a, b) => a.name.localeCompare(b.name))) {
    try {
      own.agents.push(parseAgentDefinition(f.name, `${AGENTS_DIR}/${f.name}.md`, f.text));
    } catch (err) {
      if (!(err instanceof AgentDefinitionError)) throw err;
      own.problems.push(err.message);
    }
  }
  return withOperatorAgents(own, home);
}

async function withOperatorAgents(own: LoadedAgents, home: string | undefined): Promise<LoadedAgents> {
  if (home === undefined) return own;
  const root = await realpath(home).catch(() => undefined);
  const operator = root ? await loadDir(root, 'agents', '$AGENTRUN_HOME/agents') : { agents: [], problems: [] };
  const names = new Set(own.agents.map((a) => a.name));
  const agents = [...own.agents, ...operator.agents.filter((a) => !names.has(a.name))].sort((a, b) => a.name.localeCompare(b.name));
  return { agents, problems: [...own.problems, ...operator.problems] };
}

/** One agent of a loaded set; an unknown name is an error that lists the agents there are. */
export function findAgent({ agents, problems }: LoadedAgents, name: string): AgentDefinition {
  const found = agents.find((a) => a.name === name);
  if (found) return found;
  const broken = problems.find((p) => p.includes(`/${name}.md:`));
  if (broken) throw new AgentDefinitionError(broken);
  const known = agents.map((a) => a.name);
  throw new AgentDefinitionError(
    `there is no agent named "${name}"; ${known.length ? `the agents of this workspace are: ${known.join(', ')}` : `this workspace defines none (add ${AGENTS_DIR}/${name}.md)`}`,
  );
}

/** One agent by name; an unknown name is an error that lists the agents there are. */
export async function getAgent(workspace: string, name: string, home?: string): Promise<AgentDefinition> {
  return findAgent(await loadAgents(workspace, home), name);
}

// ── agents as tools (the `delegate` tool, workflows/session/delegate.ts) ──────────────────────────────

/** Claude Code's tool names, so its agent files work here unchanged. */
const CLAUDE_TOOL_NAMES: Record<string, string> = {
  Read: 'read_file',
  Write: 'write_to_file',
  Edit: 'replace_in_file',
  MultiEdit: 'replace_in_file',
  Grep: 'search_files',
  Glob: 'list_files',
  LS: 'list_files',
  Bash: 'execute_command',
  TodoWrite: 'todo_write',
};

/** Tools a sub-agent never gets: it cannot ask the user (nobody watches it) nor delegate again (depth 1). */
const NOT_FOR_SUBAGENTS = new Set(['ask_followup_question', 'plan_mode_respond', delegate.name]);
/** Control tools every sub-agent keeps, whatever its `tools` list says. */
const ALWAYS_FOR_SUBAGENTS = ['attempt_completion', 'todo_write', 'todo_read', 'conversation_message_ids_write'];

/** An agent's `tools` as tool names of this worker; undefined: every tool of the parent. */
export function resolveAgentTools(agent: AgentDefinition): string[] | undefined {
  if (!agent.tools) return undefined;
  const names = agent.tools.map((t) => CLAUDE_TOOL_NAMES[t] ?? t);
  const unknown = names.filter((n) => !getTool(n));
  if (unknown.length)
    throw new AgentDefinitionError(
      `${agent.file}: tools: no tool named ${unknown.join(', ')} (known: ${toolNames()
        .filter((n) => !NOT_FOR_SUBAGENTS.has(n))
        .join(', ')})`,
    );
  return [...new Set(names.filter((n) => !NOT_FOR_SUBAGENTS.has(n)))];
}

const isReadTool = (t: ToolDefinition | undefined) => t !== undefined && readsOnly(t);

/** Read-only: every tool it may use only reads (such agents may run side by side). */
export function isReadOnlyAgent(tools: string[] | undefined): boolean {
  return tools !== undefined && tools.every((n) => isReadTool(getTool(n)) || ALWAYS_FOR_SUBAGENTS.includes(n));
}

/** The `delegate` tool with the agents in its description. */
export function delegateToolFor(agents: AgentDefinition[]): ToolDefinition {
  const list = agents.map((a) => `- ${a.name}: ${a.description.replace(/\s+/g, ' ')}${isReadOnlyAgent(resolveQuietly(a)) ? ' (read-only)' : ''}`).join('\n');
  return {
    ...delegate,
    description: `${delegate.description} Several delegate calls in one reply run side by side when their agents are read-only; the others run one after another. The agents:\n${list}`,
  } as ToolDefinition;
}

function resolveQuietly(a: AgentDefinition): string[] | undefined {
  try {
    return resolveAgentTools(a);
  } catch {
    return undefined;
  }
}

/**
 * The tools offered to the model of a conversation: every tool, with `delegate` only when there
 * are agents (and listing them), and for a sub-agent only its own tools.
 */
export function offeredTools(config: Pick<RunConfig, 'agent'>, agents: AgentDefinition[]): ToolDefinition[] {
  const all = allTools();
  if (config.agent) {
    const allowed = config.agent.tools ? new Set([...config.agent.tools, ...ALWAYS_FOR_SUBAGENTS]) : undefined;
    return all.filter((t) => !NOT_FOR_SUBAGENTS.has(t.name) && (!allowed || allowed.has(t.name)));
  }
  return agents.length ? all.map((t) => (t.name === delegate.name ? delegateToolFor(agents) : t)) : all.filter((t) => t.name !== delegate.name);
}

/** Why a call may not run in this conversation (a sub-agent's tool outside its list), if it may not. */
export function refusedTool(config: Pick<RunConfig, 'agent'>, name: string): string | undefined {
  if (!config.agent) return undefined;
  if (name === delegate.name)
    return `delegate is not available to a sub-agent: agents do not start agents of their own (one level only). Do the work with your own tools and report with attempt_completion.`;
  if (NOT_FOR_SUBAGENTS.has(name)) return `${name} is not available to a sub-agent: nobody answers it. Report what you lack in your attempt_completion result.`;
  if (config.agent.tools && !config.agent.tools.includes(name) && !ALWAYS_FOR_SUBAGENTS.includes(name)) {
    return `${name} is not one of the tools of the agent "${config.agent.name}": use ${[...config.agent.tools, 'attempt_completion'].join(', ')}.`;
  }
  return undefined;
}
