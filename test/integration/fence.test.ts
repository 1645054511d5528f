// Fencing: a host declared lost that is in fact alive (paused with SIGSTOP, or
// cut off from Temporal only by a proxy that stops) wakes up after the job moved on and finished on
// the other host: its writes are refused, its command is killed, and the transcript, checkpoint
// rows and turn refs are as if it had never woken. Two worker processes as two hosts, a local bare
// repository as the remote; real Temporal, PostgreSQL and git.
import { conversationResult } from '../../src/client/outcome.js';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationState } from '../../workflows/api.js';
import { stateQuery } from '../../workflows/api.js';
import { hostMarkEnv, onHost, startChildWorker, stopChildWorkers, type ChildWorker } from '../helpers/child-worker.js';
import { createHarness, gitOut, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { LOST_WORKER_TASK_TIMEOUT } from '../helpers/fleet.js';
import { recordHistory } from '../histories/manifest.js';
import { tempDir } from '../helpers/temp.js';

let h: Harness;
const children: ChildWorker[] = [];
const proxies: TcpProxy[] = [];
beforeAll(async () => {
  h = await createHarness({ worker: false, repositoryExtensions: true });
});
afterAll(async () => {
  for (const w of children) if (w.process.exitCode === null && w.process.signalCode === null) w.process.kill('SIGCONT');
  await stopChildWorkers(children);
  for (const p of proxies) await p.stop();
  await h?.close();
});

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function bareRemote(files: Record<string, string>): Promise<string> {
  const src = await tempRepo(files);
  const bare = join(await tempDir('agentrun-remote-'), 'repo.git');
  execFileSync('git', ['clone', '-q', '--bare', src, bare]);
  return bare;
}

async function host(id: string, env: NodeJS.ProcessEnv = {}): Promise<{ worker: ChildWorker; workspaces: string }> {
  const workspaces = await tempDir(`agentrun-ws-${id}-`);
  const worker = await startChildWorker(h, { AGENTRUN_HOST_ID: `${id}-${h.taskQueue}`, AGENTRUN_WORKSPACES: workspaces, ...hostMarkEnv(id), ...env });
  children.push(worker);
  return { worker, workspaces };
}

/** A TCP proxy in front of the Temporal server: stopping it cuts a worker off from Temporal only. */
interface TcpProxy {
  address: string;
  stop(): Promise<void>;
  resume(): Promise<void>;
}

async function tcpProxy(target: string): Promise<TcpProxy> {
  const [targetHost, targetPort] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        for (const sock of [client, upstream]) {
          sockets.add(sock);
          sock.on('close', () => sockets.delete(sock));
          sock.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  await listen();
  const proxy: TcpProxy = {
    address: `127.0.0.1:${port}`,
    async stop() {
      const s = server;
      server = undefined;
      for (const sock of sockets) sock.destroy();
      if (s) await new Promise<void>((r) => s.close(() => r()));
    },
    resume: listen,
  };
  proxies.push(proxy);
  return proxy;
}

const write = (path: string, content: string) => `<write_to_file>\n<path>${path}</path>\n<content>\n${content}\n</content>\n</write_to_file>`;
const command = (cmd: string) => `<execute_command>\n<command>${cmd}</command>\n<requires_approval>false</requires_approval>\n</execute_command>`;
const complete = '<attempt_completion>\n<result>done</result>\n</attempt_completion>';

/** Whether a process with exactly this command line runs on this machine (the sandbox's own session and PID namespace hide it from nothing here). */
function running(argv: string[]): boolean {
  const want = argv.join('\0');
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0$/, '') === want) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

/** When the process `argv` is first seen gone (polled every 50 ms from now on). */
function watchGone(argv: string[]): { goneAt: () => number | undefined } {
  let goneAt: number | undefined;
  const timer = setInterval(() => {
    if (running(argv)) return;
    goneAt = Date.now();
    clearInterval(timer);
  }, 50);
  return { goneAt: () => goneAt };
}

/** When an event was written, in ms (the dev server runs on this machine: the same clock as the test's). */
const eventMs = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) =>
  Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);

/**
 * From the history: when the workflow declared the first host lost (the restore's activity
 * scheduled), and how the step's attempt series that timed out and the probes of the host ended
 * before that. A slow machine may stretch a heartbeat past its timeout while the host is alive: the
 * probe then finds it answering and the step runs again there. So both count from the last answered
 * probe on (`answered`: how many probes the host answered before it was cut off).
 */
