// `agentrun batch`: one repository job per line of --repos, as a batch workflow; the table of
// results (repository, status, branch, diffstat, turns, cost) and the totals.
import { DEFAULT_TENANT, runPriority, type PriorityName } from '../model/pool-names.js';
import { plural } from '../types.js';
import { cacheRoot, gcCaches } from '../environment/cache.js';
import { diskLimitsFromEnv, removeSpareWorkspaces } from '../environment/disk.js';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  batchControlUpdate,
  batchStartMetadata,
  batchStateQuery,
  BATCH_WORKFLOW_TYPE,
  DEFAULT_BRAKE_ON,
  parseBrake,
  parseBrakeOn,
  parseWaves,
  wavePlan,
  type BatchInput,
  type BatchResult,
  type BatchRollout,
  type BatchRow,
} from '../../workflows/batch/api.js';
import { CliError, EXIT } from './errors.js';
import { alignedColumns } from './render/columns.js';
import { EACH_REPOSITORY_LINE, isRemoteRepo, runRequestFromFlags, type RunFlags } from './options.js';
import { openSession, startOwnWorker, type Session } from './session.js';
import { exitCodeForSignal, whenStopped, type StopSignal } from './stop-signals.js';
import { parseDuration, runConfigSchema, type RunConfig } from '../config.js';
import { defaultBranch } from '../workspace/routing.js';
import { stateQuery, WORKFLOW_TYPE, type ConversationState } from '../../workflows/api.js';
import { sessionStartMetadata, type SessionInput } from '../../workflows/session/api.js';
import { newConversationId } from '../client/conversations.js';
import { withWaiting } from '../client/batch-waiting.js';
import { checkModel } from './options.js';
import { collectGarbage } from '../workspace/gc.js';
import { workspacesDir } from '../workspace/host.js';
import { batchResultFromFailure } from '../../workflows/batch/api.js';
import { asBadInput } from './errors.js';
import { POOLED_OUTPUT_TOKENS } from '../model/budget-pool.js';
import { poolState } from '../store/budget-pools.js';
import { checkId } from '../ids.js';
import { ownConversation } from './tenancy.js';
import { agentrunHome } from '../runtime/home.js';
import { workerPlaces } from '../workspace/guard.js';
import { repositorySourceRefusal, repositorySourcesFromEnv } from '../workspace/sources.js';

/** Stands in for the per-line repositories while the shared run options are validated. */

export interface BatchFlags extends RunFlags {
  repos?: string;
  concurrency?: string;
  detach?: boolean;
  id?: string;
  json?: boolean;
  worker?: boolean;
  waves?: string;
  shuffleSeed?: string;
  brake?: string;
  brakeOn?: string;
  haltTimeout?: string;
  budget?: string;
  jobBudget?: string;
  /** Set by `schedule create --budget-month USD`: the schedule's monthly budget, shared by every run of a month. */
  budgetMonth?: string;
  /** Set by `schedule create --pause-on-failure`: a halt fails the batch, so the schedule pauses. */
  pauseOnFailure?: boolean;
}

