// `agentrun batch`: one repository job per line of --repos, as a batch workflow; the table of
// results (repository, status, branch, diffstat, turns, cost) and the totals.
import { plural } from '../types.js';
import { cacheRoot, gcCaches } from '../environment/cache.js';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { batchStateQuery, BATCH_WORKFLOW_TYPE, type BatchInput, type BatchResult, type BatchRow } from '../../workflows/batch.js';
import { CliError, EXIT } from './errors.js';
import { isRemoteRepo, runRequestFromFlags, type RunFlags } from './options.js';
import { openSession, type Session } from './session.js';
import { parseDuration, runConfigSchema, type RunConfig } from '../config.js';
import { defaultBranch } from '../workspace/routing.js';
import { WORKFLOW_TYPE } from '../../workflows/api.js';
import type { SessionInput } from '../../workflows/session.js';
import { newConversationId } from '../client/conversations.js';
import { withWaiting } from '../client/batch-waiting.js';
import { checkModel } from './options.js';
import { collectGarbage } from '../workspace/gc.js';
import { workspacesDir } from '../workspace/host.js';
import { batchStartMetadata, sessionStartMetadata } from '../../workflows/summaries.js';

/** Stands in for the per-line repositories while the shared run options are validated. */
const EACH_LINE = 'batch://each-line-of-the-repos-file';

export interface BatchFlags extends RunFlags {
  repos?: string;
  concurrency?: string;
  detach?: boolean;
  id?: string;
  json?: boolean;
  worker?: boolean;
}

/** Repositories, one per line; blank lines and `#` comments skipped; paths made absolute. */
export async function readReposFile(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read the repositories file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const repos = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => (isRemoteRepo(l) ? l : resolve(l)));
  if (!repos.length) throw new CliError(`the repositories file ${file} lists no repository (one git URL or path per line)`);
  // A path that is not there fails here, before any job starts, as `run --repo` does.
  const missing = repos.filter((r) => !isRemoteRepo(r) && !existsSync(r));
  if (missing.length)
    throw new CliError(
      `the repositories file ${file} names ${missing.length === 1 ? 'a repository that does not exist' : `${missing.length} repositories that do not exist`}: ${missing.join(', ')} (give git URLs or paths of git repositories)`,
    );
  return repos;
}

export async function batchInputFromFlags(flags: BatchFlags): Promise<BatchInput> {
  if (!flags.repos) throw new CliError('no repositories: give --repos FILE (one git URL or path per line)');
  if (flags.workspace || flags.repo) throw new CliError('a batch takes its repositories from --repos FILE: leave out --workspace and --repo');
  const concurrency = flags.concurrency === undefined ? 4 : Number(flags.concurrency);
  if (!Number.isInteger(concurrency) || concurrency <= 0) throw new CliError(`--concurrency must be a positive whole number, got "${flags.concurrency}"`);
  const repos = await readReposFile(flags.repos);
  const req = await runRequestFromFlags({ ...flags, repo: EACH_LINE });
  const { repo: _placeholder, ...config } = req.config;
  return { repos, task: req.task, config: { ...config, push: config.push ?? false }, concurrency };
}

export function newBatchId(): string {
  return `batch-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomBytes(3).toString('hex')}`;
}

/** `passed`, `failed (exit 1, 3 runs)`, and whether it was failing before the agent started. */
function verifyCell(v: BatchRow['verify']): string {
  if (!v) return '';
  const outcome =
    v.passed === null ? 'not run' : v.passed ? 'passed' : `failed (exit ${v.exitCode ?? 'none'}, ${v.attempts} run${v.attempts === 1 ? '' : 's'})`;
  return v.failingBefore === undefined ? outcome : `${outcome}; ${v.failingBefore ? 'was failing before' : 'passed before'}`;
}

/** `waiting for approval: npm publish (publishes …); approve with: agentrun approve ID --call C (or deny)`. */
export function waitingLine(w: NonNullable<BatchRow['waiting']>): string {
  return w.for === 'approval'
    ? `waiting for approval: ${w.what}; approve with: ${w.command} (or deny)`
    : `waiting for an answer: ${w.what}; answer with: ${w.command}`;
}

