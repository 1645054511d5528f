import { describe, expect, it } from 'vitest';
import { stableStringify } from '../../src/canonical-json.js';
import { LoopDetector, type LoopState } from '../../src/context/loop.js';
import { COMPRESSION_PROMPT, SNAPSHOT_INSTRUCTION, acceptSummary, extractSnapshot, summaryRequest } from '../../src/context/summary.js';
import type { StoredMessage } from '../../src/types.js';

const base = { conversationId: 'c', tokens: 10 };

function history(turns: number, outputChars: number): StoredMessage[] {
  const out: StoredMessage[] = [{ ...base, seq: 0, turn: 0, role: 'user', kind: 'task', content: 'Migrate the API to v2.' }];
  let seq = 1;
  for (let t = 1; t <= turns; t++) {
    const a = seq++;
    out.push({ ...base, seq: a, turn: t, role: 'assistant', kind: 'assistant', content: `Step ${t}.\n<read_file><path>src/f${t}.ts</path></read_file>` });
    out.push({
      ...base,
      seq: seq++,
      turn: t,
      role: 'tool',
      kind: 'tool_result',
      content: `// f${t}\n` + 'z'.repeat(outputChars),
      toolName: 'read_file',
      toolCallId: `${a}.0`,
      meta: { path: `src/f${t}.ts`, status: t === 2 ? 'error' : 'ok' },
    });
    if (t === 3) out.push({ ...base, seq: seq++, turn: t, role: 'user', kind: 'user', content: 'Keep the v1 endpoints working until June.' });
  }
  return out;
}

describe('summaryRequest', () => {
  it('asks for a <state_snapshot> of the range as one transcript', () => {
    const h = history(5, 100);
    const req = summaryRequest(h, 7);
    expect(req).toHaveLength(2);
    expect(req[0]).toEqual({ role: 'system', content: COMPRESSION_PROMPT });
    for (const tag of ['<overall_goal>', '<key_knowledge>', '<file_system_state>', '<recent_actions>', '<current_plan>', '<scratchpad>']) {
      expect(COMPRESSION_PROMPT).toContain(tag);
    }
    const user = req[1]!.content as string;
    expect(user).toContain('<task>\nMigrate the API to v2.\n</task>');
    expect(user).toContain("[read_file for 'src/f1.ts'] Result:");
    expect(user).toContain("[read_file for 'src/f2.ts'] Result: (error)");
    expect(user).toContain('[user]\nKeep the v1 endpoints working until June.');
    expect(user).not.toContain('src/f4.ts'); // seq 9 onwards is not in the range
    expect(user.endsWith(SNAPSHOT_INSTRUCTION)).toBe(true);
  });

  it('stays within its budget however large the range is, keeping what people said', () => {
    const h = history(300, 20_000);
    const req = summaryRequest(h, h[h.length - 1]!.seq, { maxChars: 100_000 });
    const user = req[1]!.content as string;
    expect(user.length).toBeLessThan(110_000);
    expect(user).toContain('Keep the v1 endpoints working until June.');
    expect(user).toContain("src/f300.ts'] Result:"); // the newest part is kept in more detail
  });

  it('folds in the previous summary and starts after it', () => {
    const h = history(6, 100);
    const req = summaryRequest(h, 15, { previous: { throughSeq: 8, content: '<state_snapshot>old</state_snapshot>' } });
    const user = req[1]!.content as string;
    expect(user).toContain('<previous_state_snapshot>\n<state_snapshot>old</state_snapshot>\n</previous_state_snapshot>');
    expect(user).not.toContain("'src/f2.ts'");
    expect(user).toContain("'src/f5.ts'");
  });

  it('extracts the snapshot and drops the scratchpad', () => {
    expect(
      extractSnapshot('<scratchpad>thinking <state_snapshot> maybe</scratchpad>\n<state_snapshot>\n<overall_goal>G</overall_goal>\n</state_snapshot>\n'),
    ).toBe('<state_snapshot>\n<overall_goal>G</overall_goal>\n</state_snapshot>');
    expect(extractSnapshot('<state_snapshot><overall_goal>cut off')).toBe('<state_snapshot><overall_goal>cut off\n</state_snapshot>');
    expect(extractSnapshot('<scratchpad>only thoughts</scratchpad>  ')).toBeUndefined();
    expect(extractSnapshot('Plain summary.')).toBe('Plain summary.');
  });

  it('accepts a summary only if it shrinks the request', () => {
    expect(acceptSummary(500, 20_000)).toBe(true);
    expect(acceptSummary(20_000, 20_000)).toBe(false);
    expect(acceptSummary(25_000, 20_000)).toBe(false);
    expect(acceptSummary(0, 20_000)).toBe(false);
  });
});

