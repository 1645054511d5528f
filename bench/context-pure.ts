// Pure context pipeline cost per turn at turns 10, 100 and 200 of a run with 20 KB tool outputs:
// request tokens after pruning, planContext and renderMessages time. Baseline, measured in the same
// run: what the seed does before each call at the least — tokenizing the JSON of the whole
// conversation once, exactly (it actually re-counts after every cleaned message).
// Run: npx tsx bench/context-pure.ts
import { planContext } from '../src/context/prune.js';
import { renderMessages } from '../src/context/render.js';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { messageTokens } from '../src/model/tokens.js';
import type { StoredMessage } from '../src/types.js';

const MODEL = 'gpt-4o';
const CONV = 'bench-context';
const SAFE_ZONE = 100_000;
const SYSTEM_TOKENS = 3_000;

const block = Array.from({ length: 400 }, (_, i) => `  ${i}: const value${i} = await service.fetch(id, { retries: ${i % 7} }); // output`).join('\n');

function message(m: Omit<StoredMessage, 'conversationId' | 'tokens'>): StoredMessage {
  return { conversationId: CONV, ...m, tokens: messageTokens({ role: m.role, content: m.content, toolCalls: m.toolCalls }, MODEL) };
}

function run(turns: number): StoredMessage[] {
  const out = [message({ seq: 0, turn: 0, role: 'user', kind: 'task', content: 'Refactor the service layer to the new client; keep the tests green.' })];
  let seq = 1;
  for (let t = 1; t <= turns; t++) {
    const path = `src/module${t}.ts`;
    const a = seq++;
    out.push(message({ seq: a, turn: t, role: 'assistant', kind: 'assistant', content: `Reading ${path}.\n<read_file>\n<path>${path}</path>\n</read_file>` }));
    out.push(
      message({
        seq: seq++,
        turn: t,
        role: 'tool',
        kind: 'tool_result',
        content: `// ${path}\n${block}`.repeat(2).slice(0, 20_000),
        toolName: 'read_file',
        toolCallId: `${a}.0`,
        meta: { path },
      }),
    );
  }
  return out;
}

function median(f: () => void, runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    f();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

const exact = new Tiktoken(o200k);
const full = run(200);
console.log(`safe zone ${SAFE_ZONE}, system ${SYSTEM_TOKENS} tokens, 20 KB per tool output, model ${MODEL}`);
console.log('turn | raw tokens | request tokens | planContext ms | render ms | baseline ms (tokenize history) | baseline/ours');
for (const turn of [10, 100, 200]) {
  const history = full.filter((m) => m.turn <= turn);
  const input = { conversationId: CONV, messages: history, systemTokens: SYSTEM_TOKENS, safeZone: SAFE_ZONE, markedIds: { ids: [] }, keepRecentTurns: 3 };
  const { plan } = planContext(input);
  const planMs = median(() => planContext(input), 101);
  const renderMs = median(() => renderMessages(history, plan, { conversationId: CONV, toolFormat: 'xml', withMessageIds: true }), 21);
  const baselineMs = median(() => exact.encode(JSON.stringify(history.map((m) => ({ role: m.role, content: m.content }))), [], []).length, 3);
  const ours = planMs + renderMs;
  console.log(
    `${String(turn).padStart(4)} | ${String(plan.tokensBefore).padStart(10)} | ${String(plan.tokensAfter).padStart(14)} | ${planMs.toFixed(3).padStart(14)} | ${renderMs.toFixed(3).padStart(9)} | ${baselineMs.toFixed(1).padStart(30)} | ${(baselineMs / ours).toFixed(0)}×`,
  );
}
