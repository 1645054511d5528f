// Serves a script file for `--model scripted:FILE`. Run directly to try a script by hand:
//   npx tsx src/model/scripted/cli.ts test/fixtures/edit-and-complete.yaml [--port 8765]
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadScript, type Script } from './script.js';
import { startScriptedServer, type ScriptedServer } from './server.js';

// One server per file (and port) per process: the model client resolves `scripted:FILE` on
// every call, and each call must not start (and leak) a server of its own.
const servers = new Map<string, Promise<ScriptedServer>>();

/**
 * Start (or reuse) a server for FILE. The file is loaded now, so a bad script fails here with
 * a readable error, and reloaded on a request when its mtime changed; a reload that fails
 * answers that request with an error text naming the problem.
 */
export function serveScriptedFile(file: string, port?: number, keepsProcessAlive = false): Promise<ScriptedServer> {
  const path = resolve(file);
  const key = `${path}:${port ?? 0}`;
  let server = servers.get(key);
  if (!server) {
    server = start(path, port, keepsProcessAlive).then((s) => ({
      ...s,
      close: () => {
        servers.delete(key);
        return s.close();
      },
    }));
    servers.set(key, server);
    server.catch(() => servers.delete(key));
  }
  return server;
}

async function start(path: string, port: number | undefined, keepsProcessAlive: boolean): Promise<ScriptedServer> {
  let script: Script = await loadScript(path);
  let mtime = (await stat(path)).mtimeMs;
  const current = async (): Promise<Script> => {
    const now = (await stat(path)).mtimeMs;
    if (now !== mtime) {
      script = await loadScript(path);
      mtime = now;
    }
    return script;
  };
  return startScriptedServer(current, { port, name: path, keepsProcessAlive });
}

async function main(argv: string[]): Promise<void> {
  const portIndex = argv.indexOf('--port');
  const file = argv.find((a, i) => !a.startsWith('--') && (portIndex < 0 || i !== portIndex + 1));
  if (!file) {
    console.error('usage: tsx src/model/scripted/cli.ts FILE [--port N]');
    process.exit(2);
  }
  const server = await serveScriptedFile(file, portIndex >= 0 ? Number(argv[portIndex + 1]) : undefined, true);
  console.log(JSON.stringify({ url: server.url, file: resolve(file) }));
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((err) => {
    console.error((err as Error).message);
    process.exit(2);
  });
}
