// `agentrun pool set|show|pause|resume` and `agentrun tenant weight set`: the provider pools'
// limits and state, fleet-wide (src/store/pool-admin.ts). Commander definitions and their work.
import { tenantRefusal } from '../ids.js';
import type { Command } from 'commander';
import { plural } from '../types.js';
import { CliError, EXIT } from './errors.js';

type Action = <A extends unknown[]>(fn: (this: Command, ...args: A) => Promise<number>) => (this: Command, ...args: A) => Promise<void>;

const emit = (json: boolean | undefined, obj: unknown, text: string) => process.stdout.write((json ? JSON.stringify(obj) : text) + '\n');

function whole(flag: string, v: string, min: number): number {
  const n = Number(v);
  if (!/^-?\d+$/.test(v.trim()) || n < min) throw new CliError(`${flag} must be a whole number ≥ ${min}, got "${v}"`);
  return n;
}

/** `A=3 B=1` → { A: 3, B: 1 }; weights as Temporal's fairness weights allow (0.001–1000). */
export function parseTenantWeights(args: string[]): Record<string, number> {
  if (args.length === 0) throw new CliError('give weights as TENANT=WEIGHT, e.g. agentrun tenant weight set team-a=3 team-b=1');
  const out: Record<string, number> = {};
  for (const a of args) {
    const m = /^([^=]+)=(.+)$/.exec(a);
    const weight = m ? Number(m[2]) : NaN;
    if (!m) throw new CliError(`expected TENANT=WEIGHT, got "${a}"`);
    const refused = tenantRefusal(m[1]!);
    if (refused) throw new CliError(refused);
    if (!Number.isFinite(weight) || weight < 0.001 || weight > 1000)
      throw new CliError(`the weight of ${m[1]} must be a number from 0.001 to 1000, got "${m[2]}"`);
    out[m[1]!] = weight;
  }
  return out;
}

/** `A=60 B=none` → { A: 60, B: null }: a tenant's requests per minute across every pool, or none. */
export function parseTenantRpm(args: string[]): Record<string, number | null> {
  if (args.length === 0) throw new CliError('give limits as TENANT=RPM, e.g. agentrun tenant rpm set team-a=60 team-b=none');
  const out: Record<string, number | null> = {};
  for (const a of args) {
    const m = /^([^=]+)=(.+)$/.exec(a);
    if (!m) throw new CliError(`expected TENANT=RPM, got "${a}"`);
    const refused = tenantRefusal(m[1]!);
    if (refused) throw new CliError(refused);
    if (m[2] === 'none') {
      out[m[1]!] = null;
      continue;
    }
    const rpm = Number(m[2]);
    if (!Number.isInteger(rpm) || rpm < 1) throw new CliError(`the rpm of ${m[1]} must be a whole number of at least 1, or none, got "${m[2]}"`);
    out[m[1]!] = rpm;
  }
  return out;
}

async function withPools<T>(fn: (db: import('pg').Pool, session: import('./session.js').Session) => Promise<T>): Promise<T> {
  const [{ withSession }, { gateFor }, { PoolInputError }] = await Promise.all([
    import('./commands.js'),
    import('../model/pool.js'),
    import('../store/pool-admin.js'),
  ]);
  return withSession({}, async (session) => {
    try {
      return await fn(await gateFor(session.store).database(), session);
    } catch (err) {
      if (err instanceof PoolInputError) throw new CliError(err.message);
      throw err;
    }
  });
}

/** The running conversations that wait for a provider or its pool, by their status in Temporal's visibility and in the store. */
async function providerWaiters(session: import('./session.js').Session): Promise<string[]> {
  const ids = new Set<string>();
  if (session.searchAttributes)
    for await (const w of session.client.workflow.list({ query: `AgentrunStatus = 'waiting_for_provider' AND ExecutionStatus = 'Running'` }))
      ids.add(w.workflowId);
  for (const c of await session.store.listConversations({ status: 'waiting_for_provider', limit: 10_000 })) ids.add(c.id);
  return [...ids];
}

/**
 * Conversations waiting on a timer for each pool (a paused pool's callers leave its line and ask
 * again later): part of its backlog, as much as the callers in line are. By what each one's wait says.
 */
