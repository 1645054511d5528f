// A frozen copy of this module as it was before the file tools went through descriptors (2334ddd),
// kept only so bench/tools.ts can time the old string-path access beside the new in one run.
// Workspace confinement (principle 7, docs/architecture.md): every path a tool touches is resolved here.
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from '../../src/tools/types.js';

const MAX_LINK_HOPS = 40;

function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..' + path.sep) && rel !== '..' && !path.isAbsolute(rel));
}

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** The workspace root with symlinks resolved (tmp dirs are often behind one). */
export async function workspaceRoot(workspace: string): Promise<string> {
  if (!path.isAbsolute(workspace)) throw new Error(`workspace must be an absolute path: ${workspace}`);
  return realpath(workspace);
}

/** Workspace-relative form of an absolute path inside it, with forward slashes ('.' for the root). */
export function toRel(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

/**
 * Resolve `p` (relative to the workspace) to an absolute real path inside the workspace.
 * Refuses absolute paths, `..` escapes and symlinks anywhere on the path that lead outside,
 * including dangling ones (a write through them would create a file outside).
 */
export async function resolveInWorkspace(workspace: string, p: string, opts: { mustExist?: boolean } = {}): Promise<string> {
  const root = await workspaceRoot(workspace);
  if (typeof p !== 'string' || p.trim() === '') throw new ToolError('The path is empty; give a path relative to the workspace root.');
  if (p.includes('\0')) throw new ToolError('The path contains a NUL byte.');
  if (path.isAbsolute(p)) {
    const hint = isInside(root, path.resolve(p)) ? ` Use "${toRel(root, path.resolve(p))}" instead.` : '';
    throw new ToolError(`Absolute paths are not allowed (${p}); give a path relative to the workspace root.${hint}`);
  }
  if (p === '~' || p.startsWith('~/')) throw new ToolError(`Home-relative paths are not allowed (${p}); give a path relative to the workspace root.`);
  const lexical = path.resolve(root, p);
  if (!isInside(root, lexical)) throw new ToolError(`The path ${p} leads outside the workspace; give a path inside it.`);
  const resolved = await walk(root, path.relative(root, lexical), p, 0);
  if (opts.mustExist) {
    try {
      await lstat(resolved);
    } catch (e) {
      if (errCode(e) === 'ENOENT' || errCode(e) === 'ENOTDIR') throw new ToolError(`${p}: no such file or directory.`);
      throw e;
    }
  }
  return resolved;
}

/** Follow `rel` component by component from `root`, checking every symlink's target. */
async function walk(root: string, rel: string, original: string, hops: number): Promise<string> {
  const parts = rel.split(path.sep).filter((s) => s !== '' && s !== '.');
  let cur = root;
  for (let i = 0; i < parts.length; i++) {
    const next = path.join(cur, parts[i]!);
    let st;
    try {
      st = await lstat(next);
    } catch (e) {
      if (errCode(e) === 'ENOENT' || errCode(e) === 'ENOTDIR') return path.join(next, ...parts.slice(i + 1));
      throw e;
    }
    if (!st.isSymbolicLink()) {
      cur = next;
      continue;
    }
    if (hops >= MAX_LINK_HOPS) throw new ToolError(`${original}: too many levels of symbolic links.`);
    const target = path.resolve(cur, await readlink(next));
    if (!isInside(root, target))
      throw new ToolError(`${original} goes through a symbolic link (${toRel(root, next)}) that leads outside the workspace; refused.`);
    // The target may itself hold symlinks (or dangle): check it the same way, then go on from it.
    cur = await walk(root, path.relative(root, target), original, hops + 1);
    if (!isInside(root, cur)) throw new ToolError(`${original} leads outside the workspace through a symbolic link; refused.`);
  }
  return cur;
}

/** Writes into the repository's own metadata would bypass checkpoints and hooks review. */
export function assertNotGitDir(root: string, abs: string, shown: string): void {
  const rel = toRel(root, abs);
  if (rel === '.git' || rel.startsWith('.git/')) throw new ToolError(`${shown}: writing inside .git is not allowed.`);
}

/** Largest file the editing tools read (replace_in_file, write_to_file's before-image). */
export const EDIT_LIMIT_BYTES = 50 * 1024 * 1024;

/** Open without following a final symlink and without blocking on a FIFO (O_NONBLOCK). */
const SAFE_OPEN = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Open a path already resolved by resolveInWorkspace for reading, refusing what is not a regular
 * file (FIFOs, sockets, devices: a read could block for ever or never end) and, with `maxBytes`,
 * files larger than that. The check is on the opened file, so a swap after resolving cannot
 * slip a FIFO or a symlink in.
 */
export async function openRegularFile(abs: string, shown: string, opts: { maxBytes?: number } = {}): Promise<{ fh: FileHandle; size: number }> {
  let fh: FileHandle;
  try {
    fh = await open(abs, SAFE_OPEN);
  } catch (e) {
    if (errCode(e) === 'ELOOP') throw new ToolError(`${shown} is a symbolic link that changed while it was being read; refused.`);
    if (errCode(e) === 'ENXIO') throw new ToolError(`${shown} is a socket or a FIFO; only regular files can be read.`);
    throw e;
  }
  const st = await fh.stat();
  if (!st.isFile()) {
    await fh.close();
    if (st.isDirectory()) throw new ToolError(`${shown} is a directory; give a file path.`);
    throw new ToolError(`${shown} is not a regular file (a FIFO, socket or device); refused.`);
  }
  if (opts.maxBytes !== undefined && st.size > opts.maxBytes) {
    await fh.close();
    throw new ToolError(`${shown} is too large (${st.size} bytes; the limit is ${opts.maxBytes}).`);
  }
  return { fh, size: st.size };
}

/** The first `maxBytes` of a regular file (see openRegularFile). */
export async function readRegularFile(abs: string, shown: string, opts: { maxBytes?: number; headBytes?: number } = {}): Promise<Buffer> {
  const { fh, size } = await openRegularFile(abs, shown, { maxBytes: opts.maxBytes });
  try {
    const want = Math.min(size, opts.headBytes ?? size);
    const buf = Buffer.alloc(want);
    let off = 0;
    while (off < want) {
      const { bytesRead } = await fh.read(buf, off, want - off, off);
      if (bytesRead === 0) break;
      off += bytesRead;
    }
    return buf.subarray(0, off);
  } finally {
    await fh.close();
  }
}
