// The agentrun web page and its small JSON/SSE API, on Node's http module.
//
//   GET  /                                   the page (also /c/:id, the page opened on one conversation)
//   GET  /api/conversations?status=&limit=   conversations from the store (live status of running ones)
//   GET  /api/conversations/:id              the row, the workflow state if running, checkpoints, usage
//   GET  /api/conversations/:id/events?from= Server-Sent Events, `id: <offset>` (resumes on Last-Event-ID)
//   GET  /api/conversations/:id/charts       context per turn vs the safe zone, tokens/cost per turn, timeline
//   POST /api/conversations/:id/approve|deny|answer|cancel   JSON body; workflow updates and signals
//   GET  /api/evals                          the eval sets; /api/evals/:set its cases and runs side by side
//
//   POST /login                              token=… (form or JSON): a session cookie, then back to the page
//
// Security (src/ui/auth.ts): binds 127.0.0.1 unless told otherwise; every request but /healthz
// needs an operator's token (traded at `/?token=…` or POST /login for a session cookie that holds
// no token and expires, or `Authorization: Bearer` for programs); the Host
// header must name this server (DNS rebinding); POSTs from the page carry the CSRF token, need
// `content-type: application/json` and, when the browser sends an Origin, it must be this server's own.
import { evalRunsSideBySide } from '../client/evals.js';
import { environmentOf } from '../client/inspection.js';
import { followStream } from '../client/watch.js';
import { subagentsOf } from '../client/subagents.js';
import { storedWhere } from '../client/workspace-where.js';
import { finishedOutcomes, outcomePhrase, type Outcome } from '../client/outcome.js';
import type { Client } from '@temporalio/client';
import { readFile } from 'node:fs/promises';
import { proseScript, PROSE_SCRIPT_MARKER } from './prose-script.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Store } from '../store/index.js';
import { allowedHosts, COOKIE, UiAuth, type Identity, type UiToken } from './auth.js';
import type { Operators } from './operators.js';
import { chartData } from './charts.js';
import type { ConversationRow } from '../store/types.js';
import { conversationInScope, narrowScope, noConversation, type TenantScope } from '../client/tenancy.js';
import { FINAL_STATUSES, type ConversationStatus } from '../types.js';
import { cacheSummary, usageByTurn } from '../client/usage.js';
import type { ConversationState } from '../../workflows/api.js';
import {
  answerQuestion,
  decideApproval,
  notRunning,
  queryStateWithin,
  requestCancel,
  temporalMessage,
  UpdateDeadlineError,
  withinDeadline,
} from '../client/actions.js';

export interface UiServerOptions {
  store: Store;
  client: Client;
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Single-token mode (see loadUiToken): everyone acts under its name. */
  token?: UiToken;
  /** Per-operator tokens (the operators file): wins over `token`; approvals record each operator's name. */
  operators?: Operators;
  /** How long a login session lasts (default 12 h). */
  sessionTtlMs?: number;
  /** A TLS proxy serves the page: the session cookie gets `Secure`. */
  secureCookie?: boolean;
  /** An authenticating proxy on this host names the user in this header (believed only from loopback peers). */
  trustedUserHeader?: string;
  /** Host names besides loopback and the bound address that the page answers to (behind a proxy). */
  allowedHosts?: string[];
  /** The tenants this page serves (AGENTRUN_TENANT); an operator bound to tenants sees those of them. Absent: every tenant. */
  tenants?: TenantScope;
}

