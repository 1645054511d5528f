// Sub-agents around the model: what `delegate` looks like to the model (snapshots of both
// formats), which tools a sub-agent gets, its budget, and how delegate calls are grouped.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../src/config.js';
import {
  delegateToolFor,
  isReadOnlyAgent,
  loadAgents,
  offeredTools,
  parseAgentDefinition,
  refusedTool,
  resolveAgentTools,
} from '../../src/extensions/agents.js';
import type { CallSummary } from '../../src/turn/calls.js';
import { renderXmlToolDocs, toOpenAITools, TOOL_NAMES } from '../../src/tools/index.js';
import { ZERO_USAGE } from '../../src/types.js';
import { childBudget } from '../../workflows/session/delegate.js';
import { groupCalls } from '../../workflows/session/policy.js';
import { tempDir } from '../helpers/temp.js';

const reviewer = parseAgentDefinition(
  'reviewer',
  '.agentrun/agents/reviewer.md',
  '---\ndescription: Reviews a change for bugs;\n  reports, changes nothing.\ntools: Read, Grep, Glob\n---\nReview.',
);
const fixer = parseAgentDefinition('fixer', '.agentrun/agents/fixer.md', '---\ndescription: Fixes failing tests.\nmax_turns: 10\n---\nFix.');
const config = (extra: object = {}) => runConfigSchema.parse({ model: 'gpt-4o', ...extra });

describe('the delegate tool as the model sees it', () => {
  it('lists the agents with their descriptions (XML docs)', async () => {
    await expect(renderXmlToolDocs([delegateToolFor([fixer, reviewer])])).toMatchFileSnapshot('__snapshots__/delegate-tool.xml.txt');
  });

  it('lists the agents with their descriptions (native tools)', async () => {
    await expect(JSON.stringify(toOpenAITools([delegateToolFor([fixer, reviewer])]), null, 2)).toMatchFileSnapshot('__snapshots__/delegate-tool.native.json');
  });

  it('is offered only when there are agents, and never to a sub-agent', () => {
    const names = (tools: { name: string }[]) => tools.map((t) => t.name);
    expect(names(offeredTools(config(), []))).toEqual(TOOL_NAMES.filter((n) => n !== 'delegate'));
    const withAgents = offeredTools(config(), [reviewer]);
    expect(names(withAgents)).toEqual(TOOL_NAMES);
    expect(withAgents.find((t) => t.name === 'delegate')!.description).toContain(
      '- reviewer: Reviews a change for bugs; reports, changes nothing. (read-only)',
    );
    const child = config({ agent: { name: 'reviewer', parentId: 'p', tools: resolveAgentTools(reviewer) } });
    expect(names(offeredTools(child, [reviewer]))).toEqual([
      'read_file',
      'search_files',
      'list_files',
      'attempt_completion',
      'todo_write',
      'todo_read',
      'conversation_message_ids_write',
    ]);
    // Without a tools list a sub-agent has the parent's tools, minus asking the user and delegating.
    const all = names(offeredTools(config({ agent: { name: 'fixer', parentId: 'p' } }), [fixer]));
    expect(all).toEqual(TOOL_NAMES.filter((n) => !['ask_followup_question', 'plan_mode_respond', 'delegate'].includes(n)));
  });
});

