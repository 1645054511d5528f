// bench/sandbox: what the command sandbox costs. Spawn cost per execute_command with the
// bubblewrap sandbox (workspace-write, network off) beside the same tool with `--sandbox off`
// (baseline, same run, interleaved), p50/p99 over N short commands; and `npm test`-like work
// (node --test over a generated project) inside vs outside. Goal: under 15 ms added at p50.
// Then the checkpoint with the hardened git (a private git directory, fixed configuration,
// allowlisted environment) beside the way it was done before (git on the workspace's own .git
// with the worker's environment), interleaved on a 1,000-file repository with small edits.
// Goal: at most 1.2x. Run: npx tsx bench/sandbox.ts [--commands 500] [--runs 5] [--turns 40]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SandboxSettings } from '../src/sandbox/index.js';
import { runTool } from '../src/tools/index.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const COMMANDS = arg('--commands', 500);
const TURNS = arg('--turns', 40);
const CHECKPOINT_GOAL = 1.2;
const RUNS = arg('--runs', 5);
const GOAL_MS = 15;

const sandboxed: SandboxSettings = { policy: 'workspace-write', network: 'off', env: [] };
const unconfined: SandboxSettings = { policy: 'off', network: 'off', env: [] };

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function timeCommand(ws: string, command: string, sandbox: SandboxSettings): Promise<number> {
  const t0 = performance.now();
  const r = await runTool('execute_command', { command, requires_approval: 'false' }, { workspace: ws, sandbox });
  const ms = performance.now() - t0;
  if (!r.ok) throw new Error(`bench command failed (${sandbox.policy}): ${r.output}`);
  return ms;
}

function generateProject(root: string): void {
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'bench-project', type: 'module', scripts: { test: 'node --test' } }));
  mkdirSync(path.join(root, 'src'));
  mkdirSync(path.join(root, 'test'));
  for (let i = 0; i < 40; i++) {
    writeFileSync(
      path.join(root, 'src', `m${i}.js`),
      `export function f${i}(n) { let s = 0; for (let k = 0; k < n; k++) s += (k * ${i + 1}) % 7; return s; }\n`,
    );
    writeFileSync(
      path.join(root, 'test', `m${i}.test.js`),
      `import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { writeFileSync } from 'node:fs';\nimport { f${i} } from '../src/m${i}.js';\n` +
        `test('f${i}', () => { assert.ok(f${i}(200000) >= 0); writeFileSync('/tmp/out${i}', String(f${i}(1000))); });\n`,
    );
  }
}

