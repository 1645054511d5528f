// `agentrun eval` costs: (1) an eval run's overhead over the same jobs run as a plain batch
// (goal ≤ 1.1×): BENCH_EVAL_JOBS repository jobs (3 turns and a verify each) run by `agentrun batch`,
// frozen into a set, then run again as `eval run --live` with the same scripted model, the two
// alternated BENCH_EVAL_ROUNDS times on one `agentrun worker`; (2) a replay of a 30-turn case against
// the live run it recorded (goal ≤ 0.2× the wall time, $0). The live run's model is the scripted model
// made to answer as a provider does (BENCH_EVAL_TTFT_MS before the first token, then streaming at
// BENCH_EVAL_CHUNK_MS per 24 characters); the replay serves the recorded answers at once, through
// the same tools, and makes no provider call (its cost is the report's: $0). Last line: JSON.
// Run: npm run build && npx tsx bench/eval.ts
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { benchDir, benchEnv, benchRepo, benchScript, type BenchEnv } from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const exec = promisify(execFile);
const JOBS = Number(process.env.BENCH_EVAL_JOBS ?? 6);
const ROUNDS = Number(process.env.BENCH_EVAL_ROUNDS ?? 2);
const TTFT_MS = Number(process.env.BENCH_EVAL_TTFT_MS ?? 700);
const CHUNK_MS = Number(process.env.BENCH_EVAL_CHUNK_MS ?? 15);

const call = (tool: string, params: Record<string, string>) =>
  `<${tool}>\n${Object.entries(params)
    .map(([k, v]) => `<${k}>${v}</${k}>`)
    .join('\n')}\n</${tool}>`;

async function cli(env: BenchEnv, args: string[]): Promise<{ ms: number; lines: Record<string, any>[] }> {
  const started = performance.now();
  // The bench's `agentrun worker` runs every job: the commands that would start their own are told not to.
  const runsJobs = args[0] === 'batch' || args[0] === 'run' || (args[0] === 'eval' && (args[1] === 'run' || args[1] === 'report'));
  const r = await exec(process.execPath, [join(ROOT, 'bin', 'agentrun.js'), ...args, '--json', ...(runsJobs ? ['--no-worker'] : [])], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.temporalAddress,
      DATABASE_URL: env.databaseUrl,
      AGENTRUN_DB_SCHEMA: env.schema,
      AGENTRUN_HOME: env.home,
      AGENTRUN_TASK_QUEUE: env.taskQueue,
      // The worker's clones: `eval add` reads a repository job's turn 0 from its private repository.
      AGENTRUN_WORKSPACES: env.worker!.workspaces,
      OPENAI_API_KEY: '',
    },
  }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
    // A gate or a failed job exits 1; the report is still the last line.
    if (err.stdout) return { stdout: err.stdout, stderr: err.stderr ?? '' };
    throw new Error(`agentrun ${args.join(' ')}: ${err.stderr ?? err.message}`);
  });
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>);
  return { ms: performance.now() - started, lines };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function overhead(env: BenchEnv) {
  const repos: string[] = [];
  for (let i = 0; i < JOBS; i++) {
    const src = await benchRepo({ 'value.txt': '41\n' });
    await exec('git', ['-C', src, 'add', '-A']);
    await exec('git', ['-C', src, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'start']);
    repos.push(src);
  }
  const list = join(await benchDir('agentrun-bench-eval-'), 'repos.txt');
  await writeFile(list, repos.join('\n') + '\n');
  const model = await benchScript({
    turns: [
      { say: call('read_file', { path: 'value.txt' }) },
      { say: call('execute_command', { command: 'sed -i s/41/42/ value.txt && cat value.txt', requires_approval: 'false' }) },
      { say: call('attempt_completion', { result: 'done' }) },
    ],
  });
  const batchArgs = [
    'batch',
    '--repos',
    list,
    '--task',
    'Make value.txt hold 42',
    '--verify',
    'grep -q 42 value.txt',
    '--model',
    model,
    '--approval',
    'never',
    '--concurrency',
    '3',
  ];
  const first = await cli(env, batchArgs);
  const batchId = String(first.lines.at(-1)!.batchId);
  await cli(env, ['eval', 'add', 'bench', '--from-batch', batchId]);
  const batch: number[] = [];
  const evalRun: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    batch.push((await cli(env, batchArgs)).ms);
    const e = await cli(env, ['eval', 'run', 'bench', '--live', '--model', model, '--concurrency', '3']);
    const report = e.lines.at(-1)!;
    if (report.type !== 'eval' || report.passRate !== 1) throw new Error(`the eval run did not pass every job: ${JSON.stringify(report).slice(0, 500)}`);
    evalRun.push(e.ms);
  }
  return { jobs: JOBS, rounds: ROUNDS, batchMs: batch.map(Math.round), evalMs: evalRun.map(Math.round), ratio: median(evalRun) / median(batch) };
}