describe('LoopDetector', () => {
  it('reports the same call with the same arguments N times in a row', () => {
    const d = new LoopDetector({ toolCallThreshold: 5 });
    const seen: boolean[] = [];
    for (let i = 0; i < 5; i++) seen.push(d.observeToolCall('read_file', { path: 'a.ts' }));
    expect(seen).toEqual([false, false, false, false, true]);
  });

  it('treats argument key order as the same call and a different call as a break', () => {
    const d = new LoopDetector({ toolCallThreshold: 3 });
    expect(d.observeToolCall('search_files', { path: '.', regex: 'x' })).toBe(false);
    expect(d.observeToolCall('search_files', { regex: 'x', path: '.' })).toBe(false);
    expect(d.observeToolCall('read_file', { path: 'a.ts' })).toBe(false);
    expect(d.observeToolCall('search_files', { path: '.', regex: 'x' })).toBe(false);
    expect(d.observeToolCall('search_files', { path: '.', regex: 'x' })).toBe(false);
    expect(d.observeToolCall('search_files', { path: '.', regex: 'x' })).toBe(true);
    expect(stableStringify({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
  });

  it('reports a cycle of calls repeated N times', () => {
    const d = new LoopDetector({ toolCallThreshold: 3 });
    const calls = [
      ['read_file', { path: 'a' }],
      ['execute_command', { command: 'npm test' }],
    ] as const;
    const hits: boolean[] = [];
    for (let i = 0; i < 6; i++) hits.push(d.observeToolCall(calls[i % 2]![0], calls[i % 2]![1]));
    expect(hits).toEqual([false, false, false, false, false, true]);
  });

  it('does not flag ordinary progress', () => {
    const d = new LoopDetector({ toolCallThreshold: 5 });
    for (let i = 0; i < 100; i++) expect(d.observeToolCall('read_file', { path: `f${i % 7}.ts`, n: i })).toBe(false);
  });

  it('detects chanting: one 50-char chunk repeated 10 times close together', () => {
    const d = new LoopDetector({ toolCallThreshold: 5 });
    const sentence = 'I will now carefully check the configuration file again. ';
    let hit = false;
    let i = 0;
    for (; i < 30 && !hit; i++) hit = d.observeContent(sentence);
    expect(hit).toBe(true);
    expect(i).toBeGreaterThanOrEqual(10);
    expect(i).toBeLessThanOrEqual(12);
  });

  it('ignores repetition inside code blocks and ordinary prose', () => {
    const d = new LoopDetector({ toolCallThreshold: 5 });
    expect(d.observeContent('Here is the table:\n```\n' + '| a | b | c | d | e | f | g | h | i | j | k |\n'.repeat(40) + '```\nDone.')).toBe(false);
    const prose = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} explains a different aspect (${i * 7}) of the migration plan.`).join(' ');
    expect(d.observeContent(prose)).toBe(false);
    // A fence split across deltas still counts.
    const e = new LoopDetector({ toolCallThreshold: 5 });
    expect(e.observeContent('Code:\n```ts\n')).toBe(false);
    for (let i = 0; i < 20; i++) expect(e.observeContent('const x = 1; // the same line of code repeated here\n')).toBe(false);
  });

  it('ignores repeated lines in file contents and diffs of tool uses, also when streamed in pieces', () => {
    const file =
      '<write_to_file>\n<path>data.csv</path>\n<content>\n' +
      'id,name,value,comment,another column,and another one\n'.repeat(50) +
      '</content>\n</write_to_file>';
    expect(new LoopDetector({ toolCallThreshold: 5 }).observeContent(`Writing the fixture.\n${file}`)).toBe(false);
    const d = new LoopDetector({ toolCallThreshold: 5 });
    let hit = false;
    for (let i = 0; i < file.length; i += 7) hit = d.observeContent(file.slice(i, i + 7)) || hit;
    expect(hit).toBe(false);
    // Outside the arguments, the same text is a chant.
    expect(new LoopDetector({ toolCallThreshold: 5 }).observeContent('id,name,value,comment,another column,and another one\n'.repeat(50))).toBe(true);
  });

  it('survives serialization (continue-as-new) with the same verdicts', () => {
    const opts = { toolCallThreshold: 5 };
    const a = new LoopDetector(opts);
    for (let i = 0; i < 3; i++) a.observeToolCall('read_file', { path: 'a.ts' });
    const sentence = 'Let me try the same approach once more to be sure. ';
    for (let i = 0; i < 5; i++) a.observeContent(sentence);
    const state = JSON.parse(JSON.stringify(a)) as LoopState;
    expect(state.v).toBe(1);
    const b = LoopDetector.from(state, opts);
    expect(b.toJSON()).toEqual(a.toJSON());
    expect(b.observeToolCall('read_file', { path: 'a.ts' })).toBe(false);
    expect(b.observeToolCall('read_file', { path: 'a.ts' })).toBe(true);
    let hit = false;
    for (let i = 0; i < 6 && !hit; i++) hit = b.observeContent(sentence);
    expect(hit).toBe(true);
    expect(JSON.stringify(state).length).toBeLessThan(6_000);
  });

  it('refuses a threshold below 2', () => {
    expect(() => new LoopDetector({ toolCallThreshold: 1 })).toThrow(/threshold/);
  });
});
