import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { beforeAll, describe, expect, it } from 'vitest';
import { messageIdFor } from '../../src/context/message-ids.js';
import { planContext, type PruneInput } from '../../src/context/prune.js';
import { isToolResult, renderMessages } from '../../src/context/render.js';
import { messageTokens } from '../../src/model/tokens.js';
import type { StoredMessage } from '../../src/types.js';

const MODEL = 'gpt-4o';
const CONV = 'conv-prune';

function msg(m: Omit<StoredMessage, 'conversationId' | 'tokens'>): StoredMessage {
  return { conversationId: CONV, ...m, tokens: messageTokens({ role: m.role, content: m.content, toolCalls: m.toolCalls }, MODEL) };
}

const OUTPUT_BLOCK = Array.from({ length: 400 }, (_, i) => `  ${i}: const value${i} = await service.fetch(id, { retries: ${i % 7} }); // line of output`).join(
  '\n',
);

/**
 * A synthetic run: seq 0 task, then per turn an assistant message with one XML tool use and its
 * ~20 KB result. Every `writeEvery` turns the tool use is a write_to_file with 10 KB of content;
 * every `userEvery` turns a person's message comes first.
 */
function conversation(turns: number, opts: { outputChars?: number; writeEvery?: number; userEvery?: number; assistantText?: string } = {}): StoredMessage[] {
  const out: StoredMessage[] = [
    msg({ seq: 0, turn: 0, role: 'user', kind: 'task', content: 'Refactor the service layer to use the new client and keep all tests green.' }),
  ];
  const size = opts.outputChars ?? 20_000;
  let seq = 1;
  for (let t = 1; t <= turns; t++) {
    if (opts.userEvery && t % opts.userEvery === 0) {
      out.push(msg({ seq: seq++, turn: t, role: 'user', kind: 'user', content: `Also check module ${t}.` }));
    }
    const path = `src/module${t}.ts`;
    const write = opts.writeEvery && t % opts.writeEvery === 0;
    const content = write
      ? `${opts.assistantText ?? 'Writing the file.'}\n<write_to_file>\n<path>${path}</path>\n<content>\n${OUTPUT_BLOCK.slice(0, 10_000)}\n</content>\n</write_to_file>`
      : `${opts.assistantText ?? `Reading ${path}.`}\n<read_file>\n<path>${path}</path>\n</read_file>`;
    const aSeq = seq++;
    out.push(msg({ seq: aSeq, turn: t, role: 'assistant', kind: 'assistant', content }));
    const result = write ? `Wrote ${path}.` : `// ${path}\n${(OUTPUT_BLOCK + '\n').repeat(Math.ceil(size / OUTPUT_BLOCK.length)).slice(0, size)}`;
    out.push(
      msg({
        seq: seq++,
        turn: t,
        role: 'tool',
        kind: 'tool_result',
        content: result,
        toolName: write ? 'write_to_file' : 'read_file',
        toolCallId: `${aSeq}.0`,
        meta: { ok: true, status: 'ok', path },
      }),
    );
  }
  return out;
}

function input(messages: StoredMessage[], over: Partial<PruneInput> = {}): PruneInput {
  return { conversationId: CONV, messages, systemTokens: 3_000, safeZone: 100_000, markedIds: { ids: [] }, keepRecentTurns: 3, ...over };
}

/** Real tokens of the rendered request, counted as the store counts messages. */
function renderedTokens(rendered: ChatCompletionMessageParam[], systemTokens: number): number {
  let n = systemTokens;
  for (const m of rendered) {
    const calls =
      m.role === 'assistant'
        ? (m.tool_calls ?? []).map((c) => ('function' in c ? { name: c.function.name, arguments: c.function.arguments } : { name: '', arguments: '' }))
        : undefined;
    n += messageTokens({ role: m.role, content: typeof m.content === 'string' ? m.content : '', toolCalls: calls }, MODEL);
  }
  return n;
}

