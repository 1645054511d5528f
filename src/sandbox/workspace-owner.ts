// A worker running as root runs the agent's commands as an unprivileged sandbox user, who owns the
// workspace (src/sandbox/owner.ts hands it over). What the worker itself writes there afterwards
// (restored checkpoints, files of the file tools) gets the same owner, or the agent could no
// longer change it. As any other user this is a no-op: files are the worker's, as are commands.
import { lchownSync, lstatSync, readdirSync } from 'node:fs';
import { lchown, stat } from 'node:fs/promises';
import path from 'node:path';

export function runningAsRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Give `paths` (relative to `root`; all of `root` when absent) and the directories above them the owner of `root`. */
export async function matchWorkspaceOwner(root: string, paths?: string[]): Promise<void> {
  if (!runningAsRoot()) return;
  const { uid, gid } = await stat(root);
  if (uid === 0) return;
  if (!paths) {
    chownTreeSync(root, uid, gid);
    return;
  }
  const done = new Set<string>();
  for (const rel of paths) {
    let p = path.join(root, rel);
    while (p.startsWith(root + path.sep) && !done.has(p)) {
      done.add(p);
      await lchown(p, uid, gid).catch(() => {});
      p = path.dirname(p);
    }
  }
}

/** lchown every entry under `dir` (symlinks themselves, never their targets) not yet owned by uid:gid. */
export function chownTreeSync(dir: string, uid: number, gid: number): number {
  let changed = 0;
  const walk = (p: string): void => {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.uid !== uid || st.gid !== gid) {
      lchownSync(p, uid, gid);
      changed++;
    }
    if (!st.isDirectory()) return;
    let names: string[] = [];
    try {
      names = readdirSync(p);
    } catch {
      return;
    }
    for (const name of names) walk(path.join(p, name));
  };
  walk(dir);
  return changed;
}
