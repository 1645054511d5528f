// Checkpoint diffs for `inspect` wherever it runs. The private repository under this machine's
// AGENTRUN_HOME has them when this machine ran the conversation; from any other machine, or for the
// turns made after the workspace moved to another host, a local workspace's diffs come from its
// off-host checkpoints: the bundles in the store (src/workspace/offhost.ts), unbundled into a
// scratch bare repository of our own under AGENTRUN_HOME (removed after) and shown from there as
// from a private repository. Repository jobs keep theirs as refs on the job's remote: inspect names the
// ref instead of fetching it. git runs with its fixed configuration (src/workspace/git.ts) on no
// work tree: of what the agent wrote, only the objects themselves are read.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Store } from '../store/index.js';
import { MAX_DIFF_BYTES, privateGitDir, showCommit } from './checkpoint.js';
import { git, redactUrl } from './git.js';
import { bundleBaseParts, bytesFromEnv, sizeText } from './offhost.js';
import { turnRef } from './routing.js';
import { type StoredBundle, unbundleInto } from './unbundle.js';

/** AGENTRUN_INSPECT_MAX_BUNDLE_BYTES: the most bundle bytes (base included) `inspect` fetches from the store for diffs (default 256 MiB). */
const DEFAULT_INSPECT_MAX_BUNDLE_BYTES = 256 * 1024 * 1024;
function inspectMaxBundleBytes(): number {
  return bytesFromEnv('AGENTRUN_INSPECT_MAX_BUNDLE_BYTES', DEFAULT_INSPECT_MAX_BUNDLE_BYTES);
}

/** A row of store.getBundledCommits. */
interface BundledCommit {
  turn: number;
  commit: string;
  bytes: number;
  skipped?: true;
  base?: string;
}

export interface DiffSource {
  conversationId: string;
  /** This process's AGENTRUN_HOME: its private repositories are read first; the scratch repository goes under it. */
  home: string;
  /** Directories whose private repository (under `home`) may hold the commits: where the workspace was first placed, where it is now. */
  dirs: string[];
  /** A repository job's remote: its off-host checkpoints are refs there, not bundles. */
  repo?: string;
  /** The host holding the workspace now, for the messages. */
  host?: string;
  /** A sub-agent: its checkpoints are made in its parent's workspace and never leave that host. */
  subagent?: boolean;
  /** The conversation's bundles, oldest first (store.getBundledCommits). */
  bundled: BundledCommit[];
}

type DiffStore = Pick<Store, 'getCheckpointBundle' | 'getBundleBase' | 'getBundleBasePart'>;

/** Scratch repositories left by an inspect that was killed are removed by a later one after this long. */
const STALE_SCRATCH_MS = 24 * 3600_000;

/** git processes at once (a conversation may have hundreds of turns). */
const CONCURRENCY = 4;

/**
 * The patch of each checkpoint (its turn's commit), or one line saying why there is none here and
 * where it is. In the order of `checkpoints`.
 */
export async function checkpointDiffs(
  store: DiffStore,
  source: DiffSource,
  checkpoints: { turn: number; commit: string }[],
  opts: { maxBundleBytes?: number; maxDiffBytes?: number } = {},
): Promise<string[]> {
  const out: (string | undefined)[] = checkpoints.map((c) => (isCommitId(c.commit) ? undefined : `(diff unavailable: ${c.commit} is not a commit id)`));
  const maxDiff = opts.maxDiffBytes ?? MAX_DIFF_BYTES;
  const missing = () => checkpoints.flatMap((c, i) => (out[i] === undefined ? [i] : []));
  // This machine's private repositories first: where the workspace was placed, where it is now.
  for (const dir of new Set(source.dirs)) {
    const gitDir = privateGitDir(source.home, dir);
    if (missing().length && existsSync(gitDir)) await showPresent(gitDir, checkpoints, missing(), out, maxDiff);
  }
  const left = missing();
  if (left.length === 0) return out as string[];
  if (source.repo !== undefined) {
    for (const i of left) out[i] = onRemote(source, checkpoints[i]!);
    return out as string[];
  }
  await fromBundles(store, source, checkpoints, left, out, opts.maxBundleBytes ?? inspectMaxBundleBytes(), maxDiff);
  return out as string[];
}

function isCommitId(s: string): boolean {
  return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(s);
}

/** Show the commits of `which` that `gitDir` has (one cat-file for all), into `out`. */
async function showPresent(gitDir: string, checkpoints: { commit: string }[], which: number[], out: (string | undefined)[], maxDiff: number): Promise<void> {
  const listed = await git(['cat-file', '--batch-check'], { gitDir, input: which.map((i) => checkpoints[i]!.commit).join('\n') + '\n' }).catch(() => '');
  const present = new Set(
    listed
      .split('\n')
      .map((l) => l.split(' '))
      .filter((f) => f[1] === 'commit')
      .map((f) => f[0]),
  );
  const todo = which.filter((i) => present.has(checkpoints[i]!.commit));
  for (let k = 0; k < todo.length; k += CONCURRENCY)
    await Promise.all(
      todo.slice(k, k + CONCURRENCY).map(async (i) => {
        out[i] = await showCommit(gitDir, checkpoints[i]!.commit, maxDiff).catch((e: Error) => `(diff unavailable: ${e.message})`);
      }),
    );
}

