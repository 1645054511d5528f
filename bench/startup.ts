// How fast the compiled CLI starts, and how big the installed package is.
//   npm run build && npx tsx bench/startup.ts [--runs 15] [--no-size] [--baseline DIR]
// Medians of N runs of `agentrun --help`, `agentrun list` and `agentrun inspect ID` (against
// running servers: a Temporal dev server and PostgreSQL started here, one finished conversation),
// beside `node -e 0` and `temporal --help` measured in the same run. Goals: --help at
// most 3× `node -e 0`; list and inspect under 500 ms. `--baseline DIR` also measures the built
// checkout in DIR (e.g. a `git worktree` of main) against the same servers, its runs interleaved
// with ours, so a before/after comparison shares the machine's state. Then the installed size of
// the package with production dependencies only (npm pack, npm install of the tarball into an
// empty directory).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findTemporalCli } from '../src/embedded/temporal.js';
import { benchServers } from './harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'agentrun.js');
const argv = process.argv.slice(2);
const RUNS = Number(argv[argv.indexOf('--runs') + 1]) || 15;
const withSize = !argv.includes('--no-size');
const baselineDir = argv.includes('--baseline') ? path.resolve(argv[argv.indexOf('--baseline') + 1] ?? '') : undefined;
const BASELINE_BIN = baselineDir && path.join(baselineDir, 'bin', 'agentrun.js');
if (BASELINE_BIN && !existsSync(path.join(baselineDir!, 'dist', 'src', 'cli', 'main.js'))) {
  console.error(`bench/startup: --baseline ${baselineDir} is not a built checkout (npm run build there first)`);
  process.exit(2);
}

if (!existsSync(path.join(ROOT, 'dist', 'src', 'cli', 'main.js'))) {
  console.error('bench/startup: build first (npm run build): the bench measures the compiled CLI');
  process.exit(2);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** One run's wall time (ms) of `cmd args`, checking it succeeds. */
function once(label: string, cmd: string, args: string[], env: NodeJS.ProcessEnv): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${label} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** Median wall time (ms) of `cmd args` over RUNS runs (after one warm-up). */
function time(label: string, cmd: string, args: string[], env: NodeJS.ProcessEnv): number {
  once(label, cmd, args, env);
  return median(Array.from({ length: RUNS }, () => once(label, cmd, args, env)));
}

/** Medians of several commands whose runs alternate (one warm-up each), so load drifts hit them alike. */
function timeInterleaved(cmds: { label: string; cmd: string; args: string[] }[], env: NodeJS.ProcessEnv): number[] {
  const runs = cmds.map((c) => (once(c.label, c.cmd, c.args, env), [] as number[]));
  for (let i = 0; i < RUNS; i++) cmds.forEach((c, j) => runs[j]!.push(once(c.label, c.cmd, c.args, env)));
  return runs.map(median);
}

const home = mkdtempSync(path.join(os.tmpdir(), 'agentrun-bench-startup-'));
const { temporal, databaseUrl, embedded } = await benchServers(home);
const env: NodeJS.ProcessEnv = {
  ...process.env,
  AGENTRUN_HOME: home,
  TEMPORAL_ADDRESS: temporal.address,
  DATABASE_URL: databaseUrl,
  AGENTRUN_TASK_QUEUE: `bench-startup-${process.pid}`,
  OPENAI_API_KEY: '',
  AGENTRUN_LOG_LEVEL: 'warn',
};

try {
  // One finished conversation for `inspect` (and `list`) to read.
  const workspace = mkdtempSync(path.join(os.tmpdir(), 'agentrun-bench-ws-'));
  const ran = spawnSync(process.execPath, [BIN, 'run', '--json', '--task', 'Write hello.py', '--workspace', workspace], { env, encoding: 'utf8' });
  if (ran.status !== 0) throw new Error(`the conversation for inspect failed: ${ran.stderr}`);
  const id = ran.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type: string; conversationId?: string })
    .find((l) => l.type === 'result')!.conversationId!;

  const temporalCli = (await findTemporalCli()) ?? 'temporal';
  const rows: [string, number, string][] = [];
  const nodeMs = time('node -e 0', process.execPath, ['-e', '0'], env);
  const temporalMs = time('temporal --help', temporalCli, ['--help'], env);
  const versionMs = time('agentrun --version', process.execPath, [BIN, '--version'], env);
  const commands = (bin: string, who: string) => [
    { label: `${who} --help`, cmd: process.execPath, args: [bin, '--help'] },
    { label: `${who} list`, cmd: process.execPath, args: [bin, 'list', '--limit', '20'] },
    { label: `${who} inspect`, cmd: process.execPath, args: [bin, 'inspect', id, '--no-diffs'] },
  ];
  const medians = timeInterleaved([...commands(BIN, 'agentrun'), ...(BASELINE_BIN ? commands(BASELINE_BIN, 'baseline') : [])], env);
  const [helpMs, listMs, inspectMs] = medians as [number, number, number];
  rows.push(['node -e 0 (baseline)', nodeMs, '']);
  rows.push(['temporal --help (baseline)', temporalMs, '']);
  rows.push([
    'agentrun --help',
    helpMs,
    `goal ≤ 3× node = ${(3 * nodeMs).toFixed(0)} ms: ${helpMs <= 3 * nodeMs ? 'met' : 'NOT met'} (${(helpMs / nodeMs).toFixed(2)}×)`,
  ]);
  rows.push(['agentrun --version', versionMs, '']);
  rows.push(['agentrun list', listMs, `goal < 500 ms: ${listMs < 500 ? 'met' : 'NOT met'}`]);
  rows.push(['agentrun inspect ID', inspectMs, `goal < 500 ms: ${inspectMs < 500 ? 'met' : 'NOT met'}`]);
  if (BASELINE_BIN) {
    const [bHelp, bList, bInspect] = medians.slice(3) as [number, number, number];
    const vs = (base: number, now: number) => `baseline; now ${now.toFixed(0)} ms (${(((now - base) / base) * 100).toFixed(0)}%)`;
    rows.push([`baseline --help`, bHelp, vs(bHelp, helpMs)]);
    rows.push([`baseline list`, bList, vs(bList, listMs)]);
    rows.push([`baseline inspect ID`, bInspect, vs(bInspect, inspectMs)]);
    console.log(`baseline: ${baselineDir}`);
  }
  console.log(`startup, median of ${RUNS} runs each (compiled CLI, servers running):`);
  for (const [name, ms, note] of rows) console.log(`  ${name.padEnd(28)} ${ms.toFixed(0).padStart(6)} ms  ${note}`);
  rmSync(workspace, { recursive: true, force: true });
} finally {
  await temporal.stop();
  await embedded?.stop();
  rmSync(home, { recursive: true, force: true });
}

