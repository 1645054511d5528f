// The statistics of an eval run (`agentrun eval`): per case pass@k and pass^k over its trials,
// for the set a pass rate with its Wilson interval, and whether two runs differ beyond noise.
// Pure functions of counts: what a report says can be checked by hand.

/** C(n, k) as a float (k ≤ n; 0 otherwise). */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/**
 * pass@k: the chance that at least one of k trials drawn from the n run passes, c of them having
 * passed (the unbiased estimator of Chen et al.; with n = k it is 1 when any trial passed).
 */
export function passAtK(c: number, n: number, k: number = n): number {
  if (n <= 0 || k <= 0) return 0;
  if (n - c < k) return 1;
  return 1 - choose(n - c, k) / choose(n, k);
}

/** pass^k: the chance that all of k trials drawn from the n run pass (with n = k: 1 only when every trial passed). */
export function passPowK(c: number, n: number, k: number = n): number {
  if (n <= 0 || k <= 0 || c < k) return 0;
  return choose(c, k) / choose(n, k);
}

/** The Wilson score interval of a proportion (95% by default): honest at 0, at 1 and for few trials, where the normal one is not. */
export function wilson(successes: number, n: number, z = 1.959964): { low: number; high: number } {
  if (n <= 0) return { low: 0, high: 1 };
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** ln C(n, k), for the hypergeometric tails without overflow. */
function logChoose(n: number, k: number): number {
  let r = 0;
  for (let i = 1; i <= k; i++) r += Math.log(n - k + i) - Math.log(i);
  return r;
}

/**
 * Fisher's exact test, two-sided: the p-value that a passed in runA of nA and b passed of nB come
 * from one pass rate. Exact for the few trials a case has, where a normal approximation is not.
 */
export function fisherExact(a: number, nA: number, b: number, nB: number): number {
  const passes = a + b;
  const n = nA + nB;
  const lo = Math.max(0, passes - nB);
  const hi = Math.min(passes, nA);
  const prob = (x: number) => Math.exp(logChoose(nA, x) + logChoose(nB, passes - x) - logChoose(n, passes));
  const observed = prob(a);
  let p = 0;
  for (let x = lo; x <= hi; x++) {
    const q = prob(x);
    // The relative tolerance keeps tables as likely as the observed one (floating error) in the tail.
    if (q <= observed * (1 + 1e-7)) p += q;
  }
  return Math.min(1, p);
}

/** Two runs' pass counts compared: the change in rate, and whether it is beyond noise at `alpha`. */
export function compareRates(a: number, nA: number, b: number, nB: number, alpha = 0.05): { delta: number; pValue: number; significant: boolean } {
  const delta = (nB ? b / nB : 0) - (nA ? a / nA : 0);
  const pValue = fisherExact(a, nA, b, nB);
  return { delta, pValue, significant: pValue < alpha };
}
