// What `schedule` does beyond Temporal's own schedule calls: a scheduled batch's monthly budget
// (`--budget-month`: one pool per schedule and calendar month, UTC, that every run of the month
// reserves from), its raise, and `trigger` following the run it starts as `batch` and `run` do.
import { randomBytes } from 'node:crypto';
import type { ScheduleDescription, ScheduleHandle } from '@temporalio/client';
import { openPool, poolState, raisePool, type PoolState } from '../store/budget-pools.js';
import { batchStateQuery, schedulePool, utcMonth, type BatchResult } from '../../workflows/batch/api.js';
import { budgetAvailableSignal } from '../../workflows/api.js';
import { CliError, EXIT } from './errors.js';
import type { Session } from './session.js';

/** The schedule's monthly budget in USD (kept in its memo at create), if it has one. */
export function monthBudgetOf(d: ScheduleDescription): number | undefined {
  const v = d.memo?.budgetMonthUsd;
  return typeof v === 'number' ? v : undefined;
}

/** `--month YYYY-MM`, or the current calendar month (UTC). */
export function monthFlag(month: string | undefined): string {
  if (month === undefined) return utcMonth(new Date());
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new CliError(`--month must be a calendar month as YYYY-MM, got "${month}"`);
  return month;
}

export interface MonthBudget {
  month: string;
  pool: string;
  limitUsd: number;
  spentUsd: number;
  reservedUsd: number;
}

/** The month's spend against the schedule's budget: nothing spent while no run of the month has started. */
export async function monthBudget(session: Session, name: string, limitUsd: number, month: string): Promise<MonthBudget> {
  const pool = schedulePool(name, month);
  const st = await poolState(session.store.pool, pool);
  return { month, pool, limitUsd: st?.limitUsd ?? limitUsd, spentUsd: st?.spentUsd ?? 0, reservedUsd: st?.reservedUsd ?? 0 };
}

export const monthBudgetLine = (name: string, b: MonthBudget) =>
  `budget ${b.month}: $${b.spentUsd.toFixed(4)} spent + $${b.reservedUsd.toFixed(4)} reserved of $${b.limitUsd.toFixed(4)}; raise with: agentrun schedule raise-budget ${name} --add USD`;

/**
 * `schedule raise-budget <name> --add USD [--month YYYY-MM]`: the month's pool grows (opened first
 * if no run of the month has yet), then the jobs of the schedule's running batches that wait for it
 * are told to try again.
 */
export async function raiseMonthBudget(
  session: Session,
  name: string,
  d: ScheduleDescription,
  flags: { add?: string; month?: string },
): Promise<{ state: PoolState; month: string; woken: number }> {
  const addUsd = Number(flags.add);
  if (flags.add === undefined || flags.add.trim() === '' || !Number.isFinite(addUsd) || addUsd <= 0)
    throw new CliError(`--add must be a positive amount of USD, got "${flags.add ?? ''}"`);
  const month = monthFlag(flags.month);
  const limitUsd = monthBudgetOf(d);
  if (limitUsd === undefined) throw new CliError(`schedule ${name} has no monthly budget to raise (create it with --repos FILE --budget-month USD)`);
  const pool = schedulePool(name, month);
  await openPool(session.store.pool, pool, limitUsd);
  const state = await raisePool(session.store.pool, pool, addUsd, randomBytes(8).toString('hex'));
  let woken = 0;
  const runs = session.client.workflow.list({ query: `TemporalScheduledById = '${name}' AND ExecutionStatus = 'Running'` });
  for await (const run of runs) {
    const b = (await session.client.workflow
      .getHandle(run.workflowId)
      .query(batchStateQuery)
      .catch(() => undefined)) as BatchResult | undefined;
    if (b?.budget?.pool !== pool) continue;
    for (const r of b.rows.filter((row) => row.status === 'running')) {
      await session.client.workflow
        .getHandle(r.conversationId)
        .signal(budgetAvailableSignal)
        .then(() => (woken += 1))
        .catch(() => undefined);
    }
  }
  return { state, month, woken };
}

/**
 * The run a trigger started: the schedule's newest action that was not among `before`. Undefined
 * when Ctrl-C came first.
 */
export async function triggeredRun(
  handle: ScheduleHandle,
  before: Set<string>,
  interrupted: Promise<'interrupted'>,
): Promise<{ workflowId: string; batch: boolean } | undefined> {
  let stop = false;
  void interrupted.then(() => (stop = true));
  for (const end = Date.now() + 60_000; !stop;) {
    const d = await handle.describe();
    const fresh = [...d.info.runningActions, ...d.info.recentActions.map((a) => a.action)].find((a) => !before.has(a.workflow.workflowId));
    if (fresh) {
      const { BATCH_WORKFLOW_TYPE } = await import('../../workflows/batch/api.js');
      const batch = d.action.type === 'startWorkflow' && d.action.workflowType === BATCH_WORKFLOW_TYPE;
      return { workflowId: fresh.workflow.workflowId, batch };
    }
    if (Date.now() > end) throw new CliError(`schedule ${handle.scheduleId} was triggered but started no run within 60 s`, EXIT.failed);
    await Promise.race([new Promise((r) => setTimeout(r, 250)), interrupted]);
  }
  return undefined;
}

/**
 * `schedule trigger` in the foreground: find the run the trigger started and follow it, a batch to
 * its table and a conversation to its result. Ctrl-C detaches (the run goes on) and says how to follow.
 */
export async function followTriggered(session: Session, handle: ScheduleHandle, before: Set<string>, json: boolean | undefined): Promise<number> {
  const { emit, followToEnd } = await import('./commands.js');
  let onInterrupt: () => void = () => undefined;
  const interrupted = new Promise<'interrupted'>((resolve) => {
    onInterrupt = () => resolve('interrupted');
    process.once('SIGINT', onInterrupt);
  });
  let run: Awaited<ReturnType<typeof triggeredRun>>;
  try {
    run = await triggeredRun(handle, before, interrupted);
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
  if (!run) {
    const how = `agentrun schedule describe ${handle.scheduleId} (its runs)`;
    emit(json, { type: 'detached', schedule: handle.scheduleId }, `\ndetached; the triggered run is durable: ${how}`);
    return EXIT.failed;
  }
  emit(
    json,
    { type: 'triggered', schedule: handle.scheduleId, workflowId: run.workflowId, batch: run.batch },
    `${handle.scheduleId}: started ${run.workflowId}`,
  );
  if (run.batch) return (await import('./fleet.js')).followToTable(session, run.workflowId, json);
  return followToEnd(session, run.workflowId, session.client.workflow.getHandle(run.workflowId), { json });
}
