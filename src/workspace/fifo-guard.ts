// git reads each directory's `.gitignore` and `.gitattributes` from the work tree with a plain
// blocking open(2). The agent can make either a FIFO (mkfifo in its sandbox), and a checkpoint's
// `git add` (or `ls-files --others`) then waits in that open until its 10-minute timeout. Finding
// them up front would mean walking the whole tree on every checkpoint (seconds on a large one), so
// the git runs that walk the tree are watched instead: a git process found waiting in a FIFO's
// open is killed at once (its wait shows in /proc/<pid>/wchan), the tree is searched through
// descriptors (src/tools/beneath.ts: never following a link, never opening the entries) for
// `.gitignore`/`.gitattributes` that are not regular files, and the run is repeated with their
// directories left out by pathspec (git then never enters them). Such a file at the workspace's
// root cannot be left out: the checkpoint is refused with an error naming it.
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, open, readdir, readFile, unlink } from 'node:fs/promises';
import { launcherPid } from '../runtime/launcher.js';
import { log } from '../log.js';
import { openSubdir, readdirAt, workspaceRoot } from './beneath.js';

/** The names git opens in every directory it walks. */
const READ_PER_DIRECTORY = new Set(['.gitignore', '.gitattributes']);
/** How often a running git is looked at: git on a tree without a FIFO is never waited for. */
const POLL_MS = 250;
/** Kernel functions a process blocked opening a FIFO with no writer sleeps in. */
const FIFO_WAIT = new Set(['wait_for_partner', 'fifo_open']);
/** Each found FIFO is left out and git runs again, at most this many times (the agent can make new ones meanwhile). */
const MAX_RUNS = 4;
/** The search stops after this many directories: a tree that large is refused rather than walked forever. */
const MAX_DIRS = 200_000;

/** A git run killed because it waited in the open of a FIFO in the work tree. */
class BlockedOnFifo extends Error {
  override readonly name = 'BlockedOnFifo';
}

/** A `.gitignore` or `.gitattributes` the checkpoint cannot leave out (at the workspace's root): retrying does not help. */
export class UnreadableIgnoreFile extends Error {
  override readonly name = 'UnreadableIgnoreFile';
}

async function childrenOf(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const out: number[] = [];
  for (const t of tasks) {
    const list = await readFile(`/proc/${pid}/task/${t}/children`, 'utf8').catch(() => '');
    for (const c of list.split(/\s+/)) if (c) out.push(Number(c));
  }
  return out;
}

/** The launcher's child whose environment carries `tag` (the git run being watched). */
async function findRun(tag: string): Promise<number | undefined> {
  const launcher = launcherPid();
  if (launcher === undefined) return undefined;
  for (const pid of await childrenOf(launcher)) {
    const env = await readFile(`/proc/${pid}/environ`).catch(() => undefined);
    if (env?.includes(tag)) return pid;
  }
  return undefined;
}

/**
 * Run `fn` with an environment variable that tags its git process; kill that process if it waits
 * in a FIFO's open, and throw BlockedOnFifo instead of git's error.
 */
export async function watchedGit<T>(fn: (tagEnv: NodeJS.ProcessEnv) => Promise<T>): Promise<T> {
  const id = randomUUID();
  const tag = Buffer.from(`AGENTRUN_GIT_RUN=${id}\0`);
  let blocked = false;
  let done = false;
  let pid: number | undefined;
  const look = async () => {
    pid ??= await findRun(tag.toString('latin1'));
    if (pid === undefined || done) return;
    const wchan = (await readFile(`/proc/${pid}/wchan`, 'utf8').catch(() => '')).trim();
    if (!FIFO_WAIT.has(wchan)) return;
    // Still ours: a pid reused since would not carry the tag.
    const env = await readFile(`/proc/${pid}/environ`).catch(() => undefined);
    if (done || !env?.includes(tag)) return;
    blocked = true;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    timer = setTimeout(() => void look().finally(() => !done && !blocked && tick()), POLL_MS);
    timer.unref();
  };
  tick();
  try {
    return await fn({ AGENTRUN_GIT_RUN: id });
  } catch (err) {
    if (blocked) throw new BlockedOnFifo(`git waited on a FIFO in the work tree (${(err as Error).message})`);
    throw err;
  } finally {
    done = true;
    clearTimeout(timer);
  }
}

