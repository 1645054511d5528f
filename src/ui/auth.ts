// Who may use the web page: per-operator tokens (the operators file, src/ui/operators.ts), else
// one token (AGENTRUN_UI_TOKEN, else generated once and kept in AGENTRUN_HOME/ui-token, readable by
// the owner only). A token is traded at `/?token=…` or POST /login for a session (a random id in an
// HttpOnly cookie, expiring); a CSRF token per session for every POST; a Host allowlist against DNS rebinding.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Operator, Operators } from './operators.js';

export const COOKIE = 'agentrun_ui';

export interface UiToken {
  token: string;
  /** Who acts with this token: recorded with approvals and denials. */
  name: string;
  /** Newly generated (show it once), from the environment, or read from the file. */
  source: 'generated' | 'env' | 'file';
  file?: string;
}

/** Who is at the keyboard, for the record of approvals (the CLI's --as default, the page's token name default). */
export function osUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    return 'operator';
  }
}

/** The page's token: AGENTRUN_UI_TOKEN, else AGENTRUN_HOME/ui-token (created 0600 when missing). */
export function loadUiToken(home: string, env: NodeJS.ProcessEnv = process.env): UiToken {
  const name = env.AGENTRUN_UI_TOKEN_NAME?.trim() || osUser();
  const fromEnv = env.AGENTRUN_UI_TOKEN?.trim();
  if (fromEnv) return { token: fromEnv, name, source: 'env' };
  const file = path.join(home, 'ui-token');
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), name, source: 'file', file };
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const token = randomBytes(24).toString('base64url');
  writeFileSync(file, token + '\n', { mode: 0o600, flag: 'wx' });
  return { token, name, source: 'generated', file };
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

/** Who a request acts as: the operator's name, and how it proved it. */
export interface Identity extends Operator {
  via: 'cookie' | 'bearer' | 'proxy';
  /** What the CSRF token is derived from: the session (cookie logins) or the proxy's user; none for bearers. */
  csrfKey?: string;
}

export interface UiAuthOptions {
  /** Single-token mode: one token, one name (AGENTRUN_UI_TOKEN[_NAME]). */
  token?: UiToken;
  /** Per-operator tokens (the operators file): wins over `token`. */
  operators?: Operators;
  /** How long a login lasts. Default 12 h. */
  sessionTtlMs?: number;
  /** The page is served over https (a TLS proxy in front): cookies get `Secure`. */
  secureCookie?: boolean;
  /** An authenticating proxy on this host names the user in this header; believed only from a loopback peer. */
  trustedUserHeader?: string;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;

const DEFAULT_SESSION_TTL_MS = 12 * 3_600_000;
/** Sessions kept at once; past it the oldest go (each login adds one). */
const MAX_SESSIONS = 10_000;

/**
 * Tokens are only ever exchanged: at login for a random session id (the cookie), or per request as
 * a bearer. The server keeps session id → operator and expiry; the token never sits in the browser.
 */
export class UiAuth {
  private readonly sessions = new Map<string, Operator & { expiresAt: number }>();
  private readonly secret = randomBytes(32);
  readonly sessionTtlMs: number;

  constructor(
    private readonly opts: UiAuthOptions,
    private readonly hosts: Set<string>,
  ) {
    if (!opts.token && !opts.operators) throw new Error('the web page needs a token or an operators file');
    this.sessionTtlMs = opts.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
  }

  /** The Host header names this server (loopback, the bound address or an allowed name), so a rebound DNS name is refused. */
  hostAllowed(req: IncomingMessage, port: number): boolean {
    const host = (req.headers.host ?? '').toLowerCase();
    return this.hosts.has(host) || [...this.hosts].some((h) => !h.includes(':') && host === `${h}:${port}`);
  }

  /** The operator a token belongs to (the operators file, else the single token's name and every tenant), or undefined. */
  operatorOf(candidate: string | null | undefined): Operator | undefined {
    if (!candidate) return undefined;
    if (this.opts.operators) return this.opts.operators.operatorOf(candidate);
    const t = this.opts.token!;
    return same(candidate.trim(), t.token) ? { name: t.name, tenants: undefined } : undefined;
  }

  /** A live session from the cookie, a bearer token, or a trusted proxy's user; `stale` when a cookie was sent but is expired or unknown. */
  authenticate(req: IncomingMessage): Identity | 'stale' | undefined {
    const header = this.opts.trustedUserHeader?.toLowerCase();
    const user = header ? req.headers[header] : undefined;
    // Only a proxy on this host may say who the user is; from anywhere else the header means nothing.
    if (typeof user === 'string' && LOOPBACK.has(req.socket.remoteAddress ?? '')) {
      const name = user.trim();
      // A proxy's user is bound to no tenant of its own: the server's (AGENTRUN_TENANT) confines it.
      return USER_NAME.test(name) ? { name, tenants: undefined, via: 'proxy', csrfKey: `proxy:${name}` } : undefined;
    }
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (bearer) {
      const op = this.operatorOf(bearer);
      return op === undefined ? undefined : { ...op, via: 'bearer' };
    }
    const sid = cookieOf(req, COOKIE);
    if (!sid) return undefined;
    const s = this.sessions.get(sid);
    if (!s || s.expiresAt <= Date.now()) {
      this.sessions.delete(sid);
      return 'stale';
    }
    return { name: s.name, tenants: s.tenants, via: 'cookie', csrfKey: sid };
  }

  /** Start a session for an operator; the id goes in the cookie. */
  login(op: Operator): string {
    const now = Date.now();
    for (const [id, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(id);
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, { name: op.name, tenants: op.tenants, expiresAt: now + this.sessionTtlMs });
    return id;
  }

  logout(session: string): void {
    this.sessions.delete(session);
  }

  /** The CSRF token of a session (or a proxy's user): the page carries it, a cross-site form cannot know it. */
  csrfFor(key: string): string {
    return createHmac('sha256', this.secret).update(`csrf:${key}`).digest('base64url');
  }

  csrfMatches(req: IncomingMessage, key: string): boolean {
    const sent = req.headers['x-csrf-token'];
    return typeof sent === 'string' && same(sent, this.csrfFor(key));
  }

  /** The session cookie: HttpOnly, SameSite=Strict, and Secure over https (TLS here, or a TLS proxy said so by --secure-cookie). */
  setCookie(session: string, req: IncomingMessage): string {
    const secure = this.opts.secureCookie || (req.socket as TLSSocket).encrypted === true;
    return `${COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.floor(this.sessionTtlMs / 1000)}${secure ? '; Secure' : ''}`;
  }

  clearCookie(): string {
    return `${COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
  }
}

/** Host names the page answers to: loopback names, the bound address, and any given (`--allowed-host`). */
export function allowedHosts(bound: string, extra: string[] = []): Set<string> {
  const names = ['127.0.0.1', 'localhost', '[::1]', ...extra.map((h) => h.toLowerCase())];
  if (bound !== '0.0.0.0' && bound !== '::') names.push(bound.includes(':') ? `[${bound}]` : bound);
  return new Set(names);
}