describe('planContext on a 200-turn conversation with 20 KB tool outputs', () => {
  let history: StoredMessage[];
  beforeAll(() => {
    history = conversation(200, { writeEvery: 20 });
  });

  it('stays under the safe zone, and the estimate is not below the real count', () => {
    const raw = history.reduce((n, m) => n + m.tokens, 3_000);
    const { plan, fits, needsSummary } = planContext(input(history));
    expect(raw).toBeGreaterThan(800_000);
    expect(fits).toBe(true);
    expect(needsSummary).toBeUndefined();
    expect(plan.tokensBefore).toBeGreaterThanOrEqual(raw);
    expect(plan.tokensAfter).toBeLessThanOrEqual(100_000);
    const rendered = renderMessages(history, plan, { conversationId: CONV, toolFormat: 'xml', withMessageIds: true });
    const real = renderedTokens(rendered, 3_000);
    console.log(`200 turns: raw ${raw} tokens, planned ${plan.tokensAfter}, rendered ${real}; ${plan.actions.join('; ')}`);
    expect(real).toBeLessThanOrEqual(100_000);
    expect(real).toBeLessThanOrEqual(plan.tokensAfter);
    expect(plan.tokensAfter - real).toBeLessThan(plan.tokensAfter * 0.1);
  });

  it('cleans oldest first and keeps the newest turns whole', () => {
    const { plan } = planContext(input(history));
    const cleared = new Set(plan.cleared);
    const results = history.filter((m) => isToolResult(m) && m.tokens >= 64 && m.turn <= 197);
    // A prefix of the old results is cleared, nothing after it.
    const firstKept = results.findIndex((m) => !cleared.has(m.seq));
    expect(firstKept).toBeGreaterThan(0);
    expect(results.slice(firstKept).some((m) => cleared.has(m.seq))).toBe(false);
    const recent = history.filter((m) => m.turn > 197).map((m) => m.seq);
    for (const seq of recent) {
      expect(plan.cleared).not.toContain(seq);
      expect(plan.truncatedArgs).not.toContain(seq);
    }
    // The write_to_file contents of old turns are cut.
    const writes = history.filter((m) => m.role === 'assistant' && m.content.includes('<write_to_file>') && m.turn <= 100);
    expect(writes.length).toBeGreaterThan(0);
    for (const w of writes) expect(plan.truncatedArgs).toContain(w.seq);
    expect(plan.actions.some((a) => /^cleared \d+ tool results and large arguments of \d+ tool uses/.test(a))).toBe(true);
  });

  it('prunes in steps: the cleared set changes only when the safe zone is reached, then down to the low-water mark', () => {
    // Turn after turn as a worker plans them, each turn keeping what the previous one cleared.
    let previous: PruneInput['previous'];
    const steps: number[] = [];
    for (let t = 120; t < 200; t++) {
      const h = history.filter((m) => m.turn <= t);
      const { plan, fits } = planContext(input(h, { previous }));
      expect(fits).toBe(true);
      if (previous && plan.cleared.join(',') !== previous.cleared.join(',')) {
        steps.push(t);
        // A step goes down to 60% of the safe zone, not just under it.
        expect(plan.tokensAfter).toBeLessThanOrEqual(60_000);
      }
      // What was cleared stays cleared.
      for (const seq of previous?.cleared ?? []) expect(plan.cleared).toContain(seq);
      previous = { cleared: plan.cleared, truncatedArgs: plan.truncatedArgs };
    }
    const gaps = steps.slice(1).map((s, i) => s - steps[i]!);
    console.log(`pruning steps over 80 turns (~5.5k tokens per turn): at ${steps.join(', ')}`);
    expect(steps.length).toBeGreaterThan(3);
    // 40k tokens between the mark and the zone, ~5.5k a turn: at least 6 turns apart.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(6);
  });

  it('with a target of 1 it prunes to the limit, one more result every turn', () => {
    let previous: PruneInput['previous'];
    let changed = 0;
    for (let t = 150; t < 170; t++) {
      const { plan } = planContext(
        input(
          history.filter((m) => m.turn <= t),
          { previous, pruneTarget: 1 },
        ),
      );
      if (previous && plan.cleared.join(',') !== previous.cleared.join(',')) changed++;
      previous = { cleared: plan.cleared, truncatedArgs: plan.truncatedArgs };
    }
    expect(changed).toBeGreaterThanOrEqual(18);
  });

  it('is fast: O(n) in messages', () => {
    const timings: string[] = [];
    let at200 = 0;
    for (const turns of [10, 100, 200]) {
      const h = history.filter((m) => m.turn <= turns);
      planContext(input(h));
      const runs = 50;
      const t0 = performance.now();
      for (let i = 0; i < runs; i++) planContext(input(h, { markedIds: { ids: [messageIdFor(CONV, 5)] } }));
      const ms = (performance.now() - t0) / runs;
      if (turns === 200) at200 = ms;
      timings.push(`${turns} turns: ${ms.toFixed(3)} ms`);
    }
    console.log(`planContext time: ${timings.join(', ')}`);
    expect(at200).toBeLessThan(20);
  });

  it('renders the plan with notes and cut arguments', () => {
    const { plan } = planContext(input(history));
    const rendered = renderMessages(history, plan, { conversationId: CONV, toolFormat: 'xml', withMessageIds: true });
    const text = rendered.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
    expect(text).toMatch(/\[tool result cleared to save context: read_file 'src\/module1\.ts' \([\d,]+ tokens\)\. Run the tool again if you need it\.\]/);
    expect(text).toContain('more characters cut to save context');
    expect(text).toContain("[read_file for 'src/module199.ts'] Result:");
  });
});

