import { describe, expect, it } from 'vitest';
import { messageIdFor } from '../../src/context/message-ids.js';
import { EMPTY_PLAN, renderMessages, truncateNativeArgs, truncateXmlArgs, type ContextPlan } from '../../src/context/render.js';
import type { StoredMessage } from '../../src/types.js';

const CONV = 'conv-render';
const hint = (seq: number) => `[message_id: ${messageIdFor(CONV, seq)}]`;
const base = { conversationId: CONV, tokens: 100 };
const plan = (p: Partial<ContextPlan> = {}): ContextPlan => ({ ...EMPTY_PLAN, ...p });
const big = 'x'.repeat(2_000);

// An XML-format run: the task, an answer with two reads, their results, a write, its result.
const xml: StoredMessage[] = [
  { ...base, seq: 0, turn: 0, role: 'user', kind: 'task', content: 'Fix the bug.' },
  {
    ...base,
    seq: 1,
    turn: 1,
    role: 'assistant',
    kind: 'assistant',
    content: 'Reading.\n<read_file><path>src/a.ts</path></read_file>\n<read_file><path>src/b.ts</path></read_file>',
  },
  {
    ...base,
    seq: 2,
    turn: 1,
    role: 'tool',
    kind: 'tool_result',
    content: 'A',
    toolName: 'read_file',
    toolCallId: '1.0',
    meta: { path: 'src/a.ts' },
    tokens: 12_345,
  },
  { ...base, seq: 3, turn: 1, role: 'tool', kind: 'tool_result', content: 'B', toolName: 'read_file', toolCallId: '1.1', meta: { path: 'src/b.ts' } },
  {
    ...base,
    seq: 4,
    turn: 2,
    role: 'assistant',
    kind: 'assistant',
    content: `Writing.\n<write_to_file>\n<path>src/a.ts</path>\n<content>${big}</content>\n</write_to_file>`,
  },
  {
    ...base,
    seq: 5,
    turn: 2,
    role: 'tool',
    kind: 'tool_result',
    content: 'Wrote src/a.ts.',
    toolName: 'write_to_file',
    toolCallId: '4.0',
    meta: { path: 'src/a.ts' },
  },
  { ...base, seq: 6, turn: 3, role: 'user', kind: 'user', content: 'Please also run the tests.' },
  { ...base, seq: 7, turn: 3, role: 'assistant', kind: 'assistant', content: '<execute_command><command>npm test</command></execute_command>' },
  {
    ...base,
    seq: 8,
    turn: 3,
    role: 'tool',
    kind: 'tool_result',
    content: 'ok',
    toolName: 'execute_command',
    toolCallId: '7.0',
    meta: { args: { command: 'npm test' } },
  },
];