async function failoverFromHistory(id: string, step = 'toolCall') {
  const { events, ended } = await activitiesOf(id);
  const restore = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'materializeWorkspace');
  const beforeRestore = (name: string) => ended(name).filter((e) => restore && e.eventId < Number(restore.eventId));
  const answeredProbes = beforeRestore('probeHost').filter((e) => e.how === 'completed');
  const since = Math.max(0, ...answeredProbes.map((e) => e.eventId));
  return {
    lostAt: restore && eventMs(restore),
    step: beforeRestore(step).filter((e) => e.eventId > since && e.how === 'timed out'),
    probes: beforeRestore('probeHost').filter((e) => e.eventId > since),
    answered: answeredProbes.length,
  };
}

/** A workflow's history, and how each attempt series of activity `name` ended (in order; `attempt`: the last one's number). */
async function activitiesOf(id: string) {
  const events = (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
  const activity = new Map<string, string>();
  for (const e of events) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a) activity.set(String(e.eventId), a.activityType?.name ?? '');
  }
  const scheduled = (name: string) => [...activity.values()].filter((n) => n === name).length;
  const ended = (name: string) =>
    events.flatMap((e) => {
      const a = e.activityTaskTimedOutEventAttributes ?? e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
      if (!a || activity.get(String(a.scheduledEventId)) !== name) return [];
      const started = events.find((s) => String(s.eventId) === String(a.startedEventId));
      const scheduledAt = eventMs(events.find((s) => String(s.eventId) === String(a.scheduledEventId))!);
      const how = e.activityTaskTimedOutEventAttributes ? 'timed out' : e.activityTaskCompletedEventAttributes ? 'completed' : 'failed';
      return [{ how, attempt: started?.activityTaskStartedEventAttributes?.attempt, eventId: Number(e.eventId), scheduledAt, endedAt: eventMs(e) }];
    });
  return { events, scheduled, ended };
}

const state = (id: string) => h.client.workflow.getHandle(id).query(stateQuery) as Promise<ConversationState & { epoch?: number }>;

/** What the stale host must not change: the transcript, the checkpoint rows, the ledger, the refs on the remote. */
async function snapshot(id: string, remote: string) {
  const messages = (await h.store.getMessages(id)).map((m) => ({ seq: m.seq, kind: m.kind, content: m.content, meta: m.meta }));
  const checkpoints = (await h.store.getCheckpoints(id)).map((c) => ({ turn: c.turn, commit: c.commit }));
  const { rows: ledger } = await h.store.pool.query('SELECT call_id, state, result FROM ledger WHERE conversation_id = $1 ORDER BY call_id', [id]);
  const refs = gitOut(remote, 'for-each-ref', '--format=%(refname) %(objectname)', `refs/agentrun/${id}/`, 'refs/heads/');
  // Where `list` says the workspace is (its size may be measured again meanwhile by the current host).
  const usage = (await h.store.getWorkspaceUsage([id])).get(id);
  return { messages, checkpoints, ledger, refs, placedOn: usage && { host: usage.host, workspace: usage.workspace } };
}

