// An OpenAI-compatible provider on loopback, in its own process, that admits LIMIT answers at once
// per model (its "account") and answers 429 with `retry-after: RETRY_AFTER` beyond that, as a real
// provider at an account's limit does. Each answer streams for DELAY_MS. A conversation gets
// CALLS answers: a `list_files` call until its last, then attempt_completion.
//
//   LIMIT=2 DELAY_MS=200 RETRY_AFTER=1 CALLS=1 node test/helpers/limited-provider.mjs   → prints "listening PORT"
//
// GET /stats: per model the answers served, the refusals, the most answers streaming at once, and a
// log of every request (time, model, outcome, who). POST /control {model, refuseNext, retryAfter, holdMs, calls}:
// refuse the model's next requests with that retry-after; hold its answers that long (a stream that
// takes its time); give its conversations `calls` answers instead of CALLS. POST /reset: counters back to zero.
import { createServer } from 'node:http';

const LIMIT = Number(process.env.LIMIT ?? 2);
const DELAY_MS = Number(process.env.DELAY_MS ?? 200);
const RETRY_AFTER = process.env.RETRY_AFTER ?? '1';
const CALLS = Number(process.env.CALLS ?? 1);

let stats;
const reset = () => (stats = { byModel: {}, log: [] });
reset();
const control = new Map();

const model = (m) => (stats.byModel[m] ??= { served: 0, refused: 0, current: 0, max: 0 });

function chunk(res, id, delta, finish) {
  res.write(
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: 'limited', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
  );
}

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', async () => {
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
      return;
    }
    if (req.method === 'POST' && req.url === '/reset') {
      reset();
      control.clear();
      res.writeHead(200).end('{}');
      return;
    }
    if (req.method === 'POST' && req.url === '/control') {
      const c = JSON.parse(body);
      control.set(c.model, { refuseNext: c.refuseNext ?? 1, retryAfter: String(c.retryAfter ?? RETRY_AFTER), holdMs: c.holdMs, calls: c.calls });
      res.writeHead(200).end('{}');
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end('{"error":{"message":"not found"}}');
      return;
    }
    const request = JSON.parse(body);
    const m = model(request.model);
    const who = (request.messages ?? [])
      .filter((x) => x.role === 'user')
      .map((x) => (typeof x.content === 'string' ? x.content : JSON.stringify(x.content)))
      .join('\n')
      .slice(0, 4000);
    const forced = control.get(request.model);
    if (forced?.refuseNext > 0 || m.current >= LIMIT) {
      if (forced?.refuseNext > 0) forced.refuseNext--;
      m.refused++;
      stats.log.push({ at: Date.now(), model: request.model, outcome: 429, who });
      const retryAfter = forced ? forced.retryAfter : RETRY_AFTER;
      res
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter })
        .end(JSON.stringify({ error: { message: `rate limited: ${LIMIT} concurrent answers`, type: 'rate_limit_error' } }));
      return;
    }
    m.current++;
    m.max = Math.max(m.max, m.current);
    stats.log.push({ at: Date.now(), model: request.model, outcome: 200, who });
    const answered = (request.messages ?? []).filter((x) => x.role === 'assistant').length;
    const text =
      answered + 1 < (forced?.calls ?? CALLS)
        ? `Looking around.\n<list_files>\n<path>.</path>\n</list_files>`
        : `Done.\n<attempt_completion>\n<result>done</result>\n</attempt_completion>`;
    const id = `c${Date.now()}`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    chunk(res, id, { role: 'assistant', content: '' }, null);
    res.on('error', () => {});
    await new Promise((r) => setTimeout(r, forced?.holdMs || DELAY_MS));
    chunk(res, id, { content: text }, null);
    chunk(res, id, {}, 'stop');
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: 'limited', choices: [], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
    m.current--;
    m.served++;
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