/** --waves, --shuffle-seed, --brake, --brake-on, --halt-timeout: checked here, one line and exit 2 when they do not add up. */
export function rolloutFromFlags(flags: BatchFlags, jobs: number): BatchRollout {
  const waves = flags.waves === undefined ? undefined : asBadInput(() => parseWaves(flags.waves!));
  let shuffleSeed: number | undefined;
  if (flags.shuffleSeed !== undefined) {
    shuffleSeed = Number(flags.shuffleSeed);
    if (!Number.isSafeInteger(shuffleSeed) || shuffleSeed < 0) throw new CliError(`--shuffle-seed must be a whole number ≥ 0, got "${flags.shuffleSeed}"`);
  }
  if (flags.brakeOn !== undefined && flags.brake === undefined) throw new CliError('--brake-on needs --brake RATE (such as 20%)');
  const brake =
    flags.brake === undefined
      ? undefined
      : {
          rate: asBadInput(() => parseBrake(flags.brake!)),
          on: flags.brakeOn === undefined ? [...DEFAULT_BRAKE_ON] : asBadInput(() => parseBrakeOn(flags.brakeOn!)),
        };
  let haltTimeoutMs: number | undefined;
  if (flags.haltTimeout !== undefined) {
    try {
      haltTimeoutMs = parseDuration(flags.haltTimeout);
    } catch {
      throw new CliError(`--halt-timeout must be a duration such as 12h or 7d, got "${flags.haltTimeout}"`);
    }
  }
  if (waves && waves.length > jobs) throw new CliError(`--waves lists ${waves.length} waves for ${jobs} jobs: every wave needs at least one job`);
  const rollout: BatchRollout = {
    ...(waves ? { waves } : {}),
    ...(shuffleSeed !== undefined ? { shuffleSeed } : {}),
    ...(brake ? { brake } : {}),
    ...(haltTimeoutMs !== undefined ? { haltTimeoutMs } : {}),
    ...(flags.pauseOnFailure ? { failOnHalt: true } : {}),
    // A deleted repository does not halt a nightly fleet: `--brake-on clone` counts it.
    cloneApart: true,
    // Failed jobs fail the batch's workflow, except under a schedule's --pause-on-failure, which
    // would then pause on any failed job: there only a halt fails it (failOnHalt), as before.
    ...(flags.pauseOnFailure ? {} : { outcomeAsStatus: true }),
  };
  // The plan must give every wave a job (cut waves would surprise whoever reads the table).
  if (waves && wavePlan(jobs, waves).length < waves.length)
    throw new CliError(`--waves ${flags.waves} does not add up for ${jobs} jobs: some waves would be empty (give fewer waves)`);
  return rollout;
}

/** Repositories, one per line; blank lines and `#` comments skipped; paths made absolute. */
export async function readReposFile(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read the repositories file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const repos = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => (isRemoteRepo(l) ? l : resolve(l)));
  if (!repos.length) throw new CliError(`the repositories file ${file} lists no repository (one git URL or path per line)`);
  // A path that is not there fails its own job (as a deleted remote does), not the night's other
  // jobs; a list that names nothing that exists is a wrong file, refused before anything starts.
  const missing = repos.filter((r) => !isRemoteRepo(r) && !existsSync(r));
  const names = `the repositories file ${file} names ${missing.length === 1 ? 'a repository that does not exist' : `${missing.length} repositories that do not exist`}: ${missing.join(', ')}`;
  if (missing.length === repos.length) throw new CliError(`${names} (give git URLs or paths of git repositories)`);
  if (missing.length) process.stderr.write(`agentrun: warning: ${names}; ${missing.length === 1 ? 'its job fails' : 'their jobs fail'}, the others run\n`);
  const sources = repositorySourcesFromEnv();
  const places = workerPlaces(agentrunHome());
  for (const r of repos) {
    if (missing.includes(r)) continue;
    const refused = repositorySourceRefusal(r, sources, places);
    if (refused) throw new CliError(`the repositories file ${file}: ${refused}`);
  }
  return repos;
}

export async function batchInputFromFlags(flags: BatchFlags, defaultPriority: PriorityName = 'batch'): Promise<BatchInput> {
  if (!flags.repos) throw new CliError('no repositories: give --repos FILE (one git URL or path per line)');
  if (flags.workspace || flags.repo) throw new CliError('a batch takes its repositories from --repos FILE: leave out --workspace and --repo');
  const concurrency = flags.concurrency === undefined ? 4 : Number(flags.concurrency);
  if (!Number.isInteger(concurrency) || concurrency <= 0) throw new CliError(`--concurrency must be a positive whole number, got "${flags.concurrency}"`);
  const repos = await readReposFile(flags.repos);
  const rollout = rolloutFromFlags(flags, repos.length);
  const usd = (flag: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n <= 0) throw new CliError(`${flag} must be a positive amount of USD, got "${v}"`);
    return n;
  };
  const budgetUsd = usd('--budget', flags.budget);
  const jobBudgetUsd = usd('--job-budget', flags.jobBudget);
  const budgetMonthUsd = usd('--budget-month', flags.budgetMonth);
  if (budgetUsd !== undefined && budgetMonthUsd !== undefined)
    throw new CliError("give either --budget (each run's own) or --budget-month (shared by the month's runs), not both: a call reserves from one budget");
  if (jobBudgetUsd !== undefined && flags.maxCost !== undefined)
    throw new CliError('give either --job-budget or --max-cost (the same per-job limit), not both');
  // A batch's jobs pause at their budget unless told otherwise (work kept for `budget raise`); a
  // shared budget bounds every call's output, so that its worst case is known before it is made.
  const defaults = { onBudget: 'pause', ...(budgetUsd !== undefined || budgetMonthUsd !== undefined ? { maxOutputTokens: POOLED_OUTPUT_TOKENS } : {}) };
  const req = await runRequestFromFlags(
    { ...flags, repo: EACH_REPOSITORY_LINE, ...(jobBudgetUsd !== undefined ? { maxCost: String(jobBudgetUsd) } : {}) },
    defaults,
  );
  const { repo: _placeholder, ...config } = req.config;
  // A batch's jobs wait behind interactive runs for the provider unless told otherwise.
  return {
    repos,
    task: req.task,
    config: { ...config, push: config.push ?? false, priority: config.priority ?? defaultPriority, tenant: config.tenant ?? DEFAULT_TENANT },
    concurrency,
    ...(budgetUsd !== undefined ? { budgetUsd } : {}),
    ...(budgetMonthUsd !== undefined ? { budgetMonthUsd } : {}),
    ...(rollout ? { rollout } : {}),
  };
}

