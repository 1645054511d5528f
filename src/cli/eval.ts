// `agentrun eval`: golden sets frozen from real runs (add, list, export, import), a set run as an
// ordinary batch (replay, live, fork) and graded into a report with a gate (run, report), and
// two runs of a set compared (compare). The report's formats: a table, JSON, JUnit XML, Markdown.
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { runConfigSchema, type RunConfig } from '../config.js';
import { runPriority } from '../model/pool-names.js';
import type { CaseChecks } from '../store/index.js';
import { plural } from '../types.js';
import {
  compareReports,
  evalJobs,
  evalReport,
  exportSet,
  freezeCase,
  gateFailures,
  importSet,
  recordedPassed,
  recordedUsage,
  SET_NAME,
  type EvalReport,
  type EvalRunOptions,
  type GateOptions,
} from '../client/evals.js';
import { BATCH_WORKFLOW_TYPE, batchStartMetadata, type BatchInput, type BatchResult } from '../../workflows/batch/api.js';
import { CliError, EXIT } from './errors.js';
import { batchResultOf, followBatch } from './fleet.js';
import { exitCodeForSignal } from './stop-signals.js';
import { checkModel, readConfigFile } from './options.js';
import { openSession, type Session } from './session.js';
import { evalJunit, evalMarkdown, evalTable, compareTable } from './render/eval.js';

function checkSet(set: string): string {
  if (!SET_NAME.test(set)) throw new CliError(`set name "${set}" must be 1-64 letters, digits or ._- and start with a letter or digit`);
  return set;
}

const list = (v: string | undefined) =>
  v
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** `--where status=completed,verify=passed`: each key one condition, all of them must hold. */
function parseWhere(where: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of list(where) ?? []) {
    const m = /^(status|verify|model)=(.+)$/.exec(part);
    if (!m) throw new CliError(`--where takes status=S, verify=passed|failed or model=M (comma-separated), got "${part}"`);
    out[m[1]!] = m[2]!;
  }
  if (out.verify && !['passed', 'failed'].includes(out.verify)) throw new CliError(`--where verify= takes passed or failed, got "${out.verify}"`);
  return out;
}

export interface EvalAddFlags {
  fromBatch?: string;
  where?: string;
  checkCommand?: string;
  mustChange?: string;
  mustNotChange?: string;
  json?: boolean;
}

export async function evalAddCommand(set: string, ids: string[], flags: EvalAddFlags): Promise<number> {
  checkSet(set);
  const where = parseWhere(flags.where);
  if (!ids.length && !flags.fromBatch) throw new CliError('give conversation ids, or --from-batch ID');
  const checks: CaseChecks = {
    ...(flags.checkCommand ? { command: flags.checkCommand } : {}),
    ...(flags.mustChange ? { mustChange: list(flags.mustChange) } : {}),
    ...(flags.mustNotChange ? { mustNotChange: list(flags.mustNotChange) } : {}),
  };
  const session = await openSession({ startIfMissing: true });
  try {
    const candidates = [...ids];
    if (flags.fromBatch) {
      const handle = session.client.workflow.getHandle(flags.fromBatch);
      const desc = await handle.describe().catch(() => undefined);
      if (!desc || desc.type !== BATCH_WORKFLOW_TYPE) throw new CliError(`no batch with id ${flags.fromBatch}`);
      if (desc.status.name === 'RUNNING') throw new CliError(`batch ${flags.fromBatch} is still running: add its jobs once it ended`);
      const b = await batchResultOf(handle).catch(() => undefined);
      if (!b) throw new CliError(`batch ${flags.fromBatch} ended without a table`);
      candidates.push(...b.rows.filter((r) => r.status !== 'pending' && r.status !== 'skipped').map((r) => r.conversationId));
    }
    let added = 0;
    for (const id of candidates) {
      const row = await session.store.getConversation(id);
      if (row && where.status && row.status !== where.status) continue;
      if (row && where.model && row.model !== where.model) continue;
      let c;
      try {
        c = await freezeCase(session.store, session.home, set, id, checks);
      } catch (err) {
        throw new CliError((err as Error).message);
      }
      if (where.verify && recordedPassed(c.frozen) !== (where.verify === 'passed')) {
        await session.store.pool.query('DELETE FROM eval_cases WHERE set_name = $1 AND case_id = $2', [set, id]);
        continue;
      }
      added++;
      const f = c.frozen;
      const line = `${id}: ${f.status}${f.verify ? `, verify ${f.verify.passed === null ? 'not run' : f.verify.passed ? 'passed' : 'failed'}` : ''}, ${plural(f.turns, 'turn')}, $${f.costUsd.toFixed(4)} (${f.start.kind === 'repo' ? `${f.start.repo} at ${f.start.ref.slice(0, 12)}` : "turn 0's tree"})`;
      process.stdout.write(
        flags.json
          ? JSON.stringify({
              type: 'case',
              set,
              caseId: id,
              status: f.status,
              verify: f.verify?.passed ?? null,
              turns: f.turns,
              costUsd: f.costUsd,
              start: f.start.kind,
            }) + '\n'
          : `${line}\n`,
      );
    }
    const total = (await session.store.getEvalCases(set)).length;
    process.stdout.write(
      flags.json ? JSON.stringify({ type: 'set', set, added, cases: total }) + '\n' : `set ${set}: ${plural(added, 'case')} added, ${total} in all\n`,
    );
    return EXIT.completed;
  } finally {
    await session.close();
  }
}

