// Nightly fleets that lose nothing: a budget that pauses (and survives a worker's SIGKILL while it
// waits), a wait that runs out onto a partial branch, a batch in waves that its brake halts and an
// operator resumes. Real Temporal, PostgreSQL, git, a worker process; tiny scripted jobs.
import { conversationResult } from '../../src/client/outcome.js';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchResult } from '../../workflows/batch/api.js';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../helpers/child-worker.js';
import { agentrunEnv, createHarness, gitOut, priceScriptedModel, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { stateQuery, type ConversationState } from '../../workflows/api.js';
import { openPool, poolState } from '../../src/store/budget-pools.js';
import { prose } from '../helpers/prose.js';
import { raiseBudgetUpdate } from '../../workflows/api.js';
import { tempDir } from '../helpers/temp.js';
import { jsonLines, runCli, type CliRun } from '../helpers/dist.js';
import { recordHistory } from '../histories/manifest.js';

let h: Harness;
let home: string;
let hostEnv: NodeJS.ProcessEnv;
const workers: ChildWorker[] = [];

beforeAll(async () => {
  // Priced, so that a batch's budget has something to count (the worker inherits it).
  priceScriptedModel();
  h = await createHarness({ worker: false });
  home = await tempDir('agentrun-rollout-home-');
  hostEnv = { AGENTRUN_HOST_ID: `R-${h.taskQueue}`, AGENTRUN_WORKSPACES: await tempDir('agentrun-rollout-ws-') };
  workers.push(await startChildWorker(h, hostEnv));
});
afterAll(async () => {
  await stopChildWorkers(workers);
  await h?.close();
});

function cli(args: string[]): Promise<CliRun> {
  return runCli(args, { timeout: 240_000, env: agentrunEnv(h, { AGENTRUN_HOME: home }) });
}

async function bareRemote(files: Record<string, string> = {}): Promise<string> {
  const src = await tempRepo({ 'README.md': '# r\n', ...files });
  const bare = join(await tempDir('agentrun-rollout-'), 'r.git');
  execFileSync('git', ['clone', '-q', '--bare', src, bare]);
  return bare;
}

const write = (path: string) => ({ say: `<write_to_file>\n<path>${path}</path>\n<content>\n${path}\n</content>\n</write_to_file>` });
const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };

/** The files on a branch of a bare remote. */
const filesOn = (remote: string, branch: string) => gitOut(remote, 'ls-tree', '-r', '--name-only', branch).split('\n').sort();

