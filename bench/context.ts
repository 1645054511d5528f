// Context cost per turn: request tokens and prepareContext time at turns 10, 100 and 200 of a
// 200-turn scripted conversation with 20 KB tool outputs. Tokens must stay flat (the safe zone)
// and time must not grow with the square of the turns. Baseline in the same run: counting the
// tokens of the whole unpruned history at that turn (what a runner without stored counts does).
// Run: npx tsx bench/context.ts
import { performance } from 'node:perf_hooks';
import { timelineOf } from '../src/cli/inspect.js';
import { runConfigSchema } from '../src/config.js';
import { countTokens } from '../src/context/tokens.js';
import { WORKFLOW_TYPE, type ConversationInput, type ConversationResult } from '../workflows/api.js';
import { prose } from '../test/helpers/prose.js';
import { benchEnv, benchRepo, benchScript } from './harness.js';

const TURNS = 200;
const files: Record<string, string> = {};
for (let n = 1; n < TURNS; n++) files[`d${n}.txt`] = prose(n, 20 * 1024);
const env = await benchEnv();
try {
  const workspace = await benchRepo(files);
  const turns = [];
  for (let n = 1; n < TURNS; n++) turns.push({ say: `step ${n}\n<read_file>\n<path>d${n}.txt</path>\n</read_file>` });
  turns.push({ say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' });
  const model = await benchScript({ default_chunk: 4096, turns });
  const config = runConfigSchema.parse({ model, maxTurns: 250, contextWindow: 128_000, safeZone: 0.8, continueAsNewEveryTurns: 100 });
  const id = `bench-context-${Date.now()}`;
  const t0 = performance.now();
  const handle = await env.client.workflow.start(WORKFLOW_TYPE, {
    workflowId: id,
    taskQueue: env.taskQueue,
    args: [{ task: 'read all', workspace, config } satisfies ConversationInput],
  });
  const result = (await handle.result()) as ConversationResult;
  const total = performance.now() - t0;
  if (result.status !== 'completed') throw new Error(`ended ${result.status}: ${result.reason}`);

  // prepareContext durations per turn from every run's history (activities in order, one per turn).
  const prepare: number[] = [];
  const runs: string[] = [];
  for await (const w of env.client.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(w.runId);
  const ordered = runs.reverse();
  for (const [i, runId] of ordered.entries()) {
    const t = timelineOf(await env.client.workflow.getHandle(id, runId).fetchHistory(), i + 1);
    for (const a of t.activities) if (a.type === 'prepareContext') prepare.push(a.durationMs ?? NaN);
  }
  const messages = await env.store.getMessages(id);
  countTokens('warm up the encoder before timing the baseline', 'gpt-4o');
  const rows: Record<string, number>[] = [];
  for (const turn of [10, 100, 200]) {
    const ctx = await env.store.getContext(id, turn);
    const history = messages.filter((m) => m.turn < turn || (m.turn === turn && m.role !== 'assistant'));
    const b0 = performance.now();
    const unpruned = history.reduce((n, m) => n + countTokens(m.content, 'gpt-4o'), 0);
    const baselineMs = performance.now() - b0;
    rows.push({
      turn,
      requestTokens: ctx?.promptTokens ?? NaN,
      unprunedTokens: unpruned,
      prepareContextMs: prepare[turn - 1] ?? NaN,
      baselineCountAllMs: baselineMs,
    });
  }
  console.log(`200-turn conversation, 20 KB tool outputs, safe zone 80% of 128k; ${(total / 1000).toFixed(1)} s in all, ${runs.length} runs (continue-as-new)`);
  console.log('turn  request tokens  unpruned tokens  prepareContext ms  baseline: count all ms');
  for (const r of rows)
    console.log(
      `${String(r.turn).padStart(4)}  ${String(r.requestTokens).padStart(14)}  ${String(r.unprunedTokens).padStart(15)}  ${r.prepareContextMs!.toFixed(0).padStart(17)}  ${r.baselineCountAllMs!.toFixed(0).padStart(22)}`,
    );
  const r10 = rows[0]!;
  const r200 = rows[2]!;
  console.log(
    `prepareContext time turn 200 / turn 10: ${(r200.prepareContextMs! / r10.prepareContextMs!).toFixed(2)}x (history grew ${(r200.unprunedTokens! / r10.unprunedTokens!).toFixed(1)}x)`,
  );
  console.log(JSON.stringify({ bench: 'context', totalMs: total, runs: runs.length, rows }));
} finally {
  await env.close();
}
// The in-process scripted model server keeps listening; the bench is done.
process.exit(0);
