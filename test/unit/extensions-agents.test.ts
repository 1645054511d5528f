// Sub-agent definitions: .agentrun/agents/<name>.md with front matter and a system prompt.
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentDefinitionError, getAgent, loadAgents, parseAgentDefinition } from '../../src/extensions/agents.js';
import { tempDir } from '../helpers/temp.js';

async function workspace(files: Record<string, string>): Promise<string> {
  const ws = await tempDir('agentrun-agents-');
  await mkdir(join(ws, '.agentrun/agents'), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(ws, '.agentrun/agents', name), text);
  return ws;
}

const reviewer = `---
name: reviewer
description: Reviews a change for bugs and style; read-only.
tools: read_file, search_files, list_files
model: inherit
max_turns: 8
---

You are a careful code reviewer.
Report problems; change nothing.
`;

describe('agent definitions', () => {
  it('reads front matter and the body as the system prompt', () => {
    expect(parseAgentDefinition('reviewer', '.agentrun/agents/reviewer.md', reviewer)).toEqual({
      name: 'reviewer',
      file: '.agentrun/agents/reviewer.md',
      description: 'Reviews a change for bugs and style; read-only.',
      tools: ['read_file', 'search_files', 'list_files'],
      maxTurns: 8,
      systemPrompt: 'You are a careful code reviewer.\nReport problems; change nothing.',
    });
    const listed = parseAgentDefinition(
      'writer',
      'w.md',
      '---\ndescription: Writes code\ntools: [write_to_file, read_file]\nmodel: scripted:x.yaml\n---\nWrite.',
    );
    expect(listed).toMatchObject({ tools: ['write_to_file', 'read_file'], model: 'scripted:x.yaml' });
    expect(listed.maxTurns).toBeUndefined();
  });

  it.each([
    ['no front matter', 'just a prompt', /w\.md: no front matter/],
    ['no description', '---\ntools: read_file\n---\nbody', /w\.md: description: is required/],
    ['bad YAML', '---\ndescription: [\n---\nbody', /w\.md: front matter is not valid YAML/],
    ['unknown key', '---\ndescription: d\ncolour: blue\n---\nbody', /w\.md: colour: unknown key/],
    ['bad max_turns', '---\ndescription: d\nmax_turns: -2\n---\nbody', /w\.md: max_turns: /],
    ['empty body', '---\ndescription: d\n---\n  \n', /w\.md: the body .* is empty/],
    ['name mismatch', '---\nname: other\ndescription: d\n---\nbody', /w\.md: name: "other" differs from the file name "w"/],
  ])('refuses %s with a clear error', (_, text, message) => {
    expect(() => parseAgentDefinition('w', 'w.md', text)).toThrow(message);
  });

  it('loads every agent of a workspace, reports broken files, and names unknown agents clearly', async () => {
    const ws = await workspace({ 'reviewer.md': reviewer, 'broken.md': 'no front matter', 'notes.txt': 'ignored' });
    await symlink('/etc/hostname', join(ws, '.agentrun/agents/escape.md'));
    const loaded = await loadAgents(ws);
    expect(loaded.agents.map((a) => a.name)).toEqual(['reviewer']);
    expect(loaded.problems).toEqual([
      '.agentrun/agents/broken.md: no front matter; start the file with ---, a "description:" line, and --- before the system prompt',
    ]);
    expect((await getAgent(ws, 'reviewer')).description).toMatch(/^Reviews/);
    await expect(getAgent(ws, 'planner')).rejects.toThrow(
      new AgentDefinitionError('there is no agent named "planner"; the agents of this workspace are: reviewer'),
    );
    await expect(getAgent(ws, 'broken')).rejects.toThrow(/broken\.md: no front matter/);
    const empty = await tempDir('agentrun-agents-');
    await expect(getAgent(empty, 'x')).rejects.toThrow('there is no agent named "x"; this workspace defines none (add .agentrun/agents/x.md)');
  });
});
