// Provider pools on the real path: two `agentrun worker` processes, the real Temporal dev server and
// PostgreSQL, and an OpenAI-compatible provider in its own process that admits LIMIT answers at once
// per model and answers 429 beyond that (test/helpers/limited-provider.mjs). Jobs never fail on a
// rate limit; a configured pool keeps the provider under its limit fleet-wide; a long retry-after
// pauses one pool while another goes on; interactive calls go before nightly ones; a killed worker's
// slot comes back after the lease time; with the pools' store unreachable no call goes out.
import { conversationResult } from '../../src/client/outcome.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateQuery, type ConversationState } from '../../workflows/api.js';
import { SA_STATUS } from '../../src/search-attributes.js';
import { startChildWorker, type ChildWorker } from '../helpers/child-worker.js';
import { runCli } from '../helpers/dist.js';
import { agentrunEnv, createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { recordHistory } from '../histories/manifest.js';
import { hostname } from 'node:os';
import { hostQueue } from '../../src/workspace/routing.js';

const _ROOT = fileURLToPath(new URL('../..', import.meta.url));
const _exec = promisify(execFile);
const LIMIT = 2;

interface Stats {
  byModel: Record<string, { served: number; refused: number; max: number }>;
  log: { at: number; model: string; outcome: number; who: string }[];
}

let h: Harness;
let provider: ChildProcess;
let providerUrl: string;
let proxy: TcpProxy;
let workers: ChildWorker[] = [];
let workspace: string;

async function stats(): Promise<Stats> {
  return (await fetch(`${providerUrl}/stats`)).json() as Promise<Stats>;
}
async function control(body: object): Promise<void> {
  await fetch(`${providerUrl}/control`, { method: 'POST', body: JSON.stringify(body) });
}

/** A workspace of each tenant: the worker refuses one tenant's conversation in another's workspace. */
const tenantWorkspaces = new Map<string, Promise<string>>();
const workspaceOf = (tenant: string | undefined): Promise<string> => {
  if (tenant === undefined) return Promise.resolve(workspace);
  if (!tenantWorkspaces.has(tenant)) tenantWorkspaces.set(tenant, tempRepo({ 'README.md': `pools of ${tenant}\n` }));
  return tenantWorkspaces.get(tenant)!;
};
// Heartbeats go out at most every 0.8 of the timeout, so a short timeout leaves the server little slack:
// a heartbeat late by a second on a busy dev server would time an attempt out, and its retry would call
// the provider a second time, which the counts below would take for a wasted call.
const start = async (model: string, task: string, config: { tenant?: string } & Record<string, unknown> = {}) =>
  h.start({ id: uid('pool'), task, workspace: await workspaceOf(config.tenant), config: { model, heartbeatTimeoutMs: 15_000, ...config } });
const result = async (handle: Awaited<ReturnType<typeof start>>) => await conversationResult(handle);

/** A conversation's steps as its history tells them: attempts, and how each ended. */
async function stepEvents(id: string): Promise<string> {
  const { events } = await h.client.workflow.getHandle(id).fetchHistory();
  const model = new Set<string>();
  const out: string[] = [];
  for (const e of events ?? []) {
    const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type) {
      model.add(String(e.eventId));
      out.push(`${type} scheduled #${e.eventId}`);
    }
    const ends: [
      string,
      { scheduledEventId?: unknown; attempt?: number | null; failure?: { message?: string | null; timeoutFailureInfo?: unknown } | null } | null | undefined,
    ][] = [
      ['started', e.activityTaskStartedEventAttributes],
      ['completed', e.activityTaskCompletedEventAttributes],
      ['failed', e.activityTaskFailedEventAttributes],
      ['timed out', e.activityTaskTimedOutEventAttributes],
      ['cancelled', e.activityTaskCanceledEventAttributes],
    ];
    const ended = ends.find(([, a]) => a);
    if (!ended || !model.has(String(ended[1]!.scheduledEventId))) continue;
    const [what, a] = ended as [string, NonNullable<(typeof ended)[1]>];
    const failure = a.failure ? ` (${a.failure.message ?? ''} ${JSON.stringify(a.failure.timeoutFailureInfo ?? '')})` : '';
    out.push(`${what} #${String(a.scheduledEventId)}${a.attempt ? ` attempt ${a.attempt}` : ''}${failure}`);
  }
  return out.join(', ');
}

