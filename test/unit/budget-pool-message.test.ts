// What a job its shared budget holds says: which budget, by how much, and the command that raises it.
import { describe, expect, it } from 'vitest';
import { poolEmpty } from '../../src/model/budget-pool.js';

describe('a budget with no room for a call', () => {
  it('names the batch budget, what is missing and its raise', () => {
    const m = poolEmpty({ limitUsd: 0.004, spentUsd: 0.0011, reservedUsd: 0.002 }, 'batch:nightly-1', 0.0021).message;
    expect(m).toBe(
      "the budget of batch nightly-1 is $0.01 short of this model call's reservation ($0.0021; $0.0009 left of $0.0040: $0.0011 spent, $0.0020 reserved by calls in flight): agentrun batch raise-budget nightly-1 --add 0.01",
    );
  });

  it('says a budget is smaller than one call, so that a raise of less would not help', () => {
    const m = poolEmpty({ limitUsd: 0.001, spentUsd: 0, reservedUsd: 0 }, 'schedule:weekly:2026-11', 0.0123).message;
    expect(m).toContain("the 2026-11 budget of schedule weekly ($0.0010) is smaller than one model call's reservation ($0.0123)");
    expect(m).toContain('raised by at least $0.02: agentrun schedule raise-budget weekly --add 0.02 --month 2026-11');
  });
});