async function waitingOnTimer(session: import('./session.js').Session, db: import('pg').Pool): Promise<Map<string, number>> {
  const { queryStateWithin } = await import('../client/actions.js');
  // A caller still in line (its waiter id starts with its conversation id) is in the backlog already.
  const waiters = await (await import('../store/pool-admin.js')).waitersInLine(db);
  const inLine = (id: string) => waiters.some((w) => w.startsWith(`${id}:`));
  const byPool = new Map<string, number>();
  for (const id of await providerWaiters(session)) {
    if (inLine(id)) continue;
    const pool = /\bpool (\S+) is (?:paused|full)\b/.exec((await queryStateWithin(session.client, id, 5000))?.providerWait ?? '')?.[1];
    if (pool) byPool.set(pool, (byPool.get(pool) ?? 0) + 1);
  }
  return byPool;
}

/** `pool resume` tells the conversations waiting for a provider to ask their pool again at once, not at the end of their timer. How many were told. */
async function wakeProviderWaiters(session: import('./session.js').Session, pool: string): Promise<number> {
  const { providerPoolResumedSignal } = await import('../../workflows/session/api.js');
  let woken = 0;
  for (const id of await providerWaiters(session))
    await session.client.workflow
      .getHandle(id)
      .signal(providerPoolResumedSignal, { pool })
      .then(() => (woken += 1))
      .catch(() => undefined);
  return woken;
}