/** Run the job on A, cut A off (`cutOff`) while turn 2 runs there, let the job finish on B, bring A back (`restore`). */
async function staleHost(opts: {
  name: string;
  /** The files of the remote's default branch. */
  files: Record<string, string>;
  /** Turn 2's command. */
  command: string;
  /** Turn 2 is running on A: cut A off once this holds. */
  running: (workspace: string) => boolean;
  /** A is held in turn 2's model step (a PreToolUse hook runs as the calls are parsed): the call never started on A, so B runs it. */
  heldBeforeTheCall?: boolean;
  env?: (temporal: string) => Promise<NodeJS.ProcessEnv>;
  cutOff: (a: ChildWorker) => Promise<void>;
  /** `workspace`: the job's directory on A. */
  restore: (a: ChildWorker, workspace: string) => Promise<void>;
}) {
  const remote = await bareRemote(opts.files);
  const model = await scriptModel({
    turns: [{ say: write('a.txt', 'from turn 1') }, { say: command(opts.command) }, { say: write('b.txt', 'from turn 3') }, { say: complete }],
  });
  await stopChildWorkers(children);
  const a = await host(`${opts.name}A`, await opts.env?.(h.temporalAddress));
  const id = uid(`fence-${opts.name}`);
  const handle = await h.start({
    id,
    task: 'write a and b',
    workspace: remote,
    workflowTaskTimeout: LOST_WORKER_TASK_TIMEOUT,
    config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000, repo: remote, push: true, keepWorkspace: 'always' },
  });
  const first = await until('the job to be placed on host A', async () => (await state(id).catch(() => undefined))?.host);
  expect(first.hostId).toBe(`${opts.name}A-${h.taskQueue}`);
  const b = await host(`${opts.name}B`);
  await until('turn 2 to run on host A', async () => opts.running(first.workspace));
  const cutAt = Date.now();
  await opts.cutOff(a.worker);

  const result = await conversationResult(handle);
  expect(result.status, result.reason).toBe('completed');
  const final = await state(id);
  expect(final.host?.hostId).toBe(`${opts.name}B-${h.taskQueue}`);
  expect(final.epoch).toBe(2);
  expect(await h.store.fenceEpoch(id)).toBe(2);
  const fenceAt = ((await h.store.pool.query('SELECT at FROM fence WHERE conversation_id = $1', [id])).rows[0].at as Date).getTime();
  const before = await snapshot(id, remote);
  expect(before.placedOn?.host).toBe(`${opts.name}B-${h.taskQueue}`);

  const woke = Date.now();
  await opts.restore(a.worker, first.workspace);
  const refusal = await until(
    'the stale host to log a refused write',
    async () =>
      a.worker
        .output()
        .split('\n')
        .find((l) => l.includes('write refused') && l.includes(id)),
    60_000,
  ).catch((err: Error) => {
    const said = a.worker
      .output()
      .split('\n')
      .filter((l) => !l.includes('temporalio_client::retry'))
      .join('\n');
    throw new Error(`${err.message}; host A said:\n${said.slice(-8000)}`);
  });
  // Time for anything else the stale host might still write.
  await new Promise((r) => setTimeout(r, 5000));
  const after = await snapshot(id, remote);
  expect(after).toEqual(before);

  const files = gitOut(remote, 'ls-tree', '-r', '--name-only', `agentrun/${id}`).split('\n').sort();
  if (opts.heldBeforeTheCall) {
    // Turn 2 was answered again on B and its call ran there, once.
    expect(await readFile(join(b.workspaces, id, 'side.txt'), 'utf8')).toBe('ran\n');
    expect(files).toEqual([...Object.keys(opts.files), 'a.txt', 'b.txt', 'side.txt'].sort());
  } else {
    // The command's answer is the new host's "interrupted", naming it (it may not run twice), not the stale host's.
    const answer = after.messages.find((m) => m.kind === 'tool_result' && (m.content as string).includes('interrupted'));
    expect(answer?.content).toContain(`The command \`${opts.command}\` was interrupted`);
    // No turn-2 ref (turn 2's command never finished anywhere); the branch has every surviving file.
    expect(after.refs).not.toContain(`refs/agentrun/${id}/turn-2 `);
    expect(files).toEqual([...Object.keys(opts.files), 'a.txt', 'b.txt'].sort());
    // On B nothing of the stale command.
    expect(existsSync(join(b.workspaces, id, 'side.txt'))).toBe(false);
  }
  return { id, cutAt, fenceAt, woke, refusal: JSON.parse(refusal) as Record<string, unknown>, after, a, workspace: first.workspace };
}

