// One Temporal dev server (the `temporal` CLI) and one PostgreSQL for the whole test run, and
// the workflow bundle built once. Test files isolate themselves by task queue and DB schema.
// The run has its own TMPDIR, and its teardown fails the run when a test left a file there or a
// process running (test/helpers/leaks.ts): the suite leaves nothing under /tmp.
import type { TestProject } from 'vitest/node';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startTemporalDevServer } from '../src/embedded/temporal.js';
import { startEmbeddedPostgres } from '../src/embedded/postgres.js';
import { bundleWorkflows } from '../worker/index.js';
import { ancestry, leakedEntries, RUN_MARKER, runProcesses, type LeakedProcess } from './helpers/leaks.js';
import { ensureBuilt } from './helpers/dist.js';
import { checkPrerequisites } from './helpers/prerequisites.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    databaseUrl: string;
    workflowBundlePath: string;
  }
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

interface SharedRun {
  provided: { temporalAddress: string; databaseUrl: string; workflowBundlePath: string };
  projects: number;
  teardown: () => Promise<void>;
}

/**
 * The run's servers, shared by every project of the config (vitest.config.ts: the unit files, the
 * integration files, the files run alone; each project calls this setup): started by the first,
 * stopped by the last.
 */
const SHARED = Symbol.for('agentrun.test.run');
type WithShared = typeof globalThis & { [SHARED]?: Promise<SharedRun> };

export default async function setup(project: TestProject) {
  const g = globalThis as WithShared;
  const started = (g[SHARED] ??= startRun());
  let run: SharedRun;
  try {
    run = await started;
  } catch (err) {
    if (g[SHARED] === started) delete g[SHARED];
    throw err;
  }
  run.projects += 1;
  project.provide('temporalAddress', run.provided.temporalAddress);
  project.provide('databaseUrl', run.provided.databaseUrl);
  project.provide('workflowBundlePath', run.provided.workflowBundlePath);
  return async () => {
    if (--run.projects > 0) return;
    if (g[SHARED] === started) delete g[SHARED];
    await run.teardown();
  };
}

async function startRun(): Promise<SharedRun> {
  // A machine that lacks a user, a binary or a server fails here, in one line with the fix.
  await checkPrerequisites();
  // Child workers and the CLI run the compiled package: build it now if the sources changed.
  ensureBuilt();
  // Everything the run creates with os.tmpdir() (and every child process, which inherits TMPDIR)
  // lands here; the marker names the run's processes.
  const runTmp = await mkdtemp(join(tmpdir(), 'agentrun-run-'));
  // Open like /tmp itself: the embedded PostgreSQL runs as another user below it.
  await chmod(runTmp, 0o1777);
  const outerTmp = process.env.TMPDIR;
  process.env.TMPDIR = runTmp;
  process.env[RUN_MARKER] = runTmp;
  const home = await mkdtemp(join(tmpdir(), 'agentrun-test-'));
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await rm(home, { recursive: true, force: true });
  };
  const leave = () => {
    if (outerTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outerTmp;
    delete process.env[RUN_MARKER];
  };
  try {
    const temporal = await startTemporalDevServer(home, { headless: true });
    stops.push(() => temporal.stop());
    let databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    if (!(await reachable(databaseUrl))) {
      const embedded = await startEmbeddedPostgres(home);
      stops.push(() => embedded.stop());
      databaseUrl = embedded.databaseUrl;
    }
    const workflowBundlePath = join(home, 'workflow-bundle.js');
    await writeFile(workflowBundlePath, await bundleWorkflows());
    return {
      provided: { temporalAddress: temporal.address, databaseUrl, workflowBundlePath },
      projects: 0,
      teardown: async () => {
        await stopAll();
        leave();
        await checkNothingLeft(runTmp);
      },
    };
  } catch (err) {
    // No teardown runs after a failed setup (no temporal CLI, say): leave nothing in /tmp either.
    await stopAll();
    leave();
    await rm(runTmp, { recursive: true, force: true });
    throw err;
  }
}

/** Throws, naming them, when the run left files in its TMPDIR or processes running; removes both either way. */
async function checkNothingLeft(runTmp: string): Promise<void> {
  // Unprivileged workers make their directories here: a test that narrowed it breaks every later one.
  const mode = (await stat(runTmp)).mode & 0o7777;
  const exclude = ancestry(process.pid);
  // A process being stopped gets a moment to go.
  let procs: LeakedProcess[] = [];
  for (let i = 0; i < 30; i++) {
    procs = runProcesses(runTmp, exclude);
    if (procs.length === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const p of procs) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  // Caches of the tools the tests run, no test's doing: tsx's compile cache (tsx-<uid>), the
  // native binding @swc/core unpacks (swc-native-<uid>) in a process that bundles workflow code,
  // and the module compile cache vitest turns on where Node has one (node-compile-cache, Node 22+).
  const files = leakedEntries(runTmp).filter((f) => !/\/(?:(?:tsx|swc-native)-\d+|node-compile-cache) \(/.test(f));
  await rm(runTmp, { recursive: true, force: true });
  const problems = [
    ...(mode !== 0o1777
      ? [`the run's TMPDIR ${runTmp} is mode ${mode.toString(8)}, not 1777: a test changed it (widen with | instead of setting a mode)`]
      : []),
    ...(files.length ? [`${files.length} temporary files or directories:`, ...files.map((f) => `  ${f}`)] : []),
    ...(procs.length ? [`${procs.length} processes still running (now killed):`, ...procs.map((p) => `  pid ${p.pid} in ${p.cwd || '?'}: ${p.cmdline}`)] : []),
  ];
  if (problems.length) {
    // vitest reports an error thrown here but keeps its exit code: fail the run ourselves.
    process.exitCode = 1;
    throw new Error(
      `the tests left behind what they created; remove it in the test's afterAll/afterEach (or the helper that made it):\n${problems.join('\n')}`,
    );
  }
}