export function poolCommands(program: Command, action: Action, globals: (cmd: Command) => { json?: boolean }): void {
  const pool = program.command('pool').description("provider pools: the provider's limits, shared by every worker of the fleet");
  pool
    .command('set <name>')
    .description("set a pool's limits (every worker applies them at its next call)")
    .option('--concurrency <n>', 'model calls streaming at once across the fleet, or "adaptive" (learn it from 429s)')
    .option('--rpm <n>', 'model calls started per minute across the fleet, or "none"')
    .action(
      action(async function (this: Command, name: string) {
        const o = this.opts() as { concurrency?: string; rpm?: string };
        if (o.concurrency === undefined && o.rpm === undefined) throw new CliError('give --concurrency N (or adaptive) and/or --rpm N (or none)');
        const concurrency =
          o.concurrency === undefined ? undefined : o.concurrency === 'adaptive' ? ('adaptive' as const) : whole('--concurrency', o.concurrency, 1);
        const rpm = o.rpm === undefined ? undefined : o.rpm === 'none' ? ('none' as const) : whole('--rpm', o.rpm, 1);
        const { setPool, checkPoolName, PoolInputError } = await import('../store/pool-admin.js');
        try {
          checkPoolName(name);
        } catch (err) {
          if (err instanceof PoolInputError) throw new CliError(err.message);
          throw err;
        }
        return withPools(async (db) => {
          await setPool(db, name, { concurrency, rpm });
          emit(globals(this).json, { pool: name, concurrency, rpm }, `pool ${name}: ${describeLimits(concurrency, rpm)}`);
          return EXIT.completed;
        });
      }),
    );
  pool
    .command('show [name]')
    .description('limit, streams in flight across the fleet, paused until, 429s in the last 10 minutes, backlog')
    .action(
      action(async function (this: Command, name?: string) {
        const { poolStates, knownPool } = await import('../store/pool-admin.js');
        return withPools(async (db, session) => {
          if (name) await knownPool(db, name);
          const json = globals(this).json;
          const timers = await waitingOnTimer(session, db);
          const states = (await poolStates(db, name)).map((st) => ({ ...st, backlog: st.backlog + (timers.get(st.pool) ?? 0) }));
          if (!json && states.length === 0) process.stdout.write('no provider pool yet: one appears at its first model call, or with agentrun pool set\n');
          for (const s of states) {
            const limit = s.adaptive ? `adaptive ${s.limit}` : String(s.limit);
            const paused = s.pausedUntil ? `  paused until ${s.pausedUntil} by ${s.pausedBy ?? '?'}` : '';
            emit(
              json,
              s,
              `${s.pool.padEnd(28)} limit ${limit.padEnd(12)} in flight ${String(s.inFlight).padStart(3)}  backlog ${String(s.backlog).padStart(3)}  ` +
                `429s/10m ${String(s.refusals10m).padStart(3)}  calls/10m ${String(s.calls10m).padStart(4)}${s.rpm ? `  rpm ${s.rpm}` : ''}${paused}`,
            );
          }
          return EXIT.completed;
        });
      }),
    );
  for (const verb of ['pause', 'resume'] as const) {
    pool
      .command(`${verb} <name>`)
      .description(verb === 'pause' ? 'no model call of the pool starts until resumed (calls streaming now finish)' : 'let the pool start calls again')
      .action(
        action(async function (this: Command, name: string) {
          const admin = await import('../store/pool-admin.js');
          return withPools(async (db, session) => {
            await (verb === 'pause' ? admin.pausePool(db, name) : admin.resumePool(db, name));
            const woken = verb === 'resume' ? await wakeProviderWaiters(session, name) : 0;
            emit(
              globals(this).json,
              { pool: name, paused: verb === 'pause', ...(verb === 'resume' ? { woken } : {}) },
              `pool ${name} ${verb === 'pause' ? 'paused' : `resumed${woken ? `; ${plural(woken, 'waiting conversation')} told to go on` : ''}`}`,
            );
            return EXIT.completed;
          });
        }),
      );
  }

  const tenant = program.command('tenant').description('tenants sharing the provider pools');
  tenant
    .command('weight')
    .description("tenants' shares of the provider pools")
    .command('set <weights...>')
    .description('TENANT=WEIGHT …: a tenant of weight 3 gets three slots to one of weight 1 while both wait (the pools and Temporal fairness)')
    .action(
      action(async function (this: Command, args: string[]) {
        const admin = await import('../store/pool-admin.js');
        const weights = parseTenantWeights(args);
        return withPools(async (db, session) => {
          await admin.setTenantWeights(db, weights);
          const temporal = await fairnessOverrides(session, weights);
          emit(
            globals(this).json,
            { weights, temporal },
            `tenant weights set: ${Object.entries(weights)
              .map(([t, w]) => `${t}=${w}`)
              .join(' ')}${temporal === true ? ` (also on Temporal queue ${session.taskQueue})` : `; Temporal fairness overrides not set: ${temporal}`}`,
          );
          return EXIT.completed;
        });
      }),
    );
  tenant
    .command('show')
    .description('the tenants given a weight or a requests-per-minute limit, with both')
    .action(
      action(async function (this: Command) {
        const { tenantSettings } = await import('../store/pool-admin.js');
        return withPools(async (db) => {
          const json = globals(this).json;
          const tenants = await tenantSettings(db);
          if (!json && tenants.length === 0) process.stdout.write('no tenant has a weight or an rpm limit: every tenant weighs 1, with no limit of its own\n');
          for (const t of tenants)
            emit(json, t, `${t.tenant.padEnd(28)} weight ${String(t.weight).padEnd(6)} ${t.rpm !== undefined ? `rpm ${t.rpm}` : 'no rpm limit'}`);
          return EXIT.completed;
        });
      }),
    );
  tenant
    .command('rpm')
    .description("tenants' requests per minute across every pool")
    .command('set <limits...>')
    .description(
      'TENANT=RPM … (or TENANT=none): at most RPM model calls a minute for the tenant, fleet-wide; its calls beyond wait (waiting_for_provider), others go on',
    )
    .action(
      action(async function (this: Command, args: string[]) {
        const admin = await import('../store/pool-admin.js');
        const limits = parseTenantRpm(args);
        return withPools(async (db) => {
          await admin.setTenantRpm(db, limits);
          emit(
            globals(this).json,
            { rpm: limits },
            `tenant rpm set: ${Object.entries(limits)
              .map(([t, r]) => `${t}=${r ?? 'none'}`)
              .join(' ')}`,
          );
          return EXIT.completed;
        });
      }),
    );
}

function describeLimits(c: number | 'adaptive' | undefined, r: number | 'none' | undefined): string {
  const parts: string[] = [];
  if (c !== undefined) parts.push(c === 'adaptive' ? 'concurrency adaptive (from the provider’s 429s)' : `concurrency ${c}`);
  if (r !== undefined) parts.push(r === 'none' ? 'no rpm limit' : `rpm ${r}`);
  return parts.join(', ');
}

/** The same weights as Temporal fairness weight overrides on the conversations' queue (activities); true, or why not. */
async function fairnessOverrides(session: import('./session.js').Session, weights: Record<string, number>): Promise<true | string> {
  try {
    await session.client.workflowService.updateTaskQueueConfig({
      namespace: session.client.options.namespace,
      taskQueue: session.taskQueue,
      // temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY (@temporalio/proto is not a direct dependency).
      taskQueueType: 2,
      identity: 'agentrun tenant weight set',
      setFairnessWeightOverrides: weights,
    });
    return true;
  } catch (err) {
    return (err as Error).message.split('\n')[0]!.slice(0, 200);
  }
}
