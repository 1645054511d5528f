// `agentrun batch`: five repositories (local bare remotes, one that cannot be cloned), two at a time, on a
// worker process that is SIGKILLed mid-batch and restarted. Real Temporal, PostgreSQL, git.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchStateQuery, type BatchResult } from '../../workflows/batch/api.js';
import { type CliRun, ensureBuiltOnce, runCli } from '../helpers/dist.js';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../helpers/child-worker.js';
import { agentrunEnv, createHarness, gitOut, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';
import { processesWith } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let h: Harness;
const children: ChildWorker[] = [];
beforeAll(async () => {
  h = await createHarness({ worker: false });
});
afterAll(async () => {
  await stopChildWorkers(children);
  await h?.close();
});

async function bareRemote(name: string): Promise<string> {
  const src = await tempRepo({ 'README.md': `# ${name}\n` });
  const bare = join(await tempDir('agentrun-batch-'), `${name}.git`);
  execFileSync('git', ['clone', '-q', '--bare', src, bare]);
  return bare;
}

/** `bin/agentrun.js` runs the build; `bin/agentrun-dev.js` the sources. */
function cli(args: string[], home: string, bin = 'bin/agentrun.js', queue = h.taskQueue): Promise<CliRun> {
  return runCli(args, {
    entry: join(ROOT, bin),
    timeout: 240_000,
    env: agentrunEnv(h, { AGENTRUN_HOME: home, AGENTRUN_TASK_QUEUE: queue }),
  });
}

interface Followed {
  /** Resolves once the output so far passes `seen`; rejects if the command ends first. */
  outputShows: (seen: (stdout: string) => boolean) => Promise<void>;
  ended: Promise<{ code: number | null; stdout: string; stderr: string }>;
  signal: (signal: NodeJS.Signals) => void;
}

/** Start `agentrun ARGS` with env and let the test wait on its output while it runs. */
function follow(args: string[], env: NodeJS.ProcessEnv): Followed {
  ensureBuiltOnce();
  const child = spawn(process.execPath, [join(ROOT, 'bin/agentrun.js'), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    for (const w of waiters) w();
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const ended = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr })),
  );
  const outputShows = (seen: (out: string) => boolean) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!seen(stdout)) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
      void ended.then(() => reject(new Error(`${args[0]} ended first: ${stdout}${stderr}`)));
    });
  return { outputShows, ended, signal: (signal) => child.kill(signal) };
}

/** Start `agentrun ARGS` with env, wait until its output shows `ready`, Ctrl-C it; its exit code and output. */
async function interrupt(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = follow(args, env);
  await run.outputShows((out) => ready.test(out));
  run.signal('SIGINT');
  return run.ended;
}