async function cli(args: string[]) {
  return runCli(args, { env: agentrunEnv(h), timeout: 60_000 });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  h = await createHarness({ worker: false });
  provider = spawn(process.execPath, [fileURLToPath(new URL('../helpers/limited-provider.mjs', import.meta.url))], {
    env: { ...process.env, LIMIT: String(LIMIT), DELAY_MS: '300', RETRY_AFTER: '1', CALLS: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve) =>
    provider.stdout!.on('data', (d) => /listening (\d+)/.test(String(d)) && resolve(/listening (\d+)/.exec(String(d))![1]!)),
  );
  providerUrl = `http://127.0.0.1:${port}`;
  const db = new URL(h.databaseUrl);
  proxy = new TcpProxy({ host: db.hostname, port: Number(db.port || 5432) });
  await proxy.start();
  db.hostname = '127.0.0.1';
  db.port = String(proxy.port);
  workspace = await tempRepo({ 'README.md': 'pools\n' });
  const env = {
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: `${providerUrl}/v1`,
    // The scripted model too goes through a pool when one is named for it: a rehearsal of the pools.
    AGENTRUN_POOLS: 'model-b*=pool-b,model-c*=pool-c,model-d*=pool-d,model-e*=pool-e,model-f*=pool-f,model-g*=pool-g,scripted:*=rehearsal',
    AGENTRUN_POOL_LEASE_MS: '3000',
    AGENTRUN_POOL_DATABASE_URL: db.toString(),
  };
  workers = await Promise.all([startChildWorker(h, env), startChildWorker(h, env)]);
});

afterAll(async () => {
  for (const w of workers) await w.kill('SIGTERM').catch(() => undefined);
  provider?.kill('SIGTERM');
  await proxy?.stop().catch(() => undefined);
  await h?.close();
});

