// The lines the Temporal UI shows for a session (workflows/summaries.ts).
import { describe, expect, it } from 'vitest';
import { activitySummary, currentDetails, sessionStartMetadata, workflowSummary } from '../../workflows/summaries.js';

describe('summaries', () => {
  it('names each activity by its turn and what it does, on one line', () => {
    expect(activitySummary.model(12, 'gpt-4o')).toBe('turn 12 · model gpt-4o');
    expect(activitySummary.model(3, 'scripted:/tmp/run/agentrun-script-x/script.yaml', true)).toBe('turn 3 · model scripted:script.yaml (pruned harder)');
    expect(activitySummary.tool(12, 'execute_command npm test')).toBe('turn 12 · execute_command npm test');
    const long = activitySummary.tool(1, `execute_command ${'x'.repeat(300)}\nsecond line`);
    expect(long).toHaveLength(100);
    expect(long.endsWith('…')).toBe(true);
    expect(activitySummary.checkpoint(4, 'off the host')).toBe('checkpoint turn 4 → off the host');
  });

  it('sums a workflow up by its task’s first line and where it works', () => {
    expect(workflowSummary('\nFix the flaky test\nin detail', { repo: 'https://git.example/app.git', branch: 'agentrun/x' })).toBe(
      'Fix the flaky test · https://git.example/app.git @ agentrun/x',
    );
    expect(workflowSummary('Read a.txt', { workspace: '/ws', agent: 'reader' })).toBe('reader: Read a.txt · /ws');
    const meta = sessionStartMetadata({ task: 'Do it\nwell', workspace: '/ws', config: { model: 'gpt-4o' } });
    expect(meta).toEqual({ staticSummary: 'Do it · /ws', staticDetails: '**model** gpt-4o  \n**workspace** /ws\n\nDo it\nwell' });
    // The branch as it will be named, not its template.
    const start = { id: 'c-7', atMs: Date.UTC(2026, 10, 23) };
    const repo = { model: 'm', repo: 'https://git.example/app.git' };
    expect(sessionStartMetadata({ task: 'Fix', workspace: repo.repo, config: { ...repo, branch: 'nightly/{{date}}/{{id}}' } }, start).staticSummary).toBe(
      'Fix · https://git.example/app.git @ nightly/2026-11-23/c-7',
    );
    expect(sessionStartMetadata({ task: 'Fix', workspace: repo.repo, config: repo }, start).staticSummary).toBe(
      'Fix · https://git.example/app.git @ agentrun/c-7',
    );
  });

  it('shows the current details: turn, status, cost so far, what it waits for', () => {
    expect(currentDetails({ turn: 4, status: 'waiting', costUsd: 0.0123, totalTokens: 5000, waitingFor: 'approval of execute_command rm -rf build' })).toBe(
      '**turn** 4 · **status** waiting · **cost** $0.0123 · **tokens** 5000 · **waiting for** approval of execute_command rm -rf build',
    );
  });
});