export async function evalListCommand(set: string | undefined, flags: { json?: boolean }): Promise<number> {
  const session = await openSession({ startIfMissing: true });
  try {
    if (!set) {
      const sets = await session.store.listEvalSets();
      for (const s of sets) process.stdout.write(flags.json ? JSON.stringify({ type: 'set', ...s }) + '\n' : `${s.set}  ${plural(s.cases, 'case')}\n`);
      if (!sets.length && !flags.json) process.stdout.write('no eval sets yet: agentrun eval add SET CONVERSATION-ID…\n');
      return EXIT.completed;
    }
    const cases = await session.store.getEvalCases(checkSet(set));
    if (!cases.length) throw new CliError(`no eval set ${set} (see agentrun eval list)`);
    for (const c of cases) {
      const f = c.frozen;
      process.stdout.write(
        flags.json
          ? JSON.stringify({ type: 'case', set, caseId: c.caseId, status: f.status, passed: recordedPassed(f), turns: f.turns, costUsd: f.costUsd }) + '\n'
          : `${c.caseId}  ${f.status}${recordedPassed(f) ? ' (passed)' : ' (failed)'}  ${plural(f.turns, 'turn')}  $${f.costUsd.toFixed(4)}\n`,
      );
    }
    const total = recordedUsage(cases);
    const runs = await session.store.listEvalRuns(set);
    if (flags.json) {
      process.stdout.write(JSON.stringify({ type: 'set', set, cases: cases.length, recordedCostUsd: total.costUsd, runs: runs.map((r) => r.runId) }) + '\n');
    } else {
      process.stdout.write(`${plural(cases.length, 'case')}, recorded $${total.costUsd.toFixed(4)}, ${total.usage.totalTokens} tokens\n`);
      for (const r of runs) {
        const rep = r.report as EvalReport | undefined;
        process.stdout.write(
          `run ${r.runId} (${r.mode}): ${rep ? `pass rate ${(rep.passRate * 100).toFixed(1)}%, ${rep.regressions.length} regressed` : 'no report yet'}\n`,
        );
      }
    }
    return EXIT.completed;
  } finally {
    await session.close();
  }
}

export async function evalExportCommand(set: string, file: string, flags: { json?: boolean }): Promise<number> {
  const session = await openSession({ startIfMissing: true });
  try {
    const cases = await session.store.getEvalCases(checkSet(set));
    if (!cases.length) throw new CliError(`no eval set ${set} (see agentrun eval list)`);
    await writeFile(file, JSON.stringify(exportSet(set, cases)) + '\n');
    process.stdout.write(
      flags.json
        ? JSON.stringify({ type: 'exported', set, cases: cases.length, file }) + '\n'
        : `set ${set}: ${plural(cases.length, 'case')} written to ${file}\n`,
    );
    return EXIT.completed;
  } finally {
    await session.close();
  }
}