describe('fencing a host declared lost that is still alive', () => {
  it('SIGSTOP beyond the host timeout, the job finishes on the other host, SIGCONT: the stale writes are refused, its command killed', async () => {
    const sleep = ['sleep', '6131'];
    let gone: { goneAt: () => number | undefined } | undefined;
    const r = await staleHost({
      name: 'S',
      files: { 'README.md': 'hello\n' },
      command: `echo ran >> side.txt; ${sleep.join(' ')}`,
      running: (ws) => existsSync(join(ws, 'side.txt')) && running(sleep),
      cutOff: async (a) => {
        gone = watchGone(sleep);
        a.process.kill('SIGSTOP');
      },
      restore: async (a) => void a.process.kill('SIGCONT'),
    });
    await recordHistory(h.client, r.id, 'fence-frozen-host.json');
    // The host was declared lost after the tool step's first attempt timed out and a probe of the
    // host went unanswered, not after every attempt had waited out its heartbeat timeout there.
    const { lostAt, step: tool, probes, answered } = await failoverFromHistory(r.id);
    expect(tool.map(({ how, attempt }) => ({ how, attempt }))).toEqual([{ how: 'timed out', attempt: 1 }]);
    expect(probes.map(({ how, attempt }) => ({ how, attempt }))).toEqual([{ how: 'timed out', attempt: 1 }]);
    if (answered) console.log(`fence (SIGSTOP): ${answered} probe(s) answered before the host was cut off (a heartbeat stretched on a slow machine)`);
    const [stepTimedOut, probe] = [tool[0]!, probes[0]!];
    // Between the step's timeout and the probe the workflow itself waits: A also polled for the
    // workflow's tasks (its sticky queue first), so those time out there before B takes one.
    const workflowTasks = probe.scheduledAt - stepTimedOut.endedAt;
    console.log(
      `fence (SIGSTOP): SIGSTOP to the host declared lost: ${lostAt! - r.cutAt} ms (step timed out ${stepTimedOut.endedAt - r.cutAt} ms after SIGSTOP, ` +
        `the workflow's tasks on the frozen host ${workflowTasks} ms, the probe ${probe.endedAt - probe.scheduledAt} ms, then the restore ${lostAt! - probe.endedAt} ms)`,
    );
    // Heartbeat timeout (2 s) + host timeout (3 s) + the server's timers, besides the workflow's own tasks.
    expect(lostAt! - r.cutAt - workflowTasks).toBeLessThan(2000 + 3000 + 3000);
    // Those are at most two workflow task timeouts (3 s) and the server's backoff before the third.
    expect(workflowTasks).toBeLessThan(3 * 3000 + 3000);
    const killedAt = await until('the stale command to be killed', async () => gone!.goneAt(), 60_000);
    // Paused, the host's command ran on (it is in a session of its own) until the host woke up.
    expect(killedAt).toBeGreaterThan(r.woke);
    // Whichever comes first kills it: the fence read every 2 s, or Temporal's answer to the first heartbeat (the activity is gone).
    const byFence = r.a.worker.output().includes('its running command is killed');
    console.log(
      `fence (SIGSTOP): SIGCONT to the stale command killed: ${killedAt - r.woke} ms (${byFence ? 'the fence watch' : 'the SDK cancellation'} came first)`,
    );
    expect(r.refusal).toMatchObject({ conversationId: r.id, epoch: 1, current: 2 });
    // A's result never landed: the ledger row it started holds the new host's answer (the command may not run twice: not run again).
    const rows = r.after.ledger as { state: string; result?: { output?: string; meta?: { interrupted?: boolean } } }[];
    expect(rows.find((row) => row.result?.meta?.interrupted)?.result?.output).toContain('The command `echo ran >> side.txt; sleep 6131` was interrupted');
  }, 300_000);

  it('a host cut off from Temporal only (its proxy stopped): the step it was in finds its writes refused, its command never runs', async () => {
    let proxy: TcpProxy | undefined;
    let resumedAt = 0;
    // The workspace's PreToolUse hook holds turn 2's model step on A (hooks run as the calls are
    // parsed) until the job has moved and finished on B (the test then creates hook-release in A's
    // workspace; hooks run to their own timeout, 60 s): a step that straddles the move. On B it holds nothing.
    const hook = onHost('PA', 'touch hook-started; while [ ! -e hook-release ]; do sleep 0.1; done');
    const r = await staleHost({
      name: 'P',
      files: {
        'README.md': 'hello\n',
        '.agentrun/settings.json': JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'execute_command', hooks: [{ type: 'command', command: hook }] }] } }),
      },
      command: 'echo ran >> side.txt',
      running: (ws) => existsSync(join(ws, 'hook-started')),
      heldBeforeTheCall: true,
      env: async (temporal) => {
        proxy = await tcpProxy(temporal);
        return { TEMPORAL_ADDRESS: proxy.address };
      },
      cutOff: async () => proxy!.stop(),
      // Back in touch with Temporal only once the stale step has met the fence, so that happened cut off.
      restore: async (a, workspace) => {
        await writeFile(join(workspace, 'hook-release'), '');
        await until('the stale host to meet the fence', async () => a.output().includes('write refused'), 60_000);
        resumedAt = Date.now();
        await proxy!.resume();
      },
    });
    console.log(`fence (partition): cut off to the new placement's fence: ${r.fenceAt - r.cutAt} ms`);
    // Refused while still cut off from Temporal: the fence is read from PostgreSQL.
    expect(r.refusal).toMatchObject({ conversationId: r.id, epoch: 1, current: 2 });
    // The step it was held in (turn 2's model step) finds its own writes refused too.
    const stepRefusal = await until(
      'the stale model step to find its writes refused',
      async () =>
        r.a.worker
          .output()
          .split('\n')
          .find((l) => l.includes('write refused') && l.includes('the tool calls of message')),
      60_000,
    );
    expect(JSON.parse(stepRefusal)).toMatchObject({ conversationId: r.id, epoch: 1, current: 2 });
    expect(r.refusal.time as number).toBeGreaterThan(r.fenceAt);
    expect(r.refusal.time as number).toBeLessThan(resumedAt);
    // The command never ran on A, and A is still a worker (back in touch with Temporal).
    expect(existsSync(join(r.workspace, 'side.txt'))).toBe(false);
    expect(r.a.worker.process.exitCode).toBeNull();
  }, 300_000);
});