describe('a budget that pauses', () => {
  it('waits at its limit with no model call, through a SIGKILL of its worker; a raise finishes it with the same files as a run that never paused', async () => {
    const model = await scriptModel({ turns: [write('a.txt'), write('b.txt'), write('c.txt'), complete] });
    const config = { model, approval: 'never' as const, heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000, push: true };
    const remote = await bareRemote();
    const reference = uid('ref');
    const paused = uid('paused');
    const ref = await h.start({ id: reference, task: 'write three files', workspace: remote, config: { ...config, repo: remote } });
    // `run` follows it until it waits for its budget: exit 4, as for other waits.
    const run = await cli(
      [
        'run',
        '--repo',
        remote,
        '--task',
        'write three files',
        '--model',
        model,
        '--approval',
        'never',
        '--heartbeat-timeout',
        '2s',
        '--host-timeout',
        '3s',
      ].concat(['--push', '--max-turns', '2', '--on-budget', 'pause', '--id', paused, '--no-worker', '--json']),
    );
    expect(run.code, run.stderr).toBe(4);
    expect(jsonLines(run.stdout).at(-1)).toMatchObject({ type: 'result', status: 'awaiting_budget', turns: 2 });
    const callsAtPause = (await h.store.getUsage(paused)).length;
    expect(callsAtPause).toBe(2);
    // A raise below what was spent is one line and exit 2.
    const [listed, low] = await Promise.all([cli(['list', '--status', 'awaiting_budget', '--json']), cli(['budget', 'raise', paused, '--max-turns', '1'])]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(jsonLines(listed.stdout).map((r) => r.conversationId)).toContain(paused);
    expect(low.code).toBe(2);
    expect(low.stderr.trim().split('\n')).toHaveLength(1);
    expect(low.stderr).toContain('below the turns already taken (2)');

    // The worker dies while the conversation waits; another takes over the same host.
    await workers.shift()!.kill('SIGKILL');
    workers.push(await startChildWorker(h, hostEnv));
    const still = await h.waitForState(paused, (s) => s.status === 'awaiting_budget');
    expect(still.turn).toBe(2);
    expect((await h.store.getUsage(paused)).length).toBe(callsAtPause);

    const raised = await cli(['budget', 'raise', paused, '--max-turns', '10', '--json']);
    expect(raised.code, raised.stderr).toBe(0);
    expect(jsonLines(raised.stdout)[0]).toMatchObject({ type: 'budget', limits: { maxTurns: 10 }, spent: { turns: 2 } });
    const result = await conversationResult(h.client.workflow.getHandle(paused));
    const reference_ = await conversationResult(ref);
    expect(result).toMatchObject({ status: 'completed', turns: 4 });
    expect(reference_).toMatchObject({ status: 'completed', turns: 4 });
    expect(filesOn(remote, result.branch!.branch)).toEqual(filesOn(remote, reference_.branch!.branch));
    expect(filesOn(remote, result.branch!.branch)).toEqual(['README.md', 'a.txt', 'b.txt', 'c.txt']);
    // One model call per turn, as the run that never paused: none was made while it waited.
    expect((await h.store.getUsage(paused)).length).toBe((await h.store.getUsage(reference)).length);
    // A finished conversation has nothing to raise.
    await expect(h.client.workflow.getHandle(paused).executeUpdate(raiseBudgetUpdate, { args: [{ maxTurns: 20 }] })).rejects.toThrow();
    await recordHistory(h.client, paused, 'fleet-budget-pause.json');
  }, 240_000);

  it('a wait that runs out ends the job with its work on agentrun/<id>-partial, pushed', async () => {
    const model = await scriptModel({ turns: [write('a.txt'), write('b.txt'), complete] });
    const remote = await bareRemote();
    const id = uid('partial');
    const handle = await h.start({
      id,
      task: 'write two files',
      workspace: remote,
      config: {
        model,
        approval: 'never',
        heartbeatTimeoutMs: 2000,
        hostTimeoutMs: 3000,
        repo: remote,
        maxTurns: 1,
        onBudget: 'pause',
        budgetWaitMs: 1000,
        onBudgetTimeout: 'partial-branch',
      },
    });
    const result = await conversationResult(handle);
    expect(result.status).toBe('budget_exhausted');
    expect(result.reason).toContain(`agentrun/${id}-partial (pushed)`);
    expect(filesOn(remote, `agentrun/${id}-partial`)).toEqual(['README.md', 'a.txt']);
    await recordHistory(h.client, id, 'fleet-budget-partial-branch.json');
  }, 120_000);
});

describe('a batch in waves with a brake', () => {
  it('halts after the wave whose checks fail beyond the brake, skips the rest, and resume --override finishes it', async () => {
    // Waves 1, 3, 100% (cumulative): jobs 1 | 2 3 | 4 5. The checks of jobs 2 and 3 fail (no OK file).
    const ok = { OK: 'yes\n' };
    const remotes = [await bareRemote(ok), await bareRemote(), await bareRemote(), await bareRemote(ok), await bareRemote(ok)];
    const list = join(await tempDir('agentrun-rollout-list-'), 'repos.txt');
    await writeFile(list, remotes.join('\n') + '\n');
    const model = await scriptModel({ turns: [write('CHANGES.md'), complete] });
    const id = uid('waves');
    const flags = [
      '--task',
      'refactor',
      '--model',
      model,
      '--approval',
      'never',
      '--heartbeat-timeout',
      '2s',
      '--verify',
      'test -f OK',
      '--verify-attempts',
      '1',
    ];
    const [bad, halted] = await Promise.all([
      cli(['batch', '--repos', list, ...flags, '--waves', '1,3', '--brake', '120%', '--detach']),
      cli(['batch', '--repos', list, ...flags, '--concurrency', '2', '--waves', '1,3,100%', '--brake', '20%', '--id', id, '--no-worker', '--json']),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(halted.code, halted.stderr).toBe(1);
    const table = jsonLines(halted.stdout).find((l) => l.type === 'result') as unknown as BatchResult;
    expect(table.state).toBe('halted');
    expect(table.reason).toContain('wave 2: 2 of 2 jobs bad');
    expect(
      table.rows.map((r) => [r.wave, r.status]),
      JSON.stringify({ ...table, rows: undefined }),
    ).toEqual([
      [1, 'completed'],
      [2, 'failed'],
      [2, 'failed'],
      [3, 'skipped'],
      [3, 'skipped'],
    ]);
    expect(table.rows[1]!.verify).toMatchObject({ passed: false });
    // Exactly the jobs of waves 1 and 2 were started.
    for (const n of [1, 2, 3]) expect((await h.client.workflow.getHandle(`${id}-${n}`).describe()).type).toBe('session');
    for (const n of [4, 5]) await expect(h.client.workflow.getHandle(`${id}-${n}`).describe()).rejects.toThrow();
    const status = await cli(['batch', 'status', id]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('state: halted (wave 2: 2 of 2 jobs bad');
    expect(status.stdout).toContain('2 skipped');
    expect(status.stdout).toContain(`agentrun batch resume ${id}`);

    const resumed = await cli(['batch', 'resume', id, '--override', '--no-worker', '--json']);
    expect(resumed.code, resumed.stderr).toBe(1);
    const end = jsonLines(resumed.stdout).find((l) => l.type === 'result') as unknown as BatchResult;
    expect(end.state).toBe('completed');
    expect(end.brake).toMatchObject({ overridden: true });
    expect(end.rows.map((r) => r.status)).toEqual(['completed', 'failed', 'failed', 'completed', 'completed']);
    expect(end.totals).toMatchObject({ jobs: 5, completed: 3, failed: 2, pending: 0 });
    // Its state line says it ran to its end, with its halt as past.
    const after = await cli(['batch', 'status', id]);
    expect(after.stdout).toContain('state: completed (3 of 5 jobs completed, 2 failed; resumed after it halted at wave 2: 2 of 2 jobs bad');
    await recordHistory(h.client, id, 'batch-waves-halt-resume.json');
  }, 300_000);
});

describe('a repository that cannot be cloned', () => {
  it('is its own kind of failure: it does not trip a brake on failed jobs, and --brake-on clone counts it', async () => {
    const gone = join(await tempDir('agentrun-rollout-gone-'), 'deleted.git');
    const list = join(await tempDir('agentrun-rollout-list-'), 'repos.txt');
    await writeFile(list, [gone, await bareRemote(), await bareRemote()].join('\n') + '\n');
    const model = await scriptModel({ turns: [write('CHANGES.md'), complete] });
    const flags = ['--task', 'refactor', '--model', model, '--approval', 'never', '--waves', '1,100%', '--no-worker', '--json'];
    const [nightly, strict] = await Promise.all([
      cli(['batch', '--repos', list, ...flags, '--brake', '0%']),
      cli(['batch', '--repos', list, ...flags, '--brake', '0%', '--brake-on', 'failed,clone']),
    ]);
    const table = (r: { stdout: string }) => jsonLines(r.stdout).find((l) => l.type === 'result') as unknown as BatchResult;
    // The deleted repository's job fails; the brake on failed jobs lets the rest of the night run.
    const ran = table(nightly);
    expect(ran.state, nightly.stderr).toBe('completed');
    expect(ran.rows.map((r) => r.status)).toEqual(['failed', 'completed', 'completed']);
    expect(ran.rows[0]!.reason).toMatch(/cannot clone/);
    expect(ran.waves![0]).toMatchObject({ wave: 1, finished: 1, bad: 0 });
    // Its outcome is its workflow's status: a batch with a failed job is Failed in Temporal, its table still read back.
    expect((await h.client.workflow.getHandle(ran.batchId).describe()).status.name).toBe('FAILED');
    const status = await cli(['batch', 'status', ran.batchId]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('state: completed (2 of 3 jobs completed, 1 failed)');
    // A replay fixture of a batch that ends Failed, with AGENTRUN_RECORD_HISTORIES=1.
    await recordHistory(h.client, ran.batchId, 'batch-outcome-failed.json');
    // Counted when asked for.
    const held = table(strict);
    expect(held.state).toBe('halted');
    expect(held.reason).toContain('wave 1: 1 of 1 jobs bad');
    await Promise.all(
      [held.batchId].map((id) =>
        h.client.workflow
          .getHandle(id)
          .terminate('test over')
          .catch(() => undefined),
      ),
    );
  }, 240_000);
});

describe('a scheduled batch that halts', () => {
  it('under --pause-on-failure pauses its schedule and fails', async () => {
    const list = join(await tempDir('agentrun-rollout-list-'), 'repos.txt');
    await writeFile(list, `${await bareRemote()}\n`);
    const model = await scriptModel({ turns: [write('CHANGES.md'), complete] });
    const name = uid('nightly');
    const created = await cli(
      ['schedule', 'create', name, '--cron', '0 2 * * *', '--repos', list, '--task', 'refactor', '--model', model, '--approval', 'never'].concat([
        '--verify',
        'test -f OK',
        '--verify-attempts',
        '1',
        '--brake',
        '0%',
        '--pause-on-failure',
        '--json',
      ]),
    );
    expect(created.code, created.stderr).toBe(0);
    const schedule = h.client.schedule.getHandle(name);
    try {
      await schedule.trigger();
      let runId: string | undefined;
      for (const end = Date.now() + 60_000; !runId;) {
        runId = (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId;
        if (Date.now() > end) throw new Error('the schedule never started its batch');
        if (!runId) await new Promise((r) => setTimeout(r, 200));
      }
      await expect(h.client.workflow.getHandle(runId!).result()).rejects.toThrow();
      for (const end = Date.now() + 30_000; !(await schedule.describe()).state.paused;) {
        if (Date.now() > end) {
          const d = await schedule.describe();
          const err = await h.client.workflow
            .getHandle(runId!)
            .result()
            .catch((e: Error) => `${e.message} ${(e.cause as Error | undefined)?.message}`);
          throw new Error(`the schedule was not paused: ${JSON.stringify({ policies: d.policies, state: d.state, err })}`);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      await schedule.delete();
    }
  }, 120_000);
});

describe('one budget for the batch', () => {
  it('never spends past it: jobs that cannot reserve a call wait, raise-budget lets them all finish with the calls of an unbudgeted run', async () => {
    const remotes = await Promise.all([1, 2, 3].map(() => bareRemote()));
    const list = join(await tempDir('agentrun-rollout-list-'), 'repos.txt');
    await writeFile(list, remotes.join('\n') + '\n');
    const model = await scriptModel({ turns: [write('CHANGES.md'), complete] });
    const id = uid('budget');
    // Each call's worst case is at least 1000 output tokens at $2/M = $0.002: three first calls need $0.006.
    const flags = ['--task', 'refactor', '--model', model, '--approval', 'never', '--heartbeat-timeout', '2s', '--max-output-tokens', '1000'];
    const started = await cli(['batch', '--repos', list, ...flags, '--concurrency', '3', '--budget', '0.004', '--id', id, '--detach', '--json']);
    expect(started.code, started.stderr).toBe(0);
    const pool = `batch:${id}`;
    const jobs = [1, 2, 3].map((n) => `${id}-${n}`);
    const jobState = (job: string) =>
      h.client.workflow
        .getHandle(job)
        .query(stateQuery)
        .catch(() => undefined) as Promise<ConversationState | undefined>;
    for (const end = Date.now() + 120_000; ;) {
      const states = await Promise.all(jobs.map(jobState));
      if (states.some((s) => s?.status === 'awaiting_budget')) break;
      if (Date.now() > end) throw new Error(`no job ever waited for the budget: ${JSON.stringify(states.map((s) => s?.status))}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const waiting = (await poolState(h.store.pool, pool))!;
    expect(waiting.limitUsd).toBe(0.004);
    expect(waiting.spentUsd + waiting.reservedUsd).toBeLessThanOrEqual(waiting.limitUsd);
    // A batch that did not halt cannot be resumed: one line, exit 2.
    const [status, notHalted] = await Promise.all([cli(['batch', 'status', id]), cli(['batch', 'resume', id, '--no-worker'])]);
    expect(notHalted.code).toBe(2);
    expect(notHalted.stderr.trim().split('\n')).toHaveLength(1);
    expect(notHalted.stderr).toContain('did not halt');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('awaiting_budget');
    // Which budget holds the job, by how much, and what raises it.
    // Here one call's reservation is more than the whole budget: it says so, and by how much to raise it.
    expect(status.stdout).toMatch(/\d awaiting the budget:/);
    expect(status.stdout).toMatch(
      new RegExp(
        `: the budget of batch ${id} \\(\\$0\\.0040\\) is smaller than one model call's reservation \\(\\$[\\d.]+\\): no call can start until it is raised by at least \\$[\\d.]+: agentrun batch raise-budget ${id} --add [\\d.]+`,
      ),
    );
    expect(status.stdout).toMatch(/budget: \$[\d.]+ spent \+ \$[\d.]+ reserved of \$0\.0040/);
    const [noAdd, raised] = await Promise.all([cli(['batch', 'raise-budget', id, '--add', '-1']), cli(['batch', 'raise-budget', id, '--add', '1', '--json'])]);
    expect(noAdd.code).toBe(2);
    expect(raised.code, raised.stderr).toBe(0);
    expect(jsonLines(raised.stdout)[0]).toMatchObject({ type: 'budget', limitUsd: 1.004 });

    const result = (await h.client.workflow.getHandle(id).result()) as BatchResult;
    expect(result.totals, JSON.stringify(result.rows)).toMatchObject({ jobs: 3, completed: 3 });
    const end = (await poolState(h.store.pool, pool))!;
    expect(end.reservedUsd).toBeCloseTo(0, 10);
    expect(end.spentUsd).toBeLessThanOrEqual(end.limitUsd);
    expect(end.spentUsd).toBeCloseTo(result.totals.costUsd, 8);
    // One call per scripted turn, as without a budget: a refused call was never made.
    for (const job of jobs) expect((await h.store.getUsage(job)).map((u) => u.turn)).toEqual([1, 2]);
  }, 240_000);
});

describe('context summaries under a shared budget', () => {
  it('reserve their worst case and settle their cost in the pool, as model calls do', async () => {
    const remote = await bareRemote();
    // Long answers (kept whole in the transcript, unlike tool output) that soon outgrow the window.
    const read = (n: number) => ({ say: `${prose(n, 4 * 1024)}\n<read_file>\n<path>README.md</path>\n</read_file>` });
    const model = await scriptModel({ turns: [1, 2, 3, 4, 5, 6, 7, 8].map(read).concat(complete) });
    const pool = `test:${uid('summaries')}`;
    await openPool(h.store.pool, pool, 5);
    const id = uid('summarised');
    // A window small enough that the transcript outgrows it: prepareContext asks for summaries.
    const config = {
      model,
      approval: 'never' as const,
      repo: remote,
      budgetPool: pool,
      maxOutputTokens: 4000,
      contextWindow: 16000,
      safeZone: 10000,
      keepRecentTurns: 1,
      loopDetection: false,
    };
    const result = await conversationResult(await h.start({ id, task: 'read the data files', workspace: remote, config }));
    expect(result.status, result.reason).toBe('completed');
    // The summary requests made (the worker records each call's usage and purpose), and used.
    const summaries = (await h.store.getUsage(id)).filter((u) => u.purpose === 'summary');
    expect(summaries.length).toBeGreaterThan(0);
    expect((await h.store.getPruneState(id)).summary).not.toBeNull();
    const { rows } = await h.store.pool.query<{ segment: number; reserved_usd: number; spent_usd: number; settled: boolean }>(
      'SELECT segment, reserved_usd, spent_usd, settled_at IS NOT NULL AS settled FROM budget_reservations WHERE pool = $1 AND conversation_id = $2',
      [pool, id],
    );
    const summaryRows = rows.filter((r) => r.segment === -1);
    // One reservation per summary request, each settled at what it cost (more than nothing, at most its worst case).
    expect(summaryRows).toHaveLength(summaries.length);
    for (const [i, r] of summaryRows.entries()) {
      expect(r.settled).toBe(true);
      expect(r.spent_usd).toBeCloseTo(summaries[i]!.costUsd, 10);
      expect(r.spent_usd).toBeGreaterThan(0);
      expect(r.spent_usd).toBeLessThanOrEqual(r.reserved_usd);
    }
    const end = (await poolState(h.store.pool, pool))!;
    expect(end.reservedUsd).toBeCloseTo(0, 10);
    expect(end.spentUsd).toBeCloseTo(
      rows.reduce((s, r) => s + r.spent_usd, 0),
      10,
    );
    expect(end.spentUsd).toBeGreaterThan(rows.filter((r) => r.segment >= 0).reduce((s, r) => s + r.spent_usd, 0));
  }, 240_000);
});

describe("a schedule's monthly budget", () => {
  it("is shared by the month's runs: the first waits for a raise, the second (followed by trigger) reserves from what the first left", async () => {
    const remote = await bareRemote();
    const list = join(await tempDir('agentrun-rollout-list-'), 'repos.txt');
    await writeFile(list, `${remote}\n`);
    const model = await scriptModel({ turns: [write('CHANGES.md'), complete] });
    const name = uid('monthly');
    const base = ['--cron', '0 2 1 1 *', '--task', 'refactor', '--model', model, '--approval', 'never', '--max-output-tokens', '1000'];
    // Bad input: one line, exit 2.
    const [noRepos, both, negative] = await Promise.all([
      cli(['schedule', 'create', `${name}-a`, ...base, '--workspace', remote, '--budget-month', '1']),
      cli(['schedule', 'create', `${name}-b`, ...base, '--repos', list, '--budget-month', '1', '--budget', '1']),
      cli(['schedule', 'create', `${name}-c`, ...base, '--repos', list, '--budget-month', '-2']),
    ]);
    for (const [r, says] of [
      [noRepos, '--budget-month applies to a scheduled batch'],
      [both, 'not both'],
      [negative, '--budget-month must be a positive amount of USD'],
    ] as const) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(says);
    }
    // Less than one call's worst case (1000 output tokens at $2/M): the month's first run waits.
    const created = await cli(['schedule', 'create', name, ...base, '--repos', list, '--budget-month', '0.001', '--json']);
    expect(created.code, created.stderr).toBe(0);
    expect(jsonLines(created.stdout)[0]).toMatchObject({ created: name, budgetMonthUsd: 0.001 });
    const month = new Date().toISOString().slice(0, 7);
    const pool = `schedule:${name}:${month}`;
    try {
      const first = await cli(['schedule', 'trigger', name, '--detach']);
      expect(first.code, first.stderr).toBe(0);
      const runs = async () => (await h.client.schedule.getHandle(name).describe()).info.recentActions.map((a) => a.action.workflow.workflowId);
      let run1: string | undefined;
      for (const end = Date.now() + 60_000; !run1; await new Promise((r) => setTimeout(r, 200))) {
        run1 = (await runs())[0];
        if (Date.now() > end) throw new Error('the schedule never started its batch');
      }
      const job1 = `${run1}-1`;
      for (const end = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 200))) {
        const s = (await h.client.workflow
          .getHandle(job1)
          .query(stateQuery)
          .catch(() => undefined)) as ConversationState | undefined;
        if (s?.status === 'awaiting_budget') break;
        if (Date.now() > end) throw new Error(`the month's first job never waited for the budget: ${s?.status}`);
      }
      const shown = await cli(['schedule', 'show', name]);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain(
        `budget ${month}: $0.0000 spent + $0.0000 reserved of $0.0010; raise with: agentrun schedule raise-budget ${name} --add USD`,
      );
      const [noAdd, badMonth, raised] = await Promise.all([
        cli(['schedule', 'raise-budget', name, '--add', '0']),
        cli(['schedule', 'raise-budget', name, '--add', '1', '--month', '2026-13']),
        cli(['schedule', 'raise-budget', name, '--add', '1', '--json']),
      ]);
      for (const r of [noAdd, badMonth]) {
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
      }
      expect(raised.code, raised.stderr).toBe(0);
      expect(jsonLines(raised.stdout)[0]).toMatchObject({ type: 'budget', month, limitUsd: 1.001, woken: 1 });
      const r1 = (await h.client.workflow.getHandle(run1!).result()) as BatchResult;
      expect(r1.totals, JSON.stringify(r1.rows)).toMatchObject({ jobs: 1, completed: 1 });
      expect(r1.budget?.pool).toBe(pool);
      const after1 = (await poolState(h.store.pool, pool))!;
      expect(after1.spentUsd).toBeCloseTo(r1.totals.costUsd, 8);
      expect(after1.spentUsd).toBeGreaterThan(0);
      await recordHistory(h.client, run1!, 'batch-schedule-month-budget.json');

      // The second run of the month, followed by `schedule trigger` to its table: the same pool, the first's spend in it.
      const second = await cli(['schedule', 'trigger', name, '--no-worker', '--json']);
      expect(second.code, second.stderr).toBe(0);
      const lines = jsonLines(second.stdout);
      const run2 = lines.find((l) => l.type === 'triggered')?.workflowId as string;
      expect(run2).not.toBe(run1);
      const r2 = lines.find((l) => l.type === 'result') as unknown as BatchResult;
      expect(r2.totals).toMatchObject({ jobs: 1, completed: 1 });
      expect(r2.budget).toMatchObject({ pool, limitUsd: 1.001 });
      const after2 = (await poolState(h.store.pool, pool))!;
      expect(after2.limitUsd).toBe(1.001);
      expect(after2.reservedUsd).toBeCloseTo(0, 10);
      expect(after2.spentUsd).toBeCloseTo(r1.totals.costUsd + r2.totals.costUsd, 8);
      const shownAfter = await cli(['schedule', 'show', name, '--json']);
      expect(jsonLines(shownAfter.stdout)[0]).toMatchObject({ budget: { month, pool, limitUsd: 1.001 } });
      expect((jsonLines(shownAfter.stdout)[0]!.budget as { spentUsd: number }).spentUsd).toBeCloseTo(after2.spentUsd, 8);
    } finally {
      await h.client.schedule.getHandle(name).delete();
    }
  }, 300_000);
});
