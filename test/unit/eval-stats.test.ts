// The statistics of an eval report: pass@k and pass^k against their definitions (drawing k of n
// trials without replacement, counted exhaustively), the Wilson interval against known values and
// its bounds, Fisher's exact test against the hypergeometric distribution.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareRates, fisherExact, passAtK, passPowK, wilson } from '../../src/client/eval-stats.js';

/** Every k-subset of n trials of which the first c passed: the share with any pass, and with all passing. */
function bySubsets(c: number, n: number, k: number): { any: number; all: number } {
  let subsets = 0;
  let any = 0;
  let all = 0;
  const walk = (from: number, picked: number[]) => {
    if (picked.length === k) {
      subsets++;
      const passes = picked.filter((i) => i < c).length;
      if (passes > 0) any++;
      if (passes === k) all++;
      return;
    }
    for (let i = from; i < n; i++) walk(i + 1, [...picked, i]);
  };
  walk(0, []);
  return { any: any / subsets, all: all / subsets };
}

describe('pass@k and pass^k', () => {
  it('with k = n: pass@k is 1 when any trial passed, pass^k only when all did', () => {
    expect([0, 1, 2, 3].map((c) => passAtK(c, 3))).toEqual([0, 1, 1, 1]);
    expect([0, 1, 2, 3].map((c) => passPowK(c, 3))).toEqual([0, 0, 0, 1]);
  });

  it('equal the share of k-subsets of the n trials with any (all) passing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }), fc.integer({ min: 1, max: n }))),
        ([n, c, k]) => {
          const exact = bySubsets(c, n, k);
          expect(passAtK(c, n, k)).toBeCloseTo(exact.any, 10);
          expect(passPowK(c, n, k)).toBeCloseTo(exact.all, 10);
          expect(passPowK(c, n, k)).toBeLessThanOrEqual(passAtK(c, n, k) + 1e-12);
        },
      ),
    );
  });
});

describe('Wilson interval', () => {
  it('matches published values', () => {
    // 8 of 10 at 95%: 0.4902–0.9433 (Wilson 1927; e.g. Newcombe 1998, table I).
    const w = wilson(8, 10);
    expect(w.low).toBeCloseTo(0.4902, 3);
    expect(w.high).toBeCloseTo(0.9433, 3);
    // 0 of 10: the interval still leaves room above 0 (0–0.2775).
    expect(wilson(0, 10).low).toBe(0);
    expect(wilson(0, 10).high).toBeCloseTo(0.2775, 3);
    expect(wilson(0, 0)).toEqual({ low: 0, high: 1 });
  });

  it('holds the observed rate, stays in [0, 1] and narrows with more trials', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }))),
        ([n, s]) => {
          const w = wilson(s, n);
          expect(w.low).toBeGreaterThanOrEqual(0);
          expect(w.high).toBeLessThanOrEqual(1);
          expect(w.low).toBeLessThanOrEqual(s / n + 1e-12);
          expect(w.high).toBeGreaterThanOrEqual(s / n - 1e-12);
          const wider = wilson(s * 4, n * 4);
          expect(wider.high - wider.low).toBeLessThan(w.high - w.low + 1e-12);
        },
      ),
    );
  });
});

describe("Fisher's exact test", () => {
  it('matches the textbook tea-tasting table and is 1 for equal counts', () => {
    // 3 of 4 against 1 of 4: two-sided p = 0.4857.
    expect(fisherExact(3, 4, 1, 4)).toBeCloseTo(0.4857, 4);
    expect(fisherExact(2, 5, 2, 5)).toBeCloseTo(1, 10);
    // 15 of 15 against 0 of 15 is beyond noise; 3 of 3 against 0 of 3 is not (p = 0.1).
    expect(compareRates(15, 15, 0, 15).significant).toBe(true);
    expect(fisherExact(3, 3, 0, 3)).toBeCloseTo(0.1, 10);
    expect(compareRates(3, 3, 0, 3).significant).toBe(false);
  });

  it('is a probability, symmetric in the two runs', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 30 })
          .chain((nA) =>
            fc
              .integer({ min: 1, max: 30 })
              .chain((nB) => fc.tuple(fc.constant(nA), fc.integer({ min: 0, max: nA }), fc.constant(nB), fc.integer({ min: 0, max: nB }))),
          ),
        ([nA, a, nB, b]) => {
          const p = fisherExact(a, nA, b, nB);
          expect(p).toBeGreaterThan(0);
          expect(p).toBeLessThanOrEqual(1);
          expect(fisherExact(b, nB, a, nA)).toBeCloseTo(p, 9);
        },
      ),
    );
  });
});
