// `agentrun ui` (the web page against any deployment) and the page `agentrun dev` serves.
import type { Session } from '../cli/session.js';
import { CliError, EXIT } from '../cli/errors.js';
import { startUiServer, type UiServer } from './server.js';

export const DEFAULT_UI_PORT = 8080;

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

function parsePort(raw: string | undefined): number {
  const port = raw === undefined ? DEFAULT_UI_PORT : Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--port must be a port number (0 = any free port), got "${raw}"`);
  return port;
}

async function listen(session: Session, port: number, host: string): Promise<UiServer> {
  try {
    return await startUiServer({ store: session.store, client: session.client, port, host });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') throw new CliError(`port ${port} on ${host} is in use; choose another --port (0 = any free port)`);
    if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND') throw new CliError(`cannot bind ${host}: ${e.message}`);
    throw err;
  }
}

/** Serve the page until SIGINT/SIGTERM. */
export async function uiCommand(session: Session, flags: { port?: string; host?: string; json?: boolean }): Promise<number> {
  const host = flags.host ?? '127.0.0.1';
  const ui = await listen(session, parsePort(flags.port), host);
  if (flags.json) process.stdout.write(JSON.stringify({ type: 'ui', uiPage: ui.url, host }) + '\n');
  else {
    process.stdout.write(`agentrun UI: ${ui.url}\n`);
    if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1') {
      process.stdout.write(`  warning: bound to ${host}; anyone who can reach it can approve, answer and cancel (there is no login)\n`);
    }
    process.stdout.write('Ctrl-C stops it.\n');
  }
  await untilSignal();
  await ui.close();
  return EXIT.completed;
}

/** For `agentrun dev`: port 8080 on loopback, or any free port when 8080 is taken. */
export async function startDevUi(session: Pick<Session, 'store' | 'client'>): Promise<UiServer> {
  try {
    return await startUiServer({ store: session.store, client: session.client, port: DEFAULT_UI_PORT });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    return startUiServer({ store: session.store, client: session.client, port: 0 });
  }
}