describe('rate limits never fail a job', () => {
  it('no pool configured: more jobs than the provider admits all complete, with at most one 429 per job', async () => {
    const jobs = await Promise.all(Array.from({ length: 5 }, (_, i) => start('model-a', `adaptive job ${i}`)));
    const results = await Promise.all(jobs.map(result));
    expect(results.map((r) => r.status)).toEqual(Array(5).fill('completed'));
    const s = (await stats()).byModel['model-a']!;
    expect(s.served).toBe(5);
    expect(s.refused).toBeLessThanOrEqual(5);
  });

  it('a configured pool (agentrun pool set) keeps the provider at its limit across both workers: no 429', async () => {
    const set = await cli(['pool', 'set', 'pool-c', '--concurrency', String(LIMIT)]);
    expect(set.code, set.stderr).toBe(0);
    const jobs = await Promise.all(Array.from({ length: 5 }, (_, i) => start('model-c', `configured job ${i}`)));
    expect((await Promise.all(jobs.map(result))).map((r) => r.status)).toEqual(Array(5).fill('completed'));
    const s = (await stats()).byModel['model-c']!;
    expect(s).toMatchObject({ served: 5, refused: 0 });
    expect(s.max).toBeLessThanOrEqual(LIMIT);
    const show = await cli(['pool', 'show', 'pool-c', '--json']);
    expect(JSON.parse(show.stdout)).toMatchObject({ pool: 'pool-c', limit: LIMIT, adaptive: false, inFlight: 0, calls10m: 5 });
  });

  it('a long retry-after pauses its pool for every worker (the conversation says it waits for the provider) while another pool goes on', async () => {
    await control({ model: 'model-a', refuseNext: 1, retryAfter: 12 });
    const paused = await start('model-a', 'paused job');
    // The state query (inspect, the page) and the search attribute (list) both say it waits for the provider.
    const queried = until('the state query to say why', async () => {
      const s = (await h.client
        .withDeadline(Date.now() + 2000, () => h.client.workflow.getHandle(paused.workflowId).query(stateQuery))
        .catch(() => undefined)) as ConversationState | undefined;
      return s?.status === 'waiting_for_provider' ? s : undefined;
    });
    await until('the status waiting_for_provider', async () => {
      const d = await h.client.workflow.getHandle(paused.workflowId).describe();
      return d.typedSearchAttributes.get(SA_STATUS) === 'waiting_for_provider' ? true : undefined;
    });
    const state = await queried;
    expect(state.providerWait).toMatch(/rate limited \(429\)|paused until/);
    const other = await start('model-b', 'other pool job');
    const listed = await cli(['list', '--status', 'waiting_for_provider']);
    expect(listed.stdout).toContain(paused.workflowId);
    expect((await result(other)).status).toBe('completed');
    expect((await result(paused)).status).toBe('completed');
    // A replay fixture of the wait (patch provider-wait), with AGENTRUN_RECORD_HISTORIES=1.
    await recordHistory(h.client, paused.workflowId, 'pools-provider-wait.json');
    const log = (await stats()).log.filter((l) => l.model === 'model-a' && l.who.includes('paused job'));
    const refusal = log.find((l) => l.outcome === 429)!;
    const next = log.find((l) => l.at > refusal.at)!;
    // No worker called the paused pool before the retry-after ran out; the other pool was called meanwhile.
    expect(next.at - refusal.at).toBeGreaterThanOrEqual(12_000);
    const otherCall = (await stats()).log.find((l) => l.model === 'model-b' && l.outcome === 200)!;
    expect(otherCall.at).toBeGreaterThan(refusal.at);
    expect(otherCall.at).toBeLessThan(next.at);
  });

  it('a scripted job waiting on its paused rehearsal pool has one status everywhere, is in its backlog, and `pool resume` wakes it before its timer', async () => {
    expect((await cli(['pool', 'set', 'rehearsal', '--concurrency', '2'])).code).toBe(0);
    const paused = await cli(['pool', 'pause', 'rehearsal']);
    expect(paused.code, paused.stderr).toBe(0);
    const job = await start(
      await scriptModel({ turns: [{ say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' }] }),
      'job of a paused pool',
    );
    const id = job.workflowId;
    const state = await until('the job to wait for its pool', async () => {
      const s = (await h.client.withDeadline(Date.now() + 2000, () => h.client.workflow.getHandle(id).query(stateQuery)).catch(() => undefined)) as
        ConversationState | undefined;
      return s?.status === 'waiting_for_provider' ? s : undefined;
    });
    // An operator's pause is not the provider asking; its reason says what ends it.
    expect(state.providerWait).toContain('pool rehearsal is paused until resumed (by an operator (agentrun pool pause))');
    expect(state.providerWait).toContain('or as soon as the pool is resumed (agentrun pool resume rehearsal)');
    expect(state.providerWait).not.toContain('as the provider asked');
    const inspected = await cli(['inspect', id]);
    expect(inspected.stdout).toContain('status: waiting_for_provider');
    await until('list to say so', async () => ((await cli(['list', '--status', 'waiting_for_provider'])).stdout.includes(id) ? true : undefined));
    const show = JSON.parse((await cli(['pool', 'show', 'rehearsal', '--json'])).stdout) as { backlog: number };
    expect(show.backlog).toBe(1);

    const resumed = await cli(['pool', 'resume', 'rehearsal', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((JSON.parse(resumed.stdout) as { woken: number }).woken).toBeGreaterThanOrEqual(1);
    expect((await result(job)).status).toBe('completed');
    // Woken, not timed out: the wait's timer was cancelled after the resume's signal.
    const events = (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const signalled = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'providerPoolResumed');
    expect(signalled).toBeGreaterThan(-1);
    expect(events.slice(signalled).some((e) => e.timerCanceledEventAttributes)).toBe(true);
    // A replay fixture of the wake (its timer cancelled by the signal), with AGENTRUN_RECORD_HISTORIES=1.
    await recordHistory(h.client, id, 'pools-pool-resumed.json');
  });
});

describe('priorities and tenants', () => {
  it('serves an interactive call of another tenant before the nightly backlog', async () => {
    await cli(['pool', 'set', 'pool-d', '--concurrency', '1']);
    // Answers that take a second: the nightly backlog is still waiting when the interactive run asks.
    await control({ model: 'model-d', refuseNext: 0, holdMs: 1000 });
    const nightly = await Promise.all(Array.from({ length: 4 }, (_, i) => start('model-d', `nightly job ${i}`, { priority: 'nightly', tenant: 'big' })));
    await until('the first nightly call', async () => ((await stats()).log.some((l) => l.model === 'model-d') ? true : undefined));
    const interactive = await start('model-d', 'interactive job', { priority: 'interactive', tenant: 'small' });
    // When the interactive call joins the pool's line (its waiter's row, in the store's clock): a busy
    // machine may take seconds to bring a new conversation to its first call, and what came before is no overtaking.
    let joined: number | undefined;
    let finished = false;
    const watching = (async () => {
      while (!finished && joined === undefined) {
        const r = await h.store.pool.query<{ since: Date }>(`SELECT since FROM pool_waiters WHERE pool = 'pool-d' AND tenant = 'small'`);
        if (r.rows[0]) joined = r.rows[0].since.getTime();
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    await Promise.all([...nightly, interactive].map(result)).finally(() => (finished = true));
    await watching;
    const answers = (await stats()).log.filter((l) => l.model === 'model-d' && l.outcome === 200);
    const served = answers.find((l) => l.who.includes('interactive job'))?.at;
    const nightlyAt = answers.filter((l) => !l.who.includes('interactive job')).map((l) => l.at);
    // Overtaken: a nightly answer that began after the interactive call was waiting and before it was served (one
    // granted as it joined may reach the provider a moment later).
    const overtaken = joined === undefined || served === undefined ? [] : nightlyAt.filter((at) => at > joined! && at < served);
    // One answer per conversation; a second one is a model step that ran again, whose history says why. And a
    // nightly call still waited when the interactive one was served: the backlog it went before.
    if (answers.length !== 5 || overtaken.length > 1 || !nightlyAt.some((at) => at > served!)) {
      const why = await Promise.all([...nightly, interactive].map(async (j) => `${j.workflowId}: ${await stepEvents(j.workflowId)}`));
      const order = answers.map((l) => `${l.who.includes('interactive job') ? 'interactive' : 'nightly'} at ${l.at}`);
      expect.fail(`answers: ${order.join(', ')}; the interactive call (${interactive.workflowId}) waited from ${joined}:\n${why.join('\n')}`);
    }
  });

  it("carries Temporal's priority key, the tenant as fairness key and its weight on the model step; Temporal serves interactive before nightly", async () => {
    // Two answers per conversation: the second model step carries the weight the first one read.
    await control({ model: 'model-g', refuseNext: 0, calls: 2 });
    const weights = await cli(['tenant', 'weight', 'set', 'night-team=2']);
    expect(weights.code, weights.stderr).toBe(0);
    // Both workers serve one host (this machine): its queue holds the conversations' steps. A rate of
    // 0 holds them in Temporal's backlog, where the keys decide the order once it opens again.
    const queue = hostQueue(h.taskQueue, hostname());
    const rate = (requestsPerSecond?: number) =>
      h.client.workflowService.updateTaskQueueConfig({
        namespace: h.client.options.namespace,
        taskQueue: queue,
        taskQueueType: 2,
        identity: 'pools test',
        updateQueueRateLimit: requestsPerSecond === undefined ? {} : { rateLimit: { requestsPerSecond }, reason: 'pools test' },
      });
    let seen = '';
    const backlogged = (id: string) =>
      until(
        `the first step of ${id} in the backlog`,
        async () => {
          const d = await h.client.workflow.getHandle(id).describe();
          seen = (d.raw.pendingActivities ?? []).map((a) => `${a.activityType?.name}:${a.state}`).join(',');
          return (d.raw.pendingActivities ?? []).length > 0 ? true : undefined;
        },
        20_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message} (pending: ${seen})`);
      });
    // Steps held in the backlog are not a lost host: they wait there longer than the default 20 s.
    const held = { hostTimeoutMs: 300_000 };
    await rate(0);
    let nightly: Awaited<ReturnType<typeof start>>[] = [];
    let interactive: Awaited<ReturnType<typeof start>>;
    try {
      nightly = await Promise.all(
        Array.from({ length: 3 }, (_, i) => start('model-g', `keyed nightly job ${i}`, { priority: 'nightly', tenant: 'night-team', ...held })),
      );
      for (const j of nightly) await backlogged(j.workflowId);
      interactive = await start('model-g', 'keyed interactive job', { priority: 'interactive', tenant: 'day-team', ...held });
      await backlogged(interactive.workflowId);
      // One task every 5 s: the order Temporal dispatches in shows (each dispatched step has time to
      // schedule the next before the next goes out); once the interactive step is out, full speed.
      await rate(0.2);
      await until(
        'the interactive model step to start',
        async () => {
          const handle = h.client.workflow.getHandle(interactive.workflowId);
          const d = await handle.describe();
          if ((d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'modelTurn' && a.state !== 1)) return true;
          // Or already done.
          const events = (await handle.fetchHistory()).events ?? [];
          const steps = new Set(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn').map((e) => String(e.eventId)));
          return events.some((e) => steps.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId))) ? true : undefined;
        },
        420_000,
      );
      await rate();
      expect((await Promise.all([...nightly, interactive].map(result))).map((r) => r.status)).toEqual(Array(4).fill('completed'));
    } finally {
      await rate();
      // The weights other tests read are theirs alone.
      await h.store.pool.query(`DELETE FROM tenant_weights WHERE tenant = 'night-team'`);
    }
    const steps = async (id: string) => {
      const { events } = await h.client.workflow.getHandle(id).fetchHistory();
      const scheduled = new Map<string, { priority: unknown; startedAt?: number }>();
      for (const e of events ?? []) {
        const a = e.activityTaskScheduledEventAttributes;
        if (a?.activityType?.name === 'modelTurn') scheduled.set(String(e.eventId), { priority: a.priority });
        const st = e.activityTaskStartedEventAttributes;
        const s = st && scheduled.get(String(st.scheduledEventId));
        if (s) s.startedAt = Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);
      }
      return [...scheduled.values()];
    };
    const night = await Promise.all(nightly.map((j) => steps(j.workflowId)));
    const day = await steps(interactive!.workflowId);
    for (const s of night) {
      // Two answers; a step the provider or the pool made wait is scheduled again (a wait, not a failure), with the same keys.
      expect(s.length).toBeGreaterThanOrEqual(2);
      for (const step of s) expect(step.priority).toMatchObject({ priorityKey: 5, fairnessKey: 'night-team' });
      // The last step carries the weight an earlier one read.
      expect(s.at(-1)!.priority).toMatchObject({ fairnessWeight: 2 });
    }
    expect(day[0]!.priority).toMatchObject({ priorityKey: 2, fairnessKey: 'day-team' });
    // Queued last, served first: the interactive step left Temporal's backlog before every nightly one.
    expect(day[0]!.startedAt).toBeLessThan(Math.min(...night.map((s) => s[0]!.startedAt!)));
    await recordHistory(h.client, interactive!.workflowId, 'pools-model-step-priority.json');
    // One task every 5 s through a backlog, each tenant's conversations placing their own workspace
    // first: about 3.5 minutes alone, longer at the end of a whole suite on a shared server; what it
    // asserts is the order, not the time.
  }, 540_000);
});

describe('bad input', () => {
  it('refuses an unknown pool, a negative limit and an unknown priority with one line and exit 2', async () => {
    for (const args of [
      ['pool', 'show', 'no-such-pool'],
      ['pool', 'set', 'pool-c', '--concurrency', '-1'],
      ['tenant', 'weight', 'set', 'big=-1'],
      ['run', '--workspace', workspace, '--task', 't', '--priority', 'urgent', '--model', 'model-a'],
    ]) {
      const r = await cli(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    // Weights: in the pools at once, and as Temporal fairness weight overrides where the server takes them.
    const weights = await cli(['tenant', 'weight', 'set', 'big=3', 'small=1', '--json']);
    expect(weights.code, weights.stderr).toBe(0);
    expect(JSON.parse(weights.stdout)).toMatchObject({ weights: { big: 3, small: 1 } });
    expect((await h.store.pool.query(`SELECT tenant, weight FROM tenant_weights ORDER BY tenant`)).rows).toEqual([
      { tenant: 'big', weight: 3 },
      { tenant: 'small', weight: 1 },
    ]);
  });
});

describe('tenant rpm', () => {
  it("sets and lifts a tenant's requests per minute through the CLI; bad input is one line, exit 2", async () => {
    const set = await cli(['tenant', 'rpm', 'set', 'rpm-team=60', '--json']);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ rpm: { 'rpm-team': 60 } });
    expect((await h.store.pool.query(`SELECT tenant, rpm FROM tenant_limits`)).rows).toEqual([{ tenant: 'rpm-team', rpm: 60 }]);
    // `tenant show` lists it with its weight (1: none set).
    const shown = await cli(['tenant', 'show', '--json']);
    expect(
      shown.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toContainEqual({ tenant: 'rpm-team', weight: 1, rpm: 60 });
    expect((await cli(['tenant', 'show'])).stdout).toMatch(/^rpm-team +weight 1 +rpm 60$/m);
    for (const bad of ['rpm-team=0', 'rpm-team=-3', 'rpm-team']) {
      const r = await cli(['tenant', 'rpm', 'set', bad]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect((await cli(['tenant', 'rpm', 'set', 'rpm-team=none'])).code).toBe(0);
    expect((await h.store.pool.query(`SELECT tenant FROM tenant_limits`)).rows).toEqual([]);
  });
});

describe('failures', () => {
  it("fails closed: with the pools' store unreachable no call goes out; the conversation waits, then goes on", async () => {
    await proxy.stop();
    const job = await start('model-f', 'closed job');
    // The call waits at the gate (its heartbeat says why) and the provider sees nothing.
    await until('the gate to wait on its store', async () => {
      const d = await h.client.workflow.getHandle(job.workflowId).describe();
      const details = (d.raw.pendingActivities ?? []).flatMap((a) => a.heartbeatDetails?.payloads ?? []).map((p) => Buffer.from(p.data ?? []).toString());
      return details.some((t) => t.includes('"why":"store"')) ? true : undefined;
    });
    expect((await stats()).byModel['model-f']).toBeUndefined();
    await proxy.start();
    expect((await result(job)).status).toBe('completed');
    expect((await stats()).byModel['model-f']!.served).toBe(1);
  });

  it("gives a SIGKILLed worker's slot back within the lease time", async () => {
    await cli(['pool', 'set', 'pool-e', '--concurrency', '1']);
    // The provider holds model-e answers until told otherwise: a worker holds the pool's one slot.
    await control({ model: 'model-e', refuseNext: 0, holdMs: 60_000 });
    // A short heartbeat timeout: the killed worker's attempt is retried on the other one within seconds.
    const first = await start('model-e', 'held job', { heartbeatTimeoutMs: 5000 });
    const lease = await until(
      'a lease of pool-e',
      async () => (await h.store.pool.query(`SELECT worker_id FROM pool_leases WHERE pool = 'pool-e'`)).rows[0] as { worker_id: string } | undefined,
    );
    const victim = workers.find((w) => lease.worker_id.endsWith(`:${w.process.pid}`))!;
    expect(victim).toBeDefined();
    await victim.kill('SIGKILL');
    const killedAt = Date.now();
    workers = workers.filter((w) => w !== victim);
    await control({ model: 'model-e', refuseNext: 0, holdMs: 0 });
    // Nobody renews it: the slot lapses at its expiry, which no renewal moved past the lease time.
    const { rows } = await h.store.pool.query<{ expires_at: Date }>(`SELECT expires_at FROM pool_leases WHERE pool = 'pool-e'`);
    expect(rows[0]!.expires_at.getTime()).toBeLessThanOrEqual(killedAt + 3000 + 1000);
    const second = await start('model-e', 'next job');
    expect((await Promise.all([first, second].map(result))).map((r) => r.status)).toEqual(['completed', 'completed']);
  });
});
