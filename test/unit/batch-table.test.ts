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
});
