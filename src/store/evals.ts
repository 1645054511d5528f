// Golden sets of frozen cases and the runs of a set (`agentrun eval`). A case holds what its
// conversation started from, what it was told, how it was checked and what it did (the recorded
// answers and tool results), so a set outlives gc and its sources' removal.
import type { StoredMessage, Usage } from '../types.js';
import { json, text } from './rows.js';
import { Tables } from './tables.js';

/** Where a case's workspace starts: a repository at a commit, or turn 0's tree of a local workspace (a git bundle). */
type CaseStart = { kind: 'repo'; repo: string; ref: string } | { kind: 'bundle'; commit: string };

/** A per-case check besides verify (live runs): a command that must pass, files that must or must not change. */
export interface CaseChecks {
  command?: string;
  mustChange?: string[];
  mustNotChange?: string[];
}

/** What a case froze of its source conversation. */
export interface FrozenCase {
  task: string;
  /** The source's run options (its model included), as stored; `eval export` leaves out what belongs to one fleet. */
  config: Record<string, unknown>;
  start: CaseStart;
  /** The source's workspace path: its tool results name it, and a replay reads it as its own. */
  workspace: string;
  /** The verify command and its last outcome (null: never ran). */
  verify?: { command: string; passed: boolean | null; exitCode: number | null };
  setup?: string[];
  status: string;
  reason?: string;
  turns: number;
  usage: Usage;
  costUsd: number;
  wallMs: number;
  checks?: CaseChecks;
}

export interface EvalCaseRow {
  set: string;
  caseId: string;
  sourceId: string;
  frozen: FrozenCase;
  messages: StoredMessage[];
  bundle?: Buffer;
  createdAt: Date;
}

export interface EvalRunRow {
  runId: string;
  set: string;
  mode: string;
  options: Record<string, unknown>;
  report?: unknown;
  createdAt: Date;
  finishedAt?: Date;
}

const toCase = (r: any): EvalCaseRow => ({
  set: r.set_name,
  caseId: r.case_id,
  sourceId: r.source_id,
  frozen: r.frozen,
  messages: r.messages,
  ...(r.bundle ? { bundle: r.bundle as Buffer } : {}),
  createdAt: r.created_at,
});

const toRun = (r: any): EvalRunRow => ({
  runId: r.run_id,
  set: r.set_name,
  mode: r.mode,
  options: r.options,
  ...(r.report != null ? { report: r.report } : {}),
  createdAt: r.created_at,
  ...(r.finished_at != null ? { finishedAt: r.finished_at } : {}),
});

export abstract class EvalTables extends Tables {
  /** Idempotent: adding the same conversation to a set again refreshes its case. */
  async putEvalCase(c: Omit<EvalCaseRow, 'createdAt'>): Promise<void> {
    await this.pool.query(
      `INSERT INTO eval_cases (set_name, case_id, source_id, frozen, messages, bundle) VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6)
       ON CONFLICT (set_name, case_id) DO UPDATE SET source_id = EXCLUDED.source_id, frozen = EXCLUDED.frozen,
         messages = EXCLUDED.messages, bundle = EXCLUDED.bundle`,
      [c.set, c.caseId, c.sourceId, json(c.frozen), json(c.messages.map((m) => ({ ...m, content: text(m.content) }))), c.bundle ?? null],
    );
  }

  /** A set's cases, in the order they were added. */
  async getEvalCases(set: string): Promise<EvalCaseRow[]> {
    const { rows } = await this.pool.query('SELECT * FROM eval_cases WHERE set_name = $1 ORDER BY created_at, case_id', [set]);
    return rows.map(toCase);
  }

  /** What a replay of a case reads every turn: its answers and tool results, its source's workspace, its version; never its (possibly large) bundle. */
  async getEvalRecording(
    set: string,
    caseId: string,
  ): Promise<{ messages: StoredMessage[]; workspace: string; config: Record<string, unknown>; createdAt: Date } | null> {
    const { rows } = await this.pool.query(
      `SELECT messages, frozen->>'workspace' AS workspace, frozen->'config' AS config, created_at FROM eval_cases WHERE set_name = $1 AND case_id = $2`,
      [set, caseId],
    );
    return rows[0] ? { messages: rows[0].messages, workspace: rows[0].workspace, config: rows[0].config ?? {}, createdAt: rows[0].created_at } : null;
  }

  /** Every set with its number of cases. */
  async listEvalSets(): Promise<{ set: string; cases: number }[]> {
    const { rows } = await this.pool.query<{ set_name: string; n: string }>(
      'SELECT set_name, count(*) AS n FROM eval_cases GROUP BY set_name ORDER BY set_name',
    );
    return rows.map((r) => ({ set: r.set_name, cases: Number(r.n) }));
  }

  /** Recorded when the run starts (its report still empty); a repeated call keeps the first. */
  async putEvalRun(r: Pick<EvalRunRow, 'runId' | 'set' | 'mode' | 'options'>): Promise<void> {
    await this.pool.query('INSERT INTO eval_runs (run_id, set_name, mode, options) VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT (run_id) DO NOTHING', [
      r.runId,
      r.set,
      r.mode,
      json(r.options),
    ]);
  }

  async finishEvalRun(runId: string, report: unknown): Promise<void> {
    await this.pool.query('UPDATE eval_runs SET report = $2::jsonb, finished_at = COALESCE(finished_at, now()) WHERE run_id = $1', [runId, json(report)]);
  }

  async getEvalRun(runId: string): Promise<EvalRunRow | null> {
    const { rows } = await this.pool.query('SELECT * FROM eval_runs WHERE run_id = $1', [runId]);
    return rows[0] ? toRun(rows[0]) : null;
  }

  /** A set's runs, newest first. */
  async listEvalRuns(set: string, limit = 20): Promise<EvalRunRow[]> {
    const { rows } = await this.pool.query('SELECT * FROM eval_runs WHERE set_name = $1 ORDER BY created_at DESC LIMIT $2', [set, limit]);
    return rows.map(toRun);
  }
}