describe('renderMessages, XML format', () => {
  it('renders results as user messages in the seed form, with id hints, merged per answer', () => {
    const out = renderMessages(xml, plan(), { conversationId: CONV, toolFormat: 'xml', withMessageIds: true });
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(out[0]).toEqual({ role: 'user', content: `${hint(0)}\nFix the bug.` });
    expect(out[1]).toEqual({ role: 'assistant', content: xml[1]!.content });
    expect(out[2]!.content).toBe(`${hint(2)}\n[read_file for 'src/a.ts'] Result:\nA\n\n${hint(3)}\n[read_file for 'src/b.ts'] Result:\nB`);
    // The write result and the person's message that followed share one user message.
    expect(out[4]!.content).toBe(`${hint(5)}\n[write_to_file for 'src/a.ts'] Result:\nWrote src/a.ts.\n\n${hint(6)}\nPlease also run the tests.`);
    expect(out[6]!.content).toBe(`${hint(8)}\n[execute_command for 'npm test'] Result:\nok`);
  });

  it('leaves hints out when asked', () => {
    const out = renderMessages(xml, plan(), { conversationId: CONV, toolFormat: 'xml', withMessageIds: false });
    expect(JSON.stringify(out)).not.toContain('message_id');
  });

  it('applies drops, cleared notes and cut arguments', () => {
    const out = renderMessages(xml, plan({ cleared: [2], truncatedArgs: [4], dropped: [6, 7, 8] }), {
      conversationId: CONV,
      toolFormat: 'xml',
      withMessageIds: true,
    });
    expect(out).toHaveLength(5);
    expect(out[2]!.content).toBe(
      `${hint(2)}\n[tool result cleared to save context: read_file 'src/a.ts' (12,345 tokens). Run the tool again if you need it.]\n\n${hint(3)}\n[read_file for 'src/b.ts'] Result:\nB`,
    );
    const write = out[3]!.content as string;
    expect(write).toContain(`<content>${'x'.repeat(500)}\n[… 1,500 more characters cut to save context; the file on disk has the full text]</content>`);
    expect(write).toContain('<path>src/a.ts</path>');
    expect(write.endsWith('</write_to_file>')).toBe(true);
    expect(JSON.stringify(out)).not.toContain('Please also run the tests');
  });

  it('puts the summary after the task; an ack only when a user message follows', () => {
    const s = { throughSeq: 3, content: '<state_snapshot>Read a and b.</state_snapshot>' };
    const out = renderMessages(xml, plan({ summary: s }), { conversationId: CONV, toolFormat: 'xml', withMessageIds: true });
    expect(out[0]!.content).toBe(`${hint(0)}\nFix the bug.\n\n[summary of earlier conversation]\n<state_snapshot>Read a and b.</state_snapshot>`);
    expect(out[1]).toEqual({ role: 'assistant', content: xml[4]!.content }); // the kept part starts with an answer
    const s2 = { throughSeq: 5, content: 'Wrote a.' };
    const out2 = renderMessages(xml, plan({ summary: s2 }), { conversationId: CONV, toolFormat: 'xml', withMessageIds: true });
    expect(out2.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(out2[1]!.content).toMatch(/^Got it\./);
    expect(out2[2]!.content).toBe(`${hint(6)}\nPlease also run the tests.`);
  });
});

describe('renderMessages, native format', () => {
  const native: StoredMessage[] = [
    { ...base, seq: 0, turn: 0, role: 'user', kind: 'task', content: 'Fix the bug.' },
    {
      ...base,
      seq: 1,
      turn: 1,
      role: 'assistant',
      kind: 'assistant',
      content: '',
      toolCalls: [
        { id: 'call_abc', name: 'read_file', arguments: '{"path":"src/a.ts"}' },
        { id: 'call_def', name: 'write_to_file', arguments: JSON.stringify({ path: 'src/b.ts', content: big }) },
      ],
    },
    {
      ...base,
      seq: 2,
      turn: 1,
      role: 'tool',
      kind: 'tool_result',
      content: 'A',
      toolName: 'read_file',
      toolCallId: '1.0',
      meta: { nativeId: 'call_abc', path: 'src/a.ts' },
    },
    {
      ...base,
      seq: 3,
      turn: 2,
      role: 'assistant',
      kind: 'assistant',
      content: 'Checking.',
      toolCalls: [{ id: 'call_ghi', name: 'list_files', arguments: '{"path":"."}' }],
    },
    { ...base, seq: 4, turn: 2, role: 'tool', kind: 'tool_result', content: 'a.ts', toolName: 'list_files', toolCallId: '3.0', meta: { nativeId: 'call_ghi' } },
  ];

  it('renders tool_calls and tool messages, answering calls that have no result', () => {
    const out = renderMessages(native, plan(), { conversationId: CONV, toolFormat: 'native', withMessageIds: true });
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant', 'tool']);
    expect(out[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_abc', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/a.ts"}' } },
        { id: 'call_def', type: 'function', function: { name: 'write_to_file', arguments: native[1]!.toolCalls![1]!.arguments } },
      ],
    });
    expect(out[2]).toEqual({ role: 'tool', tool_call_id: 'call_abc', content: `${hint(2)}\nA` });
    expect(out[3]).toEqual({ role: 'tool', tool_call_id: 'call_def', content: '[no result was recorded for this call]' });
    expect(out[4]).toMatchObject({ role: 'assistant', content: 'Checking.' });
    expect(out[5]).toEqual({ role: 'tool', tool_call_id: 'call_ghi', content: `${hint(4)}\na.ts` });
  });

  it('cuts large JSON arguments and clears results inside tool messages', () => {
    const out = renderMessages(native, plan({ truncatedArgs: [1], cleared: [2] }), { conversationId: CONV, toolFormat: 'native', withMessageIds: false });
    const a = out[1] as { tool_calls: { function: { arguments: string } }[] };
    const args = JSON.parse(a.tool_calls[1]!.function.arguments) as { path: string; content: string };
    expect(args.path).toBe('src/b.ts');
    expect(args.content.startsWith('x'.repeat(500) + '\n[… 1,500 more characters cut')).toBe(true);
    expect(out[2]).toEqual({
      role: 'tool',
      tool_call_id: 'call_abc',
      content: "[tool result cleared to save context: read_file 'src/a.ts' (100 tokens). Run the tool again if you need it.]",
    });
  });
});

describe('argument truncation helpers', () => {
  it('cuts every large argument in a message, keeps small ones and the prose', () => {
    const text = `One.\n<write_to_file><path>a</path><content>${big}</content></write_to_file>\nTwo.\n<replace_in_file><path>b</path><diff>${'y'.repeat(800)}</diff></replace_in_file>\n<write_to_file><path>c</path><content>small</content></write_to_file>`;
    const { content, cutChars } = truncateXmlArgs(text);
    expect(cutChars).toBe(1_500 + 300);
    expect(content).toContain('One.\n<write_to_file><path>a</path><content>' + 'x'.repeat(500) + '\n[… 1,500 more');
    expect(content).toContain('\nTwo.\n<replace_in_file><path>b</path><diff>' + 'y'.repeat(500) + '\n[… 300 more');
    expect(content).toContain('<content>small</content>');
    expect(truncateXmlArgs('no tools here')).toEqual({ content: 'no tools here', cutChars: 0 });
  });

  it('leaves unparseable native arguments alone', () => {
    const calls = [{ id: '1', name: 'write_to_file', arguments: '{"path": "a", "content": "' + big }];
    expect(truncateNativeArgs(calls)).toEqual({ toolCalls: calls, cutChars: 0 });
  });
});
