// The compiled package (dist/) for the processes tests start: `agentrun` as a user runs it
// (bin/agentrun.js) and the child workers (dist/worker/main.js). They start in about half the
// time of the sources through tsx. dist/ is only ever what the sources compile to now: its
// build-info.json records the hash of the sources it was built from (scripts/source-hash.mjs), and
// `ensureBuilt` (the run's global setup, and every test file's setup) builds it again when the
// sources differ, so a test never runs a stale build.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceHash } from '../../scripts/source-hash.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The compiled CLI (what `npx agentrun` runs). */
export const CLI = join(ROOT, 'bin/agentrun.js');
/** The compiled worker process (worker/main.ts). */
export const WORKER_MAIN = join(ROOT, 'dist/worker/main.js');

function builtFrom(): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'dist/build-info.json'), 'utf8')) as { sourceHash?: string }).sourceHash;
  } catch {
    return undefined;
  }
}

let checked = false;

/** `ensureBuilt` once in this process (the helpers that start dist/ processes call it). */
export function ensureBuiltOnce(): void {
  if (!checked) ensureBuilt();
  checked = true;
}

/** Build dist/ (`npm run build`) unless it was built from exactly the sources there are now. */
export function ensureBuilt(): void {
  const want = sourceHash(ROOT);
  if (builtFrom() === want) return;
  console.error('dist/ was not built from these sources: building it (npm run build), the tests run the compiled CLI and workers');
  try {
    execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`npm run build failed, and the tests need dist/ built from these sources:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
  }
  if (builtFrom() !== sourceHash(ROOT)) throw new Error('the sources changed while dist/ was built: run the tests again');
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The JSON lines of stdout (`--json` output), parsed. */
  lines: Record<string, any>[];
}

/** The lines of `out` that are JSON objects, parsed (what `--json` prints, between plain lines). */
export function jsonLines(out: string): Record<string, any>[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>);
}

/**
 * The compiled `agentrun ARGS` run to its end: its exit code and output. A non-zero exit is a result
 * to assert on; a command killed by its timeout or that could not start throws, with its output.
 */
export function runCli(
  args: readonly string[],
  opts: {
    env: NodeJS.ProcessEnv;
    cwd?: string;
    timeout?: number;
    maxBuffer?: number;
    /** another entry than the compiled CLI (bin/agentrun-dev.js runs the sources) */ entry?: string;
  },
): Promise<CliRun> {
  ensureBuiltOnce();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [opts.entry ?? CLI, ...args],
      { cwd: opts.cwd ?? ROOT, env: opts.env, timeout: opts.timeout ?? 120_000, maxBuffer: opts.maxBuffer ?? 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (err as { code?: unknown }).code : 0;
        if (typeof code !== 'number') {
          reject(new Error(`agentrun ${args.join(' ')} did not exit by itself (${err?.message}):\n${stdout}\n${stderr}`));
          return;
        }
        resolve({ code, stdout, stderr, lines: jsonLines(stdout) });
      },
    );
  });
}
