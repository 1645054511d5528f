// `agentrun ui` (the web page against any deployment) and the page `agentrun dev` serves.
import type { Session } from './session.js';
import { CliError } from './errors.js';
import { exitCodeForSignal, whenStopped } from './stop-signals.js';
import { agentrunHome } from '../runtime/home.js';
import { parseDuration } from '../duration.js';
import { loadUiToken, type UiToken } from '../ui/auth.js';
import { operatorsOrError } from './operator.js';
import { callerScope } from './tenancy.js';
import type { TenantScope } from '../client/tenancy.js';
import type { Operators } from '../ui/operators.js';
import { startUiServer, type UiServer } from '../ui/server.js';

const DEFAULT_UI_PORT = 8080;

function parsePort(raw: string | undefined): number {
  const port = raw === undefined ? DEFAULT_UI_PORT : Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--port must be a port number (0 = any free port), got "${raw}"`);
  return port;
}

/** Host names a proxy serves the page under (AGENTRUN_UI_ALLOWED_HOSTS, comma-separated). */
const extraHosts = () =>
  (process.env.AGENTRUN_UI_ALLOWED_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);

export interface UiAuthFlags {
  operators?: string;
  sessionTtl?: string;
  secureCookie?: boolean;
  trustedUserHeader?: string;
}

/** Who may log in and for how long: the operators file (else the one page token), the session length, Secure cookies. */
function authSettings(flags: UiAuthFlags): {
  operators?: Operators;
  token?: UiToken;
  sessionTtlMs?: number;
  secureCookie: boolean;
  trustedUserHeader?: string;
  tenants: TenantScope;
} {
  const operators = operatorsOrError(flags.operators);
  const ttl = flags.sessionTtl ?? process.env.AGENTRUN_UI_SESSION_TTL;
  let sessionTtlMs: number | undefined;
  if (ttl !== undefined && ttl.trim() !== '') {
    try {
      sessionTtlMs = parseDuration(ttl);
    } catch {
      sessionTtlMs = 0;
    }
    if (!(sessionTtlMs > 0))
      throw new CliError(`the session length (--session-ttl / AGENTRUN_UI_SESSION_TTL) must be a duration such as 30m or 12h, got "${ttl}"`);
  }
  const secureCookie = flags.secureCookie === true || /^(1|true|yes)$/i.test(process.env.AGENTRUN_UI_SECURE_COOKIE ?? '');
  const trustedUserHeader = flags.trustedUserHeader?.trim() || process.env.AGENTRUN_UI_TRUSTED_USER_HEADER?.trim() || undefined;
  // AGENTRUN_TENANT confines the whole page to that tenant, as it confines the CLI.
  const tenants = callerScope();
  return { operators, token: operators ? undefined : loadUiToken(agentrunHome()), sessionTtlMs, secureCookie, trustedUserHeader, tenants };
}

/**
 * Tell the operator how to log in, on stderr (stdout may be a --json stream): the token URL only
 * when the token was just generated (once); afterwards where the token is kept.
 */
function announceLogin(ui: UiServer, token: UiToken | undefined, operators?: Operators): void {
  if (operators) process.stderr.write(`agentrun UI: log in at ${ui.url} with your operator token (${operators.names.length} operators in ${operators.file})\n`);
  else if (!token) return;
  else if (token.source === 'generated')
    process.stderr.write(`agentrun UI login (shown once; the token is kept in ${token.file}, readable by you only): ${ui.loginUrl}\n`);
  else if (token.source === 'file') process.stderr.write(`agentrun UI: log in at ${ui.url}?token=<the token in ${token.file}>\n`);
  else process.stderr.write(`agentrun UI: log in at ${ui.url}?token=<$AGENTRUN_UI_TOKEN>\n`);
}

async function listen(session: Session, port: number, host: string, flags: UiAuthFlags): Promise<UiServer> {
  const auth = authSettings(flags);
  try {
    const ui = await startUiServer({ store: session.store, client: session.client, port, host, ...auth, allowedHosts: extraHosts() });
    announceLogin(ui, auth.token, auth.operators);
    return ui;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') throw new CliError(`port ${port} on ${host} is in use; choose another --port (0 = any free port)`);
    if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND') throw new CliError(`cannot bind ${host}: ${e.message}`);
    throw err;
  }
}

/** Serve the page until a stop signal (SIGINT, SIGTERM, SIGHUP); exit 128 + the signal. */
export async function uiCommand(session: Session, flags: UiAuthFlags & { port?: string; host?: string; json?: boolean }): Promise<number> {
  const host = flags.host ?? '127.0.0.1';
  const stop = whenStopped();
  const ui = await listen(session, parsePort(flags.port), host, flags).catch((err: unknown) => {
    stop.release();
    throw err;
  });
  if (flags.json) process.stdout.write(JSON.stringify({ type: 'ui', uiPage: ui.url, host }) + '\n');
  else {
    process.stdout.write(`agentrun UI: ${ui.url}\n`);
    if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1') {
      process.stdout.write(
        `  warning: bound to ${host}; serve it over TLS (a reverse proxy, with --secure-cookie) so tokens and session cookies are not sent in clear\n`,
      );
    }
    process.stdout.write('Ctrl-C, SIGTERM or SIGHUP stops it.\n');
  }
  const signal = await stop.signal;
  await ui.close();
  stop.release();
  if (!flags.json) process.stdout.write(`${signal}: the page is stopped\n`);
  return exitCodeForSignal(signal);
}

/** For `agentrun dev`: port 8080 on loopback, or any free port when 8080 is taken. */
export async function startDevUi(session: Pick<Session, 'store' | 'client'>): Promise<UiServer> {
  const auth = authSettings({});
  let ui: UiServer;
  try {
    ui = await startUiServer({ store: session.store, client: session.client, port: DEFAULT_UI_PORT, ...auth });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    ui = await startUiServer({ store: session.store, client: session.client, port: 0, ...auth });
  }
  announceLogin(ui, auth.token, auth.operators);
  return ui;
}
