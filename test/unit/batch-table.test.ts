// The batch table's verify column: only when a job ran the repository's check, with "was failing
// before" from the baseline run.
import { describe, expect, it } from 'vitest';
import { formatBatchTable } from '../../src/cli/fleet.js';
import { batchTotals, type BatchRow } from '../../workflows/batch/api.js';

const row = (repo: string, extra: Partial<BatchRow> = {}): BatchRow => ({
  repo,
  conversationId: `b-${repo}`,
  status: 'completed',
  turns: 3,
  costUsd: 0,
  ...extra,
});

describe('the batch table', () => {
  it('has no verify column when no job verified', () => {
    const rows = [row('a'), row('b')];
    expect(formatBatchTable({ batchId: 'b', rows, totals: batchTotals(rows) }).split('\n')[0]).not.toContain('verify');
  });

  it('tells passed, failed after its runs, and failing before the agent started', () => {
    const rows = [
      row('repo-ok', { verify: { passed: true, exitCode: 0, attempts: 1, failingBefore: false } }),
      row('repo-broken', { status: 'failed', reason: 'verification failed', verify: { passed: false, exitCode: 1, attempts: 3, failingBefore: false } }),
      row('repo-old', { status: 'failed', reason: 'verification failed', verify: { passed: false, exitCode: 2, attempts: 3, failingBefore: true } }),
      row('repo-none'),
    ];
    const lines = formatBatchTable({ batchId: 'b', rows, totals: batchTotals(rows) }).split('\n');
    expect(lines[0]).toMatch(/diffstat\s+verify\s+turns/);
    expect(lines.find((l) => l.startsWith('repo-ok'))).toContain('passed; passed before');
    expect(lines.find((l) => l.startsWith('repo-broken'))).toContain('failed (exit 1, 3 runs); passed before');
    expect(lines.find((l) => l.startsWith('repo-old'))).toContain('failed (exit 2, 3 runs); was failing before');
  });

  it('counts one file, one job and one turn in the singular', () => {
    const rows = [row('one', { turns: 1, branch: 'agentrun/x', pushed: true, diffstat: { files: 1, insertions: 2, deletions: 0 } })];
    const text = formatBatchTable({ batchId: 'b', rows, totals: batchTotals(rows) });
    expect(text).toContain('1 file +2 -0');
    expect(text).toContain('1 job: ');
    expect(text).toContain('1 turn;');
    expect(text).not.toMatch(/\b1 (files|jobs|turns)\b/);
  });

  it("keeps a job's multi-line error on one line, whole words", () => {
    const reason = "cannot clone: fatal: repository '/srv/gone.git' does not exist\nfatal: Could not read from remote repository.";
    const rows = [row('gone', { status: 'failed', reason })];
    const line = formatBatchTable({ batchId: 'b', rows, totals: batchTotals(rows) })
      .split('\n')
      .find((l) => l.startsWith('gone'));
    expect(line).toContain("failed (cannot clone: fatal: repository '/srv/gone.git' does not exist fatal: Could not read from remote repository.)");
  });

  it('names each job by its conversation id, which inspect, watch and rerun take', () => {
    const rows = [row('repo-a'), row('repo-b', { status: 'failed', reason: 'x' })];
    const lines = formatBatchTable({ batchId: 'b', rows, totals: batchTotals(rows) }).split('\n');
    expect(lines[0]).toMatch(/^repository\s+conversation\s+status/);
    expect(lines.find((l) => l.startsWith('repo-a'))).toMatch(/^repo-a\s+b-repo-a\s+completed/);
  });

  it('says a resumed batch ran to its end, its jobs, and the halt as past', () => {
    const rows = [row('a'), row('b', { status: 'failed', reason: 'x' })];
    const table = (extra: object) => formatBatchTable({ batchId: 'b', rows, totals: batchTotals(rows), ...extra }).split('\n');
    const resumed = table({ state: 'completed', reason: 'wave 1: 1 of 2 jobs bad (50% > brake 0%, on failed)' });
    expect(resumed).toContain(
      'state: completed (1 of 2 jobs completed, 1 failed; resumed after it halted at wave 1: 1 of 2 jobs bad (50% > brake 0%, on failed))',
    );
    expect(table({ state: 'completed' })).toContain('state: completed (1 of 2 jobs completed, 1 failed)');
    expect(table({ state: 'halted', reason: 'wave 1: 1 of 2 jobs bad' })).toContain('state: halted (wave 1: 1 of 2 jobs bad)');
  });

  it('says whole which budget holds a job and by how much, under the table', () => {
    const reason =
      "the budget of batch b is $0.01 short of this model call's reservation ($0.0021; $0.0009 left of $0.0040: $0.0011 spent, $0.0020 reserved by calls in flight): agentrun batch raise-budget b --add 0.01";
    const rows = [row('held', { status: 'awaiting_budget', reason }), row('done')];
    const lines = formatBatchTable({ batchId: 'b', rows, totals: batchTotals(rows) }).split('\n');
    expect(lines.find((l) => l.startsWith('held'))).toMatch(/^held\s+b-held\s+awaiting_budget\s/);
    expect(lines).toContain('1 awaiting the budget:');
    expect(lines).toContain(`  held: ${reason}`);
  });
});