/** A job's reason in a table cell: one line (git's errors span several), cut at a word. */
function oneLineReason(reason: string): string {
  const line = reason.replace(/\s+/g, ' ').trim();
  if (line.length <= 120) return line;
  const cut = line.slice(0, 119);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 60 ? cut.lastIndexOf(' ') : 119)}…`;
}

export function formatBatchTable(b: BatchResult): string {
  const verified = b.rows.some((r) => r.verify);
  const head = ['repository', 'status', 'branch', 'diffstat', ...(verified ? ['verify'] : []), 'turns', 'cost'];
  const rows = b.rows.map((r) => [
    r.repo,
    r.status + (r.waiting ? ` (${r.waiting.for})` : r.reason && r.status !== 'completed' ? ` (${oneLineReason(r.reason)})` : ''),
    r.diffstat?.files === 0 && !r.pushed ? 'none (no change)' : r.branch ? `${r.branch}${r.pushed ? '' : ' (not pushed)'}` : '',
    r.diffstat ? (r.diffstat.files === 0 ? 'no change' : `${plural(r.diffstat.files, 'file')} +${r.diffstat.insertions} -${r.diffstat.deletions}`) : '',
    ...(verified ? [verifyCell(r.verify)] : []),
    String(r.turns),
    `$${r.costUsd.toFixed(4)}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const t = b.totals;
  const waiting = b.rows.filter((r) => r.waiting);
  return [
    line(head),
    ...rows.map(line),
    ...(waiting.length ? ['', `${waiting.length} waiting for a person:`, ...waiting.map((r) => `  ${r.repo}: ${waitingLine(r.waiting!)}`)] : []),
    '',
    `${plural(t.jobs, 'job')}: ${t.completed} completed, ${t.failed} failed, ${t.running} running, ${t.pending} pending; ${plural(t.files, 'file')} +${t.insertions} -${t.deletions}; ${plural(t.turns, 'turn')}; $${t.costUsd.toFixed(4)}`,
  ].join('\n');
}

/** Follow a batch to its end; undefined when Ctrl-C detached from it (the batch goes on). */
async function followBatch(session: Session, id: string, json: boolean | undefined): Promise<BatchResult | undefined> {
  // Ctrl-C aborts the calls in flight too: a call still retrying after the connection closed
  // would throw from its timer and end the process before the servers are stopped.
  const calls = new AbortController();
  let detach: () => void = () => undefined;
  const interrupted = new Promise<'interrupted'>((resolve) => {
    detach = () => {
      calls.abort();
      resolve('interrupted');
    };
    process.once('SIGINT', detach);
  });
  try {
    return await session.client.withAbortSignal(calls.signal, () => followUntil(session, id, json, interrupted));
  } finally {
    process.removeListener('SIGINT', detach);
  }
}

async function followUntil(session: Session, id: string, json: boolean | undefined, interrupted: Promise<'interrupted'>): Promise<BatchResult | undefined> {
  const handle = session.client.workflow.getHandle(id);
  const seen = new Map<string, string>();
  const report = (b: BatchResult) => {
    for (const r of b.rows) {
      // A job that waits again (another call) is reported again.
      const key = `${r.status} ${r.waiting?.command ?? ''}`;
      if (seen.get(r.conversationId) === key) continue;
      seen.set(r.conversationId, key);
      if (r.status === 'pending') continue;
      if (json) process.stdout.write(JSON.stringify({ type: 'job', batchId: id, ...r }) + '\n');
      else if (r.waiting) process.stdout.write(`${r.repo}: ${waitingLine(r.waiting)}\n`);
      else
        process.stdout.write(
          `${r.repo}: ${r.status}${r.branch ? ` → ${r.branch}` : ''}${r.reason && r.status !== 'completed' && r.status !== 'running' ? ` (${r.reason})` : ''}\n`,
        );
    }
  };
  const done = handle.result() as Promise<BatchResult>;
  let finished: BatchResult | undefined;
  void done.then(
    (r) => (finished = r),
    () => undefined,
  );
  let stop = false;
  void interrupted.then(() => (stop = true));
  while (!finished) {
    // A query or a wait that hangs (the worker stopped on the same Ctrl-C) must not hold the detach.
    const b = await Promise.race([
      handle
        .query(batchStateQuery)
        .then((r) => withWaiting(session.client, r as BatchResult))
        .catch(() => undefined),
      interrupted,
    ]);
    if (stop) return undefined;
    if (b && b !== 'interrupted') report(b);
    await Promise.race([done.catch(() => undefined), new Promise((r) => setTimeout(r, 1000)), interrupted]);
    if (stop) return undefined;
  }
  report(finished);
  return finished;
}

