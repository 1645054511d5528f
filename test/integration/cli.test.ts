// The agentrun CLI as a user runs it: a child process against the test Temporal server and
// PostgreSQL, with exit codes, --json lines and one-line errors.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { scriptModel, tempRepo, uid } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';
import { CLI, type CliRun, runCli } from '../helpers/dist.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const exec = promisify(execFile);

function agentrunEnv(home: string, env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    DATABASE_URL: inject('databaseUrl'),
    AGENTRUN_HOME: home,
    AGENTRUN_TASK_QUEUE: queue,
    AGENTRUN_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    AGENTRUN_LOG_LEVEL: 'warn',
    OPENAI_API_KEY: '',
    ...env,
  };
}

async function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const home = await tempDir('agentrun-cli-home-');
  return runCli(args, { env: agentrunEnv(home, env) });
}

/** `cli` over independent invocations, `parallel` at a time; the results in the same order. */
async function cliAll(jobs: [string[], Record<string, string>?][], parallel = 4): Promise<CliRun[]> {
  const results: CliRun[] = [];
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await cli(...jobs[i]!);
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return results;
}

/** `agentrun worker` in the background, stopped with SIGTERM. */
async function backgroundWorker(metricsPort = 0): Promise<{ stop(): Promise<number | null>; output(): string }> {
  const home = await tempDir('agentrun-cli-worker-');
  const child: ChildProcess = spawn(process.execPath, [CLI, 'worker', '--metrics-port', String(metricsPort)], {
    cwd: ROOT,
    env: agentrunEnv(home, { AGENTRUN_LOG_LEVEL: 'info' }),
  });
  let out = '';
  child.stderr!.on('data', (d) => (out += d));
  child.stdout!.on('data', (d) => (out += d));
  for (let i = 0; i < 600 && !out.includes('worker started'); i++) await new Promise((r) => setTimeout(r, 100));
  if (!out.includes('worker started')) throw new Error(`agentrun worker did not start:\n${out}`);
  return {
    output: () => out,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

const queue = uid('cli-tq');
const fixture = (name: string) => 'scripted:' + join(ROOT, 'test/fixtures', name);

describe('agentrun CLI', () => {
  it('runs a conversation to the end with --json and exit 0', async () => {
    const workspace = await tempRepo();
    // inspect reads the checkpoint diffs from the private repositories under the worker's AGENTRUN_HOME.
    const home = { AGENTRUN_HOME: await tempDir('agentrun-cli-home-') };
    // The scripted model reports cached tokens as a provider's prompt cache would (the prefix shared
    // with the previous request), priced here at a tenth of the input price.
    const script = join(await tempDir('agentrun-cli-script-'), 'cached.yaml');
    await writeFile(script, `${await readFile(join(ROOT, 'test/fixtures/edit-and-complete.yaml'), 'utf8')}\nprompt_cache: true\n`);
    const pricing = { AGENTRUN_PRICING: JSON.stringify({ scripted: { input: 10, output: 20, cachedInput: 1 } }) };
    const r = await cli(['run', '--json', '--task', 'greet', '--workspace', workspace, '--model', `scripted:${script}`], { ...home, ...pricing });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const last = r.lines.at(-1)!;
    expect(last).toMatchObject({ type: 'result', status: 'completed', turns: 4 });
    type U = { promptTokens: number; completionTokens: number; totalTokens: number; cachedTokens?: number };
    const usage = last.usage as U;
    expect(usage.totalTokens).toBeGreaterThan(0);
    // Cached tokens reach the turn's usage, the result and its cost (at the cached price).
    expect(usage.cachedTokens).toBeGreaterThan(usage.promptTokens / 2);
    expect(last.cacheHitRate).toBeCloseTo(usage.cachedTokens! / usage.promptTokens, 10);
    expect(last.costUsd as number).toBeCloseTo(((usage.promptTokens - usage.cachedTokens!) * 10 + usage.cachedTokens! + usage.completionTokens * 20) / 1e6, 6);
    const turnsDone = r.lines.filter((l) => l.type === 'turn_completed') as { turn: number; usage: U }[];
    expect(turnsDone.at(-1)!.usage.cachedTokens).toBe(usage.cachedTokens);
    expect(turnsDone[0]!.usage.cachedTokens ?? 0).toBeLessThan(usage.cachedTokens!);
    expect(r.lines.some((l) => l.type === 'delta')).toBe(true);
    expect(r.lines.every((l) => l.type === 'result' || l.type === 'conversation' || typeof l.offset === 'number')).toBe(true);
    expect(await readFile(join(workspace, 'src/greet.ts'), 'utf8')).toContain('Hello, ${name}!');

    // inspect and watch read the finished conversation back.
    const id = last.conversationId as string;
    const inspected = await cli(['inspect', id, '--json'], home);
    expect(inspected.code).toBe(0);
    const data = inspected.lines[0] as {
      transcript: { turn: number }[];
      timeline: { activities: { type: string }[] };
      checkpoints: { turn: number; diff?: string }[];
      usageByTurn: { turn: number; cachedTokens: number; promptTokens: number }[];
      cache: { cachedTokens: number; promptTokens: number; hitRate: number };
    };
    expect(data.cache).toEqual({ cachedTokens: usage.cachedTokens, promptTokens: usage.promptTokens, hitRate: last.cacheHitRate });
    expect(data.usageByTurn.map((t) => t.turn)).toEqual([1, 2, 3, 4]);
    expect(data.usageByTurn[1]!.cachedTokens).toBeGreaterThan(0);
    expect(data.transcript.map((t) => t.turn)).toEqual([0, 1, 2, 3, 4]);
    expect(data.timeline.activities.some((a) => a.type === 'modelTurn')).toBe(true);
    expect(data.checkpoints.find((c) => c.turn === 3)?.diff).toContain('Hello, ${name}!');
    const watched = await cli(['watch', id, '--json']);
    const from = watched.lines[Math.floor(watched.lines.length / 2)]!.offset as number;
    const resumed = await cli(['watch', id, '--json', '--from', String(from)]);
    expect(resumed.lines[0]!.offset).toBeGreaterThan(from);
    expect(resumed.lines.map((l) => l.offset)).toEqual(watched.lines.filter((l) => (l.offset as number) > from).map((l) => l.offset));
    const text = await cli(['inspect', id], home);
    expect(text.stdout).toContain('── turn 3 ──');
    expect(text.stdout).toMatch(new RegExp(`prompt cache: ${usage.cachedTokens} of ${usage.promptTokens} prompt tokens cached, hit rate \\d+\\.\\d%`));
    expect(text.stdout).toMatch(/usage per turn\n +turn +calls +prompt +cached +hit/);
  });

  it('exits 3 when the turn budget is spent', async () => {
    const workspace = await tempRepo();
    const r = await cli(['run', '--json', '--task', 'greet', '--workspace', workspace, '--model', fixture('edit-and-complete.yaml'), '--max-turns', '2']);
    expect(r.code).toBe(3);
    expect(r.lines.at(-1)).toMatchObject({ type: 'result', status: 'budget_exhausted', turns: 2 });
  });

  it('exits 4 when the conversation waits for a person, and answer resumes it', async () => {
    const workspace = await tempRepo();
    const id = uid('cli-q');
    const r = await cli(['run', '--json', '--id', id, '--task', 'q', '--workspace', workspace, '--model', fixture('question.yaml')]);
    expect(r.code).toBe(4);
    expect(r.lines.at(-1)).toMatchObject({ type: 'result', status: 'waiting' });
    const worker = await backgroundWorker();
    try {
      const pending = await cli(['pending', '--json']);
      expect(pending.lines.some((l) => l.conversationId === id && l.kind === 'question')).toBe(true);
      const answered = await cli(['answer', id, 'use notes.md', '--json']);
      expect(answered.code).toBe(0);
      const watched = await cli(['watch', id, '--json']);
      expect(watched.code).toBe(0);
      expect(watched.lines.some((l) => l.type === 'question_asked')).toBe(true);
      expect(watched.lines.at(-1)).toMatchObject({ type: 'finished', status: 'completed' });
    } finally {
      expect(await worker.stop()).toBe(0);
    }
    expect(worker.output()).toMatch(/worker stopped/);
  });

  it('loads only what a command needs: --help no Temporal client or worker, list and inspect no worker, model client or run options', async () => {
    const home = await tempDir('agentrun-cli-home-');
    const loaded = async (args: string[]) => {
      const file = join(home, `imports-${args[0]}.txt`);
      await exec(process.execPath, ['--import', join(ROOT, 'test/helpers/record-imports.mjs'), CLI, ...args], {
        cwd: ROOT,
        env: { ...agentrunEnv(home, {}), RECORD_IMPORTS: file },
        timeout: 60_000,
      });
      return readFile(file, 'utf8');
    };
    const help = await loaded(['--help']);
    expect(help).toMatch(/commander/); // the recorder sees imports
    expect(help).not.toMatch(/@temporalio\/(worker|client)|\/openai\/|tree-sitter|\/pg\//);
    const list = await loaded(['list', '--limit', '1']);
    expect(list).toMatch(/@temporalio\/client/);
    expect(list).not.toMatch(/@temporalio\/worker|\/openai\/|tree-sitter|js-tiktoken/);
    // inspect of a real conversation: no worker, model client, tokenizer, schemas of the run
    // options (zod, yaml) or workflow code, and not the batch module (only for ids the store lacks).
    const done = await scriptModel({ turns: [{ say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' }] });
    const ran = await cli(['run', '--json', '--task', 'finish', '--workspace', await tempRepo(), '--model', done]);
    expect(ran.code, ran.stderr).toBe(0);
    const id = String(ran.lines.at(-1)!.conversationId);
    const inspect = await loaded(['inspect', id, '--no-diffs']);
    expect(inspect).toMatch(/@temporalio\/client/);
    expect(inspect).toMatch(/src\/cli\/inspect\./);
    expect(inspect).not.toMatch(
      /@temporalio\/worker|\/openai\/|tree-sitter|js-tiktoken|\/zod\/|\/yaml\/|workflows\/session\.|src\/cli\/fleet\.|src\/cli\/options\./,
    );
  });

  it('lists by model, workspace, cost and start time', async () => {
    const [ws1, ws2] = [await tempRepo(), await tempRepo()];
    const m2 = await scriptModel({ turns: [{ say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' }] });
    const r1 = await cli(['run', '--json', '--task', 'greet', '--workspace', ws1, '--model', fixture('edit-and-complete.yaml')]);
    const r2 = await cli(['run', '--json', '--task', 'finish', '--workspace', ws2, '--model', m2]);
    expect([r1.code, r2.code], r1.stderr + r2.stderr).toEqual([0, 0]);
    const [id1, id2] = [r1.lines.at(-1)!.conversationId, r2.lines.at(-1)!.conversationId];
    const ids = async (...args: string[]) => (await cli(['list', '--json', ...args])).lines.map((l) => l.conversationId);
    // Visibility is eventually consistent: wait until both are listed.
    for (let i = 0; i < 50 && (await ids('--workspace', ws2)).length === 0; i++) await new Promise((r) => setTimeout(r, 200));
    expect(await ids('--workspace', ws1)).toEqual([id1]);
    expect(await ids('--workspace', ws2, '--model', m2)).toEqual([id2]);
    expect(await ids('--workspace', ws1, '--model', m2)).toEqual([]);
    expect(await ids('--workspace', ws1, '--since', '1h')).toEqual([id1]);
    expect(await ids('--workspace', ws1, '--until', '2020-01-01')).toEqual([]);
    expect(await ids('--workspace', ws1, '--min-cost', '1000')).toEqual([]);
    const bad = await cli(['list', '--since', 'yesterday-ish']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--since must be a duration ago/);
  }, 300_000);

  it('refuses an --id in use (running, or finished without --replace); --replace starts over; pause and resume signal it', async () => {
    const workspace = await tempRepo();
    const id = uid('cli-id');
    const done = await scriptModel({ turns: [{ say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' }] });
    const first = await cli(['run', '--json', '--id', id, '--task', 'finish', '--workspace', workspace, '--model', done]);
    expect(first.code, first.stderr).toBe(0);
    const again = await cli(['run', '--id', id, '--task', 'finish', '--workspace', workspace, '--model', done]);
    expect(again.code).toBe(2);
    expect(again.stderr.trim().split('\n').at(-1)).toBe(
      `agentrun: conversation ${id} already exists (completed): choose another --id, or add --replace to delete it and start over`,
    );

    // --replace deletes the old rows first: the new transcript has one run's messages, not two.
    const before = (await cli(['inspect', id, '--json', '--no-diffs'])).lines[0] as { transcript: unknown[] };
    const replaced = await cli(['run', '--json', '--id', id, '--replace', '--task', 'finish', '--workspace', await tempRepo(), '--model', done]);
    expect(replaced.code, replaced.stderr).toBe(0);
    const after = (await cli(['inspect', id, '--json', '--no-diffs'])).lines[0] as { transcript: unknown[] };
    expect(after.transcript.length).toBe(before.transcript.length);

    // A running one (started, no worker polls its queue yet) is never reused, even with --replace.
    const running = uid('cli-running');
    const started = await cli(['start', '--id', running, '--task', 'q', '--workspace', workspace, '--model', fixture('question.yaml')], {
      AGENTRUN_TASK_QUEUE: uid('idle-tq'),
    });
    expect(started.code, started.stderr).toBe(0);
    const clash = await cli(['run', '--id', running, '--replace', '--task', 'q', '--workspace', workspace, '--model', fixture('question.yaml')]);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toMatch(new RegExp(`conversation ${running} is running: choose another --id, or cancel it first`));

    // pause/resume reach the workflow as its signals.
    expect((await cli(['pause', running])).code).toBe(0);
    expect((await cli(['resume', running, '--json'])).lines[0]).toMatchObject({ conversationId: running, resumeRequested: true });
    const { Connection, Client } = await import('@temporalio/client');
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const client = new Client({ connection });
      const history = await client.workflow.getHandle(running).fetchHistory();
      const signals = (history.events ?? []).flatMap((e) =>
        e.workflowExecutionSignaledEventAttributes ? [e.workflowExecutionSignaledEventAttributes.signalName] : [],
      );
      expect(signals).toEqual(['pause', 'resume']);
      await client.workflow.getHandle(running).terminate('test done');
    } finally {
      await connection.close();
    }
    expect((await cli(['pause', 'no-such-conversation'])).stderr).toMatch(/no conversation with id no-such-conversation/);
  }, 600_000); // nine CLI runs, each a process start on a busy machine

  it('gives one clear line and exit 2 on bad input', async () => {
    const ws = await tempRepo();
    const cases: [string[], RegExp][] = [
      [['run', '--task', 't', '--workspace', '/nonexistent/dir', '--model', fixture('question.yaml')], /workspace \/nonexistent\/dir does not exist/],
      [['run', '--task', 't', '--workspace', ws, '--model', 'scripted:/nonexistent.yaml'], /model scripted:.*nonexistent\.yaml/],
      [['run', '--task', 't', '--workspace', ws, '--model', 'gpt-4o'], /needs OPENAI_API_KEY/],
      [['run', '--task', 't', '--workspace', ws, '--model', 'not a model!'], /unknown model/],
      [['run', '--workspace', ws, '--model', fixture('question.yaml')], /no task/],
      [['run', '--task-file', '/nonexistent/task.md', '--workspace', ws], /cannot read task file/],
      [['run', '--task', 't', '--workspace', ws, '--approval', 'sometimes'], /--approval must be one of/],
      [['run', '--task', 't', '--workspace', ws, '--safe-zone', 'lots'], /--safe-zone/],
      [['run', '--task', 't', '--workspace', ws, '--context-window', 'big'], /--context-window must be a token count/],
      [['watch', 'no-such-conversation'], /no conversation with id no-such-conversation/],
      [
        ['worker', '--sticky-queue-timeout', 'soon'],
        /--sticky-queue-timeout must be a duration from 1s to 10m \(e\.g\. 10s; a plain number is milliseconds\), got "soon"/,
      ],
      [
        ['worker', '--shutdown-grace', 'forever'],
        /--shutdown-grace must be a duration from 0s to 1h \(e\.g\. 30s; a plain number is milliseconds\), got "forever"/,
      ],
    ];
    const bad = join(await tempDir('bad-'), 'bad.yaml');
    await writeFile(bad, 'turns: [{ sey: "typo" }]');
    const stickyArgs = [['worker'], ['run', '--task', 't', '--workspace', ws, '--model', fixture('question.yaml')]];
    // Independent processes: a few at a time.
    const [r, unreachable, ...rest] = await cliAll([
      [['run', '--task', 't', '--workspace', ws, '--model', `scripted:${bad}`]],
      [['run', '--task', 't', '--workspace', ws, '--model', fixture('question.yaml')], { TEMPORAL_ADDRESS: '127.0.0.1:1' }],
      ...stickyArgs.map((args): [string[], Record<string, string>] => [args, { AGENTRUN_STICKY_QUEUE_TIMEOUT: '0s' }]),
      [['run', '--task', 't', '--workspace', ws, '--model', fixture('question.yaml')], { AGENTRUN_SHUTDOWN_GRACE: 'soon' }],
      ...cases.map(([args]): [string[]] => [args]),
    ]);
    const [sticky, [grace], ran] = [rest.slice(0, stickyArgs.length), rest.slice(stickyArgs.length, stickyArgs.length + 1), rest.slice(stickyArgs.length + 1)];
    cases.forEach(([args, message], i) => {
      expect(ran[i]!.code, args.join(' ')).toBe(2);
      expect(ran[i]!.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(ran[i]!.stderr, args.join(' ')).toMatch(message);
    });
    expect(r!.code).toBe(2);
    expect(r!.stderr).toMatch(/sey/);
    stickyArgs.forEach((args, i) => {
      expect(sticky[i]!.code, args.join(' ')).toBe(2);
      expect(sticky[i]!.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(sticky[i]!.stderr).toMatch(
        /AGENTRUN_STICKY_QUEUE_TIMEOUT must be a duration from 1s to 10m \(e\.g\. 10s; a plain number is milliseconds\), got "0s"/,
      );
    });
    expect(grace!.code).toBe(2);
    expect(grace!.stderr.trim().split('\n')).toHaveLength(1);
    expect(grace!.stderr).toMatch(/AGENTRUN_SHUTDOWN_GRACE must be a duration from 0s to 1h \(e\.g\. 30s; a plain number is milliseconds\), got "soon"/);
    expect(unreachable!.code).toBe(2);
    expect(unreachable!.stderr.trim().split('\n')).toHaveLength(1);
    expect(unreachable!.stderr).toMatch(/127\.0\.0\.1:1/);
  });

  it("refuses a workspace that would expose the worker, and the worker's own variables and settings, with exit 2 and one line", async () => {
    const root = await tempDir('agentrun-cli-guard-');
    const home = join(root, 'home');
    const agentrunHome = join(home, 'state', '.agentrun');
    await mkdir(agentrunHome, { recursive: true });
    const env = { HOME: home, AGENTRUN_HOME: agentrunHome };
    const ws = await tempRepo();
    const model = fixture('question.yaml');
    const cases: [string[], Record<string, string>, RegExp][] = [
      // `--workspace ~` and `--workspace $AGENTRUN_HOME/..` as the shell hands them over.
      [['run', '--task', 't', '--workspace', home, '--model', model], env, /^agentrun: workspace .*\/home is the home directory/],
      [['start', '--task', 't', '--workspace', `${agentrunHome}/..`, '--model', model], env, /workspace .*\/home\/state contains AGENTRUN_HOME/],
      [['run', '--task', 't', '--workspace', '/', '--model', model], env, /workspace \/ is the root directory/],
      [['run', '--task', 't', '--workspace', ws, '--model', model, '--env', 'DATABASE_URL'], env, /--env DATABASE_URL: commands never get DATABASE_URL/],
      [['worker', '--allow-env', 'FOO,TEMPORAL_API_KEY'], env, /--allow-env TEMPORAL_API_KEY: TEMPORAL_API_KEY is the worker's Temporal connection/],
      [
        ['worker', '--workspace-usage-interval', '30'],
        env,
        /^agentrun: --workspace-usage-interval must be a duration from 1s to 1d, or 0 \(e\.g\. 30s; a plain number is milliseconds\), got "30"$/m,
      ],
      [
        ['worker'],
        { ...env, AGENTRUN_WORKSPACE_USAGE_INTERVAL: 'soon' },
        /^agentrun: AGENTRUN_WORKSPACE_USAGE_INTERVAL must be a duration from 1s to 1d, or 0 .*, got "soon"$/m,
      ],
      [
        ['run', '--task', 't', '--workspace', ws, '--model', model],
        { ...env, AGENTRUN_WORKSPACE_USAGE_INTERVAL: '2d' },
        /AGENTRUN_WORKSPACE_USAGE_INTERVAL must be a duration from 1s to 1d, or 0 .*, got "2d"/,
      ],
      [
        ['run', '--task', 't', '--workspace', ws, '--model', model],
        { ...env, AGENTRUN_ALLOW_ENV: 'OPENAI_API_KEY' },
        /AGENTRUN_ALLOW_ENV: --allow-env OPENAI_API_KEY/,
      ],
    ];
    for (const [args, extra, message] of cases) {
      const r = await cli(args, extra);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });

  it('approves and denies dangerous calls', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        { say: '<execute_command>\n<command>sudo touch /tmp/x</command>\n<requires_approval>true</requires_approval>\n</execute_command>' },
        // Longer than any preview, and with a terminal escape: `pending` shows all of it, escaped.
        {
          say: `<execute_command>\n<command>echo approved > ok.txt # ${'x'.repeat(400)} \u001b[2Jend</command>\n<requires_approval>true</requires_approval>\n</execute_command>`,
        },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    const id = uid('cli-a');
    const first = await cli(['run', '--json', '--id', id, '--task', 'a', '--workspace', workspace, '--model', model]);
    expect(first.code).toBe(4);
    expect(first.lines.some((l) => l.type === 'approval_requested')).toBe(true);
    const worker = await backgroundWorker();
    try {
      // The operator looks: `pending` shows the call id, and deny without --call decides that call.
      // (One operator: the same AGENTRUN_HOME for all their commands, where `pending` notes what they saw.)
      const operator = { AGENTRUN_HOME: await tempDir('agentrun-operator-') };
      const looked = await cli(['pending', '--json'], operator);
      const first = looked.lines.find((l) => l.conversationId === id && l.kind === 'approval') as { callId: string } | undefined;
      expect(first?.callId).toBeTruthy();
      const denied = await cli(['deny', id, '--reason', 'no sudo here', '--json'], operator);
      expect(denied.code).toBe(0);
      expect(denied.lines[0]).toMatchObject({ callId: first!.callId, approved: false });
      // The next call asks again: approving without --call is refused while the operator has not looked at it.
      let stale: CliRun | undefined;
      for (let i = 0; i < 100; i++) {
        stale = await cli(['approve', id], operator);
        if (/changed since you last looked/.test(stale.stderr)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(stale?.code).toBe(2);
      expect(stale?.stderr).toContain(`you saw ${first!.callId}`);
      const shown = (await cli(['pending'], operator)).stdout;
      expect(shown).toMatch(new RegExp(`${id}  approval --call `));
      expect(shown).toContain(`execute_command {"command":"echo approved > ok.txt # ${'x'.repeat(400)} \\u001b[2Jend","requires_approval":true}`);
      expect(shown).not.toContain('\u001b');
      const approved = await cli(['approve', id], operator);
      expect(approved.code, approved.stderr).toBe(0);
      const watched = await cli(['watch', id, '--json']);
      expect(watched.lines.at(-1)).toMatchObject({ type: 'finished', status: 'completed' });
    } finally {
      await worker.stop();
    }
    expect(await readFile(join(workspace, 'ok.txt'), 'utf8')).toBe('approved\n');
    const results = (await cli(['inspect', id, '--json'])).lines[0] as {
      transcript: { messages: { toolName?: string; status?: string; content: string }[] }[];
    };
    const commands = results.transcript.flatMap((t) => t.messages).filter((m) => m.toolName === 'execute_command');
    expect(commands.map((m) => m.status)).toEqual(['denied', 'ok']);
    expect(commands[0]!.content).toContain('no sudo here');
  });

  it('serves health and Prometheus metrics from `agentrun worker`', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const worker = await backgroundWorker(port);
    try {
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ ok: true });
      const workspace = await tempRepo();
      const r = await cli(['run', '--no-worker', '--json', '--task', 'greet', '--workspace', workspace, '--model', fixture('edit-and-complete.yaml')]);
      expect(r.code).toBe(0);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(/^agentrun_turns_total 4$/m);
      expect(metrics).toMatch(/^agentrun_tool_calls_total\{status="ok",tool="write_to_file"\} 1$/m);
      expect(metrics).toMatch(/^agentrun_tokens_total\{kind="prompt"\} \d+/m);
      // Prompt tokens split by the provider's cache (this script reports none cached).
      const prompt = /^agentrun_tokens_total\{kind="prompt"\} (\d+)/m.exec(metrics)![1];
      expect(metrics).toMatch(new RegExp(`^agentrun_prompt_tokens_total\\{cached="false"\\} ${prompt}$`, 'm'));
      expect(metrics).toMatch(/^agentrun_prompt_tokens_total\{cached="true"\} 0$/m);
      expect(metrics).toMatch(/temporal_/); // the Temporal runtime's own metrics follow ours
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });

  it('creates, lists, triggers and deletes a schedule whose runs carry its name', async () => {
    const workspace = await tempRepo();
    const taskFile = join(await tempDir('task-'), 'task.md');
    await writeFile(taskFile, 'Nightly: greet\n');
    const name = uid('nightly');
    const created = await cli([
      'schedule',
      'create',
      name,
      '--cron',
      '0 2 * * *',
      '--task-file',
      taskFile,
      '--workspace',
      workspace,
      '--model',
      fixture('edit-and-complete.yaml'),
      '--overlap',
      'skip',
      '--max-turns',
      '10',
      '--json',
    ]);
    expect(created.code).toBe(0);
    expect(created.lines[0]).toMatchObject({ created: name, overlap: 'skip' });
    const bad = await cli([
      'schedule',
      'create',
      uid('x'),
      '--cron',
      '0 2 * * *',
      '--task-file',
      taskFile,
      '--workspace',
      workspace,
      '--model',
      fixture('edit-and-complete.yaml'),
      '--overlap',
      'sometimes',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--overlap must be one of/);
    const listed = await cli(['schedule', 'list', '--json']);
    expect(listed.lines.some((l) => l.name === name)).toBe(true);
    const worker = await backgroundWorker();
    try {
      // Returns at once: the background worker runs it (trigger follows the run unless --detach).
      expect((await cli(['schedule', 'trigger', name, '--detach'])).code).toBe(0);
      let runId: string | undefined;
      for (let i = 0; i < 100 && !runId; i++) {
        const d = await cli(['schedule', 'describe', name, '--json']);
        runId = (d.lines[0]?.recentRuns as { workflowId: string }[] | undefined)?.[0]?.workflowId;
        if (!runId) await new Promise((r) => setTimeout(r, 300));
      }
      expect(runId).toMatch(new RegExp(`^${name}-`));
      const watched = await cli(['watch', runId!, '--json']);
      expect(watched.lines.at(-1)).toMatchObject({ type: 'finished', status: 'completed' });
      const inspected = (await cli(['inspect', runId!, '--json'])).lines[0] as { conversation: { scheduleId: string } };
      expect(inspected.conversation.scheduleId).toBe(name);
      const tagged = await cli(['list', '--json']);
      expect(tagged.lines.find((l) => l.conversationId === runId)).toMatchObject({ schedule: name, status: 'completed' });
    } finally {
      await worker.stop();
      expect((await cli(['schedule', 'delete', name])).code).toBe(0);
    }
    expect((await cli(['schedule', 'describe', name])).stderr).toMatch(/no schedule named/);
  });
});