const ws = mkdtempSync(path.join(os.tmpdir(), 'agentrun-bench-sandbox-'));
try {
  execFileSync('git', ['init', '-q', ws]);
  // Warm both paths (page cache, the cgroup, bwrap's binary).
  for (let i = 0; i < 20; i++) {
    await timeCommand(ws, 'true', sandboxed);
    await timeCommand(ws, 'true', unconfined);
  }
  const inside: number[] = [];
  const outside: number[] = [];
  for (let i = 0; i < COMMANDS; i++) {
    inside.push(await timeCommand(ws, 'true', sandboxed));
    outside.push(await timeCommand(ws, 'true', unconfined));
  }
  // The machine may be shared: the load average says how far the figures are from an idle one.
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, ${os.cpus().length} cores`,
  );
  const p50In = pct(inside, 50);
  const p50Out = pct(outside, 50);
  const added = p50In - p50Out;
  console.log(`execute_command "true", ${COMMANDS} each, interleaved:`);
  console.log(`  --sandbox off (baseline): p50 ${p50Out.toFixed(1)} ms  p99 ${pct(outside, 99).toFixed(1)} ms`);
  console.log(`  sandbox workspace-write:  p50 ${p50In.toFixed(1)} ms  p99 ${pct(inside, 99).toFixed(1)} ms`);
  console.log(
    `  added at p50: ${added.toFixed(1)} ms (goal < ${GOAL_MS} ms: ${added < GOAL_MS ? 'met' : 'NOT met'}); at p99: ${(pct(inside, 99) - pct(outside, 99)).toFixed(1)} ms`,
  );

  const project = path.join(ws, 'project');
  mkdirSync(project);
  generateProject(project);
  const workIn: number[] = [];
  const workOut: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    workIn.push(await timeCommand(project, 'npm test --silent', sandboxed));
    workOut.push(await timeCommand(project, 'npm test --silent', unconfined));
  }
  const mIn = pct(workIn, 50);
  const mOut = pct(workOut, 50);
  console.log(`npm test (node --test, 40 files), median of ${RUNS}:`);
  console.log(`  --sandbox off (baseline): ${mOut.toFixed(0)} ms`);
  console.log(`  sandbox workspace-write:  ${mIn.toFixed(0)} ms  (ratio ${(mIn / mOut).toFixed(2)}, added ${(mIn - mOut).toFixed(0)} ms)`);
  await checkpointCost();
} finally {
  rmSync(ws, { recursive: true, force: true });
}
process.exit(0);

/** The checkpoint as it was before the boundary: git on the workspace's own .git, the worker's whole environment, a temporary index. */
function plainCheckpoint(dir: string, ref: string, turn: number): void {
  const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
  const git = (args: string[], extra: NodeJS.ProcessEnv = {}) => execFileSync('git', args, { cwd: dir, env: { ...env, ...extra }, encoding: 'utf8' }).trim();
  const index = { GIT_INDEX_FILE: path.join(dir, '.git', 'bench.index') };
  const parent = git(['rev-parse', '--verify', '--quiet', ref]);
  git(['add', '-A', '--', '.'], index);
  const tree = git(['write-tree'], index);
  const commit = git(['commit-tree', tree, '-p', parent, '-m', `turn ${turn}`]);
  git(['update-ref', ref, commit]);
}

async function checkpointCost(): Promise<void> {
  const { createCheckpoint } = await import('../src/workspace/checkpoint.js');
  const home = mkdtempSync(path.join(os.tmpdir(), 'agentrun-bench-home-'));
  const repos = ['hardened', 'plain'].map((name) => {
    const dir = path.join(home, name);
    for (let i = 0; i < 1000; i++) {
      mkdirSync(path.join(dir, `pkg${i % 20}`), { recursive: true });
      writeFileSync(path.join(dir, `pkg${i % 20}`, `file${i}.ts`), `export const v${i} = ${i};\n`.repeat(20));
    }
    execFileSync('git', ['init', '-q', dir]);
    execFileSync('git', ['-C', dir, 'add', '-A']);
    execFileSync('git', ['-C', dir, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'base']);
    execFileSync('git', ['-C', dir, 'update-ref', 'refs/agentrun/bench', 'HEAD']);
    return dir;
  });
  const [hardenedDir, plainDir] = repos as [string, string];
  await createCheckpoint(hardenedDir, 'bench', 0, home);
  const hardened: number[] = [];
  const plain: number[] = [];
  for (let t = 1; t <= TURNS; t++) {
    for (const dir of repos) writeFileSync(path.join(dir, `pkg${t % 20}`, `file${t}.ts`), `// turn ${t}\n`);
    const t0 = performance.now();
    await createCheckpoint(hardenedDir, 'bench', t, home);
    const t1 = performance.now();
    plainCheckpoint(plainDir, 'refs/agentrun/bench', t);
    const t2 = performance.now();
    hardened.push(t1 - t0);
    plain.push(t2 - t1);
  }
  const h = pct(hardened, 50);
  const p = pct(plain, 50);
  console.log(`checkpoint of a 1,000-file repository, one file changed per turn, median of ${TURNS}:`);
  console.log(`  before (the workspace's own .git, worker environment): ${p.toFixed(1)} ms`);
  console.log(`  hardened (private git directory, fixed configuration): ${h.toFixed(1)} ms`);
  console.log(`  ratio ${(h / p).toFixed(2)} (goal <= ${CHECKPOINT_GOAL}: ${h / p <= CHECKPOINT_GOAL ? 'met' : 'NOT met'})`);
  rmSync(home, { recursive: true, force: true });
}
