import { describe, expect, it } from 'vitest';
import { outcomeOf, outcomePhrase } from '../../src/client/outcome.js';
import type { ConversationResult } from '../../workflows/api.js';

const result = (branch: Partial<NonNullable<ConversationResult['branch']>> | undefined): ConversationResult =>
  ({
    status: 'completed',
    turns: 2,
    costUsd: 0,
    ...(branch
      ? {
          branch: {
            branch: 'agentrun/fix',
            commit: 'abcdef0123456789',
            base: '0000000',
            pushed: true,
            diffstat: { files: 1, insertions: 2, deletions: 0 },
            ...branch,
          },
        }
      : {}),
  }) as unknown as ConversationResult;

describe('the outcome on one list line', () => {
  it('names the branch, the short commit, pushed and verified', () => {
    expect(outcomePhrase(outcomeOf(result({ verified: true })))).toBe('agentrun/fix@abcdef0 pushed verified');
    expect(outcomePhrase(outcomeOf(result({ pushed: false, verified: false })))).toBe('agentrun/fix@abcdef0 not pushed unverified');
    expect(outcomePhrase(outcomeOf(result({})))).toBe('agentrun/fix@abcdef0 pushed');
  });
  it('says when the job changed nothing, and nothing without a branch', () => {
    expect(outcomePhrase(outcomeOf(result({ empty: true })))).toBe('no change');
    expect(outcomePhrase(outcomeOf(result(undefined)))).toBe('');
    expect(outcomePhrase(undefined)).toBe('');
  });
});
