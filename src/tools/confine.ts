// Workspace confinement (principle 7, docs/architecture.md): every path a tool touches is walked beneath the
// workspace root through file descriptors (./beneath.ts); no checked path goes back to the kernel.
import path from 'node:path';
import { locate, MissingParent, workspaceRoot } from '../workspace/beneath.js';
import { ToolError } from './types.js';

export { MissingParent, openRegularAt, readBeneathOrNull, readHead, workspaceRoot, withLocated, writeBeneath, type Located } from '../workspace/beneath.js';

/**
 * Where `p` (relative to the workspace) leads, as an absolute path inside the workspace, for
 * showing and for tests: the walk refuses absolute paths, `..` escapes and symlinks that lead
 * outside, including dangling ones. Never open the string it returns: use `locate`.
 */
export async function resolveInWorkspace(workspace: string, p: string, opts: { mustExist?: boolean } = {}): Promise<string> {
  const root = await workspaceRoot(workspace);
  try {
    const l = await locate(workspace, p, { mustExist: opts.mustExist });
    await l.close();
    return l.rel === '.' ? root : path.join(root, l.rel);
  } catch (e) {
    if (e instanceof MissingParent && !opts.mustExist) return path.join(root, e.rel);
    if (e instanceof MissingParent) throw new ToolError(`${p}: no such file or directory.`);
    throw e;
  }
}

/** Writes into the repository's own metadata would bypass checkpoints and hooks review. */
export function assertNotGitDir(rel: string, shown: string): void {
  if (rel === '.git' || rel.startsWith('.git/')) throw new ToolError(`${shown}: writing inside .git is not allowed.`);
}

/** Largest file the editing tools read (replace_in_file, write_to_file's before-image). */
export const EDIT_LIMIT_BYTES = 50 * 1024 * 1024;
