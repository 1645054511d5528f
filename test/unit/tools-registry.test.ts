// The registry: names and kinds, argument validation as XML delivers it, and the two renderings.
import { describe, expect, it } from 'vitest';
import { callFlags } from '../../src/turn/calls.js';
import { getTool, renderXmlToolDocs, runTool, TOOL_NAMES, TOOLS, toOpenAITools, validateToolArgs } from '../../src/tools/index.js';

describe('registry', () => {
  it('holds the seed tools with their kinds', () => {
    expect(TOOL_NAMES).toEqual([
      'execute_command',
      'read_file',
      'write_to_file',
      'replace_in_file',
      'search_files',
      'list_files',
      'list_code_definition_names',
      'list_package_info',
      'ask_followup_question',
      'attempt_completion',
      'plan_mode_respond',
      'todo_write',
      'todo_read',
      'conversation_message_ids_write',
      'delegate',
    ]);
    const kinds = Object.fromEntries(TOOLS.map((t) => [t.name, [t.kind, typeof t.run === 'function']]));
    expect(kinds.read_file).toEqual(['read', true]);
    expect(kinds.write_to_file).toEqual(['edit', true]);
    expect(kinds.replace_in_file).toEqual(['edit', true]);
    expect(kinds.execute_command).toEqual(['execute', true]);
    expect(kinds.search_files).toEqual(['read', true]);
    for (const c of [
      'ask_followup_question',
      'attempt_completion',
      'plan_mode_respond',
      'todo_write',
      'todo_read',
      'conversation_message_ids_write',
      'delegate',
    ])
      expect(kinds[c], c).toEqual(['control', false]);
    expect(getTool('nope')).toBeUndefined();
  });
});

describe('a call summary', () => {
  it("carries its tool's kind as the flags every recorded history holds", () => {
    const flags = (name: string) => callFlags(getTool(name));
    expect(flags('read_file')).toEqual({ readOnly: true, mutating: false, control: false });
    expect(flags('write_to_file')).toEqual({ readOnly: false, mutating: true, control: false });
    expect(flags('execute_command')).toEqual({ readOnly: false, mutating: true, control: false });
    expect(flags('attempt_completion')).toEqual({ readOnly: false, mutating: false, control: true });
    expect(flags('nope')).toEqual({ readOnly: false, mutating: false, control: false });
    expect(callFlags({ kind: 'network' })).toEqual({ readOnly: false, mutating: true, control: false });
  });
});

