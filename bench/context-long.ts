// A 1,000-turn conversation: (A) prepareContext time at turn 10 and turn 1,000 as a worker runs
// it turn after turn (its transcript cache warm, src/context/transcript.ts), and cold (a worker
// that never read this conversation: the whole transcript read); (B) the continue-as-new input
// at turn 1,000 of the real `session` workflow, with stubbed activities (test/workflow/stub-env.ts)
// so 1,000 turns take a minute: every turn writes a file and checkpoints, the worst case for
// what the workflow carries. Goals: A warm turn 1,000 ≤ 2× turn 10; B ≤ 16 KB.
// Run: npx tsx bench/context-long.ts   (BENCH_TURNS=1000, BENCH_OUTPUT_BYTES=2048, BENCH_PARTS=A for A only)
import proto from '@temporalio/proto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { contextStep } from '../src/turn/prepare.js';
import { agentsOf } from '../activities/repository.js';
import { modelCallSlots } from '../activities/limits.js';
import { runConfigSchema } from '../src/config.js';
import { transcripts } from '../src/context/transcript.js';
import { Store } from '../src/store/index.js';
import { prose } from '../test/helpers/prose.js';
import { calls, Script, stubEnv } from '../test/workflow/stub-env.js';
import { bundleWorkflows } from '../worker/index.js';
import { benchRepo, benchServers, quantile } from './harness.js';

process.env.AGENTRUN_LOG_LEVEL ??= 'warn';
const TURNS = Number(process.env.BENCH_TURNS ?? 1000);
const OUTPUT_BYTES = Number(process.env.BENCH_OUTPUT_BYTES ?? 2048);
const EventType = proto.temporal.api.enums.v1.EventType;

