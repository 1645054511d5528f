// Golden sets from real runs and their runs (`agentrun eval`): a finished conversation frozen into
// a case (src/store/evals.ts); a set's cases turned into the jobs of an ordinary batch
// (workflows/batch.ts) for a replay, a live run or a fork; the batch's table graded into a report
// (per case pass@k and pass^k, the set's pass rate with its interval, cost and time against the
// recording); two reports compared; a set written to and read from a file.
import { join } from 'node:path';
import type { RunConfig } from '../config.js';
import { evalRecordingId } from '../model/scripted/recorded.js';
import type { CaseChecks, EvalCaseRow, FrozenCase, Store } from '../store/index.js';
import { addUsage, FINAL_STATUSES, type StoredMessage, type Usage } from '../types.js';
import { freezeStart, thawStart } from '../workspace/frozen-start.js';
import { redactUrl } from '../workspace/git.js';
import { workspaceDir } from '../workspace/host.js';
import type { BatchJob, BatchResult, BatchRow } from '../../workflows/batch/api.js';
import { environmentOf } from './inspection.js';
import { compareRates, passAtK, passPowK, wilson } from './eval-stats.js';

export const SET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

type EvalMode = 'replay' | 'live' | 'fork';

/** Run options that belong to one run or one fleet, never to a case: its budget pool, schedule, branch and push. */
const NOT_FROZEN = ['budgetPool', 'scheduleId', 'branch', 'push', 'pushEmpty', 'replayFirst', 'parentId', 'subagent'] as const;

/** Freeze conversation `id` into `set`; the case id is the conversation's. Throws an Error a person can act on. */
export async function freezeCase(store: Store, home: string, set: string, id: string, checks?: CaseChecks): Promise<EvalCaseRow> {
  const row = await store.getConversation(id);
  if (!row) throw new Error(`no conversation with id ${id} (see agentrun list)`);
  if (!FINAL_STATUSES.includes(row.status)) throw new Error(`conversation ${id} is ${row.status}: a case is frozen from a conversation that ended`);
  const config = { ...(row.config as Record<string, unknown>) };
  for (const k of NOT_FROZEN) delete config[k];
  const turn0 = (await store.getCheckpoints(id)).find((c) => c.turn === 0);
  if (!turn0) throw new Error(`conversation ${id} has no checkpoint of turn 0 (it ended before its first turn): nothing to start a case from`);
  const repo = typeof config.repo === 'string' ? config.repo : undefined;
  // A repository job's private repository belongs to its clone on this host; a local workspace's to its directory.
  const where = repo ? workspaceDir(home, id) : row.workspace;
  let start: FrozenCase['start'];
  let bundle: Buffer | undefined;
  try {
    const frozen = await freezeStart(where, id, turn0.commit, home, !repo);
    if (repo) {
      const ref = frozen.parent ?? (typeof config.ref === 'string' ? config.ref : undefined);
      if (!ref) throw new Error('the commit its clone stood on is unknown');
      start = { kind: 'repo', repo, ref };
    } else {
      start = { kind: 'bundle', commit: turn0.commit };
      bundle = frozen.bundle;
    }
  } catch (err) {
    throw new Error(`cannot freeze the start of ${id}: ${(err as Error).message.split('\n')[0]}; add it to a set before gc collects its workspace`);
  }
  const env = await environmentOf(store, id);
  const lastVerify = env.verify.filter((v) => !v.baseline).at(-1);
  const verifyCommand = typeof config.verify === 'string' ? config.verify : lastVerify?.command;
  const frozen: FrozenCase = {
    task: row.task,
    config,
    start,
    workspace: row.workspace,
    ...(verifyCommand ? { verify: { command: verifyCommand, passed: lastVerify?.passed ?? null, exitCode: lastVerify?.exitCode ?? null } } : {}),
    ...(env.setup?.commands ? { setup: env.setup.commands } : {}),
    status: row.status,
    ...(row.reason ? { reason: row.reason } : {}),
    turns: row.turns,
    usage: row.usage,
    costUsd: row.costUsd,
    wallMs: (row.finishedAt ?? row.updatedAt).getTime() - row.createdAt.getTime(),
    ...(checks && Object.keys(checks).length ? { checks } : {}),
  };
  const messages: StoredMessage[] = await store.getMessages(id);
  const c = { set, caseId: id, sourceId: id, frozen, messages, ...(bundle ? { bundle } : {}) };
  await store.putEvalCase(c);
  return { ...c, createdAt: new Date() };
}

