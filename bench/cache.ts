// The provider's prompt cache over a 40-turn session: each turn's request as prepareContext plans it
// and callModel renders it (real system prompt, pruner carrying the previous plan, renderer), sent
// by the real `openai` client to a server on loopback that records the requests (the scripted
// model, which also reports cached tokens as the prefix shared with the previous request). Two
// sessions under a 24k safe zone: one that fits (small outputs) and one under pruning pressure
// (4,000-token files read), each with --prune-target 0.6 (the default) and 1 (pruning to the limit
// every turn: the behaviour before steps). Measured: the share of input characters that repeat the
// previous request's prefix (goals: ≥ 0.95 when it fits, ≥ 0.6 under pressure), and the pressured
// session's input cost at a 90%-off cached price.
// Run: npx tsx bench/cache.ts   (BENCH_TURNS=40)
import OpenAI from 'openai';
import { costUsd } from '../src/model/pricing.js';
import { streamChat } from '../src/model/stream.js';
import { startScriptedServer } from '../src/model/scripted/server.js';
import { addUsage, ZERO_USAGE, type Usage } from '../src/types.js';
import { prefixShare, requestText, sessionRequests } from '../test/helpers/cache-session.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 40);
const SAFE_ZONE = 24_000;
// Per million tokens, Anthropic-like: cached reads 90% off. The scripted model is priced through the user table.
process.env.AGENTRUN_PRICING = JSON.stringify({ scripted: { input: 3, output: 15, cachedInput: 0.3 } });

const server = await startScriptedServer({ turns: [{ say: 'ok' }], repeat_last: true, prompt_cache: true });
const client = new OpenAI({ baseURL: server.url, apiKey: 'bench', maxRetries: 0 });

interface Row {
  session: string;
  target: number;
  share: number;
  steps: number;
  maxTokens: number;
  fits: boolean;
  usage: Usage;
  inputCost: number;
  uncachedCost: number;
}

async function run(session: 'fits' | 'pressure', target: number): Promise<Row> {
  const conversationId = `bench-cache-${session}-${target}`;
  const texts: string[] = [];
  let usage = ZERO_USAGE;
  let steps = 0;
  let maxTokens = 0;
  let fits = true;
  const first = server.requests.length;
  for (const turn of sessionRequests({
    conversationId,
    turns: TURNS,
    safeZone: SAFE_ZONE,
    pruneTarget: target,
    // A session that fits: reads and command outputs of ~300 tokens; under pressure: 4,000-token files.
    outputTokens: session === 'fits' ? (t) => 250 + ((t * 37) % 100) : () => 4_000,
  })) {
    const r = await streamChat({
      client,
      model: 'scripted',
      messages: turn.messages,
      extraBody: { stream_options: { include_usage: true } },
      headers: { 'x-agentrun-conversation': conversationId, 'x-agentrun-turn': String(turn.turn), 'x-agentrun-purpose': 'turn' },
      onText: () => {},
      onReasoning: () => {},
    });
    usage = addUsage(usage, r.usage);
    if (turn.step) steps++;
    maxTokens = Math.max(maxTokens, turn.plan.tokensAfter);
    fits &&= turn.fits;
  }
  // Measured on what the server received, not on what was meant to be sent.
  for (const req of server.requests.slice(first)) texts.push(requestText((req.body as { messages: never }).messages));
  const inputOnly = (u: Usage) => costUsd('scripted', { ...u, completionTokens: 0 });
  return {
    session,
    target,
    share: prefixShare(texts),
    steps,
    maxTokens,
    fits,
    usage,
    inputCost: inputOnly(usage),
    uncachedCost: inputOnly({ ...usage, cachedTokens: 0 }),
  };
}

const rows: Row[] = [];
for (const session of ['fits', 'pressure'] as const) for (const target of [0.6, 1]) rows.push(await run(session, target));
await server.close();

console.log(`prompt cache over ${TURNS} turns, safe zone ${SAFE_ZONE.toLocaleString('en-US')} tokens; input at $3/M, cached $0.30/M`);
console.log('session   target  prefix share  steps  max prompt  prompt tok  cached tok  input cost  without cache');
for (const r of rows) {
  console.log(
    `${r.session.padEnd(9)} ${r.target.toFixed(1).padStart(6)}  ${r.share.toFixed(3).padStart(12)}  ${String(r.steps).padStart(5)}  ${String(r.maxTokens).padStart(10)}  ${String(r.usage.promptTokens).padStart(10)}  ${String(r.usage.cachedTokens ?? 0).padStart(10)}  ${`$${r.inputCost.toFixed(4)}`.padStart(10)}  ${`$${r.uncachedCost.toFixed(4)}`.padStart(13)}${r.fits ? '' : '  (did not fit)'}`,
  );
}
const get = (s: string, t: number) => rows.find((r) => r.session === s && r.target === t)!;
const fits = get('fits', 0.6);
const pressured = get('pressure', 0.6);
const before = get('pressure', 1);
console.log(
  `\ngoals: fits ${fits.share.toFixed(3)} (≥ 0.95) ${fits.share >= 0.95 ? 'met' : 'MISSED'}; under pressure ${pressured.share.toFixed(3)} (≥ 0.6) ${pressured.share >= 0.6 ? 'met' : 'MISSED'}, ` +
    `was ${before.share.toFixed(3)} pruning to the limit every turn`,
);
console.log(
  `pressured input cost: $${pressured.inputCost.toFixed(4)} with steps against $${before.inputCost.toFixed(4)} pruning every turn ` +
    `(${((100 * pressured.inputCost) / before.inputCost).toFixed(0)}%), $${pressured.uncachedCost.toFixed(4)} with no cache at all`,
);
for (const r of rows) if (!r.fits || r.maxTokens > SAFE_ZONE) throw new Error(`${r.session} at ${r.target}: the safe zone was exceeded`);