async function replayVsLive(env: BenchEnv) {
  // Steps that differ, as a working agent's do: a note written, a count computed, the note read back.
  const step = (n: number) =>
    n % 3 === 1
      ? call('write_to_file', { path: `notes/step-${n}.md`, content: `# Step ${n}\n\nWhat changed at step ${n}: ${'detail '.repeat(n)}` })
      : n % 3 === 2
        ? call('execute_command', {
            command: `seq 1 ${n * 7} | paste -sd+ | bc > sum-${n}.txt; cat sum-${n}.txt; ls notes | wc -l`,
            requires_approval: 'false',
          })
        : call('read_file', { path: `notes/step-${n - 2}.md` });
  const turns = [
    ...Array.from({ length: 29 }, (_, i) => ({
      say: `Step ${i + 1} of the plan (${['notes', 'sums', 'review'][i % 3]}): ${'Thinking about what step '.concat(String(i + 1), ' needs. ').repeat(4)}\n${step(i + 1)}`,
      first_token_delay_ms: TTFT_MS,
      delay_ms: CHUNK_MS,
      usage: { prompt_tokens: 4000 + i * 300, completion_tokens: 120 },
    })),
    { say: call('attempt_completion', { result: 'thirty turns' }), first_token_delay_ms: TTFT_MS, usage: { prompt_tokens: 13000, completion_tokens: 20 } },
  ];
  const model = await benchScript({ turns });
  const workspace = await benchRepo({ 'README.md': '# bench\n' });
  const live = await cli(env, ['run', '--task', 'Thirty steps', '--workspace', workspace, '--model', model, '--approval', 'never', '--max-turns', '40']);
  const result = live.lines.at(-1)!;
  if (result.status !== 'completed' || result.turns !== 30) throw new Error(`the live run did not complete 30 turns: ${JSON.stringify(result).slice(0, 400)}`);
  await cli(env, ['eval', 'add', 'long', String(result.conversationId)]);
  const replay = await cli(env, ['eval', 'run', 'long', '--replay']);
  const report = replay.lines.at(-1)!;
  const c = report.cases[0];
  if (report.passRate !== 1) throw new Error(`the replay did not reproduce: ${JSON.stringify(c).slice(0, 600)}`);
  return {
    turns: 30,
    liveMs: c.recorded.wallMs,
    replayMs: Math.round(c.meanWallMs),
    ratio: c.meanWallMs / c.recorded.wallMs,
    replayCostUsd: report.costUsd,
    liveCommandMs: Math.round(live.ms),
    replayCommandMs: Math.round(replay.ms),
  };
}

const env = await benchEnv();
try {
  const load = (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim();
  // BENCH_EVAL_ONLY=replay (or overhead) runs one part.
  const only = process.env.BENCH_EVAL_ONLY;
  const o = only === 'replay' ? undefined : await overhead(env);
  if (o) console.error(`overhead: batch ${o.batchMs.join(', ')} ms; eval run ${o.evalMs.join(', ')} ms; ratio ${o.ratio.toFixed(3)} (goal ≤ 1.1)`);
  const r = only === 'overhead' ? undefined : await replayVsLive(env);
  if (r) console.error(`30-turn case: live ${r.liveMs} ms, replay ${r.replayMs} ms, ratio ${r.ratio.toFixed(3)} (goal ≤ 0.2), replay cost $${r.replayCostUsd}`);
  console.log(JSON.stringify({ bench: 'eval', load, overhead: o, replay: r, ttftMs: TTFT_MS, chunkMs: CHUNK_MS }));
} finally {
  await env.close();
}
