// A real local HTTP server speaking the OpenAI Chat Completions protocol (SSE streaming and
// plain JSON), serving a script, so the whole client path runs without a provider.
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorPlan, planResponse, inferTurn, type Plan, type RequestInfo, type SegmentPiece } from './plan.js';
import type { Script, ScriptFault } from './script.js';

export interface RecordedRequest {
  conversation?: string;
  turn?: number;
  attempt?: number;
  segment?: number;
  purpose?: string;
  /** Request path, e.g. `/v1/chat/completions`. */
  path: string;
  /** The parsed JSON body (the raw text when it was not JSON). */
  body: any;
  headers: Record<string, string>;
  /** Date.now() when the request arrived. */
  at: number;
}

export interface ScriptedServer {
  /** Base URL ending in /v1, for `new OpenAI({ baseURL })`. */
  url: string;
  /** Every chat-completion request, in arrival order. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface ScriptedServerOptions {
  port?: number;
  host?: string;
  /** Names the script in error texts (the file, when served from one). */
  name?: string;
  /**
   * False for a server that only answers this process's own model calls (each call keeps the
   * process running while it waits), so a server left open never keeps a finished process alive.
   */
  keepsProcessAlive?: boolean;
}

/** `script` may be a function, called per request, so a caller can reload it (see cli.ts). */
export async function startScriptedServer(script: Script | (() => Script | Promise<Script>), opts: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const shutdown = new AbortController();
  // One listener per open response (closedSignal removes it with the response): 50 conversations
  // streaming at once are not a leak, so no MaxListenersExceededWarning.
  setMaxListeners(0, shutdown.signal);
  // The only state: which scripted summary each (conversation, turn) got, so a retried
  // summary request gets the same one and conversations never share a counter.
  const summaryTurns = new Map<string, number[]>();
  // With `prompt_cache`: the previous request of each conversation and purpose, serialised.
  const lastRequest = new Map<string, string>();
  const ctx = {
    scriptName: opts.name ?? 'the script',
    summaryIndex(info: RequestInfo): number {
      let turns = summaryTurns.get(info.conversation);
      if (!turns) summaryTurns.set(info.conversation, (turns = []));
      let i = turns.indexOf(info.turn);
      if (i < 0) i = turns.push(info.turn) - 1;
      return i;
    },
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      // A bug here must reach the test as an HTTP error, not hang the client.
      if (!res.headersSent) sendJson(res, 500, { error: { message: `scripted server: ${(err as Error).message}`, type: 'server_error', code: null } });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    if (path === '/v1/models' || path === '/models') {
      if (req.method !== 'GET') return sendJson(res, 405, apiError(`${req.method} is not allowed on ${path}`));
      const model = await currentModel();
      return sendJson(res, 200, { object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'agentrun-scripted' }] });
    }
    if (path !== '/v1/chat/completions' && path !== '/chat/completions') {
      return sendJson(res, 404, apiError(`no route ${req.method} ${path}: the scripted server serves /v1/chat/completions and /v1/models`));
    }
    if (req.method !== 'POST') return sendJson(res, 405, apiError(`${req.method} is not allowed on ${path}`));

    const raw = await readBody(req);
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
    const headers = flatHeaders(req);
    const num = (name: string) => {
      const n = Number.parseInt(headers[name] ?? '', 10);
      return Number.isFinite(n) ? n : undefined;
    };
    const recorded: RecordedRequest = {
      conversation: headers['x-agentrun-conversation'],
      turn: num('x-agentrun-turn'),
      attempt: num('x-agentrun-attempt'),
      segment: num('x-agentrun-segment'),
      purpose: headers['x-agentrun-purpose'],
      path,
      body,
      headers,
      at: Date.now(),
    };
    requests.push(recorded);
    if (typeof body !== 'object' || body === null || !Array.isArray(body.messages)) {
      return sendJson(res, 400, apiError('the body must be a JSON object with a messages array'));
    }

    const info: RequestInfo = {
      conversation: recorded.conversation ?? 'default',
      turn: recorded.turn ?? inferTurn(body),
      attempt: recorded.attempt ?? 1,
      segment: recorded.segment,
      purpose: recorded.purpose ?? 'turn',
    };
    let plan: Plan;
    let model: string;
    try {
      const s = await load();
      model = s.model ?? (typeof body.model === 'string' ? body.model : 'scripted');
      plan = planResponse(s, body, info, ctx);
      const cacheKey = `${info.conversation}\0${info.purpose}`;
      const text = s.prompt_cache ? cacheText(body) : '';
      if (s.prompt_cache && plan.kind === 'answer' && plan.usage.cached_tokens === undefined) {
        const shared = sharedPrefix(lastRequest.get(cacheKey) ?? '', text);
        const cached = Math.floor((plan.usage.prompt_tokens * shared) / Math.max(1, text.length));
        plan = { ...plan, usage: { ...plan.usage, cached_tokens: cached } };
      }
      if (s.prompt_cache) lastRequest.set(cacheKey, text);
    } catch (err) {
      model = typeof body.model === 'string' ? body.model : 'scripted';
      plan = errorPlan((err as Error).message, body);
    }

    if (plan.kind === 'http') {
      res.writeHead(plan.status, plan.headers);
      res.end(plan.body);
      return;
    }
    const meta = {
      id: `chatcmpl-scripted-${safeId(info.conversation)}-${info.turn}-${info.attempt}-${plan.segment}`,
      created: Math.floor(Date.now() / 1000),
      model,
    };
    if (body.stream === true) await stream(res, plan, meta, body.stream_options?.include_usage === true, shutdown.signal);
    else await respondJson(res, plan, meta, shutdown.signal);
  }

  async function load(): Promise<Script> {
    return typeof script === 'function' ? await script() : script;
  }

  async function currentModel(): Promise<string> {
    try {
      return (await load()).model ?? 'scripted';
    } catch {
      return 'scripted';
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  if (opts.keepsProcessAlive === false) server.unref();
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}/v1`,
    requests,
    close() {
      closing ??= new Promise<void>((resolve) => {
        // Wake hung and delayed responses so their handlers finish, then drop every socket.
        shutdown.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

interface ChunkMeta {
  id: string;
  created: number;
  model: string;
}

type Delta = { role?: 'assistant'; content?: string; reasoning_content?: string; tool_calls?: unknown[] };

/** One SSE event to send: a delta carrying `chars` characters of reasoning or answer. */
interface StreamEvent {
  delta: Delta;
  chars: number;
}

/** Split text into chunks of `size`, also breaking at stream offsets in `breaks` (for faults). */
function split(text: string, size: number, offset: number, breaks: number[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    let j = Math.min(text.length, i + size);
    for (const b of breaks) if (b - offset > i && b - offset < j) j = b - offset;
    out.push(text.slice(i, j));
    i = j;
  }
  return out;
}

function faultAt(f: ScriptFault): number {
  return f.disconnect_after_chars ?? f.hang_after_chars ?? f.after_chars ?? 0;
}

/** The reasoning and answer of a plan as deltas, chunked like a provider would. */
function events(plan: Extract<Plan, { kind: 'answer' }>): StreamEvent[] {
  const breaks = plan.streamFaults.map(faultAt);
  const out: StreamEvent[] = [];
  let offset = 0;
  for (const text of split(plan.reasoning, plan.chunk, offset, breaks)) out.push({ delta: { reasoning_content: text }, chars: text.length });
  offset += plan.reasoning.length;
  for (const piece of plan.pieces) {
    if (piece.kind === 'tool') {
      out.push({ delta: { tool_calls: [{ index: piece.index, id: piece.id, type: 'function', function: { name: piece.name, arguments: '' } }] }, chars: 0 });
    }
    for (const text of split(piece.text, plan.chunk, offset, breaks)) {
      out.push({
        delta: piece.kind === 'content' ? { content: text } : { tool_calls: [{ index: piece.index, function: { arguments: text } }] },
        chars: text.length,
      });
    }
    offset += piece.text.length;
  }
  return out;
}

async function stream(
  res: ServerResponse,
  plan: Extract<Plan, { kind: 'answer' }>,
  meta: ChunkMeta,
  includeUsage: boolean,
  shutdown: AbortSignal,
): Promise<void> {
  const done = closedSignal(res, shutdown);
  // One promise for the whole response: a listener per awaited write would pile up.
  const gone = aborted(done);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
  let lastWrite: Promise<void> = Promise.resolve();
  const send = async (data: string) => {
    if (done.aborted) return;
    let ok = true;
    lastWrite = new Promise<void>((resolve) => {
      ok = res.write(data, () => resolve());
    });
    if (!ok) await Promise.race([new Promise((r) => res.once('drain', r)), gone]);
  };
  // OpenAI sends `usage: null` on every chunk once usage was asked for.
  const chunk = (delta: Delta, finish: string | null) =>
    `data: ${JSON.stringify({
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.created,
      model: meta.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    })}\n\n`;

  const usageChunk = () =>
    `data: ${JSON.stringify({ id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [], usage: usageJson(plan.usage) })}\n\n`;
  const pending = [...plan.streamFaults].sort((a, b) => faultAt(a) - faultAt(b));
  let sent = 0;
  /** Acts on the faults due at this point; false when the response must stop. */
  const fire = async (): Promise<boolean> => {
    while (pending.length && faultAt(pending[0]!) <= sent) {
      const f = pending.shift()!;
      // A provider that billed the attempt may report it before failing.
      if (f.with_usage && includeUsage) await send(usageChunk());
      if (f.malformed_line !== undefined) {
        await send(`${f.malformed_line}\n\n`);
      } else if (f.stream_error !== undefined) {
        await send(`data: ${JSON.stringify({ error: { message: f.stream_error, type: 'server_error', param: null, code: null } })}\n\n`);
        res.end();
        return false;
      } else if (f.disconnect_after_chars !== undefined) {
        // Let what was written reach the client first, so it sees exactly `sent` characters.
        await lastWrite;
        res.socket?.destroy();
        return false;
      } else if (f.hang_after_chars !== undefined) {
        await gone;
        return false;
      }
    }
    return true;
  };

  if (plan.firstTokenDelayMs) await sleep(plan.firstTokenDelayMs, done);
  await send(chunk({ role: 'assistant', content: '' }, null));
  let first = true;
  for (const ev of events(plan)) {
    if (done.aborted) return;
    if (ev.chars > 0) {
      if (!(await fire())) return;
      if (!first && plan.delayMs) await sleep(plan.delayMs, done);
      first = false;
    }
    await send(chunk(ev.delta, null));
    sent += ev.chars;
  }
  if (!(await fire()) || done.aborted) return;
  await send(chunk({}, plan.finishReason));
  if (includeUsage) await send(usageChunk());
  await send('data: [DONE]\n\n');
  res.end();
}

async function respondJson(res: ServerResponse, plan: Extract<Plan, { kind: 'answer' }>, meta: ChunkMeta, shutdown: AbortSignal): Promise<void> {
  const done = closedSignal(res, shutdown);
  if (plan.firstTokenDelayMs) await sleep(plan.firstTokenDelayMs, done);
  const f = plan.streamFaults[0];
  if (f?.disconnect_after_chars !== undefined) return void res.socket?.destroy();
  if (f?.hang_after_chars !== undefined) return aborted(done);
  if (f?.malformed_line !== undefined) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(f.malformed_line);
  }
  if (f?.stream_error !== undefined) return sendJson(res, 500, { error: { message: f.stream_error, type: 'server_error', param: null, code: null } });

  const content = plan.pieces
    .filter((p) => p.kind === 'content')
    .map((p) => p.text)
    .join('');
  const calls = plan.pieces.filter((p): p is Extract<SegmentPiece, { kind: 'tool' }> => p.kind === 'tool');
  sendJson(res, 200, {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: content || (calls.length ? null : ''),
          refusal: null,
          ...(plan.reasoning ? { reasoning_content: plan.reasoning } : {}),
          ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.text } })) } : {}),
        },
        logprobs: null,
        finish_reason: plan.finishReason,
      },
    ],
    usage: usageJson(plan.usage),
  });
}

function usageJson(u: Extract<Plan, { kind: 'answer' }>['usage']) {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    ...(u.cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens: u.cached_tokens } } : {}),
    ...(u.reasoning_tokens !== undefined ? { completion_tokens_details: { reasoning_tokens: u.reasoning_tokens } } : {}),
  };
}

/** What a provider's prompt cache keys on: the tools, then the messages, in order. */
function cacheText(body: { tools?: unknown; messages: unknown }): string {
  return JSON.stringify([body.tools ?? null, body.messages]);
}

function sharedPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function apiError(message: string) {
  return { error: { message, type: 'invalid_request_error', param: null, code: null } };
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function safeId(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/** Aborted when the client goes away or the server shuts down. */
function closedSignal(res: ServerResponse, shutdown: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const abort = () => controller.abort();
  if (shutdown.aborted) abort();
  shutdown.addEventListener('abort', abort, { once: true });
  // Drop the listener with the response, or a long-lived server collects one per request.
  res.once('close', () => {
    shutdown.removeEventListener('abort', abort);
    abort();
  });
  return controller.signal;
}

function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