export interface UiServer {
  url: string;
  /** The URL that logs a browser in (single-token mode: it carries the token, show it only to the operator; with operators: the page, which asks for a token). */
  loginUrl: string;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024;
const QUERY_TIMEOUT_MS = 2500;
const KEEPALIVE_MS = 15_000;
/** An update needs a worker to run it: without one it would wait for ever, so bound it. */
const UPDATE_TIMEOUT_MS = 30_000;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const isFinal = (s: string | undefined) => s !== undefined && FINAL_STATUSES.includes(s as ConversationStatus);

/** What the page and programs may ask, after authentication: one named route each. `:name` segments are parameters. */
const ROUTES = [
  { name: 'page', methods: ['GET', 'HEAD'], path: [] },
  { name: 'page', methods: ['GET', 'HEAD'], path: ['c', ':id'] },
  { name: 'list', methods: ['GET'], path: ['api', 'conversations'] },
  { name: 'detail', methods: ['GET'], path: ['api', 'conversations', ':id'] },
  { name: 'events', methods: ['GET'], path: ['api', 'conversations', ':id', 'events'] },
  { name: 'charts', methods: ['GET'], path: ['api', 'conversations', ':id', 'charts'] },
  { name: 'act', methods: ['POST'], path: ['api', 'conversations', ':id', ':action'] },
  { name: 'evalSets', methods: ['GET'], path: ['api', 'evals'] },
  { name: 'evalRuns', methods: ['GET'], path: ['api', 'evals', ':id'] },
] as const;

const ACTIONS: readonly string[] = ['approve', 'deny', 'answer', 'cancel'];

type RouteName = (typeof ROUTES)[number]['name'];

/** The route `parts` names for `method`; 'method' when the path is known but not for that method. */
function matchRoute(parts: string[], method: string): { name: RouteName; params: Record<string, string> } | 'method' | undefined {
  let pathKnown = false;
  for (const r of ROUTES) {
    if (r.path.length !== parts.length) continue;
    const params: Record<string, string> = {};
    if (!r.path.every((seg, i) => (seg.startsWith(':') ? ((params[seg.slice(1)] = parts[i]!), true) : seg === parts[i]))) continue;
    // A literal segment outranks a parameter: GET …/events is the events route, not an action.
    if (!(r.methods as readonly string[]).includes(method)) {
      pathKnown = true;
      continue;
    }
    return { name: r.name, params };
  }
  return pathKnown ? 'method' : undefined;
}

export async function startUiServer(opts: UiServerOptions): Promise<UiServer> {
  const { store, client } = opts;
  const host = opts.host ?? '127.0.0.1';
  const auth = new UiAuth(
    {
      token: opts.token,
      operators: opts.operators,
      sessionTtlMs: opts.sessionTtlMs,
      secureCookie: opts.secureCookie,
      trustedUserHeader: opts.trustedUserHeader,
    },
    allowedHosts(host, opts.allowedHosts),
  );
  // The terminal's tool-call parser goes into the page: it shows prose without the tool blocks.
  const parserScript = await proseScript();
  const page = (await readFile(new URL('./page.html', import.meta.url), 'utf8')).replace(PROSE_SCRIPT_MARKER, () => parserScript);
  let port = 0;
  const streams = new Set<ServerResponse>();
  let closing = false;

  /** The workflow's state query, bounded in time (a conversation with no worker would hang it). */
  function queryState(id: string): Promise<ConversationState | undefined> {
    return queryStateWithin(client, id, QUERY_TIMEOUT_MS);
  }

  type HostUsage = { host: string; workspace: string; diskBytes?: number };
  /**
   * `placed`: the host holding the workspace, the directory there and its size (workspace_usage).
   * `where` is the workspace's line as `list` shows it: that host and directory, and the path it
   * started with if it moved (`workspace` stays that starting path).
   */
  function summary(row: ConversationRow, state: ConversationState | undefined, placed: HostUsage | undefined, outcome?: Outcome) {
    return {
      id: row.id,
      status: state?.status ?? row.status,
      // While the model step waits for a refusing provider, what it said.
      reason: (state?.status === 'waiting_for_provider' ? state.providerWait : undefined) ?? row.reason ?? null,
      turns: state?.turn ?? row.turns,
      costUsd: state?.costUsd ?? row.costUsd,
      usage: state?.usage ?? row.usage,
      model: row.model,
      workspace: row.workspace,
      where: storedWhere(row, placed),
      host: placed?.host ?? null,
      hostWorkspace: placed?.workspace ?? null,
      diskBytes: placed?.diskBytes ?? null,
      scheduleId: row.scheduleId ?? null,
      task: row.task.slice(0, 300),
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
      finishedAt: row.finishedAt?.toISOString() ?? null,
      outcome: outcome ?? null,
      // The same short phrase `agentrun list` prints: "branch@commit pushed verified".
      outcomeText: outcomePhrase(outcome),
    };
  }

  // A finished conversation's outcome does not change until it is continued (a new finish time), and
  // the list is polled every few seconds: read each from Temporal once per finish. One Temporal no
  // longer has (or could not answer) is asked again after a minute, not on every poll.
  const outcomeCache = new Map<string, { finishedAt: string; outcome?: Outcome; readAt: number }>();
  async function outcomesOf(rows: ConversationRow[]): Promise<Map<string, Outcome>> {
    const done = rows.filter((r) => isFinal(r.status));
    const key = (r: ConversationRow) => r.finishedAt?.toISOString() ?? r.updatedAt.toISOString();
    const now = Date.now();
    const missing = done.filter((r) => {
      const c = outcomeCache.get(r.id);
      return c?.finishedAt !== key(r) || (!c.outcome && now - c.readAt > 60_000);
    });
    const read = await finishedOutcomes(
      client,
      missing.map((r) => r.id),
    );
    for (const r of missing) outcomeCache.set(r.id, { finishedAt: key(r), outcome: read.get(r.id), readAt: now });
    const out = new Map<string, Outcome>();
    for (const r of done) {
      const o = outcomeCache.get(r.id)?.outcome;
      if (o) out.set(r.id, o);
    }
    return out;
  }

  async function listConversations(url: URL, scope: TenantScope) {
    const status = url.searchParams.get('status') || undefined;
    const limit = Math.min(Math.max(Number(url.searchParams.get('limit') ?? 100) || 100, 1), 500);
    // The store's status is written at turn ends; the workflow knows "waiting" and "paused" now.
    // Ask the running ones (a bounded number, in parallel, each with a deadline).
    const rows = await store.listConversations({
      status: status === 'waiting' || status === 'paused' || status === 'awaiting_budget' || status === 'waiting_for_provider' ? undefined : status,
      limit,
      tenants: scope,
    });
    let live = 0;
    const [states, usage, outcomes] = await Promise.all([
      Promise.all(rows.map(async (r) => (!isFinal(r.status) && live++ < 50 ? await queryState(r.id) : undefined))),
      // Which worker host holds each workspace, where, and its size on disk when last measured.
      store.getWorkspaceUsage(rows.map((r) => r.id)),
      outcomesOf(rows),
    ]);
    const out = rows.map((r, i) => summary(r, states[i], usage.get(r.id), outcomes.get(r.id)));
    return { conversations: status ? out.filter((c) => c.status === status) : out };
  }

  /** The whole of a pending call (the state holds a short preview): the command, or the path and its new content or diff. */
  async function fullCall(id: string, callId: string): Promise<string | null> {
    const call = await store.getToolCall(id, callId);
    if (!call) return null;
    const a = call.args;
    if (typeof a.command === 'string') return a.command;
    const body = typeof a.diff === 'string' ? a.diff : typeof a.content === 'string' ? a.content : undefined;
    if (typeof a.path === 'string' && body !== undefined) return `${a.path}\n${body}`;
    return JSON.stringify(a, null, 2);
  }

  /**
   * Conversation `id`'s row, if the caller's scope may see it: every route that names a conversation
   * asks this first, so another tenant's reads as absent (404, the same words). Null while a
   * started conversation is not in the store yet (its tenant read from Temporal).
   */
  async function visibleConversation(id: string, scope: TenantScope): Promise<ConversationRow | null> {
    const found = await conversationInScope({ store, client }, id, scope);
    if (!found) throw new HttpError(404, noConversation(id, scope));
    return found.row;
  }

  async function conversationDetail(id: string, scope: TenantScope) {
    const row = await visibleConversation(id, scope);
    if (!row) throw new HttpError(409, `conversation ${id} has not been recorded in the store yet`);
    const state = isFinal(row.status) ? undefined : await queryState(id);
    const [checkpoints, usageRows, subagents, environment, placed, outcomes] = await Promise.all([
      store.getCheckpoints(id),
      store.getUsage(id),
      subagentsOf(store, id),
      environmentOf(store, id),
      store.getWorkspaceUsage([id]).then((u) => u.get(id)),
      outcomesOf([row]),
    ]);
    const byTurn = usageByTurn(usageRows);
    return {
      conversation: { ...summary(row, state, placed, outcomes.get(id)), task: row.task },
      state: state
        ? {
            status: state.status,
            turn: state.turn,
            paused: state.paused,
            usage: state.usage,
            costUsd: state.costUsd,
            pendingApproval: state.pendingApproval ? { ...state.pendingApproval, full: await fullCall(id, state.pendingApproval.callId) } : null,
            pendingQuestion: state.pendingQuestion ?? null,
          }
        : null,
      checkpoints: checkpoints.map((c) => ({ turn: c.turn, commit: c.commit, files: c.files, at: c.at.toISOString() })),
      usageByTurn: byTurn,
      cache: cacheSummary(byTurn),
      subagents,
      environment,
    };
  }

  /** The live stream as SSE: everything after the offset, then new events as they are appended. */
  async function streamEvents(id: string, url: URL, req: IncomingMessage, res: ServerResponse, scope: TenantScope): Promise<void> {
    const lastId = req.headers['last-event-id'];
    const fromRaw = typeof lastId === 'string' && lastId !== '' ? lastId : (url.searchParams.get('from') ?? '0');
    let offset = Number(fromRaw);
    if (!Number.isInteger(offset) || offset < 0) throw new HttpError(400, `from must be a stream offset (a whole number ≥ 0), got "${fromRaw}"`);
    await visibleConversation(id, scope);

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    streams.add(res);
    // The client went away, or the server is closing (it ends every response): stop following.
    const stop = new AbortController();
    const onClose = () => stop.abort();
    if (closing) stop.abort();
    req.on('close', onClose);
    res.on('close', onClose);
    let lastWrite = Date.now();
    const write = (text: string) => {
      res.write(text);
      lastWrite = Date.now();
    };
    const keepAlive = setInterval(() => {
      if (Date.now() - lastWrite >= KEEPALIVE_MS) write(': keep-alive\n\n');
    }, KEEPALIVE_MS / 3);
    const rows = followStream({ client, store }, id, { from: offset, signal: stop.signal, runningCheckMs: 5000 });
    try {
      for (;;) {
        const next = await rows.next();
        if (next.done) {
          if (stop.signal.aborted) return;
          const why = next.value.finished ? 'finished' : next.value.status ? `conversation ${next.value.status}` : 'conversation not running';
          write(`event: end\ndata: ${JSON.stringify({ reason: why })}\n\n`);
          return;
        }
        const r = next.value;
        write(`id: ${r.offset}\ndata: ${JSON.stringify({ offset: r.offset, at: r.at.toISOString(), ...r.event })}\n\n`);
      }
    } finally {
      clearInterval(keepAlive);
      streams.delete(res);
      req.off('close', onClose);
      res.off('close', onClose);
      await rows.return({ offset: 0 });
      if (!res.writableEnded) res.end();
    }
  }

  async function bounded<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await withinDeadline(client, UPDATE_TIMEOUT_MS, fn);
    } catch (err) {
      if (err instanceof UpdateDeadlineError) {
        throw new HttpError(504, `no worker took this within ${UPDATE_TIMEOUT_MS / 1000} s; is a worker polling the conversation's task queue?`);
      }
      throw err;
    }
  }

  async function act(id: string, action: string, body: Record<string, unknown>, who: Identity): Promise<unknown> {
    const handle = client.workflow.getHandle(id);
    const str = (k: string, required = false): string | undefined => {
      const v = body[k];
      if (v === undefined || v === null || v === '') {
        if (required) throw new HttpError(400, `"${k}" is required`);
        return undefined;
      }
      if (typeof v !== 'string') throw new HttpError(400, `"${k}" must be a string`);
      return v;
    };
    try {
      switch (action) {
        case 'approve':
        case 'deny': {
          const approved = action === 'approve';
          const callId = str('callId');
          let argsHash = str('argsHash');
          if (approved && argsHash === undefined) {
            // Approving is for what the operator saw: the call and the hash of its arguments.
            const waiting = (await queryState(id))?.pendingApproval;
            if (waiting?.argsHash !== undefined)
              throw new HttpError(400, `"argsHash" is required to approve: send the pendingApproval.argsHash (${waiting.callId}) you were shown`);
            argsHash = undefined;
          }
          // The recorded approver is the operator the token or session belongs to, never a name sent in the body.
          const r = await bounded(() => decideApproval(handle, { callId, argsHash, approved, reason: str('reason'), by: who.name }));
          return { conversationId: id, ...r };
        }
        case 'answer': {
          const text = str('text', true)!;
          if (!text.trim()) throw new HttpError(400, 'the answer is empty');
          const r = await bounded(() => answerQuestion(handle, text));
          return { conversationId: id, answered: true, ...r };
        }
        case 'cancel': {
          await requestCancel(handle, str('reason') ?? 'cancelled from the agentrun UI', body.now === true);
          return { conversationId: id, cancelRequested: true };
        }
      }
    } catch (err) {
      if (err instanceof HttpError) throw err;
      if (notRunning(err)) {
        // Temporal says "not found" for a finished workflow too: the store tells the two apart.
        if (await store.getConversation(id).catch(() => null)) throw new HttpError(409, `conversation ${id} is not running any more`);
        throw new HttpError(404, `no conversation with id ${id}`);
      }
      // Validator rejections (nothing waiting, wrong call id, empty answer) are the caller's to fix.
      throw new HttpError(409, temporalMessage(err));
    }
    throw new HttpError(404, `unknown action ${action}`);
  }

  const readJson = (req: IncomingMessage) => readBody(req, ['application/json']);

  async function readBody(req: IncomingMessage, types: string[]): Promise<Record<string, unknown>> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!types.includes(type)) throw new HttpError(415, `POST bodies must be ${types.join(' or ')}`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req as AsyncIterable<Buffer>) {
      size += c.length;
      if (size > MAX_BODY) throw new HttpError(413, `body larger than ${MAX_BODY} bytes`);
      chunks.push(c);
    }
    const text = Buffer.concat(chunks).toString('utf8').trim();
    if (text === '') return {};
    if (type === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(text));
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw new HttpError(400, 'the body is not valid JSON');
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new HttpError(400, 'the body must be a JSON object');
    return v as Record<string, unknown>;
  }

  function sameOrigin(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    if (origin === undefined) return true; // not a browser, or a same-origin GET-like request
    try {
      return new URL(origin).host === req.headers.host;
    } catch {
      return false;
    }
  }

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(body));
  };

  /** 401: the API says why in JSON; a browser asking for the page gets a form that asks for the token. A stale cookie is cleared. */
  function refuse(req: IncomingMessage, res: ServerResponse, message: string): void {
    const headers: Record<string, string> = { 'cache-control': 'no-store' };
    if (req.headers.cookie?.includes(`${COOKIE}=`)) headers['set-cookie'] = auth.clearCookie();
    const wantsPage = !(req.url ?? '/').startsWith('/api/') && req.method === 'GET' && /text\/html/.test(req.headers.accept ?? '');
    if (!wantsPage) {
      res.writeHead(401, { ...headers, 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: message }));
      return;
    }
    res
      .writeHead(401, {
        ...headers,
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        // Not no-referrer: under it the browser sends `Origin: null` with the form, and same-origin checks refuse it.
        'referrer-policy': 'same-origin',
      })
      .end(loginPage(message));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const parts = url.pathname
      .split('/')
      .filter(Boolean)
      .map((p) => {
        try {
          return decodeURIComponent(p);
        } catch {
          throw new HttpError(400, 'bad URL encoding');
        }
      });
    const method = req.method ?? 'GET';

    if (!auth.hostAllowed(req, port))
      throw new HttpError(
        403,
        `host ${req.headers.host ?? '(none)'} is not this server's; add it with --allowed-host if a proxy serves the page under that name`,
      );
    if (parts[0] === 'healthz') return json(res, 200, { ok: true });
    const loginWith = async (): Promise<string | null | undefined> => {
      if (parts[0] !== 'api' && (method === 'GET' || method === 'HEAD') && url.searchParams.has('token')) return url.searchParams.get('token');
      if (parts[0] === 'login' && parts.length === 1 && method === 'POST') {
        if (!sameOrigin(req)) throw new HttpError(403, 'cross-origin requests are refused');
        const v = (await readBody(req, ['application/json', 'application/x-www-form-urlencoded'])).token;
        return typeof v === 'string' ? v : null;
      }
      return undefined;
    };
    const presented = await loginWith();
    if (presented !== undefined) {
      const op = auth.operatorOf(presented);
      if (op === undefined) return refuse(req, res, 'unknown token: it is not in the operators file (or not the page token); ask for one, or check for a typo');
      // Trade the token for a session, and drop it from the address bar and the history.
      const back = parts[0] === 'login' ? '/' : url.pathname;
      res
        .writeHead(303, { location: back, 'set-cookie': auth.setCookie(auth.login(op), req), 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
        .end();
      return;
    }
    const who = auth.authenticate(req);
    if (who === 'stale') return refuse(req, res, 'your session expired or is unknown: log in again with your token');
    if (!who) return refuse(req, res, 'log in with your operator token (…/?token=…, or the form on the page), or send Authorization: Bearer <token>');
    if (method === 'POST' && who.csrfKey !== undefined && !auth.csrfMatches(req, who.csrfKey)) throw new HttpError(403, 'missing or wrong CSRF token');

    const route = matchRoute(parts, method);
    if (route === 'method') throw new HttpError(405, 'method not allowed');
    if (!route) throw new HttpError(404, 'not found');
    const { id, action } = route.params;
    // What this caller may see: the server's tenants, narrowed to those the operator is bound to.
    const scope = narrowScope(opts.tenants, who.tenants);
    switch (route.name) {
      case 'page':
        return sendPage(res, method, who);
      case 'list':
        return json(res, 200, await listConversations(url, scope));
      case 'detail':
        return json(res, 200, await conversationDetail(id!, scope));
      case 'events':
        return streamEvents(id!, url, req, res, scope);
      case 'charts': {
        if (scope !== undefined) await visibleConversation(id!, scope);
        const data = await chartData(store, client, id!);
        if (!data) throw new HttpError(404, noConversation(id!, scope));
        return json(res, 200, data);
      }
      case 'evalSets':
        adminOnly(scope);
        return json(res, 200, { sets: await store.listEvalSets() });
      case 'evalRuns': {
        adminOnly(scope);
        const runs = await evalRunsSideBySide(store, id!);
        if (!runs) throw new HttpError(404, `no eval set ${id}`);
        return json(res, 200, runs);
      }
      case 'act': {
        if (!ACTIONS.includes(action!)) throw new HttpError(404, 'not found');
        if (!sameOrigin(req)) throw new HttpError(403, 'cross-origin requests are refused');
        if (scope !== undefined) await visibleConversation(id!, scope);
        const body = await readJson(req);
        return json(res, 200, await act(id!, action!, body, who));
      }
    }
  }

  /** Eval sets' runs span tenants: an administrator's view. */
  function adminOnly(scope: TenantScope): void {
    if (scope !== undefined) throw new HttpError(403, 'eval sets are for an operator of every tenant; yours is bound to tenants');
  }

  function sendPage(res: ServerResponse, method: string, who: Identity): void {
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    res.end(
      method === 'HEAD'
        ? undefined
        : page.replace('__CSRF_TOKEN__', who.csrfKey ? auth.csrfFor(who.csrfKey) : '').replace('__OPERATOR__', escapeHtml(who.name)),
    );
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (res.headersSent) {
        if (!res.writableEnded) res.end();
        return;
      }
      json(res, status, { error: message });
    });
  });
  server.keepAliveTimeout = 5000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8080, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  port = addr.port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${addr.port}/`,
    loginUrl:
      opts.operators || !opts.token ? `http://${shownHost}:${addr.port}/` : `http://${shownHost}:${addr.port}/?token=${encodeURIComponent(opts.token.token)}`,
    async close() {
      closing = true;
      for (const res of streams) if (!res.writableEnded) res.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

const escapeHtml = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page a browser gets without a live session: why, and a field for the token. */
function loginPage(message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>agentrun: log in</title>
<style>body{font:15px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}input{width:100%;padding:.4rem;margin:.5rem 0}</style></head>
<body><h1>agentrun</h1><p id="why">${escapeHtml(message)}</p>
<form method="post" action="/login"><label>Operator token <input type="password" name="token" id="token" autocomplete="current-password" autofocus required></label>
<button type="submit" id="login">Log in</button></form></body></html>`;
}