/** Did the recording pass: its check passed, or (without one) it completed. */
export function recordedPassed(f: FrozenCase): boolean {
  return f.verify && f.verify.passed !== null ? f.verify.passed : f.status === 'completed';
}

export interface EvalRunOptions {
  mode: EvalMode;
  trials: number;
  /** live and fork: the model; its settings over the case's; extra instructions. */
  model?: string;
  settings?: Record<string, unknown>;
  instructions?: string;
  /** fork: the recorded turns kept. */
  forkAt?: number;
}

/** One job of an eval run: which case and trial it is, and what the batch runs. */
export interface EvalJob {
  caseId: string;
  trial: number;
  label: string;
  job: BatchJob;
}

/**
 * The batch jobs of a run: `trials` per case, case by case. A local workspace's case starts in a
 * new directory `<workdir>/<run>/<job's conversation id>` (each trial its own; outside
 * AGENTRUN_HOME, where no workspace may lie), written from the case's bundle; a repository case
 * clones its repository at the frozen commit.
 */
export async function evalJobs(cases: EvalCaseRow[], opts: EvalRunOptions, runId: string, workdir: string): Promise<EvalJob[]> {
  const jobs: EvalJob[] = [];
  for (const c of cases) {
    for (let trial = 1; trial <= opts.trials; trial++) {
      const conversationId = `${runId}-${jobs.length + 1}`;
      const f = c.frozen;
      const recording = evalRecordingId(c.set, c.caseId);
      const base = { ...f.config } as Record<string, unknown>;
      const live = opts.mode !== 'replay';
      const config = {
        ...base,
        ...(live ? opts.settings : {}),
        model: live ? opts.model! : `recorded:${recording}`,
        ...(live && opts.instructions !== undefined ? { instructions: opts.instructions } : {}),
        ...(opts.mode === 'fork' ? { replayFirst: { recording, turns: opts.forkAt! } } : {}),
        ...(live ? checkedVerify(f) : {}),
        push: false,
      } as RunConfig;
      let workspace: string;
      if (f.start.kind === 'repo') {
        workspace = f.start.repo;
        Object.assign(config, { repo: f.start.repo, ref: f.start.ref });
      } else {
        if (!c.bundle) throw new Error(`case ${c.caseId} of set ${c.set} has no starting tree`);
        workspace = join(workdir, runId, conversationId);
        delete (config as { repo?: string }).repo;
        await thawStart(c.bundle, f.start.commit, workspace, join(workdir, runId, '.scratch'));
      }
      jobs.push({ caseId: c.caseId, trial, label: `${c.caseId}#${trial}`, job: { task: f.task, workspace, config } });
    }
  }
  return jobs;
}

/** A live run's check: the case's verify, and its own check command after it. */
function checkedVerify(f: FrozenCase): Partial<RunConfig> {
  const command = f.checks?.command;
  const verify = f.verify?.command;
  if (!command) return {};
  return { verify: verify ? `(${verify}) && (${command})` : command };
}

interface TrialReport {
  conversationId: string;
  trial: number;
  passed: boolean;
  status: string;
  reason?: string;
  /** Replay: the first turn whose tool results differ from the recording, and how. */
  divergence?: { turn: number; why: string };
  verify?: boolean | null;
  /** Files the run changed that a case check forbids, or required files it left alone. */
  checkFailures?: string[];
  turns: number;
  costUsd: number;
  tokens: number;
  wallMs?: number;
}

export interface CaseReport {
  caseId: string;
  sourceId: string;
  k: number;
  passes: number;
  passAtK: number;
  passPowK: number;
  /** The recording passed and no trial did (live), or it did not reproduce (replay). */
  regressed: boolean;
  /** Some trials passed, some not. */
  flaky: boolean;
  recorded: { passed: boolean; status: string; turns: number; costUsd: number; tokens: number; wallMs: number };
  meanCostUsd: number;
  meanTokens: number;
  meanWallMs?: number;
  meanTurns: number;
  trials: TrialReport[];
}