describe('batch', () => {
  it('runs five repository jobs two at a time: four branches pushed, one failure, the table right, through a worker crash', async () => {
    const remotes = await Promise.all(['one', 'two', 'three', 'four'].map(bareRemote));
    // A remote that cannot be cloned: its job fails, the others go on.
    const missing = `file://${join(tmpdir(), 'agentrun-batch-missing', 'nothing.git')}`;
    const list = join(await tempDir('agentrun-batch-list-'), 'repos.txt');
    await writeFile(list, ['# nightly', remotes[0], remotes[1], missing, '', remotes[2], remotes[3]].join('\n') + '\n');
    const model = await scriptModel({
      turns: [
        { say: '<write_to_file>\n<path>CHANGES.md</path>\n<content>\nrefactored\n</content>\n</write_to_file>' },
        { say: '<execute_command>\n<command>sleep 5</command>\n<requires_approval>false</requires_approval>\n</execute_command>' },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    const workspaces = await tempDir('agentrun-batch-ws-');
    const hostEnv = { AGENTRUN_HOST_ID: `W-${h.taskQueue}`, AGENTRUN_WORKSPACES: workspaces };
    children.push(await startChildWorker(h, hostEnv));
    const home = await tempDir('agentrun-batch-home-');
    const id = `batch-test-${h.taskQueue}`;
    const running = cli(
      [
        'batch',
        '--repos',
        list,
        '--task',
        'refactor',
        '--model',
        model,
        '--concurrency',
        '2',
        '--push',
        '--branch',
        'nightly/{{id}}',
        '--approval',
        'never',
        '--heartbeat-timeout',
        '2s',
        '--id',
        id,
        '--no-worker',
        '--json',
      ],
      home,
    );

    // Kill the worker once the first job is done and others run; the same host comes back.
    const handle = h.client.workflow.getHandle(id);
    let maxRunning = 0;
    for (const end = Date.now() + 120_000; ;) {
      const s = (await handle.query(batchStateQuery).catch(() => undefined)) as BatchResult | undefined;
      if (s) maxRunning = Math.max(maxRunning, s.totals.running);
      if (s && s.totals.completed + s.totals.failed >= 1) break;
      if (Date.now() > end) throw new Error('the batch never got going');
      await new Promise((r) => setTimeout(r, 100));
    }
    await children[0]!.kill('SIGKILL');
    children.push(await startChildWorker(h, hostEnv));

    const ran = await running;
    expect(ran.code, ran.stderr).toBe(1);
    // A night of polling the batch's progress piles up no abort listeners.
    expect(ran.stderr).not.toContain('MaxListenersExceededWarning');
    const lines = ran.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const result = lines.find((l) => l.type === 'result') as unknown as BatchResult;
    expect(result.totals).toMatchObject({ jobs: 5, completed: 4, failed: 1, running: 0, pending: 0, files: 4, insertions: 4, deletions: 0 });
    expect(maxRunning).toBeLessThanOrEqual(2);
    expect(result.rows.map((r) => r.repo)).toEqual([remotes[0], remotes[1], missing, remotes[2], remotes[3]]);
    const failed = result.rows[2]!;
    expect(failed.status).toBe('failed');
    expect(failed.reason).toContain(`cannot clone ${missing}`);
    for (const [i, r] of result.rows.entries()) {
      if (i === 2) continue;
      expect(r).toMatchObject({ status: 'completed', branch: `nightly/${r.conversationId}`, pushed: true, turns: 3 });
      const remote = remotes[i > 2 ? i - 1 : i]!;
      expect(gitOut(remote, 'show', `nightly/${r.conversationId}:CHANGES.md`)).toBe('refactored');
    }
    // The Temporal UI names the batch and each job by its task and repository.
    const batchDescribed = await handle.describe();
    expect(await batchDescribed.staticSummary()).toMatch(/^batch of 5 jobs · /);
    const job = await h.client.workflow.getHandle(result.rows[0]!.conversationId).describe();
    expect(await job.staticSummary()).toContain(` · ${remotes[0]} @ nightly/`);
    expect(await job.staticDetails()).toContain(`Job of batch ${id}.`);
    // inspect gives the same table.
    const inspected = await cli(['inspect', id, '--json'], home);
    expect(inspected.code, inspected.stderr).toBe(0);
    expect((JSON.parse(inspected.stdout) as BatchResult).totals).toEqual(result.totals);
  }, 300_000);

  it('schedule create --repos starts a batch on each run, with {{date}} and {{id}} in --branch', async () => {
    const remotes = await Promise.all(['s1', 's2'].map(bareRemote));
    const list = join(await tempDir('agentrun-batch-list-'), 'repos.txt');
    await writeFile(list, remotes.join('\n') + '\n');
    const model = await scriptModel({
      turns: [
        { say: '<write_to_file>\n<path>CHANGES.md</path>\n<content>\nscheduled\n</content>\n</write_to_file>' },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    await stopChildWorkers(children);
    children.push(await startChildWorker(h, { AGENTRUN_HOST_ID: `S-${h.taskQueue}`, AGENTRUN_WORKSPACES: await tempDir('agentrun-batch-ws-') }));
    const home = await tempDir('agentrun-batch-home-');
    const name = `nightly-${h.taskQueue}`;
    const dev = 'bin/agentrun-dev.js';
    const flags = ['--task', 'refactor', '--model', model, '--push', '--branch', 'nightly/{{date}}/{{id}}', '--approval', 'never', '--json'];
    const bad = await cli(['schedule', 'create', `${name}-bad`, '--cron', '0 2 * * *', '--workspace', remotes[0]!, '--concurrency', '2', ...flags], home, dev);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--concurrency applies to a scheduled batch');
    const created = await cli(['schedule', 'create', name, '--cron', '0 2 * * *', '--repos', list, '--concurrency', '2', ...flags], home, dev);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ created: name, batch: { jobs: 2, concurrency: 2 } });
    const schedule = h.client.schedule.getHandle(name);
    try {
      await schedule.trigger();
      let runId: string | undefined;
      for (const end = Date.now() + 60_000; !runId;) {
        runId = (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId;
        if (Date.now() > end) throw new Error('the schedule never started its batch');
        if (!runId) await new Promise((r) => setTimeout(r, 200));
      }
      const run = h.client.workflow.getHandle(runId!);
      expect((await run.describe()).type).toBe('batch');
      const result = (await run.result()) as BatchResult;
      expect(result.totals, JSON.stringify(result.rows)).toMatchObject({ jobs: 2, completed: 2, failed: 0 });
      const date = new Date().toISOString().slice(0, 10);
      for (const [i, r] of result.rows.entries()) {
        // A scheduled run's id carries its start time; its `:` cannot be in a branch name, its day is in {{date}} already.
        expect(r.conversationId).toContain(':');
        expect(r).toMatchObject({
          repo: remotes[i],
          status: 'completed',
          branch: `nightly/${date}/${r.conversationId.replace(`${date}T`, '').replaceAll(':', '-')}`,
          pushed: true,
        });
        expect(gitOut(remotes[i]!, 'show', `${r.branch}:CHANGES.md`)).toBe('scheduled');
        // Each job carries the schedule's name, like a scheduled conversation.
        expect((await h.store.getConversation(r.conversationId))?.scheduleId).toBe(name);
      }
    } finally {
      await schedule.delete();
    }
  }, 300_000);

  it('passes x=$(…) without a person; a call that needs one shows `waiting` with its approve line, and `pending` in another process lists it', async () => {
    const remote = await bareRemote('waits');
    const list = join(await tempDir('agentrun-batch-list-'), 'repos.txt');
    await writeFile(list, `${remote}\n`);
    const exec = (c: string) => ({ say: `<execute_command>\n<command>${c}</command>\n<requires_approval>false</requires_approval>\n</execute_command>` });
    const model = await scriptModel({
      turns: [
        exec('FILES=$(ls) && echo "$FILES" > listing.txt'),
        exec('git config core.hooksPath .hooks'),
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    await stopChildWorkers(children);
    children.push(await startChildWorker(h, { AGENTRUN_HOST_ID: `A-${h.taskQueue}`, AGENTRUN_WORKSPACES: await tempDir('agentrun-batch-ws-') }));
    const home = await tempDir('agentrun-batch-home-');
    const id = `batch-waits-${h.taskQueue}`;
    // The default policy: dangerous calls wait for a person.
    const running = follow(
      [
        'batch',
        '--repos',
        list,
        '--task',
        'list',
        '--model',
        model,
        '--concurrency',
        '2',
        '--verify',
        'test -f listing.txt',
        '--id',
        id,
        '--no-worker',
        '--json',
      ],
      agentrunEnv(h, { AGENTRUN_HOME: home, AGENTRUN_TASK_QUEUE: h.taskQueue }),
    );

    // A second process sees the job waiting on the git config call (the assignment before it passed).
    let pending: { conversationId: string; kind: string; callId: string; preview: string }[] = [];
    for (const end = Date.now() + 120_000; pending.length < 1;) {
      if (Date.now() > end) throw new Error(`the jobs never waited: ${JSON.stringify(pending)}`);
      const out = await cli(['pending', '--json'], home);
      pending = out.stdout.trim()
        ? out.stdout
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l))
        : [];
      pending = pending.filter((p) => p.conversationId.startsWith(id));
    }
    expect(pending.map((p) => [p.kind, p.preview])).toEqual([['approval', expect.stringContaining('core.hooksPath')]]);
    // The batch's table shows each waiting job and the line that answers it.
    const table = await cli(['inspect', id], home);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('waiting for approval: execute_command git config core.hooksPath .hooks (changes git configuration');
    for (const p of pending) expect(table.stdout).toContain(`approve with: agentrun approve ${p.conversationId} --call ${p.callId}`);
    expect(table.stdout).toContain('1 waiting for a person:');
    // The batch's own progress says so too (it polls each second), before anyone answers.
    const waitingShown = (out: string) =>
      pending.every((p) => out.includes(`"conversationId":"${p.conversationId}"`) && out.includes(`agentrun approve ${p.conversationId} --call ${p.callId}`));
    await running.outputShows(waitingShown);
    for (const p of pending) expect((await cli(['approve', p.conversationId, '--call', p.callId, '--as', 'alice'], home)).code).toBe(0);

    const ran = await running.ended;
    expect(ran.code, ran.stderr).toBe(0);
    const lines = ran.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    // The progress said so too, with the same approve line.
    const waited = lines.filter((l) => l.type === 'job' && l.status === 'waiting');
    for (const p of pending)
      expect(
        waited.some((l) => l.conversationId === p.conversationId && l.waiting.command.startsWith(`agentrun approve ${p.conversationId} --call ${p.callId}`)),
      ).toBe(true);
    const result = lines.find((l) => l.type === 'result') as unknown as BatchResult;
    expect(result.totals).toMatchObject({ jobs: 1, completed: 1, failed: 0 });
    expect(result.rows.every((r) => r.turns === 3)).toBe(true);

    // Afterwards, and after gc removed its stream: inspect names the branch, its state and who approved.
    const gc = await cli(['gc', '--older-than', '1ms'], home);
    expect(gc.code, gc.stderr).toBe(0);
    const job = pending[0]!;
    const inspected = await cli(['inspect', job.conversationId, '--json'], home);
    expect(inspected.code, inspected.stderr).toBe(0);
    const data = JSON.parse(inspected.stdout);
    expect(data.outcome).toMatchObject({ status: 'completed', branch: expect.any(String), commit: expect.stringMatching(/^[0-9a-f]{40}$/), pushed: false });
    expect(data.outcome.verify).toMatchObject({ command: 'test -f listing.txt', passed: true });
    expect(data.approvals).toEqual([expect.objectContaining({ callId: job.callId, approved: true, by: 'alice' })]);
    // Its timeline names agentrun's version (not the SDK's bundle hash) and what each step did.
    const steps = data.timeline.activities as { type: string; workerVersion?: string; summary?: string }[];
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const versions = steps.flatMap((a) => (a.workerVersion ? [a.workerVersion] : []));
    expect(versions.length).toBeGreaterThan(0);
    expect(
      versions.every((v) => v.startsWith(version)),
      versions.join(', '),
    ).toBe(true);
    expect(steps.some((a) => a.type === 'toolCall' && a.summary?.includes('execute_command'))).toBe(true);
    expect(data.collected).toMatchObject({ streamRows: expect.any(Number) });
    const text = (await cli(['inspect', job.conversationId], home)).stdout;
    expect(text).toMatch(new RegExp(`branch: ${data.outcome.branch} at ${data.outcome.commit.slice(0, 12)} \\(not pushed\\)`));
    expect(text).toContain(`approval ${job.callId}: approved by alice at `);
    expect(text).toContain('verify: passed  test -f listing.txt');
    expect(text).toContain('gc: removed at ');
    // `list` shows the same outcome, text and JSON.
    const listed = await cli(['list', '--json'], home);
    expect(listed.code, listed.stderr).toBe(0);
    const row = listed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>)
      .find((r) => r.conversationId === job.conversationId);
    expect(row?.outcome).toMatchObject({ branch: data.outcome.branch, commit: data.outcome.commit, pushed: false });
    expect((await cli(['list'], home)).stdout).toContain(`${data.outcome.branch}@${data.outcome.commit.slice(0, 7)} not pushed`);
  }, 300_000);

  it('Ctrl-C on a foreground batch detaches, stops every server it started and says how to follow', async () => {
    const remote = await bareRemote('ctrlc');
    const list = join(await tempDir('agentrun-batch-list-'), 'repos.txt');
    await writeFile(list, `${remote}\n`);
    const model = await scriptModel({ turns: [{ say: '<ask_followup_question>\n<question>Which file?</question>\n</ask_followup_question>' }] });
    const home = await tempDir('agentrun-batch-ctrlc-');
    const id = `batch-ctrlc-${h.taskQueue}`;
    // No servers given: the batch starts its own embedded Temporal and PostgreSQL under AGENTRUN_HOME.
    const env: NodeJS.ProcessEnv = { ...process.env, AGENTRUN_HOME: home, AGENTRUN_LOG_LEVEL: 'warn', OPENAI_API_KEY: '' };
    for (const k of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'TEMPORAL_NAMESPACE', 'AGENTRUN_DB_SCHEMA', 'AGENTRUN_TASK_QUEUE']) delete env[k];
    // The progress shows the job waiting for an answer, with the line that gives it.
    const { code, stdout, stderr } = await interrupt(
      ['batch', '--repos', list, '--task', 't', '--model', model, '--id', id],
      env,
      /waiting for an answer: Which file\?/,
    );
    expect(stdout).toContain(`${remote}: waiting for an answer: Which file?; answer with: agentrun answer ${id}-1 "…"`);
    expect(code, stderr).toBe(130);
    expect(stdout).toContain(`SIGINT: detached; the batch is durable: agentrun inspect ${id}`);
    expect(processesWith(home)).toEqual([]);
    expect(existsSync(join(home, 'embedded.json'))).toBe(false);
  }, 240_000);

  it('refuses bad input with one line and exit 2', async () => {
    const home = await tempDir('agentrun-batch-home-');
    const noFile = await cli(['batch', '--repos', '/nonexistent/repos.txt', '--task', 't', '--detach'], home);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr.trim().split('\n')).toHaveLength(1);
    expect(noFile.stderr).toContain('cannot read the repositories file /nonexistent/repos.txt');
    const list = join(home, 'repos.txt');
    await writeFile(list, '/nonexistent/repo-a\n');
    const missing = await cli(['batch', '--repos', list, '--task', 't', '--detach'], home);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain(`the repositories file ${list} names a repository that does not exist: /nonexistent/repo-a`);
    // One missing path among others fails its own job only: the batch starts, with a warning.
    await writeFile(list, `/nonexistent/repo-a\n${await bareRemote('present')}\n`);
    const id = `batch-partly-missing-${h.taskQueue}`;
    const partly = await cli(['batch', '--repos', list, '--task', 't', '--detach', '--id', id], home);
    try {
      expect(partly.code, partly.stderr).toBe(0);
      expect(partly.stderr).toContain(
        `warning: the repositories file ${list} names a repository that does not exist: /nonexistent/repo-a; its job fails, the others run`,
      );
      expect(partly.stdout.trim()).toBe(id);
    } finally {
      await h.client.workflow
        .getHandle(id)
        .terminate('test over')
        .catch(() => undefined);
    }
    const both = await cli(['run', '--repo', '/tmp', '--workspace', '/tmp', '--task', 't'], home);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('not both');
  });
});

describe('Ctrl-C on the other commands that follow', () => {
  // A turn that streams for about a minute: the run is still going when Ctrl-C comes.
  const slow = () =>
    scriptModel({ turns: [{ say: `${'slowly '.repeat(60)}\n<attempt_completion>\n<result>done</result>\n</attempt_completion>`, chunk: 4, delay_ms: 600 }] });

  /** The CLI's environment: the harness's Temporal and a fresh queue; PostgreSQL as given. */
  function envFor(home: string, queue: string, db: 'harness' | 'embedded'): NodeJS.ProcessEnv {
    const servers = db === 'harness' ? {} : { DATABASE_URL: undefined, AGENTRUN_DB_SCHEMA: undefined };
    return agentrunEnv(h, { AGENTRUN_HOME: home, AGENTRUN_TASK_QUEUE: queue, AGENTRUN_SHUTDOWN_GRACE: '1s', ...servers });
  }

  it('schedule trigger follows the run it started; Ctrl-C detaches, stops the PostgreSQL it started and says how to follow', async () => {
    const home = await tempDir('agentrun-trigger-ctrlc-');
    const queue = `${h.taskQueue}-trigger`;
    const workspace = await tempRepo({ 'README.md': '# t\n' });
    const name = `trigger-ctrlc-${h.taskQueue}`;
    // Created with the same queue as the trigger's worker polls.
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'bin/agentrun.js'),
        'schedule',
        'create',
        name,
        '--cron',
        '0 2 1 1 *',
        '--workspace',
        workspace,
        '--task',
        't',
        '--model',
        await slow(),
        '--approval',
        'never',
      ],
      { cwd: ROOT, env: envFor(home, queue, 'harness'), stdio: 'pipe' },
    );
    const schedule = h.client.schedule.getHandle(name);
    let runId: string | undefined;
    try {
      // Its PostgreSQL is its own (embedded, under AGENTRUN_HOME); Temporal is the harness's, where the schedule is.
      const r = await interrupt(['schedule', 'trigger', name], envFor(home, queue, 'embedded'), /slowly slowly/);
      runId = /started (\S+)/.exec(r.stdout)?.[1];
      expect(runId, r.stdout).toMatch(new RegExp(`^${name}-`));
      expect(r.code, r.stderr).toBe(130);
      expect(r.stdout).toContain(`detached; the conversation is durable: agentrun watch ${runId}`);
      expect(processesWith(home)).toEqual([]);
      expect(existsSync(join(home, 'embedded.json'))).toBe(false);
      // The run goes on (durable) where a worker polls its queue.
      expect((await h.client.workflow.getHandle(runId!).describe()).status.name).toBe('RUNNING');
    } finally {
      if (runId) await h.client.workflow.getHandle(runId).terminate('test over');
      await schedule.delete();
    }
  }, 240_000);

  it('rerun follows the new conversation; Ctrl-C detaches, leaves no process and says how to follow', async () => {
    const home = await tempDir('agentrun-rerun-ctrlc-');
    const workspace = await tempRepo({ 'README.md': '# r\n' });
    const quick = await scriptModel({ turns: [{ say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' }] });
    // The source conversation, in the harness's store, on the rerun's own queue: only a worker with this
    // home takes it, so its checkpoints are where the rerun looks (the harness's worker has another home).
    const source = `rerun-src-${h.taskQueue}`;
    const ran = await cli(
      ['run', '--workspace', workspace, '--task', 't', '--model', quick, '--id', source, '--json'],
      home,
      undefined,
      `${h.taskQueue}-rerun`,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const env = envFor(home, `${h.taskQueue}-rerun`, 'harness');
    // The harness's PostgreSQL, so that the source is found: the rerun starts no server, Ctrl-C still leaves nothing behind.
    const id = `rerun-ctrlc-${h.taskQueue}`;
    const r = await interrupt(['rerun', source, '--model', await slow(), '--id', id], env, /slowly slowly/);
    try {
      expect(r.code, r.stderr).toBe(130);
      expect(r.stdout).toContain(`detached; the conversation is durable: agentrun watch ${id}`);
      expect(processesWith(home)).toEqual([]);
      expect((await h.client.workflow.getHandle(id).describe()).status.name).toBe('RUNNING');
    } finally {
      await h.client.workflow
        .getHandle(id)
        .terminate('test over')
        .catch(() => undefined);
    }
  }, 240_000);
});