describe("a sub-agent's tools", () => {
  it('maps Claude Code tool names, tells read-only agents apart, and refuses unknown tools', () => {
    expect(resolveAgentTools(reviewer)).toEqual(['read_file', 'search_files', 'list_files']);
    expect(isReadOnlyAgent(resolveAgentTools(reviewer))).toBe(true);
    expect(isReadOnlyAgent(resolveAgentTools(fixer))).toBe(false);
    expect(isReadOnlyAgent(['read_file', 'execute_command'])).toBe(false);
    const bad = parseAgentDefinition('bad', '.agentrun/agents/bad.md', '---\ndescription: d\ntools: Read, Teleport\n---\nx');
    expect(() => resolveAgentTools(bad)).toThrow(/^\.agentrun\/agents\/bad\.md: tools: no tool named Teleport \(known: execute_command, read_file, /);
  });

  it('refuses calls outside its list with the reason', () => {
    const child = config({ agent: { name: 'reviewer', parentId: 'p', tools: ['read_file'] } });
    expect(refusedTool(child, 'read_file')).toBeUndefined();
    expect(refusedTool(child, 'attempt_completion')).toBeUndefined();
    expect(refusedTool(child, 'write_to_file')).toBe('write_to_file is not one of the tools of the agent "reviewer": use read_file, attempt_completion.');
    expect(refusedTool(child, 'ask_followup_question')).toMatch(/^ask_followup_question is not available to a sub-agent/);
    expect(refusedTool(child, 'delegate')).toMatch(/one level only/);
    expect(refusedTool(config(), 'write_to_file')).toBeUndefined();
  });

  it("loads the operator's agents from AGENTRUN_HOME; a workspace agent of the same name wins", async () => {
    const ws = await tempDir('agentrun-sub-ws-');
    const home = await tempDir('agentrun-sub-home-');
    await mkdir(join(ws, '.agentrun/agents'), { recursive: true });
    await mkdir(join(home, 'agents'), { recursive: true });
    await writeFile(join(ws, '.agentrun/agents/reviewer.md'), '---\ndescription: the workspace one\n---\nw');
    await writeFile(join(home, 'agents/reviewer.md'), '---\ndescription: the operator one\n---\no');
    await writeFile(join(home, 'agents/auditor.md'), '---\ndescription: audits\n---\na');
    const { agents } = await loadAgents(ws, home);
    expect(agents.map((a) => [a.name, a.description, a.file])).toEqual([
      ['auditor', 'audits', '$AGENTRUN_HOME/agents/auditor.md'],
      ['reviewer', 'the workspace one', '.agentrun/agents/reviewer.md'],
    ]);
  });
});

describe('budget and grouping', () => {
  const spend = { turn: 4, usage: { ...ZERO_USAGE, totalTokens: 1000 }, costUsd: 0.5, startedAtMs: 0 };

  it('gives a child what the parent has left, within its own max_turns', () => {
    expect(childBudget(config({ maxTurns: 10, maxTokens: 5000, maxCostUsd: 2, maxTimeMs: 60_000 }), spend, 20_000, 3)).toEqual({
      maxTurns: 3,
      maxTokens: 4000,
      maxCostUsd: 1.5,
      maxTimeMs: 40_000,
    });
    expect(childBudget(config({ maxTurns: 10 }), spend, 20_000)).toEqual({ maxTurns: 6 });
    expect(childBudget(config({ maxTurns: 10 }), spend, 20_000, 50)).toEqual({ maxTurns: 6 });
    expect(childBudget(config({ maxTurns: 10, maxCostUsd: 0.5 }), spend, 0)).toMatch(/no budget left/);
    expect(childBudget(config({ maxTurns: 4 }), spend, 0)).toMatch(/no budget left/);
  });

  it('runs consecutive delegate calls together, apart from read-only calls', () => {
    const call = (name: string, readOnly: boolean, control: boolean): CallSummary => ({
      id: name,
      name,
      readOnly,
      mutating: false,
      control,
      dangerous: false,
      reasons: [],
      preview: '',
    });
    const [d1, d2, r1, r2, w] = [
      call('delegate', false, true),
      call('delegate', false, true),
      call('read_file', true, false),
      call('list_files', true, false),
      call('write_to_file', false, false),
    ];
    const groups = groupCalls([{ ...d1, id: 'd1' }, { ...d2, id: 'd2' }, r1, r2, { ...d1, id: 'd3' }, w, { ...d2, id: 'd4' }]);
    expect(groups.map((g) => g.map((c) => c.id))).toEqual([['d1', 'd2'], ['read_file', 'list_files'], ['d3'], ['write_to_file'], ['d4']]);
  });
});
