// Crash tokens: the output tokens a provider bills for one answer whose worker is SIGKILLed
// halfway through it, against the same answer uncrashed. The scripted model server sits behind a
// counting proxy (the provider's meter): every content character it sends counts, including those
// of the attempt that died, at the scripted server's own 4 characters a token. The worker reaches
// it through OPENAI_BASE_URL like any OpenAI-compatible provider. Goal: at most 1.1×.
// Run: npx tsx bench/crash-tokens.ts
// Measured 2026-11-29 (load average 15–25, other engineers' tests): killed at 3,912 and 3,924 of
// 7,754 characters streamed, 1,972 and 1,987 output tokens billed against 1,939 uncrashed: 1.017×
// and 1.025× (asked again from the start, it would be about 1.5×).
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { runConfigSchema } from '../src/config.js';
import { parseScript, startScriptedServer } from '../src/model/scripted/index.js';
import { WORKFLOW_TYPE, type ConversationInput, type ConversationResult } from '../workflows/api.js';
import { childWorkerBench } from './child-workers.js';
import { sseProxy } from './relay.js';
import { benchRepo } from './harness.js';

process.env.AGENTRUN_LOG_LEVEL ??= 'warn';
const GOAL = 1.1;
const ANSWER = `${Array.from({ length: 150 }, (_, i) => `Line ${i} of a long answer that costs output tokens.`).join('\n')}\n<attempt_completion>\n<result>done</result>\n</attempt_completion>`;
const script = { turns: [{ say: ANSWER, chunk: 12, delay_ms: 8 }] };

/** Content characters sent (all requests; the runs go one after the other), read from the SSE the proxy forwards. */
let sent = 0;
function countSse(): (chunk: string) => void {
  let buf = '';
  return (chunk) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.startsWith('data: {')) continue;
      try {
        const content = JSON.parse(line.slice(6))?.choices?.[0]?.delta?.content;
        if (typeof content === 'string') sent += content.length;
      } catch {
        // not a chunk
      }
    }
  };
}

const upstream = await startScriptedServer(parseScript(JSON.stringify(script), 'crash-tokens'));
// Counted as it leaves: a provider bills what it generated for a client that then died.
const proxy = await sseProxy(upstream.url, () => countSse());
process.env.OPENAI_API_KEY = 'bench';
process.env.OPENAI_BASE_URL = proxy.url;

const load = loadavg();
const bench = await childWorkerBench();
const { store, client } = bench;
// A provider's prefill (DeepSeek's prefix, vLLM's continue_final_message): the scripted server sees
// no x-agentrun-* headers behind OPENAI_BASE_URL, and a prefill says by itself where the answer stopped.
const config = runConfigSchema.parse({ model: 'bench-model', approval: 'never', heartbeatTimeoutMs: 2000, loopDetection: false, continuation: 'prefill' });
const tokens = (chars: number) => Math.ceil(chars / 4);

async function run(crash: boolean): Promise<{ chars: number; status: string; streamedAtKill?: number }> {
  const h = bench.queue();
  const sentBefore = sent;
  const workspace = await benchRepo();
  const first = await bench.worker(h);
  const id = `bench-crash-tokens-${randomBytes(4).toString('hex')}`;
  const handle = await client.workflow.start(WORKFLOW_TYPE, {
    workflowId: id,
    taskQueue: h.taskQueue,
    args: [{ task: 'answer at length', workspace, config } satisfies ConversationInput],
  });
  let streamedAtKill: number | undefined;
  if (crash) {
    // Halfway: when the stream holds half the answer, the worker dies.
    for (;;) {
      const rows = await store.readStream(id, 0, 10_000);
      const chars = rows.reduce((n, r) => n + (r.event.type === 'delta' ? r.event.text.length : 0), 0);
      if (chars >= ANSWER.length / 2) {
        streamedAtKill = chars;
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await first.kill('SIGKILL');
    await bench.worker(h);
  }
  const result = (await handle.result().catch(async (err) => {
    const messages = await store.getMessages(id);
    console.error(messages.map((m) => `${m.seq} ${m.role}: ${m.content.slice(0, 300)}`).join('\n'));
    throw err;
  })) as ConversationResult;
  await rm(workspace, { recursive: true, force: true });
  const message = (await store.getMessages(id)).find((m) => m.role === 'assistant');
  if (message?.content !== ANSWER) throw new Error(`the ${crash ? 'crashed' : 'uncrashed'} run stored an answer that is not the scripted one`);
  return { chars: sent - sentBefore, status: result.status, streamedAtKill };
}

try {
  const clean = await run(false);
  const crashed = await run(true);
  const billedRatio = crashed.chars / clean.chars;
  console.log(
    `Crash tokens: one answer of ${tokens(ANSWER.length)} output tokens; the worker SIGKILLed at ${crashed.streamedAtKill} of ${ANSWER.length} characters streamed`,
  );
  console.log(
    `  output tokens billed: uncrashed ${tokens(clean.chars)}, crashed ${tokens(crashed.chars)} (${crashed.status}); load average ${load.map((x) => x.toFixed(2)).join(' ')}`,
  );
  console.log(`  ratio ${billedRatio.toFixed(3)}× (goal ≤ ${GOAL}×: ${billedRatio <= GOAL ? 'met' : 'NOT met'})`);
  if (clean.chars === 0 || crashed.status !== 'completed') process.exitCode = 1;
  console.log(JSON.stringify({ bench: 'crash-tokens', billedRatio, uncrashedTokens: tokens(clean.chars), crashedTokens: tokens(crashed.chars) }));
} finally {
  await bench.close();
  await upstream.close();
  proxy.close();
}
process.exit(process.exitCode ?? 0);