describe('validateToolArgs', () => {
  it('converts XML strings: booleans (never "false" → true) and integers', () => {
    for (const [s, b] of [
      ['true', true],
      ['false', false],
      ['yes', true],
      ['no', false],
      [' False ', false],
      [true, true],
      [false, false],
    ] as const) {
      expect(validateToolArgs('list_files', { path: '.', recursive: s })).toEqual({ ok: true, args: { path: '.', recursive: b } });
    }
    expect(validateToolArgs('read_file', { path: ' src/a.ts\n', start_line: '10', end_line: 20 })).toEqual({
      ok: true,
      args: { path: 'src/a.ts', start_line: 10, end_line: 20 },
    });
  });

  it('tells the model which parameter is wrong and what is expected', async () => {
    const b = validateToolArgs('list_files', { path: '.', recursive: 'perhaps' });
    expect(b.ok).toBe(false);
    if (b.ok) return;
    expect(b.error).toMatch(/^Invalid arguments for list_files: Parameter "recursive": expected true or false\./);
    expect(b.error).toContain('Parameters of list_files: path (required), recursive (optional).');
    expect(b.error).toContain('<list_files>');
    const i = validateToolArgs('read_file', { path: 'a', start_line: '1.5' });
    expect(!i.ok && i.error).toMatch(/Parameter "start_line": expected a whole number/);
    const z = validateToolArgs('read_file', { path: 'a', start_line: '0' });
    expect(!z.ok && z.error).toMatch(/Parameter "start_line": expected a whole number >= 1/);
    const m = validateToolArgs('execute_command', { command: 'ls' });
    expect(!m.ok && m.error).toMatch(/Missing value for required parameter "requires_approval"/);
    const u = validateToolArgs('read_file', { path: 'a', recursive: 'true' });
    expect(!u.ok && u.error).toMatch(/Unknown parameter "recursive"/);
    const e = validateToolArgs('read_file', { path: '  ' });
    expect(!e.ok && e.error).toMatch(/Parameter "path": expected a non-empty path/);
    const t = validateToolArgs('frobnicate', {});
    expect(await runTool('frobnicate', {}, { workspace: '/' })).toMatchObject({
      ok: false,
      output: expect.stringMatching(/There is no tool named "frobnicate"/),
    });
    expect(!t.ok && t.error).toMatch(/There is no tool named "frobnicate". Available tools: execute_command, read_file/);
  });

  it('parses options lists from JSON or lines', () => {
    expect(validateToolArgs('ask_followup_question', { question: 'Which?', options: '["a", "b"]' })).toEqual({
      ok: true,
      args: { question: 'Which?', options: ['a', 'b'] },
    });
    expect(validateToolArgs('ask_followup_question', { question: 'Which?', options: '- a\n- b' })).toEqual({
      ok: true,
      args: { question: 'Which?', options: ['a', 'b'] },
    });
    expect(validateToolArgs('plan_mode_respond', { response: 'Plan', options: ['x'] })).toEqual({ ok: true, args: { response: 'Plan', options: ['x'] } });
    const bad = validateToolArgs('ask_followup_question', { question: 'Q', options: '["a", ' });
    expect(!bad.ok && bad.error).toMatch(/Parameter "options": expected a JSON array of strings/);
  });

  it('parses todo lists from a markdown checklist or JSON', () => {
    const md = validateToolArgs('todo_write', { todos: '- [x] read the code\n- [~] fix the bug\n- [ ] add tests\n' });
    expect(md).toEqual({
      ok: true,
      args: {
        todos: [
          { id: '1', content: 'read the code', status: 'completed' },
          { id: '2', content: 'fix the bug', status: 'in_progress' },
          { id: '3', content: 'add tests', status: 'pending' },
        ],
      },
    });
    const json = validateToolArgs('todo_write', { todos: '[{"id":"a","content":"x","status":"completed"},{"content":"y"}]' });
    expect(json).toEqual({
      ok: true,
      args: {
        todos: [
          { id: 'a', content: 'x', status: 'completed' },
          { id: '2', content: 'y', status: 'pending' },
        ],
      },
    });
    const bad = validateToolArgs('todo_write', { todos: '[{"content":"x","status":"done"}]' });
    expect(!bad.ok && bad.error).toMatch(/Parameter "todos" \(at todos\.0\.status\): expected one of pending, in_progress, completed, cancelled/);
    expect(validateToolArgs('todo_read', {})).toEqual({ ok: true, args: {} });
  });

  it('checks conversation message ids and actions', () => {
    expect(validateToolArgs('conversation_message_ids_write', { message_ids: '9226B3A4, 204e1cd8', action: 'create' })).toEqual({
      ok: true,
      args: { message_ids: ['9226b3a4', '204e1cd8'], action: 'create' },
    });
    const bad = validateToolArgs('conversation_message_ids_write', { message_ids: '9226b3a4,xyz', action: 'remove' });
    expect(!bad.ok && bad.error).toMatch(/Parameter "message_ids": expected comma-separated 8-character hexadecimal message ids/);
    expect(!bad.ok && bad.error).toMatch(/Parameter "action": expected create, append or delete/);
  });
});

describe('renderings', () => {
  it('renders seed-style XML docs from the schemas', () => {
    const docs = renderXmlToolDocs([getTool('read_file')!, getTool('todo_read')!]);
    expect(docs).toMatch(/^## read_file\nDescription: Read the contents of a text file/);
    expect(docs).toContain(
      'Parameters:\n- path: (required) The path of the file to read, relative to the workspace root.\n- start_line: (optional) First line to read, 1-based (default 1).',
    );
    expect(docs).toContain(
      'Usage:\n<read_file>\n<path>path here</path>\n<start_line>number (optional)</start_line>\n<end_line>number (optional)</end_line>\n</read_file>\nExample:\n<read_file>\n<path>src/config.ts</path>\n</read_file>',
    );
    expect(docs).toContain('## todo_read\nDescription: Read your current todo list.\nParameters:\n(none)\nUsage:\n<todo_read>\n</todo_read>');
    const all = renderXmlToolDocs();
    for (const n of TOOL_NAMES) expect(all).toContain(`## ${n}\n`);
    expect(all).toContain('<requires_approval>true or false</requires_approval>');
  });

  it('renders OpenAI function tools with JSON Schemas of the input side', () => {
    const tools = toOpenAITools();
    expect(tools).toHaveLength(TOOLS.length);
    const exec = tools.find((t) => t.function.name === 'execute_command')!;
    expect(exec.type).toBe('function');
    expect(exec.function.parameters).toMatchObject({
      type: 'object',
      properties: { command: { type: 'string' }, requires_approval: { type: 'boolean' }, timeout_seconds: { type: 'integer', minimum: 1 } },
      required: ['command', 'requires_approval'],
      additionalProperties: false,
    });
    const todo = tools.find((t) => t.function.name === 'todo_write')!.function.parameters as { properties: Record<string, { type: string }> };
    expect(todo.properties.todos!.type).toBe('array');
    const ids = tools.find((t) => t.function.name === 'conversation_message_ids_write')!.function.parameters as {
      properties: Record<string, { type: string }>;
    };
    expect(ids.properties.message_ids!.type).toBe('string');
    expect(JSON.stringify(tools)).not.toContain('$schema');
  });
});
