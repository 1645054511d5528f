// A batch's rollout (patch `batch-waves`): its jobs start in waves (`--waves 1,5%,25%,100%`), each
// wave with the batch's lanes (at most `concurrency` at once). After each wave the rate of bad jobs
// in it (`--brake-on`) is compared with the brake; above it the batch HALTS: the rows never started
// are `skipped`, and it waits for `agentrun batch resume` (or `abort`, or the halt timeout: abort).
// Within a wave, no new job starts once its bad jobs already exceed the brake.
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  getExternalWorkflowHandle,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { BatchActivities, BudgetActivities } from '../../activities/types.js';
import { budgetAvailableSignal } from '../api.js';
import {
  batchControlUpdate,
  batchBudgetOf,
  batchStateQuery,
  batchTotals,
  type BatchControl,
  type BatchInput,
  type BatchResult,
  type BatchRolloutState,
  type BatchRow,
} from './api.js';
import { DEFAULT_BRAKE_ON, isBad, overBrake, wavePlan } from './waves.js';

/** A batch's own steps (its budget pool, pausing its schedule): store or Temporal calls. */
const BATCH_STEP = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 },
} as const;

const pct = (n: number) => `${Math.round(n * 1000) / 10}%`;

export async function batchInWaves(input: BatchInput, batchId: string, rows: BatchRow[], runJob: (row: BatchRow) => Promise<void>): Promise<BatchResult> {
  const rollout = input.rollout ?? {};
  const plan = wavePlan(rows.length, rollout.waves ?? [], rollout.shuffleSeed);
  plan.forEach((wave, i) => {
    for (const r of wave) rows[r]!.wave = i + 1;
  });
  const brakeOn = rollout.brake?.on ?? [...DEFAULT_BRAKE_ON];
  const st: BatchRolloutState = {
    state: 'running',
    wave: 1,
    waves: plan.map((w, i) => ({ wave: i + 1, jobs: w.length, started: 0, finished: 0, bad: 0, infra: 0 })),
    ...(rollout.brake ? { brake: { ...rollout.brake, on: brakeOn } } : {}),
  };
  let control: BatchControl | undefined;
  const steps = proxyActivities<BatchActivities>(BATCH_STEP);
  const pools = proxyActivities<BudgetActivities>(BATCH_STEP);
  const result = (): BatchResult => ({ batchId, rows, totals: batchTotals(rows), ...st });
  const details = () => {
    const t = batchTotals(rows);
    const w = st.waves[st.wave - 1];
    setCurrentDetails(
      [
        `**state** ${st.state}${st.reason ? ` (${st.reason})` : ''}`,
        `**wave** ${st.wave} of ${st.waves.length}${w ? `: ${w.finished}/${w.jobs} finished, ${w.bad} bad${w.infra ? `, ${w.infra} infra` : ''}` : ''}`,
        st.brake ? `**brake** ${pct(st.brake.rate)} on ${st.brake.on.join(',')}${st.brake.overridden ? ' (overridden)' : ''}` : '**brake** none',
        `**jobs** ${t.completed} completed, ${t.failed} failed, ${t.running} running, ${t.pending} pending${t.skipped ? `, ${t.skipped} skipped` : ''}`,
        `**cost** $${t.costUsd.toFixed(4)}${st.budget ? ` of a $${st.budget.limitUsd.toFixed(4)} budget` : ''}`,
      ].join(' · '),
    );
  };
  setHandler(batchStateQuery, result);
  setHandler(
    batchControlUpdate,
    async (c) => {
      if (c.action === 'raise-budget') {
        // The pool first, then the jobs waiting for it (any running job may be: each tries again).
        const pool = await pools.raiseBudgetPool({ pool: st.budget!.pool, addUsd: c.addUsd!, raiseId: c.raiseId! });
        st.budget!.limitUsd = pool.limitUsd;
        details();
        await Promise.all(
          rows
            .filter((r) => r.status === 'running')
            .map((r) =>
              getExternalWorkflowHandle(r.conversationId)
                .signal(budgetAvailableSignal)
                .catch(() => undefined),
            ),
        );
        return { state: st.state, budget: { limitUsd: pool.limitUsd, spentUsd: pool.spentUsd, reservedUsd: pool.reservedUsd } };
      }
      control = c;
      return { state: st.state };
    },
    {
      validator: (c) => {
        if (c.action !== 'resume' && c.action !== 'abort' && c.action !== 'raise-budget') throw new Error(`unknown batch action ${String(c.action)}`);
        if (st.state === 'completed' || st.state === 'aborted') throw new Error(`batch ${batchId} has ended (${st.state})`);
        if (c.action === 'raise-budget') {
          if (!st.budget) throw new Error(`batch ${batchId} has no budget to raise (it was started without --budget)`);
          if (typeof c.addUsd !== 'number' || !Number.isFinite(c.addUsd) || c.addUsd <= 0)
            throw new Error(`--add must be a positive amount of USD, got ${String(c.addUsd)}`);
          if (!c.raiseId) throw new Error('a budget raise needs its raiseId');
          return;
        }
        if (c.action === 'resume' && st.state !== 'halted') throw new Error(`batch ${batchId} did not halt (it is ${st.state}): there is nothing to resume`);
        if (control !== undefined) throw new Error(`batch ${batchId} already has a decision (${control.action})`);
      },
    },
  );
  details();

  // The batch's budget: a pool in PostgreSQL that every model call of its jobs reserves from (its
  // own, or its schedule's month, opened by the month's first run and found by the others).
  const budget = batchBudgetOf(input, batchId, workflowInfo().startTime);
  if (budget) {
    const opened = await pools.openBudgetPool(budget);
    st.budget = { pool: budget.pool, limitUsd: opened.limitUsd };
  }

  const skipUnstarted = (why: string) => {
    for (const r of rows)
      if (r.status === 'pending') {
        r.status = 'skipped';
        r.reason = why;
      }
  };

  for (let w = 0; w < plan.length && st.state === 'running'; w++) {
    st.wave = w + 1;
    const ws = st.waves[w]!;
    const brake = st.brake && !st.brake.overridden ? st.brake : undefined;
    const queue = plan[w]!.filter((i) => rows[i]!.status === 'pending');
    let next = 0;
    const lane = async () => {
      // The brake inside the wave: once its bad jobs exceed what the brake allows, no new job of it starts.
      while (next < queue.length && control?.action !== 'abort' && !(brake && overBrake(ws.bad, ws.jobs, brake))) {
        const row = rows[queue[next++]!]!;
        ws.started += 1;
        details();
        await runJob(row);
        ws.finished += 1;
        if (row.infra) ws.infra += 1;
        if (isBad(row, brakeOn)) ws.bad += 1;
        details();
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(input.concurrency, queue.length)) }, lane));
    if (control?.action === 'abort') break;
    const rate = ws.finished ? ws.bad / ws.finished : 0;
    if (!brake || rate <= brake.rate) continue;

    st.state = 'halted';
    st.reason = `wave ${ws.wave}: ${ws.bad} of ${ws.finished} jobs bad (${pct(rate)} > brake ${pct(brake.rate)}, on ${brake.on.join(',')})`;
    skipUnstarted(`not started: the batch halted (${st.reason})`);
    details();
    if (rollout.failOnHalt) {
      // Started by a schedule with --pause-on-failure: the schedule pauses, then this run fails.
      const scheduleId = input.config.scheduleId;
      if (scheduleId) await steps.pauseSchedule({ scheduleId, note: `agentrun: batch ${batchId} halted: ${st.reason}` });
      throw ApplicationFailure.nonRetryable(`batch ${batchId} halted: ${st.reason}`, 'BatchHalted');
    }
    const decided = await condition(() => control !== undefined, rollout.haltTimeoutMs ?? 7 * 24 * 3600_000);
    if (!decided) {
      control = { action: 'abort' };
      st.reason = `${st.reason}; no resume within the halt timeout`;
    }
    if (control?.action !== 'resume') break;
    // Resumed: the skipped rows run after all; those left of this wave go with the next one (judged with it).
    st.state = 'running';
    if (control.override && st.brake) st.brake.overridden = true;
    control = undefined;
    for (const r of rows) if (r.status === 'skipped') Object.assign(r, { status: 'pending', reason: undefined });
    const left = plan[w]!.filter((i) => rows[i]!.status === 'pending');
    if (left.length) {
      if (w + 1 < plan.length) {
        plan[w + 1]!.unshift(...left);
        st.waves[w + 1]!.jobs += left.length;
      } else {
        plan.push(left);
        st.waves.push({ wave: plan.length, jobs: left.length, started: 0, finished: 0, bad: 0, infra: 0 });
      }
      ws.jobs -= left.length;
      for (const i of left) rows[i]!.wave = w + 2;
    }
  }
  if (control?.action === 'abort') {
    st.state = 'aborted';
    st.reason = `${st.reason ? `${st.reason}; ` : ''}aborted${control.by ? ` by ${control.by}` : ''}`;
    skipUnstarted(`not started: the batch was aborted`);
  } else st.state = 'completed';
  details();
  // Updates that arrived as the last wave ended are answered before the result.
  await condition(allHandlersFinished);
  return result();
}
