// Waves, the brake and budget raises: the pure rules the batch and session workflows follow.
import { describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../src/config.js';
import { ZERO_USAGE } from '../../src/types.js';
import { raisedLimits } from '../../workflows/session/budget.js';
import { badKinds, isBad, overBrake, parseBrake, parseBrakeOn, parseWaves, wavePlan } from '../../workflows/batch/waves.js';

describe('waves', () => {
  it('are cumulative: counts and percentages round up, at least one job each, the last takes the rest', () => {
    expect(wavePlan(20, parseWaves('1,5%,25%,100%'))).toEqual([[0], [1], [2, 3, 4], [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]]);
    expect(wavePlan(5, parseWaves('1,3'))).toEqual([[0], [1, 2, 3, 4]]);
    expect(wavePlan(3, [])).toEqual([[0, 1, 2]]);
    // Targets past the end are cut.
    expect(wavePlan(2, parseWaves('1,5,10'))).toEqual([[0], [1]]);
  });

  it('shuffled with a seed: the same order every time, a permutation of all jobs', () => {
    const a = wavePlan(10, parseWaves('2,50%'), 7);
    expect(wavePlan(10, parseWaves('2,50%'), 7)).toEqual(a);
    expect(a.flat().sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(a.flat()).not.toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(a.map((w) => w.length)).toEqual([2, 8]);
  });

  it('lists that do not add up are refused with the reason', () => {
    expect(() => parseWaves('5,2')).toThrow(/does not go beyond/);
    expect(() => parseWaves('10%,5%')).toThrow(/does not go beyond/);
    expect(() => parseWaves('0')).toThrow(/≥ 1/);
    expect(() => parseWaves('150%')).toThrow(/outside 0–100%/);
    expect(() => parseWaves('100%,5')).toThrow(/nothing is left after 100%/);
    expect(() => parseWaves('1,,2')).toThrow(/comma-separated/);
    expect(() => parseWaves('a')).toThrow(/neither a count/);
  });
});

describe('the brake', () => {
  it('reads rates from 0% to 100% and the kinds of bad', () => {
    expect(parseBrake('20%')).toBeCloseTo(0.2);
    expect(parseBrake('0.2')).toBeCloseTo(0.2);
    expect(parseBrake('0%')).toBe(0);
    expect(parseBrake('100%')).toBe(1);
    expect(() => parseBrake('101%')).toThrow(/0% to 100%/);
    expect(() => parseBrake('-1%')).toThrow(/0% to 100%/);
    expect(parseBrakeOn('failed,empty,failed')).toEqual(['failed', 'empty']);
    expect(() => parseBrakeOn('failed,flaky')).toThrow(/--brake-on takes/);
  });

  it('counts infrastructure failures apart, and only when asked', () => {
    expect(badKinds({ status: 'failed', infra: true })).toEqual(['infra']);
    expect(isBad({ status: 'failed', infra: true }, ['failed', 'unverified'])).toBe(false);
    expect(isBad({ status: 'failed', infra: true }, ['infra'])).toBe(true);
    expect(badKinds({ status: 'failed', verify: { passed: false } })).toEqual(['failed', 'unverified']);
    expect(badKinds({ status: 'completed', diffstat: { files: 0 } })).toEqual(['empty']);
    expect(badKinds({ status: 'completed', diffstat: { files: 2 }, verify: { passed: true } })).toEqual([]);
    // A wave of 5 with a 20% brake stops starting jobs at its second bad one.
    expect(overBrake(1, 5, { rate: 0.2, on: ['failed'] })).toBe(false);
    expect(overBrake(2, 5, { rate: 0.2, on: ['failed'] })).toBe(true);
  });
});

describe('budget raise', () => {
  const config = runConfigSchema.parse({ model: 'm', maxTurns: 5, maxCostUsd: 1 });
  const spent = { turn: 5, usage: { ...ZERO_USAGE, totalTokens: 900 }, costUsd: 0.9, activeMs: 60_000 };
  it('adds to the cost limit, sets the others, keeps what it is not given', () => {
    expect(raisedLimits(config, spent, { addCostUsd: 2, maxTurns: 9 })).toEqual({ maxTurns: 9, maxCostUsd: 3, maxTokens: undefined, maxTimeMs: undefined });
    expect(raisedLimits(config, spent, { maxTokens: 5000, maxTimeMs: 120_000 })).toMatchObject({
      maxTurns: 5,
      maxCostUsd: 1,
      maxTokens: 5000,
      maxTimeMs: 120_000,
    });
  });
  it('never below what was spent, never nothing, never both cost forms', () => {
    expect(() => raisedLimits(config, spent, { maxCostUsd: 0.5 })).toThrow(/below what was already spent \(\$0\.9000\)/);
    expect(() => raisedLimits(config, spent, { maxTurns: 4 })).toThrow(/below the turns already taken \(5\)/);
    expect(() => raisedLimits(config, spent, { maxTokens: 100 })).toThrow(/below what was already used/);
    expect(() => raisedLimits(config, spent, { maxTimeMs: 1000 })).toThrow(/below the time already spent/);
    expect(() => raisedLimits(config, spent, {})).toThrow(/nothing to raise/);
    expect(() => raisedLimits(config, spent, { maxCostUsd: 2, addCostUsd: 1 })).toThrow(/not both/);
    expect(() => raisedLimits(config, spent, { addCostUsd: -1 })).toThrow(/≥ 0/);
  });
});