export function newBatchId(): string {
  return `batch-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomBytes(3).toString('hex')}`;
}

/** `passed`, `failed (exit 1, 3 runs)`, and whether it was failing before the agent started. */
function verifyCell(v: BatchRow['verify']): string {
  if (!v) return '';
  const outcome =
    v.passed === null ? 'not run' : v.passed ? 'passed' : `failed (exit ${v.exitCode ?? 'none'}, ${v.attempts} run${v.attempts === 1 ? '' : 's'})`;
  return v.failingBefore === undefined ? outcome : `${outcome}; ${v.failingBefore ? 'was failing before' : 'passed before'}`;
}

/** `waiting for approval: npm publish (publishes …); approve with: agentrun approve ID --call C (or deny)`. */
export function waitingLine(w: NonNullable<BatchRow['waiting']>): string {
  return w.for === 'approval'
    ? `waiting for approval: ${w.what}; approve with: ${w.command} (or deny)`
    : `waiting for an answer: ${w.what}; answer with: ${w.command}`;
}

/** A job's reason in a table cell: one line (git's errors span several), cut at a word. */
function oneLineReason(reason: string): string {
  const line = reason.replace(/\s+/g, ' ').trim();
  if (line.length <= 120) return line;
  const cut = line.slice(0, 119);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 60 ? cut.lastIndexOf(' ') : 119)}…`;
}

export function formatBatchTable(b: BatchResult): string {
  const verified = b.rows.some((r) => r.verify);
  const waved = (b.waves?.length ?? 0) > 1;
  // The conversation id is what `inspect`, `watch` and `rerun` take.
  const head = [...(waved ? ['wave'] : []), 'repository', 'conversation', 'status', 'branch', 'diffstat', ...(verified ? ['verify'] : []), 'turns', 'cost'];
  const rows = b.rows.map((r) => [
    ...(waved ? [String(r.wave ?? '')] : []),
    r.repo + (r.infra ? ' [infra]' : ''),
    r.conversationId,
    r.status +
      (r.waiting ? ` (${r.waiting.for})` : r.reason && r.status !== 'completed' && r.status !== 'awaiting_budget' ? ` (${oneLineReason(r.reason)})` : ''),
    r.diffstat?.files === 0 && !r.pushed ? 'none (no change)' : r.branch ? `${r.branch}${r.pushed ? '' : ' (not pushed)'}` : '',
    r.diffstat ? (r.diffstat.files === 0 ? 'no change' : `${plural(r.diffstat.files, 'file')} +${r.diffstat.insertions} -${r.diffstat.deletions}`) : '',
    ...(verified ? [verifyCell(r.verify)] : []),
    String(r.turns),
    `$${r.costUsd.toFixed(4)}`,
  ]);
  const t = b.totals;
  const waiting = b.rows.filter((r) => r.waiting);
  const heldByBudget = b.rows.filter((r) => r.status === 'awaiting_budget' && r.reason);
  return [
    ...alignedColumns(head, rows),
    ...(waiting.length ? ['', `${waiting.length} waiting for a person:`, ...waiting.map((r) => `  ${r.repo}: ${waitingLine(r.waiting!)}`)] : []),
    // Whole: which budget holds the job, by how much, and the command that raises it.
    ...(heldByBudget.length ? ['', `${heldByBudget.length} awaiting the budget:`, ...heldByBudget.map((r) => `  ${r.repo}: ${r.reason}`)] : []),
    '',
    `${plural(t.jobs, 'job')}: ${t.completed} completed, ${t.failed} failed${t.infra ? ` (${t.infra} infrastructure)` : ''}, ${t.running} running, ${t.pending} pending${t.skipped ? `, ${t.skipped} skipped` : ''}; ${plural(t.files, 'file')} +${t.insertions} -${t.deletions}; ${plural(t.turns, 'turn')}; $${t.costUsd.toFixed(4)}`,
    ...rolloutLines(b),
  ].join('\n');
}

/**
 * `state: …`: halted or aborted with why; a batch that ran to its end with what its jobs came to,
 * and, when it was resumed after a halt, that halt as the past it is (the reason is the halt's).
 */
function stateLine(b: BatchResult): string {
  if (b.state !== 'completed') return `state: ${b.state}${b.reason ? ` (${b.reason})` : ''}`;
  const t = b.totals;
  const ended = t.completed === t.jobs ? `all ${plural(t.jobs, 'job')} completed` : `${t.completed} of ${plural(t.jobs, 'job')} completed, ${t.failed} failed`;
  return `state: completed (${ended}${b.reason ? `; resumed after it halted at ${b.reason}` : ''})`;
}

/** The batch's state, its waves and its brake, under the table. */
export function rolloutLines(b: BatchResult): string[] {
  if (!b.state) return [];
  const pct = (n: number) => `${Math.round(n * 1000) / 10}%`;
  const out = [stateLine(b)];
  if (b.waves && b.waves.length > 1)
    out.push(
      `waves: ${b.waves.map((w) => `${w.wave}: ${w.finished}/${w.jobs} finished, ${w.bad} bad${w.infra ? `, ${w.infra} infra` : ''}${w.wave === b.wave && b.state === 'running' ? ' (now)' : ''}`).join('; ')}`,
    );
  if (b.budget) {
    // A schedule's month budget is raised for the schedule (the batch's own raise works too).
    const schedule = /^schedule:(.+):\d{4}-\d{2}$/.exec(b.budget.pool)?.[1];
    const raise = schedule ? `agentrun schedule raise-budget ${schedule} --add USD` : `agentrun batch raise-budget ${b.batchId} --add USD`;
    out.push(`budget: $${b.budget.limitUsd.toFixed(4)} (${b.budget.pool}); raise with: ${raise}`);
  }
  if (b.brake) out.push(`brake: ${pct(b.brake.rate)} of a wave, on ${b.brake.on.join(',')}${b.brake.overridden ? ' (overridden by resume --override)' : ''}`);
  if (b.state === 'halted') out.push(`resume with: agentrun batch resume ${b.batchId} [--override]; or: agentrun batch abort ${b.batchId}`);
  return out;
}

/** A job its budget holds says which budget and by how much: the reason of its last `budget_paused` event. */
async function withBudgetReasons(session: Session, b: BatchResult): Promise<BatchResult> {
  await Promise.all(
    b.rows
      .filter((r) => r.status === 'awaiting_budget')
      .map(async (r) => {
        const paused = await session.store.lastStreamEvent(r.conversationId, 'budget_paused').catch(() => undefined);
        if (paused) r.reason = paused.reason;
      }),
  );
  return b;
}

/** Follow a batch to its end; the signal when one detached from it (the batch goes on). */
export async function followBatch(session: Session, id: string, json: boolean | undefined): Promise<BatchResult | StopSignal> {
  const stop = whenStopped();
  try {
    return (await followUntil(session, id, json, stop.signal)) ?? (await stop.signal);
  } finally {
    stop.release();
  }
}

/**
 * `fn`'s calls, cancelled when a signal comes: a call still retrying after the connection closed
 * would throw from its timer and end the process before the servers are stopped. Each use has its
 * own AbortSignal, gone with it: the client adds an abort listener per call and never removes it,
 * so one signal for a whole night's polling would pile them up (MaxListenersExceededWarning).
 */
function cancelledOnStop<T>(session: Session, stopped: AbortSignal, fn: () => Promise<T>): Promise<T> {
  const calls = new AbortController();
  setMaxListeners(0, calls.signal);
  const cancel = () => calls.abort();
  stopped.addEventListener('abort', cancel, { once: true });
  return session.client.withAbortSignal(calls.signal, fn).finally(() => stopped.removeEventListener('abort', cancel));
}

async function followUntil(session: Session, id: string, json: boolean | undefined, interrupted: Promise<StopSignal>): Promise<BatchResult | undefined> {
  const handle = session.client.workflow.getHandle(id);
  const stopped = new AbortController();
  let stop = false;
  void interrupted.then(() => {
    stop = true;
    stopped.abort();
  });
  const seen = new Map<string, string>();
  const report = (b: BatchResult) => {
    for (const r of b.rows) {
      // A job that waits again (another call) is reported again.
      const key = `${r.status} ${r.waiting?.command ?? ''}`;
      if (seen.get(r.conversationId) === key) continue;
      seen.set(r.conversationId, key);
      if (r.status === 'pending') continue;
      if (json) process.stdout.write(JSON.stringify({ type: 'job', batchId: id, ...r }) + '\n');
      else if (r.waiting) process.stdout.write(`${r.repo}: ${waitingLine(r.waiting)}\n`);
      else
        process.stdout.write(
          `${r.repo}: ${r.status}${r.branch ? ` → ${r.branch}` : ''}${r.reason && r.status !== 'completed' && r.status !== 'running' ? ` (${r.reason})` : ''}\n`,
        );
    }
  };
  const done = cancelledOnStop(session, stopped.signal, () => batchResultOf(handle));
  let finished: BatchResult | undefined;
  void done.then(
    (r) => (finished = r),
    () => undefined,
  );
  while (!finished) {
    // A query or a wait that hangs (the worker stopped on the same signal) must not hold the detach.
    const b = await Promise.race([
      cancelledOnStop(session, stopped.signal, () =>
        handle
          .query(batchStateQuery)
          .then((r) => withWaiting(session.client, r as BatchResult))
          .then((r) => withBudgetReasons(session, r)),
      ).catch(() => undefined),
      interrupted,
    ]);
    if (stop) return undefined;
    if (b && typeof b !== 'string') report(b);
    // Halted: it waits for an operator; the table so far is the answer (exit 1).
    if (b && typeof b !== 'string' && b.state === 'halted') return b;
    await Promise.race([done.catch(() => undefined), new Promise((r) => setTimeout(r, 1000)), interrupted]);
    if (stop) return undefined;
  }
  report(finished);
  return finished;
}

export async function batchCommand(flags: BatchFlags): Promise<number> {
  const input = await batchInputFromFlags(flags);
  const session = await openSession({ startIfMissing: !flags.detach });
  try {
    if (!flags.detach && flags.worker !== false) await startOwnWorker(session);
    const id = flags.id !== undefined ? asBadInput(() => checkId('batch name', flags.id!)) : newBatchId();
    try {
      await session.client.workflow.start(BATCH_WORKFLOW_TYPE, {
        workflowId: id,
        taskQueue: session.taskQueue,
        args: [{ ...input, searchAttributes: session.searchAttributes }],
        ...batchStartMetadata(input),
        // Its jobs (child workflows) and their activities inherit it.
        priority: runPriority(input.config),
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw new CliError(`a batch with id ${id} already exists; choose another --id`);
      throw err;
    }
    if (flags.detach) {
      process.stdout.write(flags.json ? JSON.stringify({ type: 'started', batchId: id, jobs: input.repos.length }) + '\n' : `${id}\n`);
      return EXIT.completed;
    }
    process.stdout.write(
      flags.json
        ? JSON.stringify({ type: 'batch', batchId: id, jobs: input.repos.length, concurrency: input.concurrency }) + '\n'
        : `batch ${id}: ${input.repos.length} jobs, ${input.concurrency} at once\n`,
    );
    return await followToTable(session, id, flags.json);
  } finally {
    await session.close();
  }
}

/** Follow a batch until it ends or halts; print its table; exit 0 only when every job completed. */
export async function followToTable(session: Session, id: string, json: boolean | undefined): Promise<number> {
  const result = await followBatch(session, id, json);
  if (typeof result === 'string') {
    // As `run` does: the batch is durable; its jobs go on wherever a worker polls the queue.
    const signal = result;
    const how = `agentrun inspect ${id} (its table; the jobs go on while a worker runs: agentrun worker, or agentrun dev)`;
    process.stdout.write(json ? JSON.stringify({ type: 'detached', batchId: id, signal }) + '\n' : `\n${signal}: detached; the batch is durable: ${how}\n`);
    return exitCodeForSignal(signal);
  }
  process.stdout.write(json ? JSON.stringify({ type: 'result', ...result }) + '\n' : `\n${formatBatchTable(result)}\n`);
  return result.totals.completed === result.totals.jobs && result.state !== 'halted' ? EXIT.completed : EXIT.failed;
}

/** A batch that exists (running or not), or one line and exit 2. */
async function batchHandle(session: Session, id: string) {
  const handle = session.client.workflow.getHandle(id);
  const desc = await handle.describe().catch(() => undefined);
  if (!desc || desc.type !== BATCH_WORKFLOW_TYPE) throw new CliError(`no batch with id ${id}`);
  return { handle, running: desc.status.name === 'RUNNING' };
}

/** `batch status <id>`: the table, waves, brake and state, with each running job's own status (awaiting_budget…). */
export async function batchStatusCommand(id: string, flags: { json?: boolean }): Promise<number> {
  const session = await openSession({ startIfMissing: true });
  try {
    const { handle, running } = await batchHandle(session, id);
    const b = running
      ? ((await handle.query(batchStateQuery)) as BatchResult)
      : await batchResultOf(handle).catch((err: Error) => {
          throw new CliError(`batch ${id} ended without a table: ${(err.cause as Error | undefined)?.message ?? err.message}`, EXIT.failed);
        });
    // A job's own state says more than "running": it may wait for a person or for budget.
    await Promise.all(
      b.rows
        .filter((r) => r.status === 'running')
        .map(async (r) => {
          const s = (await session.client.workflow
            .getHandle(r.conversationId)
            .query(stateQuery)
            .catch(() => undefined)) as ConversationState | undefined;
          if (s && s.status !== 'running') r.status = s.status;
        }),
    );
    await withBudgetReasons(session, b);
    // The budget's spend and reservations, from its pool (every worker's calls settle there).
    const pool = b.budget ? await poolState(session.store.pool, b.budget.pool) : undefined;
    const budget = pool ? { limitUsd: pool.limitUsd, spentUsd: pool.spentUsd, reservedUsd: pool.reservedUsd } : undefined;
    process.stdout.write(
      flags.json
        ? JSON.stringify({ type: 'batch', ...b, ...(budget ? { budget: { ...b.budget, ...budget } } : {}) }) + '\n'
        : `${formatBatchTable(b)}\n${budget ? `budget: $${budget.spentUsd.toFixed(4)} spent + $${budget.reservedUsd.toFixed(4)} reserved of $${budget.limitUsd.toFixed(4)}\n` : ''}`,
    );
    return EXIT.completed;
  } finally {
    await session.close();
  }
}

/** `batch resume <id> [--override]` and `batch abort <id>`: the batch's Update; its refusal (not halted, ended) is one line and exit 2. */
export async function batchControlCommand(
  id: string,
  action: 'resume' | 'abort',
  flags: { override?: boolean; detach?: boolean; json?: boolean; worker?: boolean; as?: string },
): Promise<number> {
  const by = (await import('./operator.js')).deciderName({ as: flags.as });
  const follows = action === 'resume' && !flags.detach;
  const session = await openSession({ startIfMissing: follows });
  try {
    const { handle, running } = await batchHandle(session, id);
    if (!running) throw new CliError(`batch ${id} has ended: there is nothing to ${action}`);
    try {
      await handle.executeUpdate(batchControlUpdate, { args: [{ action, ...(flags.override ? { override: true } : {}), by }] });
    } catch (err) {
      throw new CliError(((err as Error).cause as Error | undefined)?.message ?? (err as Error).message);
    }
    if (!follows) {
      process.stdout.write(
        flags.json
          ? JSON.stringify({ type: action === 'resume' ? 'resumed' : 'aborted', batchId: id, by }) + '\n'
          : `batch ${id}: ${action === 'resume' ? 'resumed' : 'abort requested'}\n`,
      );
      return EXIT.completed;
    }
    if (flags.worker !== false) await startOwnWorker(session);
    return await followToTable(session, id, flags.json);
  } finally {
    await session.close();
  }
}

/** `batch raise-budget <id> --add USD`: the pool grows, the jobs waiting for it go on. */
export async function batchRaiseBudgetCommand(id: string, flags: { add?: string; json?: boolean; as?: string }): Promise<number> {
  const addUsd = Number(flags.add);
  if (flags.add === undefined || flags.add.trim() === '' || !Number.isFinite(addUsd) || addUsd <= 0)
    throw new CliError(`--add must be a positive amount of USD, got "${flags.add ?? ''}"`);
  const by = (await import('./operator.js')).deciderName({ as: flags.as });
  const session = await openSession({});
  try {
    const { handle, running } = await batchHandle(session, id);
    if (!running) throw new CliError(`batch ${id} has ended: there is no budget to raise`);
    let r;
    try {
      r = await handle.executeUpdate(batchControlUpdate, { args: [{ action: 'raise-budget', addUsd, raiseId: randomBytes(8).toString('hex'), by }] });
    } catch (err) {
      throw new CliError(((err as Error).cause as Error | undefined)?.message ?? (err as Error).message);
    }
    const b = r.budget!;
    process.stdout.write(
      flags.json
        ? JSON.stringify({ type: 'budget', batchId: id, ...b, by }) + '\n'
        : `batch ${id}: budget raised to $${b.limitUsd.toFixed(4)} ($${b.spentUsd.toFixed(4)} spent, $${b.reservedUsd.toFixed(4)} reserved)\n`,
    );
    return EXIT.completed;
  } finally {
    await session.close();
  }
}

/** `inspect <batch id>`: the table, from the batch's query (running) or its result (finished). */
export async function inspectBatch(session: Session, id: string): Promise<BatchResult | undefined> {
  const handle = session.client.workflow.getHandle(id);
  const desc = await handle.describe().catch(() => undefined);
  if (!desc || desc.type !== BATCH_WORKFLOW_TYPE) return undefined;
  if (desc.status.name === 'RUNNING')
    return withBudgetReasons(session, await withWaiting(session.client, (await handle.query(batchStateQuery)) as BatchResult));
  return batchResultOf(handle);
}

/** An ended batch's table: its result, or the failure that carries it (a batch whose jobs did not all complete ends Failed). */
export async function batchResultOf(handle: { result(): Promise<unknown> }): Promise<BatchResult> {
  try {
    return (await handle.result()) as BatchResult;
  } catch (err) {
    const table = batchResultFromFailure(err);
    if (table) return table;
    throw err;
  }
}

export async function gcCommand(flags: { olderThan?: string; dryRun?: boolean; json?: boolean }): Promise<number> {
  let olderThanMs: number;
  try {
    olderThanMs = parseDuration(flags.olderThan ?? '7d');
  } catch (err) {
    throw new CliError(`--older-than: ${(err as Error).message}`);
  }
  const session = await openSession({});
  try {
    const r = await collectGarbage(session.store, { olderThanMs, dryRun: !!flags.dryRun, workspacesDir: workspacesDir(session.home), home: session.home });
    // Dependency caches this host's jobs have not restored for as long (AGENTRUN_CACHE_DIR), then
    // the least recently used past AGENTRUN_CACHE_MAX_SIZE.
    const limits = diskLimitsFromEnv();
    const { removed: caches } = await gcCaches(cacheRoot(session.home), { olderThanMs, maxBytes: limits.cacheMaxBytes, dryRun: !!flags.dryRun });
    // Workspaces of younger finished jobs that their --keep-workspace lets go (a pushed branch).
    const spare = flags.dryRun ? [] : await removeSpareWorkspaces(session.store, workspacesDir(session.home), session.home, limits.keepForMs);
    if (flags.json) process.stdout.write(JSON.stringify({ type: 'gc', ...r, caches, spareWorkspaces: spare }) + '\n');
    else {
      const verb = r.dryRun ? 'would free' : 'freed';
      for (const i of r.items) {
        process.stdout.write(
          `${i.conversationId} (finished ${i.finishedAt}): ${i.workspace ? `workspace ${mb(i.workspace.bytes)}, ` : ''}${i.streamRows} stream rows, ${i.contexts} context plans, ${i.refs.length} checkpoint refs, ${i.bundles.count} checkpoint bundles (${mb(i.bundles.bytes)})${i.problems.length ? `; ${i.problems.join('; ')}` : ''}\n`,
        );
      }
      process.stdout.write(
        `${spare.length ? `${spare.length} workspaces of finished jobs their --keep-workspace lets go: removed\n` : ''}${caches.length ? `${caches.length} dependency caches unused since --older-than or past AGENTRUN_CACHE_MAX_SIZE: ${verb} ${mb(caches.reduce((n, c) => n + c.bytes, 0))}\n` : ''}${r.items.length} finished conversations: ${verb} ${mb(r.bytes)} of workspaces, ${r.streamRows} stream rows, ${r.contexts} context plans, ${r.refs} checkpoint refs, ${r.bundles} checkpoint bundles (${mb(r.bundleBytes)})\n`,
      );
    }
    return EXIT.completed;
  } finally {
    await session.close();
  }
}

/**
 * A fork's (or rerun's) job settings: its own result branch, `branch` or agentrun/<its id>, never
 * the parent's (two conversations pushing one branch collide); `push` as given, else as the parent's.
 * The base is the parent's checkpoint, so there is no --ref.
 */
export function forkedJobConfig(parent: RunConfig, flags: { branch?: string; push?: boolean }): RunConfig {
  const { branch: _parentBranch, ...rest } = parent;
  return { ...rest, ...(flags.branch ? { branch: flags.branch } : {}), push: flags.push ?? parent.push };
}

export async function forkCommand(
  parentId: string,
  flags: { atTurn?: string; model?: string; task?: string; id?: string; branch?: string; push?: boolean; json?: boolean },
): Promise<number> {
  const atTurn = Number(flags.atTurn);
  if (flags.atTurn === undefined || !Number.isInteger(atTurn) || atTurn < 0)
    throw new CliError(`--at-turn must be a turn number (0 or more), got "${flags.atTurn ?? ''}"`);
  const model = flags.model ? await checkModel(flags.model) : undefined;
  const session = await openSession({});
  try {
    const parent = await ownConversation(session, parentId);
    if (atTurn > parent.turns) throw new CliError(`conversation ${parentId} has ${parent.turns} turns: --at-turn ${atTurn} is past its end`);
    const config = forkedJobConfig(runConfigSchema.parse({ ...(parent.config as object), ...(model ? { model } : {}) }), flags);
    if (!config.repo)
      throw new CliError(`conversation ${parentId} works in a local directory: fork takes repository jobs (--repo), whose checkpoints any host can reach`);
    const checkpoints = (await session.store.getCheckpoints(parentId)).filter((c) => c.turn <= atTurn);
    if (!checkpoints.length) throw new CliError(`conversation ${parentId} has no checkpoint at or before turn ${atTurn}`);
    const id = flags.id !== undefined ? asBadInput(() => checkId('conversation id', flags.id!)) : newConversationId();
    const input: SessionInput = {
      task: parent.task,
      workspace: config.repo,
      config,
      searchAttributes: session.searchAttributes,
      fork: { parentId, atTurn, ...(flags.task ? { message: flags.task } : {}) },
    };
    try {
      await session.client.workflow.start(WORKFLOW_TYPE, {
        workflowId: id,
        taskQueue: session.taskQueue,
        args: [input],
        ...sessionStartMetadata(input, { id, atMs: Date.now() }),
        priority: runPriority(config),
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw new CliError(`a conversation with id ${id} already exists; choose another --id`);
      throw err;
    }
    process.stdout.write(
      flags.json
        ? JSON.stringify({ type: 'started', conversationId: id, parentId, atTurn, branch: config.branch ?? defaultBranch(id), push: config.push }) + '\n'
        : `${id}\n`,
    );
    return EXIT.completed;
  } finally {
    await session.close();
  }
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