export interface EvalReport {
  type: 'eval';
  runId: string;
  set: string;
  mode: EvalMode;
  model?: string;
  forkAt?: number;
  k: number;
  cases: CaseReport[];
  trials: number;
  passed: number;
  passRate: number;
  interval: { low: number; high: number; level: 0.95 };
  passAtK: number;
  passPowK: number;
  regressions: string[];
  costUsd: number;
  recordedCostUsd: number;
  /** The run's cost per trial over the recording's per case (null: the recordings cost nothing). */
  costRatio: number | null;
  tokens: number;
  wallRatio: number | null;
  /** Jobs that ended for the infrastructure, not their own work. */
  infra: number;
  state?: string;
}

const DIVERGED = /diverged from \S+ at turn (\d+): ([^\n]*)/;

/** What changed between two lists of checkpoint files: every file any turn past 0 changed. */
async function changedFiles(store: Store, conversationId: string): Promise<Set<string>> {
  const files = new Set<string>();
  for (const c of await store.getCheckpoints(conversationId)) if (c.turn > 0) for (const f of c.files) files.add(f);
  return files;
}

async function gradeTrial(store: Store, f: FrozenCase, mode: EvalMode, row: BatchRow, trial: number): Promise<TrialReport> {
  const conv = await store.getConversation(row.conversationId);
  const tokens = conv?.usage.totalTokens ?? 0;
  const wallMs = conv?.finishedAt ? conv.finishedAt.getTime() - conv.createdAt.getTime() : undefined;
  const m = row.reason ? DIVERGED.exec(row.reason) : null;
  const divergence = m ? { turn: Number(m[1]), why: m[2]! } : undefined;
  const verify = row.verify ? row.verify.passed : undefined;
  let passed: boolean;
  const checkFailures: string[] = [];
  if (mode === 'replay') {
    // Reproduced: no divergence, the same end, the same verdict of the check.
    const sameVerify = !f.verify || (verify ?? null) === f.verify.passed;
    passed = !divergence && row.status === f.status && sameVerify;
  } else {
    const files = f.checks?.mustChange?.length || f.checks?.mustNotChange?.length ? await changedFiles(store, row.conversationId) : new Set<string>();
    for (const p of f.checks?.mustChange ?? []) if (!files.has(p)) checkFailures.push(`${p} must change`);
    for (const p of f.checks?.mustNotChange ?? []) if (files.has(p)) checkFailures.push(`${p} must not change`);
    passed = row.status === 'completed' && (row.verify ? verify === true : true) && !checkFailures.length;
  }
  return {
    conversationId: row.conversationId,
    trial,
    passed,
    status: row.status,
    ...(row.reason && row.status !== 'completed' ? { reason: row.reason } : {}),
    ...(divergence ? { divergence } : {}),
    ...(verify !== undefined ? { verify } : {}),
    ...(checkFailures.length ? { checkFailures } : {}),
    turns: row.turns,
    costUsd: row.costUsd,
    tokens,
    ...(wallMs !== undefined ? { wallMs } : {}),
  };
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Grade a finished batch of an eval run into its report. `jobs` are the batch's jobs, in order. */
export async function evalReport(
  store: Store,
  run: { runId: string; set: string; options: EvalRunOptions },
  cases: EvalCaseRow[],
  jobs: Pick<EvalJob, 'caseId' | 'trial'>[],
  batch: BatchResult,
): Promise<EvalReport> {
  const { options } = run;
  const reports: CaseReport[] = [];
  let infra = 0;
  for (const c of cases) {
    const trials: TrialReport[] = [];
    for (let i = 0; i < jobs.length; i++) {
      if (jobs[i]!.caseId !== c.caseId) continue;
      const row = batch.rows[i]!;
      if (row.infra) infra++;
      trials.push(await gradeTrial(store, c.frozen, options.mode, row, jobs[i]!.trial));
    }
    const k = trials.length;
    const passes = trials.filter((t) => t.passed).length;
    const f = c.frozen;
    const wall = trials.filter((t) => t.wallMs !== undefined).map((t) => t.wallMs!);
    const recordedOk = recordedPassed(f);
    reports.push({
      caseId: c.caseId,
      sourceId: c.sourceId,
      k,
      passes,
      passAtK: passAtK(passes, k),
      passPowK: passPowK(passes, k),
      regressed: options.mode === 'replay' ? passes < k : recordedOk && passes === 0,
      flaky: passes > 0 && passes < k,
      recorded: { passed: recordedOk, status: f.status, turns: f.turns, costUsd: f.costUsd, tokens: f.usage.totalTokens, wallMs: f.wallMs },
      meanCostUsd: mean(trials.map((t) => t.costUsd)),
      meanTokens: mean(trials.map((t) => t.tokens)),
      ...(wall.length ? { meanWallMs: mean(wall) } : {}),
      meanTurns: mean(trials.map((t) => t.turns)),
      trials,
    });
  }
  const all = reports.flatMap((r) => r.trials);
  const passed = all.filter((t) => t.passed).length;
  const costUsd = all.reduce((s, t) => s + t.costUsd, 0);
  const recordedCostUsd = reports.reduce((s, r) => s + r.recorded.costUsd, 0);
  const perTrialCost = reports.reduce((s, r) => s + r.meanCostUsd, 0);
  const walls = reports.filter((r) => r.meanWallMs !== undefined && r.recorded.wallMs > 0);
  const k = Math.max(0, ...reports.map((r) => r.k));
  const interval = wilson(passed, all.length);
  return {
    type: 'eval',
    runId: run.runId,
    set: run.set,
    mode: options.mode,
    ...(options.model ? { model: options.model } : {}),
    ...(options.forkAt !== undefined ? { forkAt: options.forkAt } : {}),
    k,
    cases: reports,
    trials: all.length,
    passed,
    passRate: all.length ? passed / all.length : 0,
    interval: { ...interval, level: 0.95 },
    passAtK: mean(reports.map((r) => r.passAtK)),
    passPowK: mean(reports.map((r) => r.passPowK)),
    regressions: reports.filter((r) => r.regressed).map((r) => r.caseId),
    costUsd,
    recordedCostUsd,
    costRatio: recordedCostUsd > 0 ? perTrialCost / recordedCostUsd : null,
    tokens: all.reduce((s, t) => s + t.tokens, 0),
    wallRatio: walls.length ? mean(walls.map((r) => r.meanWallMs! / r.recorded.wallMs)) : null,
    infra,
    ...(batch.state ? { state: batch.state } : {}),
  };
}

export interface GateOptions {
  minPassRate?: number;
  maxCostRatio?: number;
  noRegressions?: boolean;
}

/** The gate's verdict: the reasons it fails (none: it passes). */
export function gateFailures(r: EvalReport, g: GateOptions): string[] {
  const out: string[] = [];
  const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
  if (g.minPassRate !== undefined && r.passRate < g.minPassRate) out.push(`pass rate ${pct(r.passRate)} is below --min-pass-rate ${pct(g.minPassRate)}`);
  if (g.maxCostRatio !== undefined && r.costRatio !== null && r.costRatio > g.maxCostRatio)
    out.push(`cost ratio ${r.costRatio.toFixed(2)}× is above --max-cost-ratio ${g.maxCostRatio}×`);
  if (g.noRegressions && r.regressions.length)
    out.push(`${r.regressions.length} case${r.regressions.length === 1 ? '' : 's'} regressed (--no-regressions): ${r.regressions.join(', ')}`);
  if (r.state && r.state !== 'completed') out.push(`the run's batch ended ${r.state}: its report is incomplete`);
  return out;
}

interface CaseChange {
  caseId: string;
  a: { passes: number; k: number };
  b: { passes: number; k: number };
  change: 'fixed' | 'broken' | 'better' | 'worse' | 'same';
  pValue: number;
  significant: boolean;
}

/** Two reports of one set compared case by case, and the set's pass rate. */
export function compareReports(a: EvalReport, b: EvalReport) {
  const byId = new Map(a.cases.map((c) => [c.caseId, c]));
  const cases: CaseChange[] = [];
  for (const cb of b.cases) {
    const ca = byId.get(cb.caseId);
    if (!ca) continue;
    const rA = ca.k ? ca.passes / ca.k : 0;
    const rB = cb.k ? cb.passes / cb.k : 0;
    const { pValue, significant } = compareRates(ca.passes, ca.k, cb.passes, cb.k);
    const change = ca.passes === 0 && cb.passes > 0 ? 'fixed' : ca.passes > 0 && cb.passes === 0 ? 'broken' : rB > rA ? 'better' : rB < rA ? 'worse' : 'same';
    cases.push({ caseId: cb.caseId, a: { passes: ca.passes, k: ca.k }, b: { passes: cb.passes, k: cb.k }, change, pValue, significant });
  }
  const total = compareRates(a.passed, a.trials, b.passed, b.trials);
  return { type: 'eval_compare' as const, a: a.runId, b: b.runId, set: b.set, cases, passRateA: a.passRate, passRateB: b.passRate, ...total };
}

/** The file `eval export` writes: a set's cases without what belongs to one fleet (credentials in URLs, pools). */
export interface SetFile {
  type: 'agentrun-eval-set';
  version: 1;
  set: string;
  cases: { caseId: string; sourceId: string; frozen: FrozenCase; messages: StoredMessage[]; bundle?: string }[];
}

export function exportSet(set: string, cases: EvalCaseRow[]): SetFile {
  return {
    type: 'agentrun-eval-set',
    version: 1,
    set,
    cases: cases.map((c) => {
      const frozen: FrozenCase = JSON.parse(JSON.stringify(c.frozen));
      if (typeof frozen.config.repo === 'string') frozen.config.repo = redactUrl(frozen.config.repo);
      if (frozen.start.kind === 'repo') frozen.start.repo = redactUrl(frozen.start.repo);
      // Names of environment variables the worker passes in stay; their values were never stored.
      return { caseId: c.caseId, sourceId: c.sourceId, frozen, messages: c.messages, ...(c.bundle ? { bundle: c.bundle.toString('base64') } : {}) };
    }),
  };
}

/** A set file read back into `set` (its own name unless given); throws on a file that is not one. */
export async function importSet(store: Store, file: unknown, set?: string): Promise<{ set: string; cases: number }> {
  const f = file as Partial<SetFile>;
  if (f?.type !== 'agentrun-eval-set' || f.version !== 1 || !Array.isArray(f.cases) || typeof f.set !== 'string')
    throw new Error('not an eval set file (agentrun eval export writes them: {"type":"agentrun-eval-set","version":1,…})');
  const name = set ?? f.set;
  for (const c of f.cases) {
    await store.putEvalCase({
      set: name,
      caseId: c.caseId,
      sourceId: c.sourceId,
      frozen: c.frozen,
      messages: c.messages,
      ...(c.bundle ? { bundle: Buffer.from(c.bundle, 'base64') } : {}),
    });
  }
  return { set: name, cases: f.cases.length };
}

/** The usage a set's recordings add up to (for `eval list`). */
export function recordedUsage(cases: EvalCaseRow[]): { usage: Usage; costUsd: number } {
  return cases.reduce((s, c) => ({ usage: addUsage(s.usage, c.frozen.usage), costUsd: s.costUsd + c.frozen.costUsd }), {
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 } as Usage,
    costUsd: 0,
  });
}

/** A set's cases and its latest runs side by side (the web page): per run its summary and each case's passes of k. */
export async function evalRunsSideBySide(store: Store, set: string, limit = 8) {
  const cases = await store.getEvalCases(set);
  if (!cases.length) return null;
  const runs = (await store.listEvalRuns(set, limit)).reverse();
  return {
    set,
    cases: cases.map((c) => ({ caseId: c.caseId, recordedPassed: recordedPassed(c.frozen), turns: c.frozen.turns, costUsd: c.frozen.costUsd })),
    runs: runs.map((r) => {
      const rep = r.report as EvalReport | undefined;
      return {
        runId: r.runId,
        mode: r.mode,
        at: r.createdAt,
        ...(rep
          ? {
              model: rep.model,
              passRate: rep.passRate,
              interval: rep.interval,
              k: rep.k,
              costUsd: rep.costUsd,
              regressions: rep.regressions,
              cases: Object.fromEntries(rep.cases.map((c) => [c.caseId, { passes: c.passes, k: c.k, regressed: c.regressed }])),
            }
          : {}),
      };
    }),
  };
}
