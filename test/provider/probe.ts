// Probe an OpenAI-compatible server for what docs/providers.md records: usage chunk, output cap,
// prefill flags, tool-call streaming, the over-context error, whether the stream closes, prompt time.
//   npx tsx test/provider/probe.ts http://127.0.0.1:PORT/v1 MODEL
const [base, model] = process.argv.slice(2) as [string, string];
async function raw(body: Record<string, unknown>) {
  const t0 = Date.now();
  const res = await fetch(`${base}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, ...body }),
  });
  const text = await res.text();
  return { status: res.status, ms: Date.now() - t0, headers: Object.fromEntries(res.headers), text };
}
function chunks(text: string): string[] {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((l) => l.replace(/^data: /, ''));
}
const msgs = [{ role: 'user', content: 'Say hello in five words.' }];
const out: Record<string, unknown> = {};
let r = await raw({ messages: msgs, stream: true, stream_options: { include_usage: true }, max_tokens: 40 });
const cs = chunks(r.text);
out.usageChunk = {
  status: r.status,
  last3: cs.slice(-3),
  anyUsage: cs.some((c) => c.includes('"usage"') && !c.includes('"usage":null')),
  ms: r.ms,
  transfer: r.headers['transfer-encoding'],
  connection: r.headers['connection'],
  contentLength: r.headers['content-length'],
};
r = await raw({ messages: [{ role: 'user', content: 'Write a long story about the sea.' }], stream: true, max_tokens: 32 });
out.maxTokens = {
  finish: chunks(r.text)
    .filter((c) => c.startsWith('{'))
    .map((c) => JSON.parse(c).choices?.[0]?.finish_reason)
    .filter(Boolean),
};
r = await raw({ messages: [...msgs, { role: 'assistant', content: 'Hello there, my dear', prefix: true }], stream: false, max_tokens: 20 });
out.prefix = { status: r.status, text: r.text.slice(0, 400) };
r = await raw({
  messages: [...msgs, { role: 'assistant', content: 'Hello there, my dear' }],
  continue_final_message: true,
  add_generation_prompt: false,
  stream: false,
  max_tokens: 20,
});
out.continueFinal = { status: r.status, text: r.text.slice(0, 400) };
const tools = [
  {
    type: 'function',
    function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  },
];
r = await raw({ messages: [{ role: 'user', content: 'Read the file README.md using the tool.' }], tools, stream: true, max_tokens: 60 });
out.toolsStream = { status: r.status, chunks: chunks(r.text).slice(0, 4).concat(chunks(r.text).slice(-3)) };
r = await raw({ messages: [{ role: 'user', content: 'word '.repeat(20000) }], stream: true, max_tokens: 10 });
out.overContext = { status: r.status, text: r.text.slice(0, 500) };
r = await raw({ messages: [{ role: 'system', content: 'x '.repeat(3500) }, ...msgs], stream: true, max_tokens: 10 });
out.longPrompt = { status: r.status, ms: r.ms };
console.log(JSON.stringify(out, null, 2));
export {};
