// The terminal renderer's pure parts: tool lines, command outcomes, head and tail, diffs, and the
// parser's "inside a tool block" signal under any chunking.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commandOutcome, editDiff, headAndTail, toolLine } from '../../src/cli/render/tools.js';
import { styleFor } from '../../src/cli/render/style.js';
import { isRichTerminal } from '../../src/cli/render/style.js';
import { formatElapsed } from '../../src/cli/render/spinner.js';
import { XmlToolCallParser } from '../../src/parser/index.js';
import { TOOL_NAMES } from '../../src/tools/index.js';

const plain = styleFor(false);

describe('terminal rendering helpers', () => {
  it('writes each tool call as one readable line', () => {
    expect(toolLine({ name: 'read_file', args: { path: 'src/a.ts' } })).toBe('read_file src/a.ts');
    expect(toolLine({ name: 'read_file', args: { path: 'src/a.ts', start_line: 10, end_line: 20 } })).toBe('read_file src/a.ts (lines 10–20)');
    expect(toolLine({ name: 'execute_command', args: { command: 'npm test\n  && npm run lint' } })).toBe('execute_command npm test ⏎ && npm run lint');
    expect(toolLine({ name: 'write_to_file', args: { path: 'a.txt', content: 'one\ntwo\n' } })).toBe('write_to_file a.txt (2 lines)');
    expect(toolLine({ name: 'search_files', args: { path: 'src', regex: 'TODO' } })).toBe('search_files "TODO" in src');
    expect(toolLine({ name: 'list_files', args: { path: '.', recursive: 'true' } })).toBe('list_files . (recursive)');
    expect(toolLine({ name: 'ask_followup_question', args: { question: 'Which?' } })).toBe('ask_followup_question Which?');
  });

  it('reads exit code, timeouts and output from a command result', () => {
    expect(commandOutcome('The command exited with code 0.\nOutput:\na\nb\n')).toEqual({ status: 'exit 0', exitCode: 0, lines: ['a', 'b'] });
    expect(commandOutcome('The command exited with code 127.\n(no output)')).toEqual({ status: 'exit 127', exitCode: 127, lines: [] });
    expect(commandOutcome('The command was killed by signal SIGKILL.\nOutput:\nx')).toMatchObject({
      status: 'killed by signal SIGKILL',
      exitCode: undefined,
      lines: ['x'],
    });
    expect(commandOutcome('The command timed out after 30 s; it and its child processes were killed.\n(no output)').status).toBe('timed out after 30 s');
  });

  it('keeps the head and tail of a long output', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `l${i + 1}`);
    expect(headAndTail(lines, plain, 2, 2)).toEqual(['l1', 'l2', '… 36 lines …', 'l39', 'l40']);
    expect(headAndTail(lines.slice(0, 5), plain, 2, 2)).toEqual(['l1', 'l2', 'l3', 'l4', 'l5']);
  });

  it('shows a replace_in_file as a diff with shared lines as context, and ignores a malformed one', () => {
    const diff = '<<<<<<< SEARCH\na\nb\nc\n=======\na\nB\nc\n>>>>>>> REPLACE\n';
    expect(editDiff({ name: 'replace_in_file', args: { path: 'f', diff } }, plain)).toEqual(['  a', '- b', '+ B', '  c']);
    expect(editDiff({ name: 'replace_in_file', args: { path: 'f', diff: 'no blocks' } }, plain)).toBeUndefined();
    expect(editDiff({ name: 'read_file', args: { path: 'f' } }, plain)).toBeUndefined();
  });

  it('is plain without a TTY, with NO_COLOR or TERM=dumb', () => {
    expect(isRichTerminal({ write() {}, isTTY: true }, {})).toBe(true);
    expect(isRichTerminal({ write() {}, isTTY: false }, {})).toBe(false);
    expect(isRichTerminal({ write() {}, isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(isRichTerminal({ write() {}, isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(isRichTerminal({ write() {}, isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(styleFor(false).red('x')).toBe('x');
    expect(styleFor(true).red('x')).toBe('\x1b[31mx\x1b[39m');
  });

  it('formats elapsed time', () => {
    expect(formatElapsed(700)).toBe('0.7s');
    expect(formatElapsed(42_000)).toBe('42s');
    expect(formatElapsed(125_000)).toBe('2m 05s');
  });

  it('tells whether the input so far ends inside a tool block, whatever the chunking', () => {
    const text = 'Look.\n<read_file>\n<path>a.ts</path>\n</read_file>\nDone.';
    const open = text.indexOf('<read_file>') + '<read_file>'.length;
    const close = text.indexOf('</read_file>');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: text.length }), (cut) => {
        const p = new XmlToolCallParser(TOOL_NAMES);
        p.push(text.slice(0, cut));
        // Inside for sure once the opening tag is complete and the closing one has not begun.
        if (cut >= open && cut < close) expect(p.openToolName).toBe('read_file');
        if (cut <= text.indexOf('<read_file>') || cut >= close + '</read_file>'.length) expect(p.openToolName).toBeUndefined();
      }),
    );
  });
});
