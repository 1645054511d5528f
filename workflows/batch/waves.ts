// A batch's rollout in waves and its brake: pure functions shared by the batch workflow
// (rollout.ts) and the CLI that checks the flags. Deterministic: no clock, no Math.random.

/** One entry of `--waves`: where the rollout stands after this wave, as a count of jobs or a percentage of them. */
export type WaveTarget = { count: number } | { percent: number };

export type BrakeKind = 'failed' | 'unverified' | 'empty' | 'infra';
const BRAKE_KINDS: readonly BrakeKind[] = ['failed', 'unverified', 'empty', 'infra'];
export const DEFAULT_BRAKE_ON: readonly BrakeKind[] = ['failed', 'unverified'];

export interface Brake {
  /** The highest rate of bad jobs a wave may have, 0 to 1 (`--brake 20%` is 0.2). */
  rate: number;
  on: BrakeKind[];
}

/**
 * `1,5%,25%,100%`: cumulative targets, each beyond the one before (a count, or a percentage up to
 * 100); the last wave takes whatever is left. An Error says what does not add up.
 */
export function parseWaves(text: string): WaveTarget[] {
  const items = text.split(',').map((s) => s.trim());
  if (!items.length || items.some((s) => s === '')) throw new Error(`--waves must be a comma-separated list such as 1,5%,25%,100%, got "${text}"`);
  const out: WaveTarget[] = [];
  let lastPercent = 0;
  let lastCount = 0;
  for (const item of items) {
    const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(item);
    if (!m) throw new Error(`--waves: "${item}" is neither a count of jobs nor a percentage (such as 5 or 25%)`);
    const n = Number(m[1]);
    if (m[2]) {
      if (n <= 0 || n > 100) throw new Error(`--waves: ${item} is outside 0–100%`);
      if (n <= lastPercent) throw new Error(`--waves: ${item} does not go beyond the wave before it (waves are cumulative: 1,5%,25%,100%)`);
      lastPercent = n;
      out.push({ percent: n });
    } else {
      if (!Number.isInteger(n) || n <= 0) throw new Error(`--waves: ${item} must be a whole number of jobs ≥ 1`);
      if (n <= lastCount) throw new Error(`--waves: ${item} does not go beyond the wave before it (waves are cumulative: 1,5,25,100%)`);
      lastCount = n;
      out.push({ count: n });
    }
    if (lastPercent === 100 && out.length < items.length) throw new Error(`--waves: nothing is left after 100% for "${items.slice(out.length).join(',')}"`);
  }
  return out;
}

/** `20%` (or `0.2`, `20`) as a rate from 0 to 1; outside 0–100% is an Error. */
export function parseBrake(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(text.trim());
  const n = m ? Number(m[1]) : Number.NaN;
  const rate = m && (m[2] || n > 1) ? n / 100 : n;
  if (!m || !Number.isFinite(rate) || rate < 0 || rate > 1) throw new Error(`--brake must be a rate of bad jobs from 0% to 100% (such as 20%), got "${text}"`);
  return rate;
}

export function parseBrakeOn(text: string): BrakeKind[] {
  const kinds = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = kinds.filter((k) => !BRAKE_KINDS.includes(k as BrakeKind));
  if (!kinds.length || unknown.length) throw new Error(`--brake-on takes ${BRAKE_KINDS.join(', ')} (comma-separated), got "${text}"`);
  return [...new Set(kinds)] as BrakeKind[];
}

/**
 * The waves over `jobs` rows: each a list of row indices, in start order. Targets round up, every
 * wave has at least one row, targets past the end are cut, and the last wave takes the rest. The
 * order is the file's, or a permutation seeded by `shuffleSeed`.
 */
export function wavePlan(jobs: number, targets: WaveTarget[], shuffleSeed?: number): number[][] {
  const order = Array.from({ length: jobs }, (_, i) => i);
  if (shuffleSeed !== undefined) shuffle(order, shuffleSeed);
  const waves: number[][] = [];
  let done = 0;
  for (const t of targets) {
    if (done >= jobs) break;
    const target = 'count' in t ? t.count : Math.ceil((t.percent * jobs) / 100);
    const end = Math.min(jobs, Math.max(target, done + 1));
    waves.push(order.slice(done, end));
    done = end;
  }
  if (done < jobs) {
    if (waves.length && targets.length) waves[waves.length - 1]!.push(...order.slice(done));
    else waves.push(order.slice(done));
  }
  return waves;
}

/** Fisher–Yates with mulberry32: the same seed gives the same order on every replay and every machine. */
function shuffle(a: number[], seed: number): void {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
}

/** What a finished job was, for the brake: infrastructure failures apart from the job's own. */
export interface JobOutcome {
  status: string;
  infra?: boolean;
  verify?: { passed: boolean | null };
  diffstat?: { files: number };
}

/** The brake's kinds this job counts as (an infrastructure failure counts only as `infra`). */
export function badKinds(row: JobOutcome): BrakeKind[] {
  if (row.infra) return ['infra'];
  const kinds: BrakeKind[] = [];
  if (row.status !== 'completed') kinds.push('failed');
  if (row.verify?.passed === false) kinds.push('unverified');
  if (row.status === 'completed' && !row.diffstat?.files) kinds.push('empty');
  return kinds;
}

export const isBad = (row: JobOutcome, on: readonly BrakeKind[]) => badKinds(row).some((k) => on.includes(k));

/** More bad jobs than the brake allows of a wave of `planned` jobs: no new job of the wave starts. */
export const overBrake = (bad: number, planned: number, brake: Brake) => bad > brake.rate * planned;
