// Who may use the web page: a token (AGENTRUN_UI_TOKEN, else generated once and kept in
// AGENTRUN_HOME/ui-token, readable by the owner only), traded for an HttpOnly cookie at
// `/?token=…`; a CSRF token for every POST; and a Host allowlist against DNS rebinding.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import path from 'node:path';

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

export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

export class UiAuth {
  readonly csrf: string;
  constructor(
    readonly token: UiToken,
    private readonly hosts: Set<string>,
  ) {
    this.csrf = createHmac('sha256', token.token).update('agentrun-csrf').digest('base64url');
  }

  /** The Host header names this server (loopback, the bound address or an allowed name), so a rebound DNS name is refused. */
  hostAllowed(req: IncomingMessage, port: number): boolean {
    const host = (req.headers.host ?? '').toLowerCase();
    return this.hosts.has(host) || [...this.hosts].some((h) => !h.includes(':') && host === `${h}:${port}`);
  }

  /** `cookie` for the page, `bearer` for programs (Authorization header), else undefined. */
  authenticate(req: IncomingMessage): 'cookie' | 'bearer' | undefined {
    const cookie = cookieOf(req, COOKIE);
    if (cookie && same(cookie, this.token.token)) return 'cookie';
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (bearer && same(bearer.trim(), this.token.token)) return 'bearer';
    return undefined;
  }

  tokenMatches(candidate: string | null): boolean {
    return candidate !== null && same(candidate, this.token.token);
  }

  csrfMatches(req: IncomingMessage): boolean {
    const sent = req.headers['x-csrf-token'];
    return typeof sent === 'string' && same(sent, this.csrf);
  }

  setCookie(): string {
    return `${COOKIE}=${encodeURIComponent(this.token.token)}; HttpOnly; SameSite=Strict; Path=/`;
  }
}

/** Host names the page answers to: loopback names, the bound address, and any given (`--allowed-host`). */
export function allowedHosts(bound: string, extra: string[] = []): Set<string> {
  const names = ['127.0.0.1', 'localhost', '[::1]', ...extra.map((h) => h.toLowerCase())];
  if (bound !== '0.0.0.0' && bound !== '::') names.push(bound.includes(':') ? `[${bound}]` : bound);
  return new Set(names);
}