/** A repository job's turn: where its commit is. */
function onRemote(source: DiffSource, cp: { turn: number; commit: string }): string {
  const remote = redactUrl(source.repo!);
  const ref = turnRef(source.conversationId, cp.turn);
  return `(diff not here: turn ${cp.turn}'s commit ${cp.commit.slice(0, 12)} is on the job's remote ${remote} as ${ref} (on the workers' AGENTRUN_CHECKPOINT_REMOTE instead, if they set one): git fetch ${remote} ${ref} && git show ${cp.commit})`;
}

/** The diffs of `left` from the store's bundles (the base and the incremental ones up to the newest needed), into `out`. */
async function fromBundles(
  store: DiffStore,
  source: DiffSource,
  checkpoints: { turn: number; commit: string }[],
  left: number[],
  out: (string | undefined)[],
  maxBundleBytes: number,
  maxDiff: number,
): Promise<void> {
  const notHere = `not under this AGENTRUN_HOME (${source.home})`;
  const worker = source.host ? `the worker on host ${source.host}, which holds the workspace` : 'the worker that ran it';
  const fill = (line: string) => {
    for (const i of left) out[i] ??= `(diff unavailable: ${line})`;
  };
  // Bundles stop at the first skipped one (above its cap): none is stored after it.
  const skippedAt = source.bundled.findIndex((b) => b.skipped);
  const kept = skippedAt < 0 ? source.bundled : source.bundled.slice(0, skippedAt);
  const skipped = skippedAt < 0 ? undefined : source.bundled[skippedAt]!;
  const noOffHost = skipped
    ? `${notHere}, and the store has no off-host checkpoint from turn ${skipped.turn} on (${skipped.base ? "its repository's bundle base" : 'its bundle'}, ${sizeText(skipped.bytes)}, was above ${skipped.base ? 'AGENTRUN_MAX_BASE_BUNDLE_BYTES' : 'AGENTRUN_MAX_BUNDLE_BYTES'}); inspect it with the AGENTRUN_HOME of ${worker}`
    : undefined;
  // Up to the newest bundle a missing turn names; all of them when one is named by none (an
  // ancestor of a later one), unless bundling stopped (that turn came after it).
  const wanted = new Set(left.map((i) => checkpoints[i]!.commit));
  let last = -1;
  kept.forEach((b, k) => {
    if (wanted.has(b.commit)) last = k;
  });
  if (!skipped && [...wanted].some((c) => !kept.some((b) => b.commit === c))) last = kept.length - 1;
  const needed = kept.slice(0, last + 1);
  if (needed.length === 0) {
    const none = source.subagent
      ? "a sub-agent's checkpoints are kept only in its parent's workspace, on its host"
      : 'the store holds no checkpoint bundles of it (none were stored: it ran on no workspace host, or gc removed them)';
    fill(noOffHost ?? `${notHere}, and ${none}; inspect it with the AGENTRUN_HOME of ${worker}`);
    return;
  }
  const baseCommit = needed[0]!.base;
  const base = baseCommit !== undefined ? await store.getBundleBase(baseCommit) : undefined;
  if (base === null || base?.parts === 0) {
    fill(`${notHere}, and the bundle base its stored bundles start from is not in the store (removed); inspect it with the AGENTRUN_HOME of ${worker}`);
    return;
  }
  const total = (base?.bytes ?? 0) + needed.reduce((n, b) => n + b.bytes, 0);
  if (total > maxBundleBytes) {
    fill(
      `${notHere}, and reading it from the store takes ${needed.length} bundle${needed.length === 1 ? '' : 's'}${base ? ' and their base' : ''}, ${sizeText(total)}: above the ${sizeText(maxBundleBytes)} inspect fetches (AGENTRUN_INSPECT_MAX_BUNDLE_BYTES); raise it, or inspect it with the AGENTRUN_HOME of ${worker}`,
    );
    return;
  }
  const scratch = await scratchRepo(source.home);
  try {
    const gitDir = join(scratch, 'repo.git');
    await git(['init', '--bare', '--quiet', gitDir]);
    // The base first (in parts: it may be large), then each bundle as it is read from the store.
    const stored = async function* (): AsyncGenerator<StoredBundle> {
      if (baseCommit !== undefined) yield bundleBaseParts(store, baseCommit);
      for (const b of needed) {
        const bundle = await store.getCheckpointBundle(source.conversationId, b.commit);
        if (!bundle) throw new Error(`the bundle of turn ${b.turn} is not in the store any more (gc removed it?)`);
        yield bundle;
      }
    };
    try {
      await unbundleInto(gitDir, stored());
    } catch (err) {
      fill(`${notHere}, and its stored bundles could not be read: ${(err as Error).message}`);
      return;
    }
    await showPresent(gitDir, checkpoints, left, out, maxDiff);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  for (const i of left)
    out[i] ??=
      noOffHost !== undefined
        ? `(diff unavailable: ${noOffHost})`
        : `(diff unavailable: ${notHere}, and commit ${checkpoints[i]!.commit.slice(0, 12)} is in none of its stored bundles)`;
}

/** A new scratch directory under `home`/inspect; ones an inspect killed midway left a day ago are removed first. */
async function scratchRepo(home: string): Promise<string> {
  const parent = join(home, 'inspect');
  await mkdir(parent, { recursive: true, mode: 0o700 });
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    const old = join(parent, name);
    const at = (await stat(old).catch(() => undefined))?.mtimeMs;
    if (at !== undefined && Date.now() - at > STALE_SCRATCH_MS) await rm(old, { recursive: true, force: true });
  }
  return mkdtemp(join(parent, 'diffs-'));
}