describe('fencing a stale host in setup and in verify', () => {
  // SIGSTOPped in the step, A is declared lost; the job moves to B and finishes there; SIGCONT: A's
  // command is killed by the fence and nothing it writes after reaches the store.
  for (const step of ['setup', 'verify'] as const) {
    it(`SIGSTOP during ${step}, the job finishes on the other host, SIGCONT: the stale ${step} command is killed and writes nothing`, async () => {
      const sleep = ['sleep', step === 'setup' ? '6143' : '6147'];
      const onA = (what: string) => onHost(`${step}A`, what);
      const setup = step === 'setup' ? `${onA(`touch step-began; ${sleep.join(' ')}`)}; echo ready > setup-ready` : 'echo ready > setup-ready';
      const verify = step === 'verify' ? `${onA(`touch step-began; ${sleep.join(' ')}`)}; test -f setup-ready` : 'test -f setup-ready';
      const remote = await bareRemote({ 'README.md': 'hello\n', '.gitignore': 'setup-ready\nstep-began\n' });
      const model = await scriptModel({ turns: [{ say: write('a.txt', 'from turn 1') }, { say: complete }] });
      await stopChildWorkers(children);
      const a = await host(`${step}A`);
      const id = uid(`fence-${step}`);
      const handle = await h.start({
        id,
        task: 'write a',
        workspace: remote,
        workflowTaskTimeout: LOST_WORKER_TASK_TIMEOUT,
        // B's workspace is looked at after the end: kept (a pushed job's goes as it ends).
        config: {
          model,
          approval: 'never',
          heartbeatTimeoutMs: 2000,
          hostTimeoutMs: 3000,
          repo: remote,
          push: true,
          setup: [setup],
          verify,
          keepWorkspace: 'always',
        },
      });
      const first = await until('the job to be placed on host A', async () => (await state(id).catch(() => undefined))?.host);
      const b = await host(`${step}B`);
      await until(`${step} to run on host A`, async () => existsSync(join(first.workspace, 'step-began')) && running(sleep));
      const gone = watchGone(sleep);
      a.worker.process.kill('SIGSTOP');
      const stoppedAt = Date.now();

      const result = await conversationResult(handle);
      expect(result, result.reason).toMatchObject({ status: 'completed', setup: { ok: true }, verify: { passed: true } });
      await recordHistory(h.client, id, `fence-frozen-${step}.json`);
      // A was declared lost after the step's first attempt timed out and a probe of it went
      // unanswered, not after each of the step's three attempts had waited out its heartbeat timeout there.
      const lost = await failoverFromHistory(id, step === 'setup' ? 'setupWorkspace' : 'verifyWorkspace');
      console.log(`fence (SIGSTOP during ${step}): SIGSTOP to the host declared lost: ${lost.lostAt! - stoppedAt} ms`);
      expect(lost.step.map(({ how, attempt }) => ({ how, attempt }))).toEqual([{ how: 'timed out', attempt: 1 }]);
      expect(lost.probes.map(({ how, attempt }) => ({ how, attempt }))).toEqual([{ how: 'timed out', attempt: 1 }]);
      const final = await state(id);
      expect(final.host?.hostId).toBe(`${step}B-${h.taskQueue}`);
      expect(final.failovers).toMatchObject([
        { fromHost: `${step}A-${h.taskQueue}`, toHost: `${step}B-${h.taskQueue}`, restoredTurn: step === 'setup' ? 0 : 1 },
      ]);
      // Setup ran to its end on B, where the job finished.
      expect(existsSync(join(b.workspaces, id, 'setup-ready'))).toBe(true);
      const events = async () => (await h.store.readStream(id, 0, 10_000)).map((r) => r.event);
      const before = { stream: await events(), transcript: await snapshot(id, remote) };

      const woke = Date.now();
      a.worker.process.kill('SIGCONT');
      const killedAt = await until(`the stale ${step} command to be killed`, async () => gone.goneAt(), 60_000);
      expect(killedAt - woke).toBeLessThan(15_000);
      // Time for anything else the stale host might still write.
      await new Promise((r) => setTimeout(r, 5000));
      // Retries of the step that reached A while it was stopped start no command of their own.
      expect(running(sleep)).toBe(false);
      expect({ stream: await events(), transcript: await snapshot(id, remote) }).toEqual(before);
      // The stale host's workspace is not where anything went on: A's branch push never happened.
      expect(gitOut(remote, 'show', `agentrun/${id}:a.txt`)).toBe('from turn 1');
      expect(a.worker.process.exitCode).toBeNull();
    }, 300_000);
  }
});

