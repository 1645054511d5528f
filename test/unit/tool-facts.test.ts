// A tool's own facts live on its definition (src/tools/types.ts): what a call is about, how it
// reads as a line, the edits it makes, whether its result is a command's, how it is classified.
// Nothing outside src/tools/ branches on a built-in tool's name to learn them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { editDiff, isCommandResult, toolLine } from '../../src/cli/render/tools.js';
import { callTarget } from '../../src/turn/calls.js';
import { callSafety, getTool, TOOLS } from '../../src/tools/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const plain = { green: (s: string) => s, red: (s: string) => s, dim: (s: string) => s } as Parameters<typeof editDiff>[1];

describe('tool facts', () => {
  it('each tool names only arguments of its own schema as what a call is about', () => {
    for (const t of TOOLS) for (const k of t.about ?? []) expect(Object.keys(t.schema.shape), `${t.name}.about`).toContain(k);
    for (const t of TOOLS) if (t.workflowText) expect(Object.keys(t.schema.shape), `${t.name}.workflowText`).toContain(t.workflowText);
  });

  it('a call reads by its tool: its target, its line, its edits, its result', () => {
    expect(callTarget({ id: '1', name: 'search_files', args: { regex: 'x' } })).toBe('x');
    expect(callTarget({ id: '1', name: 'search_files', args: { path: 'src', regex: 'x' } })).toBe('src');
    expect(toolLine({ name: 'read_file', args: { path: 'a.ts', start_line: 3 } })).toBe('read_file a.ts (lines 3–end)');
    expect(toolLine({ name: 'execute_command', args: { command: 'npm\ntest' } })).toBe('execute_command npm ⏎ test');
    expect(toolLine({ name: 'ask_followup_question', args: { question: 'why?' } })).toBe('ask_followup_question why?');
    expect(editDiff({ name: 'write_to_file', args: { path: 'a', content: 'one\ntwo\n' } }, plain)).toEqual(['+ one', '+ two']);
    expect(editDiff({ name: 'read_file', args: { path: 'a' } }, plain)).toBeUndefined();
    expect([isCommandResult('execute_command'), isCommandResult('read_file')]).toEqual([true, false]);
  });

  it("a command is classified by its tool's own hook; a file write by the generic check", () => {
    expect(callSafety(getTool('execute_command'), { command: 'rm -rf /' }, '/tmp').dangerous).toBe(true);
    expect(callSafety(getTool('execute_command'), { command: 'ls' }, '/tmp').dangerous).toBe(false);
    expect(callSafety(getTool('write_to_file'), { path: '.gitattributes', content: '' }, '/tmp').dangerous).toBe(true);
  });

  it('nothing outside src/tools/ branches on a built-in tool name', () => {
    const names = TOOLS.filter((t) => t.kind !== 'control').map((t) => t.name);
    const branch = new RegExp(`(?:===\\s*|case\\s+)'(${names.join('|')})'`);
    const offenders: string[] = [];
    for (const f of readdirSync(join(ROOT, 'src'), { recursive: true }) as string[]) {
      if (!f.endsWith('.ts') || f.startsWith('tools/')) continue;
      const m = branch.exec(readFileSync(join(ROOT, 'src', f), 'utf8'));
      if (m) offenders.push(`src/${f}: ${m[0]}`);
    }
    expect(offenders).toEqual([]);
  });
});