describe('message-id pruning', () => {
  const history = conversation(30, { outputChars: 2_000, userEvery: 10 });
  const id = (seq: number) => messageIdFor(CONV, seq);
  const bySeq = new Map(history.map((m) => [m.seq, m]));

  it('drops a marked tool result together with its call', () => {
    const result = history.find((m) => isToolResult(m) && m.turn === 5)!;
    const { plan } = planContext(input(history, { markedIds: { ids: [id(result.seq)] } }));
    expect(plan.dropped).toEqual([result.seq - 1, result.seq]);
    expect(bySeq.get(result.seq - 1)!.role).toBe('assistant');
    expect(plan.actions[0]).toMatch(/^dropped 2 messages marked by the model/);
  });

  it("keeps a person's message and the answer to it together", () => {
    const user = history.find((m) => m.kind === 'user' && m.turn === 10)!;
    const { plan } = planContext(input(history, { markedIds: { ids: [id(user.seq).toUpperCase()] } }));
    expect(plan.dropped).toEqual([user.seq, user.seq + 1, user.seq + 2]);
    // Marking the answer takes the question too.
    const again = planContext(input(history, { markedIds: { ids: [id(user.seq + 1)] } }));
    expect(again.plan.dropped).toEqual(plan.dropped);
  });

  it('never drops the task nor the newest turn, and ignores unknown ids', () => {
    const newest = history.filter((m) => m.turn === 30);
    const { plan } = planContext(input(history, { markedIds: { ids: [id(0), ...newest.map((m) => id(m.seq)), 'ffffffff'] } }));
    expect(plan.dropped).toEqual([]);
    expect(plan.actions).toContain(`kept ${newest.length} marked messages of the newest turn`);
  });

  it('applies even when the request fits, and the rendered request loses those messages', () => {
    const result = history.find((m) => isToolResult(m) && m.turn === 3)!;
    const { plan, fits } = planContext(input(history, { markedIds: { ids: [id(result.seq)] } }));
    expect(fits).toBe(true);
    expect(plan.cleared).toEqual([]);
    const rendered = renderMessages(history, plan, { conversationId: CONV, toolFormat: 'xml', withMessageIds: true });
    const text = rendered.map((m) => m.content).join('\n');
    expect(text).not.toContain(`[message_id: ${id(result.seq)}]`);
    expect(text).toContain(`[message_id: ${id(result.seq + 2)}]`);
  });
});