/**
 * The directories (workspace-relative, '' for the root) whose `.gitignore` or `.gitattributes` is
 * not a regular file or a symbolic link (git does not follow those): a FIFO, socket or device.
 * Walked through descriptors; `.git` directories are not entered (git does not either).
 */
async function unreadableIgnoreDirs(workspace: string, opts: { remove?: boolean } = {}): Promise<string[]> {
  const root = await workspaceRoot(workspace);
  const found: string[] = [];
  const stack: { rel: string; fh: FileHandle }[] = [{ rel: '', fh: await open(root, constants.O_RDONLY | constants.O_DIRECTORY) }];
  let dirs = 0;
  try {
    while (stack.length) {
      const { rel, fh } = stack.pop()!;
      try {
        if (++dirs > MAX_DIRS)
          throw new UnreadableIgnoreFile(`${workspace} has more than ${MAX_DIRS} directories: its checkpoint cannot be searched for FIFOs`);
        for (const e of await readdirAt(fh)) {
          if (READ_PER_DIRECTORY.has(e.name) && !e.isFile() && !e.isSymbolicLink() && !e.isDirectory()) {
            if (!found.includes(rel)) found.push(rel);
            // Through the directory's descriptor: no path through the tree is walked again.
            if (opts.remove) await unlink(`/proc/self/fd/${fh.fd}/${e.name}`).catch(() => undefined);
          } else if (e.isDirectory() && e.name !== '.git') {
            const sub = await openSubdir(fh, e.name);
            if (sub) stack.push({ rel: rel ? `${rel}/${e.name}` : e.name, fh: sub });
          }
        }
      } finally {
        await fh.close();
      }
    }
  } finally {
    for (const { fh } of stack) await fh.close().catch(() => {});
  }
  return found.sort();
}

/** git pathspecs that leave `dirs` out (literal: a name with `*` or `:` is not a pattern). */
export function excludePathspecs(dirs: string[]): string[] {
  return dirs.map((d) => `:(exclude,literal)${d}`);
}

/** Run `fn`; each time its git waited on a FIFO (at most MAX_RUNS runs in all), `clear` the way and run it again. */
async function againPastFifos<T>(fn: () => Promise<T>, clear: () => Promise<void>): Promise<T> {
  for (let run = 1; ; run++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof BlockedOnFifo) || run >= MAX_RUNS) throw err;
      await clear();
    }
  }
}

/**
 * Run `fn` (git walking the work tree, with pathspecs that leave `excluded` out); when its git
 * waited on a FIFO, leave out the directories that hold one and run it again.
 */
export async function leavingOutFifos<T>(workspace: string, fn: (excluded: string[]) => Promise<T>): Promise<T> {
  let excluded: string[] = [];
  return againPastFifos(
    () => fn(excluded),
    async () => {
      const dirs = await unreadableIgnoreDirs(workspace);
      if (dirs.includes(''))
        throw new UnreadableIgnoreFile(
          `the checkpoint of ${workspace} cannot be made: its .gitignore or .gitattributes is not a regular file (a FIFO, socket or device), which git would wait on forever; remove it from the workspace's root`,
        );
      excluded = [...new Set([...excluded, ...dirs])].sort();
      log.warn({ workspace, excluded }, 'a .gitignore or .gitattributes in the workspace is not a regular file: its directory is left out of the checkpoint');
    },
  );
}

/**
 * Run `fn` (git writing files into the work tree: a rollback's checkout, which reads the attributes
 * of each directory it writes into); when its git waited on a FIFO, remove the `.gitignore` and
 * `.gitattributes` that are not regular files (no checkpoint holds them: git never adds one) and run it again.
 */
export function removingFifos<T>(workspace: string, fn: () => Promise<T>): Promise<T> {
  return againPastFifos(fn, async () => {
    const dirs = await unreadableIgnoreDirs(workspace, { remove: true });
    log.warn({ workspace, dirs }, 'a .gitignore or .gitattributes in the workspace is not a regular file: removed so the rollback can write its files');
  });
}
