// `agentrun eval` through the CLI as a platform team runs it: five repository jobs recorded by a
// batch with a real check (four pass, one fails) frozen into a set; a replay against this release
// reproduces them all; a release whose operator hook changes one command's result is caught by
// the replay at that case and turn (exit 1); a scripted "new model" run live in k=3 trials solves
// four of five (pass@k, pass^k, the interval); a fork at turn 2 keeps the recorded turns; two runs
// compared; a worker SIGKILLed mid-run; a local workspace's case replays after its workspace is gone; a set exported and
// imported into a fresh home and store replays there. Real Temporal, PostgreSQL, git, sandbox.
import { execFile, execFileSync } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { Store } from '../../src/store/index.js';
import { startUiServer } from '../../src/ui/server.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { batchStateQuery, type BatchResult } from '../../workflows/batch/api.js';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../helpers/child-worker.js';
import { scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';
import { type CliRun, runCli } from '../helpers/dist.js';
import { dropSchema, freshSchemaName } from '../helpers/store-schema.js';
import { recordHistory } from '../histories/manifest.js';
import { passAtK, passPowK, wilson } from '../../src/client/eval-stats.js';

const _ROOT = fileURLToPath(new URL('../..', import.meta.url));
const _exec = promisify(execFile);

let home: string;
let env: NodeJS.ProcessEnv;

function cli(args: string[], environment: NodeJS.ProcessEnv = env): Promise<CliRun> {
  return runCli(args, { env: environment, timeout: 400_000 });
}

const call = (tool: string, params: Record<string, string>) =>
  `<${tool}>\n${Object.entries(params)
    .map(([k, v]) => `<${k}>${v}</${k}>`)
    .join('\n')}\n</${tool}>`;

/** Yesterday's model: reads, fixes 41 → 42 and writes docs.md, says it is done. */
const OLD_MODEL = {
  turns: [
    { say: call('read_file', { path: 'value.txt' }) },
    { say: call('execute_command', { command: 'sed -i s/41/42/ value.txt && touch docs.md && cat value.txt', requires_approval: 'false' }) },
    { say: call('attempt_completion', { result: 'value fixed' }) },
  ],
};

/**
 * The model under trial: writes 42 whatever was there (so it fixes the case yesterday's model
 * failed), never writes docs.md (so the case whose check wants it fails), and in a repository
 * marked `flaky` undoes its fix when its job's number (the end of its workspace's name) is even:
 * a case that passes some trials and not others. Its turn 3 (a fork's first live turn) says done.
 */
const NEW_MODEL = {
  turns: [
    {
      say: call('execute_command', {
        command: 'echo 42 > value.txt; n=${PWD##*-}; if [ -f flaky ] && [ $((n % 2)) -eq 0 ]; then echo 0 > value.txt; fi; cat value.txt',
        requires_approval: 'false',
      }),
    },
    { say: call('attempt_completion', { result: 'value set' }) },
    { say: call('attempt_completion', { result: 'done from the fork' }) },
  ],
};

const CHECK = 'test "$(cat value.txt)" = 42';
/** The five repositories: name, value.txt, its check, a marker. */
const REPOS = [
  { name: 'alpha', value: '41', check: CHECK },
  { name: 'bravo', value: '41', check: CHECK },
  { name: 'charlie', value: '41', check: CHECK, flaky: true },
  { name: 'delta', value: '40', check: CHECK },
  { name: 'echo', value: '41', check: `${CHECK} && test -f docs.md` },
];

async function bareRemote(r: (typeof REPOS)[number]): Promise<string> {
  const src = await tempRepo({ 'value.txt': `${r.value}\n`, 'check.sh': `${r.check}\n`, ...(r.flaky ? { flaky: '' } : {}) });
  const bare = join(await tempDir('agentrun-eval-'), `${r.name}.git`);
  execFileSync('git', ['clone', '-q', '--bare', src, bare]);
  return bare;
}

let caseOf: Map<string, string>;
let batchId: string;
let newModel: string;
let runs: Record<string, string> = {};

/** The schemas this file's stores use, dropped after it. */
const schemas: string[] = [];
const schemaOfThisFile = (prefix: string) => {
  const schema = freshSchemaName(prefix);
  schemas.push(schema);
  return schema;
};
afterAll(async () => {
  for (const schema of schemas) await dropSchema(schema);
});

beforeAll(async () => {
  home = await tempDir('agentrun-eval-home-');
  env = {
    ...process.env,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    DATABASE_URL: inject('databaseUrl'),
    AGENTRUN_DB_SCHEMA: schemaOfThisFile('eval_a'),
    AGENTRUN_HOME: home,
    AGENTRUN_TASK_QUEUE: uid('eval-tq'),
    AGENTRUN_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    AGENTRUN_LOG_LEVEL: 'warn',
    OPENAI_API_KEY: '',
  };
  newModel = await scriptModel(NEW_MODEL);
});

const byRepo = (report: Record<string, any>) => new Map<string, any>(report.cases.map((c: any) => [caseOf.get(c.caseId), c]));

describe('agentrun eval', () => {
  it('freezes a batch of five recorded repository jobs into a set', async () => {
    const remotes = await Promise.all(REPOS.map(bareRemote));
    const reposFile = join(await tempDir('agentrun-eval-list-'), 'repos.txt');
    await writeFile(reposFile, remotes.join('\n') + '\n');
    const model = await scriptModel(OLD_MODEL);
    const b = await cli([
      'batch',
      '--json',
      '--repos',
      reposFile,
      '--task',
      'Make value.txt hold 42',
      '--verify',
      'sh check.sh',
      '--verify-attempts',
      '1',
      '--model',
      model,
      '--approval',
      'never',
      '--concurrency',
      '2',
      // Frozen with the cases, so their runs have it too: the worker SIGKILLed during a run is
      // noticed by its steps' heartbeats in 2 s, not the default 30.
      '--heartbeat-timeout',
      '2s',
    ]);
    const result = b.lines.at(-1)!;
    expect(result, b.stderr).toMatchObject({ type: 'result' });
    batchId = String(result.batchId);
    caseOf = new Map(result.rows.map((r: any, i: number) => [String(r.conversationId), REPOS[i]!.name]));
    expect(result.rows.map((r: any) => r.verify?.passed)).toEqual([true, true, true, false, true]);

    const add = await cli(['eval', 'add', 'golden', '--from-batch', batchId, '--json']);
    expect(add.code, add.stderr).toBe(0);
    expect(add.lines.at(-1)).toMatchObject({ type: 'set', set: 'golden', added: 5, cases: 5 });
    expect(add.lines.filter((l) => l.type === 'case').map((l) => [caseOf.get(l.caseId), l.verify, l.turns, l.start])).toEqual([
      ['alpha', true, 3, 'repo'],
      ['bravo', true, 3, 'repo'],
      ['charlie', true, 3, 'repo'],
      ['delta', false, 3, 'repo'],
      ['echo', true, 3, 'repo'],
    ]);
    // --where picks among them: only the failed one.
    const failedOnly = await cli(['eval', 'add', 'failures', '--from-batch', batchId, '--where', 'verify=failed', '--json']);
    expect(failedOnly.lines.at(-1), failedOnly.stderr).toMatchObject({ added: 1, cases: 1 });
    // Bad input is one line and exit 2.
    const bad = await cli(['eval', 'add', 'golden', 'conv-nosuch']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('agentrun: no conversation with id conv-nosuch (see agentrun list)');
  });

  it('a replay against this release reproduces every case, the failed one included', async () => {
    const junit = join(await tempDir('agentrun-eval-junit-'), 'replay.xml');
    const r = await cli(['eval', 'run', 'golden', '--replay', '--no-regressions', '--json', '--junit', junit, '--concurrency', '3']);
    const report = r.lines.at(-1)!;
    expect(report, r.stderr).toMatchObject({ type: 'eval', mode: 'replay', k: 1, passRate: 1, regressions: [], costUsd: 0, gate: { passed: true } });
    expect(r.code).toBe(0);
    runs.replay = String(report.runId);
    const cases = byRepo(report);
    expect(cases.get('delta')).toMatchObject({ passes: 1, recorded: { passed: false } });
    expect(cases.get('delta').trials[0]).toMatchObject({ status: 'failed', verify: false });
    const xml = await readFile(junit, 'utf8');
    expect(xml).toContain('<testsuite name="golden (replay)" tests="6" failures="0"');
    // A batch whose jobs each bring their task, workspace and options: a replay fixture of that path.
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      await recordHistory(new Client({ connection }), runs.replay, 'batch-eval-jobs.json');
    } finally {
      await connection.close();
    }
  });

  it('a release whose hook changes one command result is caught by the replay at that case and turn', async () => {
    // The operator's settings of the new release: a PostToolUse hook that answers differently in one repository.
    await writeFile(
      join(home, 'settings.json'),
      JSON.stringify({
        hooks: {
          PostToolUse: [
            { matcher: 'execute_command', hooks: [{ type: 'command', command: 'if [ -f flaky ]; then echo "lint: reformatted" >&2; exit 2; fi' }] },
          ],
        },
      }),
    );
    try {
      const md = join(await tempDir('agentrun-eval-md-'), 'summary.md');
      const r = await cli(['eval', 'run', 'golden', '--replay', '--no-regressions', '--json', '--markdown', md, '--concurrency', '3']);
      const report = r.lines.at(-1)!;
      expect(r.code, r.stderr).toBe(1);
      expect(report.regressions.map((id: string) => caseOf.get(id))).toEqual(['charlie']);
      expect(report.gate.passed).toBe(false);
      const charlie = byRepo(report).get('charlie');
      expect(charlie.trials[0].divergence).toMatchObject({ turn: 2 });
      expect(charlie.trials[0].divergence.why).toContain('execute_command result differs');
      expect(report.passed).toBe(4);
      expect(await readFile(md, 'utf8')).toContain('❌ gate failed');
    } finally {
      await rm(join(home, 'settings.json'), { force: true });
    }
  });

  it('a live run of a new model in 3 trials: four of five solved, pass@k and pass^k per case', async () => {
    const r = await cli(['eval', 'run', 'golden', '--live', '--model', newModel, '--trials', '3', '--json', '--concurrency', '3', '--budget', '5']);
    const report = r.lines.at(-1)!;
    expect(report, r.stderr).toMatchObject({ type: 'eval', mode: 'live', k: 3, trials: 15 });
    runs.live = String(report.runId);
    const cases = byRepo(report);
    // charlie's fixture undoes its fix on even job numbers, read from the workspace's host name; every
    // workspace is /workspace in the sandbox now, so its trials no longer differ: its count is read
    // from the report, and the statistics are checked against it (eval-stats.test.ts covers 1 and 2 of 3).
    const charliePasses: number = cases.get('charlie').passes;
    const passes = { alpha: 3, bravo: 3, charlie: charliePasses, delta: 3, echo: 0 };
    for (const [name, n] of Object.entries(passes)) {
      const c = cases.get(name);
      expect(c.passes, name).toBe(n);
      expect(c.passAtK, name).toBe(passAtK(n, 3));
      expect(c.passPowK, name).toBe(passPowK(n, 3));
    }
    expect(cases.get('charlie')).toMatchObject({ passAtK: 1, flaky: charliePasses > 0 && charliePasses < 3 });
    expect(cases.get('echo')).toMatchObject({ passAtK: 0, passPowK: 0, regressed: true });
    expect(cases.get('delta')).toMatchObject({ passAtK: 1, passPowK: 1, recorded: { passed: false } });
    const passed = 12 + charliePasses - 3;
    expect(report.passed).toBe(passed);
    expect(report.passRate).toBeCloseTo(passed / 15, 10);
    expect(report.passAtK).toBeCloseTo(4 / 5, 10);
    expect(report.passPowK).toBeCloseTo((charliePasses === 3 ? 4 : 3) / 5, 10);
    const w = wilson(passed, 15);
    expect(report.interval.low).toBeCloseTo(w.low, 10);
    expect(report.interval.high).toBeCloseTo(w.high, 10);
    expect(report.regressions.map((id: string) => caseOf.get(id))).toEqual(['echo']);
    // No gate given: exit 0. The same run's report with a gate: exit 1, and the reasons.
    expect(r.code).toBe(0);
    const gated = await cli(['eval', 'report', runs.live, '--min-pass-rate', '90%', '--no-regressions']);
    expect(gated.code).toBe(1);
    expect(gated.stdout).toContain('gate: FAILED');
    expect(gated.stdout).toContain('is below --min-pass-rate 90.0%');
    if (charliePasses < 3) expect(gated.stdout).toMatch(/charlie|flaky/);
    const passing = await cli(['eval', 'report', runs.live, '--min-pass-rate', '0.5']);
    expect(passing.code, passing.stdout).toBe(0);
  });

  it('a fork at turn 2 keeps the recorded turns and goes on with the new model', async () => {
    const r = await cli(['eval', 'run', 'golden', '--fork-at', '2', '--model', newModel, '--json', '--concurrency', '3']);
    const report = r.lines.at(-1)!;
    expect(report, r.stderr).toMatchObject({ type: 'eval', mode: 'fork', forkAt: 2 });
    const cases = byRepo(report);
    // The recorded turn 2 wrote docs.md (echo passes) and fixed only 41 (delta still fails): the new model's turn 1 never ran.
    expect(Object.fromEntries([...cases].map(([name, c]) => [name, c.passes]))).toEqual({ alpha: 1, bravo: 1, charlie: 1, delta: 0, echo: 1 });
    for (const c of cases.values()) expect(c.trials[0]).toMatchObject({ turns: 3, costUsd: 0 });
    // Out of range: one line, exit 2.
    const far = await cli(['eval', 'run', 'golden', '--fork-at', '9', '--model', newModel]);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('--fork-at 9 is at or past the end of');
  });

  it('a worker SIGKILLed during an eval run: the run goes on elsewhere, nothing is repeated, the report is complete', async () => {
    const workers: ChildWorker[] = [];
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const like = {
        temporalAddress: inject('temporalAddress'),
        databaseUrl: inject('databaseUrl'),
        schema: env.AGENTRUN_DB_SCHEMA!,
        taskQueue: env.AGENTRUN_TASK_QUEUE!,
        home,
        workflowBundlePath: inject('workflowBundlePath'),
        repositoryExtensions: false,
      } as unknown as Harness;
      const hostEnv = { AGENTRUN_HOST_ID: `K-${env.AGENTRUN_TASK_QUEUE}`, AGENTRUN_WORKSPACES: await tempDir('agentrun-eval-ws-') };
      workers.push(await startChildWorker(like, hostEnv));
      const id = `eval-killed-${env.AGENTRUN_TASK_QUEUE}`;
      const started = await cli(['eval', 'run', 'golden', '--replay', '--id', id, '--detach', '--concurrency', '2', '--json']);
      expect(started.lines[0], started.stderr).toMatchObject({ type: 'eval_run', runId: id, jobs: 5 });
      // Killed once a job has finished and others run.
      const handle = new Client({ connection }).workflow.getHandle(id);
      for (const end = Date.now() + 180_000; ;) {
        const s = (await handle.query(batchStateQuery).catch(() => undefined)) as BatchResult | undefined;
        if (s && s.totals.completed + s.totals.failed >= 1 && s.totals.running >= 1) break;
        if (s && s.totals.pending + s.totals.running === 0) throw new Error('the run ended before the worker could be killed');
        if (Date.now() > end) throw new Error('the eval run never got going');
        await new Promise((r) => setTimeout(r, 100));
      }
      await workers[0]!.kill('SIGKILL');
      workers.push(await startChildWorker(like, hostEnv));
      const r = await cli(['eval', 'report', id, '--no-regressions', '--json', '--no-worker']);
      const report = r.lines.at(-1)!;
      // Every case reproduced: a repeated command would have added a tool result the recording does not have.
      expect(report, r.stderr).toMatchObject({ type: 'eval', runId: id, trials: 5, passRate: 1, regressions: [], gate: { passed: true } });
      expect(r.code).toBe(0);
      expect(report.cases.map((c: any) => c.trials.map((t: any) => t.conversationId)).flat()).toEqual([1, 2, 3, 4, 5].map((n) => `${id}-${n}`));
      for (const c of report.cases) expect(c.trials[0].turns).toBe(3);
    } finally {
      await stopChildWorkers(workers);
      await connection.close();
    }
  });

  it('compares two runs case by case', async () => {
    const r = await cli(['eval', 'compare', runs.replay!, runs.live!, '--json']);
    const cmp = r.lines.at(-1)!;
    expect(cmp, r.stderr).toMatchObject({ type: 'eval_compare', set: 'golden' });
    const change = Object.fromEntries(cmp.cases.map((c: any) => [caseOf.get(c.caseId), c.change]));
    // The replay grades reproduction; delta did reproduce, so it stays passed; echo broke.
    expect(change.echo).toBe('broken');
    expect(change.alpha).toBe('same');
    const text = await cli(['eval', 'compare', runs.replay!, runs.live!]);
    expect(text.stdout).toMatch(/cases changed; pass rate 100\.0% → /);
  });

  it("the web page's API shows a set's runs side by side", async () => {
    const store = await Store.connect(inject('databaseUrl'), { schema: env.AGENTRUN_DB_SCHEMA!, max: 2 });
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    const ui = await startUiServer({ store, client: new Client({ connection }), port: 0, token: { token: 'eval-token', name: 'tester', source: 'env' } });
    try {
      const get = async (path: string) => {
        const r = await fetch(new URL(path, ui.url), { headers: { authorization: 'Bearer eval-token', accept: 'application/json' } });
        expect(r.status, path).toBe(200);
        return (await r.json()) as Record<string, any>;
      };
      expect((await get('/api/evals')).sets).toEqual(expect.arrayContaining([{ set: 'golden', cases: 5 }]));
      const side = await get('/api/evals/golden');
      const replay = side.runs.find((r: any) => r.runId === runs.replay);
      const live = side.runs.find((r: any) => r.runId === runs.live);
      expect(replay).toMatchObject({ mode: 'replay', passRate: 1 });
      const echo = [...caseOf].find(([, name]) => name === 'echo')![0];
      expect(replay.cases[echo]).toEqual({ passes: 1, k: 1, regressed: false });
      expect(live.cases[echo]).toEqual({ passes: 0, k: 3, regressed: true });
      // Oldest first, as columns read left to right.
      expect(side.runs.findIndex((r: any) => r.runId === runs.replay)).toBeLessThan(side.runs.findIndex((r: any) => r.runId === runs.live));
    } finally {
      await ui.close();
      await connection.close();
      await store.close();
    }
  });

  it("a local workspace's case replays from its frozen tree after its workspace is gone", async () => {
    const workspace = await tempRepo({ 'value.txt': '41\n', 'check.sh': `${CHECK}\n` });
    const model = await scriptModel(OLD_MODEL);
    const run = await cli([
      'run',
      '--json',
      '--task',
      'Make value.txt hold 42',
      '--workspace',
      workspace,
      '--verify',
      'sh check.sh',
      '--model',
      model,
      '--approval',
      'never',
    ]);
    const id = String(run.lines.at(-1)!.conversationId);
    expect(run.lines.at(-1), run.stderr).toMatchObject({ status: 'completed', turns: 3 });
    const add = await cli(['eval', 'add', 'local', id, '--json']);
    expect(add.lines[0], add.stderr).toMatchObject({ type: 'case', start: 'bundle', verify: true });
    await rm(workspace, { recursive: true, force: true });
    const gc = await cli(['gc', '--older-than', '1s']);
    expect(gc.code, gc.stderr).toBe(0);
    const workdir = await tempDir('agentrun-eval-work-');
    const r = await cli(['eval', 'run', 'local', '--replay', '--no-regressions', '--json', '--workdir', workdir]);
    expect(r.lines.at(-1)?.cases?.[0]?.trials?.[0], JSON.stringify(r.lines.at(-1)?.cases?.[0]?.trials?.[0]) + r.stderr).toMatchObject({
      passed: true,
      status: 'completed',
      verify: true,
      turns: 3,
    });
    expect(r.lines.at(-1)).toMatchObject({ type: 'eval', passRate: 1, regressions: [] });
    expect(r.code).toBe(0);
  });

  it('a set exported and imported into a fresh home and store replays there', async () => {
    const file = join(await tempDir('agentrun-eval-export-'), 'golden.json');
    const ex = await cli(['eval', 'export', 'golden', file]);
    expect(ex.code, ex.stderr).toBe(0);
    const text = await readFile(file, 'utf8');
    expect(JSON.parse(text)).toMatchObject({ type: 'agentrun-eval-set', version: 1, set: 'golden' });
    expect(text).not.toContain('budgetPool');
    const fresh = {
      ...env,
      AGENTRUN_HOME: await tempDir('agentrun-eval-fresh-'),
      AGENTRUN_DB_SCHEMA: schemaOfThisFile('eval_b'),
      AGENTRUN_TASK_QUEUE: uid('eval-tq-fresh'),
    };
    const im = await cli(['eval', 'import', file, '--as', 'imported', '--json'], fresh);
    expect(im.lines.at(-1), im.stderr).toMatchObject({ type: 'imported', set: 'imported', cases: 5 });
    // None of the source conversations is in this store: the cases carry all they need.
    const db = new pg.Client({ connectionString: inject('databaseUrl') });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${fresh.AGENTRUN_DB_SCHEMA}.conversations WHERE id = ANY($1)`, [[...caseOf.keys()]]);
      expect(rows[0].n).toBe(0);
    } finally {
      await db.end();
    }
    const r = await cli(['eval', 'run', 'imported', '--replay', '--no-regressions', '--json', '--concurrency', '3'], fresh);
    expect(r.lines.at(-1), r.stderr).toMatchObject({ type: 'eval', set: 'imported', passRate: 1, regressions: [] });
    expect(r.code).toBe(0);
  });
});