const home = await mkdtemp(join(tmpdir(), 'agentrun-bench-'));
const { temporal, databaseUrl, embedded } = await benchServers(home);
const schema = `bench_${randomBytes(4).toString('hex')}`;
const store = await Store.connect(databaseUrl, { schema });
try {
  // ── A: prepareContext per turn ──
  const workspace = await benchRepo({ 'README.md': 'bench\n' });
  const config = runConfigSchema.parse({ model: 'gpt-4o', contextWindow: 1_000_000, safeZone: '800k' });
  const prepare = contextStep({ store, agentsOf: (id, ws) => agentsOf({ store, home }, id, ws), modelCallSlots });
  const output = prose(1, OUTPUT_BYTES);
  /** A conversation of `turns` turns, prepared turn after turn as a worker does; each turn's prepareContext time. */
  const conversation = async (turns: number) => {
    const id = `ctx-long-${randomBytes(4).toString('hex')}`;
    await store.upsertConversation({ id, task: 'read everything', workspace, model: config.model, config });
    const put = (seq: number, turn: number, role: 'user' | 'assistant' | 'tool', content: string) =>
      store.putMessage({
        conversationId: id,
        seq,
        turn,
        role,
        kind: role === 'user' ? 'task' : role === 'tool' ? 'tool_result' : 'assistant',
        content,
        tokens: Math.ceil(content.length / 4),
        ...(role === 'tool' ? { toolName: 'read_file', toolCallId: `${seq - 1}.0` } : {}),
      });
    await put(0, 0, 'user', 'read every file and report');
    const times: number[] = [];
    for (let t = 1; t <= turns; t++) {
      await put(2 * t - 1, t, 'assistant', `Reading part ${t}.\n<read_file>\n<path>part${t}.txt</path>\n</read_file>`);
      await put(2 * t, t, 'tool', output);
      const t0 = performance.now();
      const r = await prepare.prepareContext({ conversationId: id, workspace, config, turn: t + 1, throughSeq: 2 * t });
      times.push(performance.now() - t0);
      if (!r.fits) throw new Error(`turn ${t} does not fit: ${r.reason}`);
    }
    return { id, times };
  };
  await conversation(30); // warm up: JIT, pool, the system prompt's token count
  const { id, times: warm } = await conversation(TURNS);
  const cold = async (t: number) => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      transcripts.drop(id);
      const t0 = performance.now();
      await prepare.prepareContext({ conversationId: id, workspace, config, turn: t + 1, throughSeq: 2 * t });
      times.push(performance.now() - t0);
    }
    return quantile(times, 0.5);
  };
  const around = (t: number) => quantile(warm.slice(Math.max(0, t - 6), t + 4), 0.5);
  const early = Math.min(10, TURNS);
  const a = { warmEarlyMs: around(early), warmLastMs: around(TURNS), coldEarlyMs: await cold(early), coldLastMs: await cold(TURNS) };

  console.log(`${TURNS}-turn conversation, ${OUTPUT_BYTES}-byte tool outputs, window 1M (safe zone 800k)`);
  console.log(
    `prepareContext, warm (the worker ran the earlier turns): turn ${early} ${a.warmEarlyMs.toFixed(1)} ms, turn ${TURNS} ${a.warmLastMs.toFixed(1)} ms: ${(a.warmLastMs / a.warmEarlyMs).toFixed(2)}× (goal ≤ 2×)`,
  );
  console.log(
    `prepareContext, cold (whole transcript read): turn ${early} ${a.coldEarlyMs.toFixed(1)} ms, turn ${TURNS} ${a.coldLastMs.toFixed(1)} ms: ${(a.coldLastMs / a.coldEarlyMs).toFixed(2)}×`,
  );
  console.log(`transcript reads: ${transcripts.stats.incremental} incremental, ${transcripts.stats.full} whole`);
  if (process.env.BENCH_PARTS === 'A') {
    console.log(JSON.stringify({ bench: 'context-long', turns: TURNS, outputBytes: OUTPUT_BYTES, ...a }));
  } else {
    // ── B: continue-as-new input at turn 1,000 ──
    const env = await stubEnv({ address: temporal.address, workflowBundleCode: await bundleWorkflows() });
    const script = new Script([...Array.from({ length: TURNS }, () => ({ calls: [calls.write()] })), { calls: [calls.complete()] }]);
    const t0 = performance.now();
    const handle = await env.start(script, { approval: 'never', maxTurns: TURNS + 2, continueAsNewEveryTurns: 100 });
    const result = await env.result(handle);
    const runMs = performance.now() - t0;
    if (result.status !== 'completed') throw new Error(`the stubbed run ended ${result.status}: ${result.reason}`);
    const sizes: { turn: number; bytes: number }[] = [];
    const runIds: string[] = [];
    for await (const w of env.client.workflow.list({ query: `WorkflowId = '${handle.workflowId}'` })) runIds.push(w.runId);
    for (const runId of runIds) {
      const history = await env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
      for (const e of history.events ?? []) {
        if (e.eventType !== EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW) continue;
        const payloads = e.workflowExecutionContinuedAsNewEventAttributes?.input?.payloads ?? [];
        const bytes = payloads.reduce((n, p) => n + (p.data?.length ?? 0) + Object.values(p.metadata ?? {}).reduce((m, v) => m + v.length, 0), 0);
        const carried = JSON.parse(Buffer.from(payloads[0]!.data!).toString()) as { carried: { turn: number } };
        sizes.push({ turn: carried.carried.turn, bytes });
      }
    }
    sizes.sort((x, y) => x.turn - y.turn);
    await env.close();
    console.log(
      `continue-as-new input (stubbed activities, a checkpoint every turn; ${(runMs / 1000).toFixed(0)} s for the run): ${sizes.map((s) => `turn ${s.turn} ${(s.bytes / 1024).toFixed(1)} KB`).join(', ')} (goal ≤ 16 KB at turn 1,000)`,
    );
    console.log(JSON.stringify({ bench: 'context-long', turns: TURNS, outputBytes: OUTPUT_BYTES, ...a, continueAsNew: sizes, stubbedRunMs: runMs }));
  }
  await rm(workspace, { recursive: true, force: true });
} finally {
  await store.pool.query(`drop schema ${schema} cascade`);
  await store.close();
  await temporal.stop();
  await embedded?.stop();
  await rm(home, { recursive: true, force: true });
}
process.exit(0);
