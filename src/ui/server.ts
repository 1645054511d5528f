// The agentrun web page and its small JSON/SSE API, on Node's http module: here the HTTP side
// (authentication, routing, bodies, the page); the conversation routes are src/ui/conversation-routes.ts.
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
import type { Client } from '@temporalio/client';
import { readFile } from 'node:fs/promises';
import { proseScript, PROSE_SCRIPT_MARKER } from './prose-script.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Store } from '../store/index.js';
import { allowedHosts, COOKIE, UiAuth, type Identity, type UiToken } from './auth.js';
import type { Operators } from './operators.js';
import { chartData } from './charts.js';
import { narrowScope, noConversation, type TenantScope } from '../client/tenancy.js';
import { conversationRoutes, HttpError } from './conversation-routes.js';

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

  const routes = conversationRoutes({ store, client }, { streams, closing: () => closing });

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
        return json(res, 200, await routes.list(url, scope));
      case 'detail':
        return json(res, 200, await routes.detail(id!, scope));
      case 'events':
        return routes.events(id!, url, req, res, scope);
      case 'charts': {
        if (scope !== undefined) await routes.visible(id!, scope);
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
        if (scope !== undefined) await routes.visible(id!, scope);
        const body = await readJson(req);
        return json(res, 200, await routes.act(id!, action!, body, who));
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