describe('a host that stops answering for a moment', () => {
  it('a tool step whose heartbeats stopped once, on a host that answers the probe: the step runs there again, no failover', async () => {
    const remote = await bareRemote({ 'README.md': 'hello\n' });
    const model = await scriptModel({ turns: [{ say: command('touch began; sleep 3') }, { say: complete }] });
    await stopChildWorkers(children);
    const a = await host('HA');
    const id = uid('fence-answers');
    const handle = await h.start({
      id,
      task: 'sleep',
      workspace: remote,
      workflowTaskTimeout: LOST_WORKER_TASK_TIMEOUT,
      config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000, repo: remote, push: true },
    });
    const first = await until('the job to be placed on host A', async () => (await state(id).catch(() => undefined))?.host);
    await until('the command to run on host A', async () => existsSync(join(first.workspace, 'began')));
    a.worker.process.kill('SIGSTOP');
    // Back as soon as the attempt's heartbeat timeout is in the history: the probe that follows finds A answering.
    await until('the tool step attempt to time out', async () => (await activitiesOf(id)).ended('toolCall').some((e) => e.how === 'timed out'), 30_000);
    a.worker.process.kill('SIGCONT');

    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    await recordHistory(h.client, id, 'fence-probe-answered.json');
    const final = await state(id);
    expect(final.host?.hostId).toBe(first.hostId);
    expect(final.failovers ?? []).toEqual([]);
    const { scheduled, ended } = await activitiesOf(id);
    expect(ended('probeHost').map((e) => e.how)).toEqual(['completed']);
    // The step ran again on A: its first attempt timed out, the second (scheduled after the probe) finished.
    expect(ended('toolCall').map((e) => e.how)).toEqual(['timed out', 'completed']);
    expect(scheduled('materializeWorkspace')).toBe(0);
  }, 120_000);

  it('a setup whose heartbeats stopped once, on a host that answers the probe: setup runs there again, its attempts numbered on', async () => {
    const sleep = ['sleep', '6151'];
    // The first run waits on A; the run after the probe finds it began and goes on.
    const setup = `if [ ! -e setup-began ]; then touch setup-began; ${sleep.join(' ')}; fi; echo ready > setup-ready`;
    const remote = await bareRemote({ 'README.md': 'hello\n', '.gitignore': 'setup-began\nsetup-ready\n' });
    const model = await scriptModel({ turns: [{ say: complete }] });
    await stopChildWorkers(children);
    const a = await host('HA');
    const id = uid('fence-answers-setup');
    const handle = await h.start({
      id,
      task: 'set up',
      workspace: remote,
      workflowTaskTimeout: LOST_WORKER_TASK_TIMEOUT,
      config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000, repo: remote, push: true, setup: [setup], keepWorkspace: 'always' },
    });
    const first = await until('the job to be placed on host A', async () => (await state(id).catch(() => undefined))?.host);
    await until('setup to run on host A', async () => existsSync(join(first.workspace, 'setup-began')) && running(sleep));
    const gone = watchGone(sleep);
    a.worker.process.kill('SIGSTOP');
    await until('the setup attempt to time out', async () => (await activitiesOf(id)).ended('setupWorkspace').some((e) => e.how === 'timed out'), 30_000);
    a.worker.process.kill('SIGCONT');

    const result = await conversationResult(handle);
    expect(result, result.reason).toMatchObject({ status: 'completed', setup: { ok: true } });
    const final = await state(id);
    expect(final.host?.hostId).toBe(first.hostId);
    expect(final.failovers ?? []).toEqual([]);
    const { ended } = await activitiesOf(id);
    expect(ended('probeHost').map((e) => e.how)).toEqual(['completed']);
    expect(ended('setupWorkspace').map((e) => e.how)).toEqual(['timed out', 'completed']);
    await until('the timed-out setup command to be killed', async () => gone.goneAt(), 60_000);
    // The second round counted its attempts on from the most the first could have used (three), so its
    // rows are its own (the same keys would have dropped them): a start of each run, one finish.
    const stream = (await h.store.readStream(id, 0, 10_000)).map((r) => r.event);
    expect(stream.filter((e) => e.type === 'setup_started').map((e) => (e as { attempt: number }).attempt)).toEqual([1, 4]);
    expect(stream.filter((e) => e.type === 'setup_finished')).toMatchObject([{ ok: true }]);
  }, 120_000);

  it('a model step whose heartbeats stopped mid-answer, on a host that answers the probe: the answer is continued there, not asked again', async () => {
    const remote = await bareRemote({ 'README.md': 'hello\n' });
    // Slow enough that the answer is still streaming when the host wakes: the step runs again mid-answer.
    const say = `${Array.from({ length: 40 }, (_, i) => `line ${i} of a long explanation`).join('\n')}\n${complete}`;
    const model = await scriptModel({ turns: [{ say, chunk: 8, delay_ms: 60 }] });
    await stopChildWorkers(children);
    const a = await host('HA');
    const id = uid('fence-answers-model');
    const handle = await h.start({
      id,
      task: 'explain',
      workspace: remote,
      workflowTaskTimeout: LOST_WORKER_TASK_TIMEOUT,
      config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000, repo: remote, push: true },
    });
    const first = await until('the job to be placed on host A', async () => (await state(id).catch(() => undefined))?.host);
    await until('the answer to stream', async () => (await h.store.readStream(id, 0, 1000)).filter((r) => r.event.type === 'delta').length >= 5);
    a.worker.process.kill('SIGSTOP');
    await until('the model step attempt to time out', async () => (await activitiesOf(id)).ended('modelTurn').some((e) => e.how === 'timed out'), 30_000);
    a.worker.process.kill('SIGCONT');

    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    const final = await state(id);
    expect(final.host?.hostId).toBe(first.hostId);
    expect(final.failovers ?? []).toEqual([]);
    const { ended } = await activitiesOf(id);
    expect(ended('probeHost').map((e) => e.how)).toEqual(['completed']);
    expect(ended('modelTurn').map((e) => e.how)).toEqual(['timed out', 'completed']);
    // The step's second round counted its attempts on from the first's, so it continued the text the
    // timed-out attempt had streamed (one continuation naming it, no reset) instead of asking again.
    const stream = await h.store.readStream(id, 0, 10_000);
    const answer = (await h.store.getMessages(id)).find((m) => m.role === 'assistant');
    expect(stream.some((r) => r.event.type === 'reset' && r.event.seq === answer!.seq)).toBe(false);
    expect(stream.filter((r) => r.event.type === 'continuation' && r.event.seq === answer!.seq).map((r) => r.event)).toEqual([
      { type: 'continuation', seq: answer!.seq, segment: 1, resumedAfter: 1 },
    ]);
    expect(answer!.content).toBe(say);
  }, 120_000);
});