describe('summary stage', () => {
  // Long assistant messages: cleanup alone cannot make this fit.
  const history = conversation(120, { outputChars: 4_000, userEvery: 25, assistantText: 'Reasoning about the module. '.repeat(60) });
  const small = { safeZone: 30_000 };

  it('asks for a summary of the oldest ~70%, split where an exchange starts', () => {
    const { plan, fits, needsSummary } = planContext(input(history, small));
    expect(fits).toBe(false);
    expect(needsSummary).toBeDefined();
    const through = needsSummary!.throughSeq;
    const next = history.find((m) => m.seq === through + 1)!;
    expect(isToolResult(next)).toBe(false);
    expect(history.find((m) => m.seq === through)!.role).toBe('tool'); // the exchange before ended
    const share = history.filter((m) => m.seq > 0 && m.seq <= through).length / (history.length - 1);
    expect(share).toBeGreaterThan(0.5);
    expect(share).toBeLessThan(0.9);
    expect(plan.actions.at(-1)).toBe(`summary needed of seqs 1–${through}`);
  });

  it('applies a stored summary and then fits', () => {
    const { needsSummary } = planContext(input(history, small));
    const through = needsSummary!.throughSeq;
    const summary = { throughSeq: through, content: '<state_snapshot><overall_goal>Refactor.</overall_goal></state_snapshot>', tokens: 600 };
    const { plan, fits } = planContext(input(history, { ...small, summary }));
    expect(fits).toBe(true);
    expect(plan.summary).toEqual({ throughSeq: through, content: summary.content });
    expect(plan.actions[0]).toMatch(new RegExp(`^summary of seqs 1–${through} in place of \\d+ messages`));
    const rendered = renderMessages(history, plan, { conversationId: CONV, toolFormat: 'xml', withMessageIds: true });
    expect(renderedTokens(rendered, 3_000)).toBeLessThanOrEqual(30_000);
    expect(rendered[0]!.content).toMatch(
      /^\[message_id: [0-9a-f]{8}\]\nRefactor the service layer[\s\S]*\[summary of earlier conversation\]\n<state_snapshot>/,
    );
  });

  it('does not ask again for a range whose summary failed, until it grew', () => {
    const { needsSummary } = planContext(input(history, small));
    const failed = needsSummary!.throughSeq;
    const r = planContext(input(history, { ...small, summaryFailedThroughSeq: failed }));
    expect(r.needsSummary).toBeUndefined();
    expect(r.plan.actions).toContain(`no new summary: the attempt through seq ${failed} failed`);
    const longer = conversation(200, { outputChars: 4_000, userEvery: 25, assistantText: 'Reasoning about the module. '.repeat(60) });
    const later = planContext(input(longer, { ...small, summaryFailedThroughSeq: failed }));
    expect(later.needsSummary!.throughSeq).toBeGreaterThan(failed);
  });

  it('falls back to the newest turns and reports when nothing fits', () => {
    const { needsSummary } = planContext(input(history, small));
    const r = planContext(input(history, { ...small, summaryFailedThroughSeq: needsSummary!.throughSeq }));
    expect(r.plan.actions.some((a) => a.startsWith('last resort: cleared'))).toBe(true);
    expect(r.fits).toBe(false);
    expect(r.plan.actions.at(-1)).toMatch(/^does not fit: [\d,]+ tokens over the safe zone of 30,000$/);
  });
});

describe('harder pass and hopeless cases', () => {
  it('harder mode shrinks more: fewer protected turns, 70% of the low-water mark', () => {
    const history = conversation(60);
    const normal = planContext(input(history, { keepRecentTurns: 6 }));
    const harder = planContext(input(history, { keepRecentTurns: 6, harder: true }));
    expect(harder.fits).toBe(true);
    expect(harder.plan.tokensAfter).toBeLessThan(normal.plan.tokensAfter);
    expect(harder.plan.tokensAfter).toBeLessThanOrEqual(70_000);
    expect(harder.plan.cleared.length).toBeGreaterThan(normal.plan.cleared.length);
    expect(harder.plan.actions.join(' ')).toContain('outside the newest 3 turns');
  });

  it('fits=false when even the task alone is too big', () => {
    const task = msg({ seq: 0, turn: 0, role: 'user', kind: 'task', content: 'Do this: ' + 'very long specification text '.repeat(3_000) });
    const r = planContext(input([task], { safeZone: 5_000 }));
    expect(r.fits).toBe(false);
    expect(r.needsSummary).toBeUndefined();
    expect(r.plan.actions.at(-1)).toMatch(/^does not fit/);
  });

  it('does nothing when the request fits', () => {
    const history = conversation(5, { outputChars: 1_000 });
    const r = planContext(input(history));
    expect(r).toMatchObject({ fits: true, plan: { dropped: [], cleared: [], truncatedArgs: [], actions: [] } });
    expect(r.plan.tokensAfter).toBe(r.plan.tokensBefore);
  });

  it('gives the same plan for unsorted input', () => {
    const history = conversation(40);
    const a = planContext(input(history));
    const b = planContext(input([...history].reverse()));
    expect(b.plan).toEqual(a.plan);
  });
});
