// Retention: for conversations that finished before a cut-off, remove their workspaces (on this
// machine), stream rows, stored context plans and off-host checkpoints (refs on the job's remote,
// bundles of local workspaces in the store). Running
// conversations are never touched: only rows with finished_at qualify.
import { type Dirent, existsSync, lstatSync, readdirSync, type Stats, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { childPath, fileNameOf, IdentifierError } from '../ids.js';
import type { Store } from '../store/index.js';
import { privateGitDir } from './checkpoint.js';
import { git, tryGit } from './git.js';

interface GcItem {
  conversationId: string;
  finishedAt: string;
  workspace?: { path: string; bytes: number };
  streamRows: number;
  contexts: number;
  refs: string[];
  /** Checkpoint bundles of a local workspace (count and bytes). */
  bundles: { count: number; bytes: number };
  /** Refs that could not be deleted (remote unreachable…): kept, and said so. */
  problems: string[];
}

export interface GcReport {
  dryRun: boolean;
  items: GcItem[];
  bytes: number;
  streamRows: number;
  contexts: number;
  refs: number;
  bundles: number;
  bundleBytes: number;
}

/** Entries a walk handles between two yields to the event loop. */
const WALK_SLICE = 500;

/**
 * Bytes of disk under `path`, counted as `du` counts them (the blocks allocated to its files,
 * directories and links, a file of several hard links once): what removing it would free, and what an
 * operator's `du -s` says. Symlinks under it are not followed, so a link to `/` in a workspace is no
 * walk of the machine. Synchronous calls in slices, yielding between them: a promise per entry cost
 * ~2 s of CPU on a 50k-file tree, this ~0.25 s (bench/disk-usage.ts), and the event loop never
 * waits more than one slice.
 */
export async function diskUsage(path: string): Promise<number> {
  let total = 0;
  let sinceYield = 0;
  const dirs = [path];
  const linked = new Set<string>();
  const add = (st: Stats) => {
    if (st.nlink > 1 && !st.isDirectory()) {
      const id = `${st.dev}:${st.ino}`;
      if (linked.has(id)) return;
      linked.add(id);
    }
    total += st.blocks * 512;
  };
  let top: Stats;
  try {
    top = statSync(path); // the workspace itself may be given through a link
  } catch {
    return 0;
  }
  add(top);
  if (!top.isDirectory()) return total;
  while (dirs.length) {
    const dir = dirs.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // gone or unreadable meanwhile
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory() || e.isFile() || e.isSymbolicLink()) {
        try {
          add(lstatSync(p));
          if (e.isDirectory()) dirs.push(p);
        } catch {
          // removed meanwhile
        }
      }
      if (++sinceYield >= WALK_SLICE) {
        sinceYield = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  }
  return total;
}

/** A conversation's directory in `workspacesDir`; none for an id that names no directory of its own (`.`, `..`, from before ids were checked). */
function ownDirectory(workspacesDir: string, id: string): string | undefined {
  try {
    return childPath(resolve(workspacesDir), fileNameOf(id));
  } catch (err) {
    if (err instanceof IdentifierError) return undefined;
    throw err;
  }
}

async function checkpointRefs(repo: string, conversationId: string): Promise<string[]> {
  const out = await git(['ls-remote', repo, `refs/agentrun/${fileNameOf(conversationId)}/*`], { kind: 'remote' });
  return out
    ? out
        .split('\n')
        .map((l) => l.split('\t')[1]!)
        .filter(Boolean)
    : [];
}

/** Delete `refs` on `repo`. git pushes only from a repository: an empty one of our own, never the working directory's. */
async function deleteRemoteRefs(repo: string, refs: string[]): Promise<string | undefined> {
  const gitDir = await mkdtemp(join(tmpdir(), 'agentrun-gc-'));
  try {
    await git(['init', '--bare', '--quiet', gitDir]);
    return await tryGit(['push', '--quiet', repo, ...refs.map((r) => `:${r}`)], { gitDir, kind: 'remote' });
  } finally {
    await rm(gitDir, { recursive: true, force: true });
  }
}

export async function collectGarbage(store: Store, opts: { olderThanMs: number; dryRun: boolean; workspacesDir: string; home?: string }): Promise<GcReport> {
  const { rows } = await store.pool.query<{ id: string; config: { repo?: string } | null; finished_at: Date }>(
    `SELECT id, config, finished_at FROM conversations WHERE finished_at IS NOT NULL AND finished_at < now() - ($1::double precision * interval '1 millisecond') ORDER BY finished_at`,
    [opts.olderThanMs],
  );
  const report: GcReport = { dryRun: opts.dryRun, items: [], bytes: 0, streamRows: 0, contexts: 0, refs: 0, bundles: 0, bundleBytes: 0 };
  for (const row of rows) {
    const item: GcItem = {
      conversationId: row.id,
      finishedAt: row.finished_at.toISOString(),
      streamRows: 0,
      contexts: 0,
      refs: [],
      bundles: { count: 0, bytes: 0 },
      problems: [],
    };
    const dir = ownDirectory(opts.workspacesDir, row.id);
    if (dir && existsSync(dir)) item.workspace = { path: dir, bytes: await diskUsage(dir) };
    const count = async (table: string) =>
      Number((await store.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE conversation_id = $1`, [row.id])).rows[0]!.n);
    item.streamRows = await count('stream');
    item.contexts = await count('contexts');
    const bundled = await store.getBundledCommits(row.id);
    item.bundles = { count: bundled.length, bytes: bundled.reduce((n, b) => n + b.bytes, 0) };
    const repo = row.config?.repo;
    if (repo) {
      try {
        item.refs = await checkpointRefs(repo, row.id);
      } catch (err) {
        item.problems.push(`checkpoint refs on ${repo} not listed: ${(err as Error).message}`);
      }
    }
    if (!opts.dryRun) {
      if (dir && item.workspace) await rm(dir, { recursive: true, force: true });
      if (dir && opts.home) await rm(privateGitDir(opts.home, dir), { recursive: true, force: true });
      await store.pool.query('DELETE FROM stream WHERE conversation_id = $1', [row.id]);
      await store.pool.query('DELETE FROM contexts WHERE conversation_id = $1', [row.id]);
      if (item.bundles.count) await store.deleteCheckpointBundles(row.id);
      await store.pool.query('DELETE FROM workspace_usage WHERE conversation_id = $1', [row.id]);
      if (repo && item.refs.length) {
        const pushed = await deleteRemoteRefs(repo, item.refs);
        if (pushed === undefined) item.problems.push(`checkpoint refs on ${repo} could not be deleted (no push access?)`);
      }
    }
    if (!item.workspace && !item.streamRows && !item.contexts && !item.refs.length && !item.bundles.count) continue;
    if (!opts.dryRun)
      await store.recordCollected(row.id, {
        at: new Date().toISOString(),
        ...(item.workspace ? { workspace: item.workspace } : {}),
        streamRows: item.streamRows,
        contexts: item.contexts,
        refs: item.refs.length,
        bundles: item.bundles,
        ...(item.problems.length ? { problems: item.problems } : {}),
      });
    report.items.push(item);
    report.bytes += item.workspace?.bytes ?? 0;
    report.streamRows += item.streamRows;
    report.contexts += item.contexts;
    report.refs += item.refs.length;
    report.bundles += item.bundles.count;
    report.bundleBytes += item.bundles.bytes;
  }
  // Bundle bases no conversation's bundles name any more (an hour's grace: one may be about to).
  const bases = await store.deleteUnusedBundleBases(60 * 60_000, opts.dryRun);
  report.bundles += bases.bases;
  report.bundleBytes += bases.bytes;
  return report;
}