export async function evalImportCommand(file: string, flags: { as?: string; json?: boolean }): Promise<number> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new CliError(`cannot read the eval set file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (flags.as) checkSet(flags.as);
  const session = await openSession({ startIfMissing: true });
  try {
    const r = await importSet(session.store, parsed, flags.as).catch((err: Error) => {
      throw new CliError(`${file}: ${err.message}`);
    });
    process.stdout.write(flags.json ? JSON.stringify({ type: 'imported', ...r }) + '\n' : `set ${r.set}: ${plural(r.cases, 'case')} imported\n`);
    return EXIT.completed;
  } finally {
    await session.close();
  }
}

export interface EvalRunFlags extends ReportFlags {
  replay?: boolean;
  live?: boolean;
  forkAt?: string;
  model?: string;
  prompt?: string;
  settings?: string;
  trials?: string;
  concurrency?: string;
  budget?: string;
  id?: string;
  detach?: boolean;
  worker?: boolean;
  workdir?: string;
}

interface ReportFlags extends GateFlags {
  json?: boolean;
  junit?: string;
  markdown?: string;
}

interface GateFlags {
  minPassRate?: string;
  maxCostRatio?: string;
  /** false with --no-regressions (commander's negated option). */
  regressions?: boolean;
}

function gateFromFlags(flags: GateFlags): GateOptions {
  const rate = (v: string) => {
    const pct = v.trim().endsWith('%');
    const n = Number(pct ? v.trim().slice(0, -1) : v) / (pct ? 100 : 1);
    if (!v.trim() || !Number.isFinite(n) || n < 0 || n > 1) throw new CliError(`--min-pass-rate must be a rate such as 0.8 or 80%, got "${v}"`);
    return n;
  };
  const ratio = flags.maxCostRatio === undefined ? undefined : Number(flags.maxCostRatio);
  if (ratio !== undefined && (!Number.isFinite(ratio) || ratio <= 0))
    throw new CliError(`--max-cost-ratio must be a positive number such as 1.2, got "${flags.maxCostRatio}"`);
  return {
    ...(flags.minPassRate !== undefined ? { minPassRate: rate(flags.minPassRate) } : {}),
    ...(ratio !== undefined ? { maxCostRatio: ratio } : {}),
    ...(flags.regressions === false ? { noRegressions: true } : {}),
  };
}

async function runOptionsFromFlags(flags: EvalRunFlags): Promise<EvalRunOptions> {
  const modes = [flags.replay && 'replay', flags.live && 'live', flags.forkAt !== undefined && 'fork'].filter(Boolean);
  if (modes.length !== 1) throw new CliError('give one of --replay, --live --model M, or --fork-at K --model M');
  const trials = flags.trials === undefined ? 1 : Number(flags.trials);
  if (!Number.isInteger(trials) || trials < 1 || trials > 100) throw new CliError(`--trials must be a whole number from 1 to 100, got "${flags.trials}"`);
  if (modes[0] === 'replay') {
    if (flags.model || flags.prompt || flags.settings)
      throw new CliError('--replay serves the recorded answers: --model, --prompt and --settings go with --live or --fork-at');
    return { mode: 'replay', trials };
  }
  if (!flags.model) throw new CliError(`--${modes[0] === 'live' ? 'live' : 'fork-at'} needs --model M (the model to try)`);
  const model = await checkModel(flags.model);
  let forkAt: number | undefined;
  if (modes[0] === 'fork') {
    forkAt = Number(flags.forkAt);
    if (!Number.isInteger(forkAt) || forkAt < 1) throw new CliError(`--fork-at must be a turn number (1 or more), got "${flags.forkAt}"`);
  }
  let instructions: string | undefined;
  if (flags.prompt) {
    try {
      instructions = await readFile(flags.prompt, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read the prompt file ${flags.prompt}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  let settings: Record<string, unknown> | undefined;
  if (flags.settings) {
    settings = await readConfigFile(flags.settings);
    for (const k of ['model', 'repo', 'ref', 'task', 'budgetPool', 'replayFirst']) delete settings[k];
    const checked = runConfigSchema.safeParse({ model, ...settings });
    if (!checked.success)
      throw new CliError(`--settings ${flags.settings}: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return {
    mode: modes[0] as 'live' | 'fork',
    trials,
    model,
    ...(instructions !== undefined ? { instructions } : {}),
    ...(settings ? { settings } : {}),
    ...(forkAt ? { forkAt } : {}),
  };
}