if (withSize) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agentrun-bench-size-'));
  try {
    // `npm pack` runs the build (prepare), whose own output precedes the JSON.
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const packed = JSON.parse(out.slice(out.indexOf('\n[') + 1)) as { filename: string; size: number; unpackedSize: number }[];
    const app = path.join(dir, 'app');
    execFileSync('mkdir', ['-p', app]);
    execFileSync('npm', ['install', '--no-audit', '--no-fund', path.join(dir, packed[0]!.filename)], { cwd: app, stdio: 'ignore' });
    const nm = path.join(app, 'node_modules');
    const du = (p: string) => Number(execFileSync('du', ['-sb', p], { encoding: 'utf8' }).split('\t')[0]);
    const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;
    const packages = readdirSync(nm).flatMap((n) => (n.startsWith('@') ? readdirSync(path.join(nm, n)).map((m) => `${n}/${m}`) : n.startsWith('.') ? [] : [n]));
    const sizes = packages.map((p) => [p, du(path.join(nm, p))] as const).sort((a, b) => b[1] - a[1]);
    const forbidden = ['tsx', 'typescript', 'vitest', 'playwright-core', '@temporalio/testing', 'esbuild', 'fast-check'].filter(
      (p) => existsSync(path.join(nm, p)) && statSync(path.join(nm, p)).isDirectory(),
    );
    console.log(
      `installed size, production dependencies only: ${mb(du(nm))} in ${packages.length} packages (tarball ${mb(packed[0]!.size)}, agentrun itself ${mb(packed[0]!.unpackedSize)})`,
    );
    console.log(
      `  largest: ${sizes
        .slice(0, 6)
        .map(([p, b]) => `${p} ${mb(b)}`)
        .join(', ')}`,
    );
    console.log(`  goal: no build, test or browser tools: ${forbidden.length ? `NOT met (${forbidden.join(', ')})` : 'met'}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
process.exit(0);