export async function batchCommand(flags: BatchFlags): Promise<number> {
  const input = await batchInputFromFlags(flags);
  const session = await openSession({ startIfMissing: !flags.detach });
  try {
    if (!flags.detach && flags.worker !== false) await session.startWorker();
    const id = flags.id ?? newBatchId();
    try {
      await session.client.workflow.start(BATCH_WORKFLOW_TYPE, {
        workflowId: id,
        taskQueue: session.taskQueue,
        args: [{ ...input, searchAttributes: session.searchAttributes }],
        ...batchStartMetadata(input),
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw new CliError(`a batch with id ${id} already exists; choose another --id`);
      throw err;
    }
    if (flags.detach) {
      process.stdout.write(flags.json ? JSON.stringify({ type: 'started', batchId: id, jobs: input.repos.length }) + '\n' : `${id}\n`);
      return EXIT.completed;
    }
    process.stdout.write(
      flags.json
        ? JSON.stringify({ type: 'batch', batchId: id, jobs: input.repos.length, concurrency: input.concurrency }) + '\n'
        : `batch ${id}: ${input.repos.length} jobs, ${input.concurrency} at once\n`,
    );
    const result = await followBatch(session, id, flags.json);
    if (!result) {
      // As `run` does: the batch is durable; its jobs go on wherever a worker polls the queue.
      const how = `agentrun inspect ${id} (its table; the jobs go on while a worker runs: agentrun worker, or agentrun dev)`;
      process.stdout.write(flags.json ? JSON.stringify({ type: 'detached', batchId: id }) + '\n' : `\ndetached; the batch is durable: ${how}\n`);
      return EXIT.failed;
    }
    process.stdout.write(flags.json ? JSON.stringify({ type: 'result', ...result }) + '\n' : `\n${formatBatchTable(result)}\n`);
    return result.totals.completed === result.totals.jobs ? EXIT.completed : EXIT.failed;
  } finally {
    await session.close();
  }
}

/** `inspect <batch id>`: the table, from the batch's query (running) or its result (finished). */
export async function inspectBatch(session: Session, id: string): Promise<BatchResult | undefined> {
  const handle = session.client.workflow.getHandle(id);
  const desc = await handle.describe().catch(() => undefined);
  if (!desc || desc.type !== BATCH_WORKFLOW_TYPE) return undefined;
  if (desc.status.name === 'RUNNING') return withWaiting(session.client, (await handle.query(batchStateQuery)) as BatchResult);
  return (await handle.result()) as BatchResult;
}

export async function gcCommand(flags: { olderThan?: string; dryRun?: boolean; json?: boolean }): Promise<number> {
  let olderThanMs: number;
  try {
    olderThanMs = parseDuration(flags.olderThan ?? '7d');
  } catch (err) {
    throw new CliError(`--older-than: ${(err as Error).message}`);
  }
  const session = await openSession({});
  try {
    const r = await collectGarbage(session.store, { olderThanMs, dryRun: !!flags.dryRun, workspacesDir: workspacesDir(session.home), home: session.home });
    // Dependency caches this host's jobs have not restored for as long (AGENTRUN_CACHE_DIR).
    const caches = await gcCaches(cacheRoot(session.home), olderThanMs, !!flags.dryRun);
    if (flags.json) process.stdout.write(JSON.stringify({ type: 'gc', ...r, caches }) + '\n');
    else {
      const verb = r.dryRun ? 'would free' : 'freed';
      for (const i of r.items) {
        process.stdout.write(
          `${i.conversationId} (finished ${i.finishedAt}): ${i.workspace ? `workspace ${mb(i.workspace.bytes)}, ` : ''}${i.streamRows} stream rows, ${i.contexts} context plans, ${i.refs.length} checkpoint refs, ${i.bundles.count} checkpoint bundles (${mb(i.bundles.bytes)})${i.problems.length ? `; ${i.problems.join('; ')}` : ''}\n`,
        );
      }
      process.stdout.write(
        `${caches.length ? `${caches.length} dependency caches unused since --older-than: ${verb} ${mb(caches.reduce((n, c) => n + c.bytes, 0))}\n` : ''}${r.items.length} finished conversations: ${verb} ${mb(r.bytes)} of workspaces, ${r.streamRows} stream rows, ${r.contexts} context plans, ${r.refs} checkpoint refs, ${r.bundles} checkpoint bundles (${mb(r.bundleBytes)})\n`,
      );
    }
    return EXIT.completed;
  } finally {
    await session.close();
  }
}

/**
 * A fork's (or rerun's) job settings: its own result branch, `branch` or agentrun/<its id>, never
 * the parent's (two conversations pushing one branch collide); `push` as given, else as the parent's.
 * The base is the parent's checkpoint, so there is no --ref.
 */
export function forkedJobConfig(parent: RunConfig, flags: { branch?: string; push?: boolean }): RunConfig {
  const { branch: _parentBranch, ...rest } = parent;
  return { ...rest, ...(flags.branch ? { branch: flags.branch } : {}), push: flags.push ?? parent.push };
}

export async function forkCommand(
  parentId: string,
  flags: { atTurn?: string; model?: string; task?: string; id?: string; branch?: string; push?: boolean; json?: boolean },
): Promise<number> {
  const atTurn = Number(flags.atTurn);
  if (flags.atTurn === undefined || !Number.isInteger(atTurn) || atTurn < 0)
    throw new CliError(`--at-turn must be a turn number (0 or more), got "${flags.atTurn ?? ''}"`);
  const model = flags.model ? await checkModel(flags.model) : undefined;
  const session = await openSession({});
  try {
    const parent = await session.store.getConversation(parentId);
    if (!parent) throw new CliError(`no conversation with id ${parentId}`);
    if (atTurn > parent.turns) throw new CliError(`conversation ${parentId} has ${parent.turns} turns: --at-turn ${atTurn} is past its end`);
    const config = forkedJobConfig(runConfigSchema.parse({ ...(parent.config as object), ...(model ? { model } : {}) }), flags);
    if (!config.repo)
      throw new CliError(`conversation ${parentId} works in a local directory: fork takes repository jobs (--repo), whose checkpoints any host can reach`);
    const checkpoints = (await session.store.getCheckpoints(parentId)).filter((c) => c.turn <= atTurn);
    if (!checkpoints.length) throw new CliError(`conversation ${parentId} has no checkpoint at or before turn ${atTurn}`);
    const id = flags.id ?? newConversationId();
    const input: SessionInput = {
      task: parent.task,
      workspace: config.repo,
      config,
      searchAttributes: session.searchAttributes,
      fork: { parentId, atTurn, ...(flags.task ? { message: flags.task } : {}) },
    };
    try {
      await session.client.workflow.start(WORKFLOW_TYPE, {
        workflowId: id,
        taskQueue: session.taskQueue,
        args: [input],
        ...sessionStartMetadata(input, { id, atMs: Date.now() }),
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw new CliError(`a conversation with id ${id} already exists; choose another --id`);
      throw err;
    }
    process.stdout.write(
      flags.json
        ? JSON.stringify({ type: 'started', conversationId: id, parentId, atTurn, branch: config.branch ?? defaultBranch(id), push: config.push }) + '\n'
        : `${id}\n`,
    );
    return EXIT.completed;
  } finally {
    await session.close();
  }
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