function newRunId(set: string): string {
  return `eval-${set.slice(0, 24)}-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomBytes(3).toString('hex')}`;
}

/** What `eval_runs.options` keeps: the run's options and its jobs' cases, so its report can be made again from its batch. */
interface StoredRunOptions extends EvalRunOptions {
  jobs: { caseId: string; trial: number }[];
  gate: GateOptions;
}

export async function evalRunCommand(set: string, flags: EvalRunFlags): Promise<number> {
  checkSet(set);
  const options = await runOptionsFromFlags(flags);
  const gate = gateFromFlags(flags);
  const concurrency = flags.concurrency === undefined ? 4 : Number(flags.concurrency);
  if (!Number.isInteger(concurrency) || concurrency <= 0) throw new CliError(`--concurrency must be a positive whole number, got "${flags.concurrency}"`);
  const budgetUsd = flags.budget === undefined ? undefined : Number(flags.budget);
  if (budgetUsd !== undefined && (!Number.isFinite(budgetUsd) || budgetUsd <= 0))
    throw new CliError(`--budget must be a positive amount of USD, got "${flags.budget}"`);
  const session = await openSession({ startIfMissing: !flags.detach });
  try {
    const cases = await session.store.getEvalCases(set);
    if (!cases.length) throw new CliError(`no eval set ${set} (see agentrun eval list)`);
    if (options.mode === 'fork') {
      const short = cases.filter((c) => c.frozen.turns <= options.forkAt!);
      if (short.length)
        throw new CliError(`--fork-at ${options.forkAt} is at or past the end of ${short.map((c) => `${c.caseId} (${c.frozen.turns} turns)`).join(', ')}`);
    }
    const runId = flags.id ?? newRunId(set);
    const workdir = resolve(flags.workdir ?? join(tmpdir(), 'agentrun-evals'));
    const jobs = await evalJobs(cases, options, runId, workdir).catch((err: Error) => {
      throw new CliError(err.message);
    });
    for (const j of jobs) {
      const parsed = runConfigSchema.safeParse(j.job.config);
      if (!parsed.success) throw new CliError(`case ${j.caseId}: its run options do not hold: ${parsed.error.issues[0]?.message}`);
      j.job.config = parsed.data;
    }
    const shared: RunConfig = runConfigSchema.parse({ model: options.model ?? 'recorded:eval', priority: 'batch', push: false });
    const input: BatchInput = {
      repos: jobs.map((j) => j.label),
      task: `eval ${set} (${options.mode}${options.model ? ` with ${options.model}` : ''})`,
      config: shared,
      concurrency,
      jobs: jobs.map((j) => j.job),
      ...(budgetUsd !== undefined ? { budgetUsd } : {}),
    };
    const stored: StoredRunOptions = { ...options, jobs: jobs.map((j) => ({ caseId: j.caseId, trial: j.trial })), gate };
    await session.store.putEvalRun({ runId, set, mode: options.mode, options: stored as unknown as Record<string, unknown> });
    if (!flags.detach && flags.worker !== false) await session.startWorker();
    try {
      await session.client.workflow.start(BATCH_WORKFLOW_TYPE, {
        workflowId: runId,
        taskQueue: session.taskQueue,
        args: [{ ...input, searchAttributes: session.searchAttributes }],
        ...batchStartMetadata(input),
        priority: runPriority(shared),
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw new CliError(`an eval run or batch with id ${runId} already exists; choose another --id`);
      throw err;
    }
    process.stdout.write(
      flags.json
        ? JSON.stringify({ type: 'eval_run', runId, set, mode: options.mode, cases: cases.length, trials: options.trials, jobs: jobs.length }) + '\n'
        : `eval run ${runId}: set ${set}, ${options.mode}, ${plural(cases.length, 'case')} × ${plural(options.trials, 'trial')}\n`,
    );
    if (flags.detach) return EXIT.completed;
    const batch = await followBatch(session, runId, flags.json);
    if (typeof batch === 'string') {
      const signal = batch;
      process.stdout.write(
        flags.json
          ? JSON.stringify({ type: 'detached', runId, signal }) + '\n'
          : `\n${signal}: detached; the run is durable: agentrun eval report ${runId} (while a worker runs)\n`,
      );
      return exitCodeForSignal(signal);
    }
    return await finishReport(session, runId, batch, flags);
  } finally {
    await session.close();
  }
}

/** `eval report <run>`: waits for the run's batch to end (a worker must run), grades it, prints it and applies the gate. */
export async function evalReportCommand(runId: string, flags: ReportFlags & { worker?: boolean }): Promise<number> {
  const session = await openSession({ startIfMissing: true });
  try {
    const run = await session.store.getEvalRun(runId);
    if (!run) throw new CliError(`no eval run ${runId} (see agentrun eval list SET)`);
    const handle = session.client.workflow.getHandle(runId);
    const desc = await handle.describe().catch(() => undefined);
    if (!desc) throw new CliError(`eval run ${runId} has no batch in Temporal (its history was removed)`);
    if (desc.status.name === 'RUNNING' && flags.worker !== false) await session.startWorker();
    const batch = await batchResultOf(handle).catch((err: Error) => {
      throw new CliError(`eval run ${runId} ended without a table: ${err.message}`, EXIT.failed);
    });
    return await finishReport(session, runId, batch, flags);
  } finally {
    await session.close();
  }
}

async function finishReport(session: Session, runId: string, batch: BatchResult, flags: ReportFlags): Promise<number> {
  const run = (await session.store.getEvalRun(runId))!;
  const stored = run.options as unknown as StoredRunOptions;
  const cases = await session.store.getEvalCases(run.set);
  const jobCases = new Set(stored.jobs.map((j) => j.caseId));
  const report = await evalReport(
    session.store,
    { runId, set: run.set, options: stored },
    cases.filter((c) => jobCases.has(c.caseId)),
    stored.jobs,
    batch,
  );
  await session.store.finishEvalRun(runId, report);
  const typed = gateFromFlags(flags);
  const gate = Object.keys(typed).length ? typed : stored.gate;
  const failures = gateFailures(report, gate);
  if (flags.junit) await writeFile(flags.junit, evalJunit(report, failures));
  if (flags.markdown) await writeFile(flags.markdown, evalMarkdown(report, failures));
  process.stdout.write(
    flags.json ? JSON.stringify({ ...report, gate: { passed: !failures.length, failures } }) + '\n' : `\n${evalTable(report)}\n${gateLines(failures, gate)}\n`,
  );
  return failures.length ? EXIT.failed : EXIT.completed;
}

function gateLines(failures: string[], gate: GateOptions): string {
  if (!Object.keys(gate).length)
    return failures.length ? failures.map((f) => `note: ${f}`).join('\n') : 'no gate given (--min-pass-rate, --max-cost-ratio, --no-regressions)';
  return failures.length ? ['gate: FAILED', ...failures.map((f) => `  ${f}`)].join('\n') : 'gate: passed';
}

export async function evalCompareCommand(a: string, b: string, flags: { json?: boolean }): Promise<number> {
  const session = await openSession({ startIfMissing: true });
  try {
    const reportOf = async (id: string) => {
      const r = await session.store.getEvalRun(id);
      if (!r) throw new CliError(`no eval run ${id}`);
      if (!r.report) throw new CliError(`eval run ${id} has no report yet: agentrun eval report ${id}`);
      return r.report as EvalReport;
    };
    const [ra, rb] = [await reportOf(a), await reportOf(b)];
    if (ra.set !== rb.set) throw new CliError(`runs ${a} and ${b} are of different sets (${ra.set}, ${rb.set})`);
    const cmp = compareReports(ra, rb);
    process.stdout.write(flags.json ? JSON.stringify(cmp) + '\n' : compareTable(cmp) + '\n');
    return EXIT.completed;
  } finally {
    await session.close();
  }
}
