// Workspace files through file descriptors opened beneath the workspace root. The agent (and any
// process beside the tools in the workspace) can swap a directory for a symlink at any moment, so a
// path checked and then handed back to the kernel as a string can lead anywhere. Here no string path
// through the tree is ever given to the kernel: each component is opened on its own, with
// O_NOFOLLOW, relative to the directory already open before it. Node has no openat(2), so "relative
// to an open directory" is `/proc/self/fd/<dirfd>/<name>`: the kernel jumps through the magic link to
// the opened directory itself, then looks up the one name. Symlinks inside the workspace are
// followed by reading them (readlink) and walking their target the same way, on our own stack of
// open directories; a target that is absolute outside the root, or climbs above it, is refused, so
// links into /proc (magic links) are refused like any other way out. Regular files only: FIFOs,
// sockets and devices are opened non-blocking and refused after fstat, so no read can stall the
// worker's thread pool.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, type Dirent } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, realpath, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { runningAsRoot } from '../sandbox/workspace-owner.js';
import { SANDBOX_WORKSPACE } from '../sandbox/policy.js';
import { ToolError } from './tool-error.js';

const MAX_LINK_HOPS = 40;
export const O_DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Reading never follows the last component and never blocks on a FIFO; a tty is never taken as ours. */
export const O_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const O_CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NOCTTY;

/** `name` inside the directory open as `dir`: resolved by the kernel from the descriptor, not from a path. */
export function at(dir: FileHandle | number, name: string): string {
  return `/proc/self/fd/${typeof dir === 'number' ? dir : dir.fd}/${name}`;
}

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * An error of a step beneath the root as the model should see it: a path of /proc/self/fd means
 * nothing to it, and such an error means the tree changed under the step.
 */
function tidy(e: unknown, shown: string): unknown {
  const err = e as NodeJS.ErrnoException | undefined;
  if (!err?.code || !err.path?.startsWith('/proc/self/fd/')) return e;
  if (err.code === 'ENOENT') return new ToolError(`${shown}: no such file or directory (it changed while it was being used).`);
  if (err.code === 'ENOTDIR') return new ToolError(`${shown}: a part of the path is not a directory (it changed while it was being used).`);
  if (err.code === 'ELOOP') return new ToolError(`${shown} became a symbolic link while it was being used; refused.`);
  return new ToolError(`${shown}: ${err.code} (the path changed while it was being used, or cannot be used).`);
}

function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..' + path.sep) && rel !== '..' && !path.isAbsolute(rel));
}

/** The workspace root with symlinks resolved (the operator's path, trusted; tmp dirs are often behind one). */
export async function workspaceRoot(workspace: string): Promise<string> {
  if (!path.isAbsolute(workspace)) throw new Error(`workspace must be an absolute path: ${workspace}`);
  return realpath(workspace);
}

/** Workspace-relative form of an absolute path inside it, with forward slashes ('.' for the root). */
function toRel(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

/** The components of a path the agent gave, checked and normalised lexically (`a/../b` is `b`). */
function pathComponents(root: string, p: string): string[] {
  if (typeof p !== 'string' || p.trim() === '') throw new ToolError('The path is empty; give a path relative to the workspace root.');
  if (p.includes('\0')) throw new ToolError('The path contains a NUL byte.');
  if (path.isAbsolute(p)) {
    // The workspace as commands see it (the sandbox's fixed path) or as the host does.
    const within = [SANDBOX_WORKSPACE, root].find((r) => isInside(r, path.resolve(p)));
    const hint = within ? ` Use "${toRel(within, path.resolve(p))}" instead.` : '';
    throw new ToolError(`Absolute paths are not allowed (${p}); give a path relative to the workspace root.${hint}`);
  }
  if (p === '~' || p.startsWith('~/')) throw new ToolError(`Home-relative paths are not allowed (${p}); give a path relative to the workspace root.`);
  const lexical = path.resolve(root, p);
  if (!isInside(root, lexical)) throw new ToolError(`The path ${p} leads outside the workspace; give a path inside it.`);
  return path
    .relative(root, lexical)
    .split(path.sep)
    .filter((s) => s !== '' && s !== '.');
}

/** The owner new entries should get: a root worker's workspace belongs to the sandbox user, who must be able to change them. */
async function ownerOf(dir: FileHandle): Promise<{ uid: number; gid: number } | undefined> {
  if (!runningAsRoot()) return undefined;
  const st = await dir.stat();
  return st.uid !== 0 ? { uid: st.uid, gid: st.gid } : undefined;
}

/** A path located beneath the root: its parent directory held open, and its last name. */
export class Located {
  constructor(
    readonly root: string,
    /** The directories from the root down to the parent, all open (the root first). */
    private readonly stack: FileHandle[],
    /** The last component, or null when the path is the root itself. */
    readonly name: string | null,
    /** The path as resolved (through symlinks inside), workspace-relative with forward slashes. */
    readonly rel: string,
  ) {}

  /** The directory holding `name` (the root itself when name is null). */
  get dir(): FileHandle {
    return this.stack[this.stack.length - 1]!;
  }

  /** The descriptor of the workspace root, open as long as this is. */
  get rootFd(): number {
    return this.stack[0]!.fd;
  }

  /** The open directories above the path, the root first (none for the root itself). */
  ancestors(): FileHandle[] {
    return this.name === null ? [] : [...this.stack];
  }

  /** What the path is now (no symlink followed: the walk already followed the ones inside). */
  async kind(): Promise<'file' | 'dir' | 'link' | 'other' | 'missing'> {
    if (this.name === null) return 'dir';
    try {
      const st = await lstat(at(this.dir, this.name));
      return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : 'other';
    } catch (e) {
      if (errCode(e) === 'ENOENT') return 'missing';
      throw e;
    }
  }

  /**
   * Open the file for reading, refusing what is not a regular file (checked on the opened file,
   * so a swap cannot slip a FIFO or a symlink in) and, with `maxBytes`, what is larger.
   */
  async openRegular(opts: { maxBytes?: number } = {}): Promise<{ fh: FileHandle; size: number }> {
    if (this.name === null) throw new ToolError(`${this.rel} is a directory; give a file path.`);
    return openRegularAt(this.dir, this.name, this.rel, opts);
  }

  /** The first `headBytes` (default all) of the regular file. */
  async read(opts: { maxBytes?: number; headBytes?: number } = {}): Promise<Buffer> {
    const { fh, size } = await this.openRegular({ maxBytes: opts.maxBytes });
    try {
      return await readHead(fh, Math.min(size, opts.headBytes ?? size));
    } finally {
      await fh.close();
    }
  }

  /** Open the directory itself (the caller closes it). */
  async openDir(): Promise<FileHandle> {
    if (this.name === null) return open(at(this.dir, '.'), O_DIR);
    try {
      return await open(at(this.dir, this.name), O_DIR);
    } catch (e) {
      if (errCode(e) === 'ENOTDIR') throw new ToolError(`${this.rel} is a file, not a directory.`);
      if (errCode(e) === 'ELOOP') throw new ToolError(`${this.rel} is a symbolic link that changed while it was being read; refused.`);
      if (errCode(e) === 'ENOENT') throw new ToolError(`${this.rel}: no such file or directory.`);
      throw e;
    }
  }

  /**
   * Replace the file with `content` atomically: a temp file created beside it (O_EXCL, no symlink
   * followed), fsynced, renamed over the name within the same open directory.
   */
  async write(content: string | Buffer): Promise<void> {
    if (this.name === null) throw new ToolError(`${this.rel} is a directory; give a file path.`);
    const dir = this.dir;
    let mode = 0o644;
    try {
      const st = await lstat(at(dir, this.name));
      if (st.isDirectory()) throw new ToolError(`${this.rel} is a directory; give a file path.`);
      if (st.isFile()) mode = st.mode & 0o7777;
    } catch (e) {
      if (errCode(e) !== 'ENOENT') throw e;
    }
    const owner = await ownerOf(dir);
    const tmp = `.${this.name.slice(0, 200)}.agentrun-${randomBytes(6).toString('hex')}.tmp`;
    const fh = await open(at(dir, tmp), O_CREATE, mode);
    try {
      if (owner) await fh.chown(owner.uid, owner.gid);
      await fh.writeFile(content);
      await fh.sync();
    } catch (e) {
      await fh.close().catch(() => undefined);
      await unlink(at(dir, tmp)).catch(() => undefined);
      throw e;
    }
    await fh.close();
    try {
      await rename(at(dir, tmp), at(dir, this.name));
    } catch (e) {
      await unlink(at(dir, tmp)).catch(() => undefined);
      throw e;
    }
    // Make the rename itself durable.
    await dir.sync().catch(() => undefined);
  }

  async close(): Promise<void> {
    // The root is closed too: every Located owns its whole stack.
    await Promise.all(this.stack.map((d) => d.close().catch(() => undefined)));
  }
}

/**
 * Open the regular file `name` of an open directory for reading (see Located.openRegular); `shown`
 * names it in errors.
 */
export async function openRegularAt(dir: FileHandle, name: string, shown: string, opts: { maxBytes?: number } = {}): Promise<{ fh: FileHandle; size: number }> {
  let fh: FileHandle;
  try {
    fh = await open(at(dir, name), O_READ);
  } catch (e) {
    if (errCode(e) === 'ELOOP') throw new ToolError(`${shown} is a symbolic link that changed while it was being read; refused.`);
    if (errCode(e) === 'ENXIO') throw new ToolError(`${shown} is not a regular file (a socket or a FIFO); only regular files can be read.`);
    if (errCode(e) === 'ENOENT') throw new ToolError(`${shown}: no such file or directory.`);
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

/** Read `want` bytes from the start of an open file (fewer if it is shorter now). */
export async function readHead(fh: FileHandle, want: number): Promise<Buffer> {
  const buf = Buffer.alloc(want);
  let off = 0;
  while (off < want) {
    const { bytesRead } = await fh.read(buf, off, want - off, off);
    if (bytesRead === 0) break;
    off += bytesRead;
  }
  return buf.subarray(0, off);
}

export interface LocateOptions {
  /** Missing components are an error (else a missing path locates to where it would be). */
  mustExist?: boolean;
  /** Create missing directories on the way (for writes). */
  mkdirs?: boolean;
  /** Follow a symlink in the last component (default true; always within the workspace). */
  followLast?: boolean;
}

/**
 * Walk `p` (relative to the workspace) beneath the root, component by component. Refuses absolute
 * paths, `..` escapes and symlinks that lead outside, including dangling ones (a write through
 * them would create a file outside). The caller closes the result.
 */
export async function locate(workspace: string, p: string, opts: LocateOptions = {}): Promise<Located> {
  const root = await workspaceRoot(workspace);
  const parts = pathComponents(root, p);
  const rootFh = await open(root, O_DIR);
  const stack: FileHandle[] = [rootFh];
  const names: string[] = [];
  const todo = [...parts];
  let hops = 0;
  let owner: { uid: number; gid: number } | undefined | null = null;
  let missing = false;
  const fail = async (err: unknown): Promise<never> => {
    await Promise.all(stack.map((d) => d.close().catch(() => undefined)));
    throw tidy(err, p);
  };
  /** Follow the symlink `name` in the current directory: its target goes in front of what is left. */
  const follow = async (name: string) => {
    if (hops++ >= MAX_LINK_HOPS) return fail(new ToolError(`${p}: too many levels of symbolic links.`));
    const linkRel = names.length ? `${names.join('/')}/${name}` : name;
    const outside = () => new ToolError(`${p} goes through a symbolic link (${linkRel}) that leads outside the workspace; refused.`);
    const target = await readlink(at(stack[stack.length - 1]!, name)).catch((e: unknown) =>
      // Not a link any more: it changed under the walk, which takes the name again.
      ['ENOENT', 'EINVAL'].includes(errCode(e) ?? '') ? null : fail(e),
    );
    if (target === null) {
      todo.unshift(name);
      return;
    }
    let steps: string[];
    if (path.isAbsolute(target)) {
      const norm = path.resolve(target);
      if (!isInside(root, norm)) return fail(outside());
      // An absolute link into the workspace: walk it again from the root.
      while (stack.length > 1) await stack.pop()!.close();
      names.length = 0;
      steps = path.relative(root, norm).split(path.sep);
    } else steps = target.split('/');
    // `..` in a link climbs our own stack, never the kernel's: above the root is outside.
    let depth = names.length;
    for (const s of steps) {
      if (s === '..') depth--;
      else if (s !== '' && s !== '.') depth++;
      if (depth < 0) return fail(outside());
    }
    todo.unshift(...steps);
  };
  while (todo.length) {
    const name = todo.shift()!;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      if (stack.length === 1) return fail(new ToolError(`${p} leads outside the workspace through a symbolic link; refused.`));
      await stack.pop()!.close();
      names.pop();
      continue;
    }
    const dir = stack[stack.length - 1]!;
    if (todo.length === 0 && !missing) {
      // The last component: a symlink is followed (within the workspace), anything else is the target.
      if (opts.followLast !== false) {
        const st = await lstat(at(dir, name)).catch((e: unknown) => (errCode(e) === 'ENOENT' ? null : fail(e)));
        if (st?.isSymbolicLink()) {
          await follow(name);
          continue;
        }
        if (!st && opts.mustExist) return fail(new ToolError(`${p}: no such file or directory.`));
      }
      names.push(name);
      break;
    }
    if (missing) {
      names.push(name);
      continue;
    }
    let sub: FileHandle | undefined;
    let created = false;
    for (let attempt = 0; attempt < 2 && !sub; attempt++) {
      try {
        sub = await open(at(dir, name), O_DIR);
      } catch (e) {
        const code = errCode(e);
        if (code === 'ENOENT' && opts.mkdirs) {
          owner ??= await ownerOf(dir);
          await mkdir(at(dir, name), 0o755).then(
            () => (created = true),
            (m: unknown) => (errCode(m) === 'EEXIST' ? undefined : fail(m)),
          );
          continue;
        }
        if (code === 'ENOENT') {
          if (opts.mustExist) return fail(new ToolError(`${p}: no such file or directory.`));
          missing = true;
          break;
        }
        if (code === 'ELOOP' || code === 'ENOTDIR') {
          const st = await lstat(at(dir, name)).catch((l: unknown) => (errCode(l) === 'ENOENT' ? null : fail(l)));
          // Gone since the open: it changed under the walk; look again.
          if (!st) continue;
          if (st.isSymbolicLink()) break;
          if (code === 'ENOTDIR') {
            const shown = [...names, name].join('/');
            return fail(new ToolError(`${p}: ${shown} is a file, not a directory.`));
          }
        }
        return fail(e);
      }
    }
    if (sub) {
      if (owner && created) await sub.chown(owner.uid, owner.gid).catch(fail);
      stack.push(sub);
      names.push(name);
    } else if (missing) names.push(name);
    else await follow(name);
  }
  // With a missing directory on the way, the path locates nowhere to open; only its name is known.
  if (missing) {
    const rel = names.join('/');
    await Promise.all(stack.map((d) => d.close().catch(() => undefined)));
    throw new MissingParent(rel);
  }
  const name = names.length > stack.length - 1 ? names[names.length - 1]! : null;
  return new Located(root, stack, name, names.length ? names.join('/') : '.');
}

/** A path whose parent directory does not exist (locate without mkdirs). */
export class MissingParent extends ToolError {
  constructor(readonly rel: string) {
    super(`${rel}: no such file or directory.`);
  }
}

/** Run `fn` on the located path and close it after. */
export async function withLocated<T>(workspace: string, p: string, opts: LocateOptions, fn: (l: Located) => Promise<T>): Promise<T> {
  const l = await locate(workspace, p, opts);
  try {
    return await fn(l);
  } catch (e) {
    throw tidy(e, l.rel);
  } finally {
    await l.close();
  }
}

/** The entries of an open directory (read through its descriptor). */
export async function readdirAt(dir: FileHandle): Promise<Dirent[]> {
  return readdir(at(dir, '.'), { withFileTypes: true });
}

/**
 * The text of a regular file `name` in an open directory, or undefined when it is missing or not
 * a regular file (a symlink, FIFO, device: never followed, never blocking), cut at `maxBytes`.
 */
export async function readSmallAt(dir: FileHandle, name: string, maxBytes: number): Promise<string | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(at(dir, name), O_READ);
  } catch {
    return undefined;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return undefined;
    return (await readHead(fh, Math.min(st.size, maxBytes))).toString('utf8');
  } finally {
    await fh.close();
  }
}

/*
 * Synchronous forms on raw descriptors, for walks over a whole tree: a thread-pool round trip per
 * directory costs more than the system call itself. Each step is one non-blocking open or read
 * relative to an open directory, as above, so none can stall the thread that makes it.
 */

/** Open the subdirectory `name` of the open directory `dir`; undefined when it is not one (a symlink is not). */
/** Open the subdirectory `name` of an open directory; undefined when it is not one (a symlink is not). */
export async function openSubdir(dir: FileHandle, name: string): Promise<FileHandle | undefined> {
  try {
    return await open(at(dir, name), O_DIR);
  } catch (e) {
    if (['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES'].includes(errCode(e) ?? '')) return undefined;
    throw e;
  }
}

export function openSubdirSync(dir: number, name: string): number | undefined {
  try {
    return openSync(at(dir, name), O_DIR);
  } catch (e) {
    if (['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES'].includes(errCode(e) ?? '')) return undefined;
    throw e;
  }
}

/** The entries of the open directory `dir`, with their types. */
export function readdirAtSync(dir: number): Dirent[] {
  return readdirSync(at(dir, '.'), { withFileTypes: true });
}

/** readSmallAt on a raw descriptor, synchronously. */
export function readSmallAtSync(dir: number, name: string, maxBytes: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(at(dir, name), O_READ);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const buf = Buffer.alloc(Math.min(st.size, maxBytes));
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.toString('utf8', 0, off);
  } finally {
    closeSync(fd);
  }
}

/** `fn` on `rel` located beneath `root`; undefined when it is missing or refused (a link out, a file on the way). */
async function inTree<T>(root: string, rel: string, fn: (l: Located) => Promise<T | undefined>): Promise<T | undefined> {
  let l: Located;
  try {
    l = await locate(root, rel, { mustExist: true });
  } catch (e) {
    if (e instanceof ToolError || errCode(e) === 'ENOENT') return undefined;
    throw e;
  }
  try {
    return await fn(l);
  } finally {
    await l.close();
  }
}

/**
 * A small file of a tree the agent or repository wrote (rules, agent files, settings), read
 * beneath `root`: undefined when missing, a symlink out, or not a regular file; at most `maxBytes`.
 * The root itself is trusted (the operator's path).
 */
export async function readTreeFile(root: string, rel: string, maxBytes: number): Promise<string | undefined> {
  return inTree(root, rel, async (l) => (l.name === null ? undefined : readSmallAt(l.dir, l.name, maxBytes)));
}

/** The names in directory `rel` beneath `root` (undefined when it is missing, not a directory or a link out). */
export async function readTreeDir(root: string, rel: string): Promise<string[] | undefined> {
  return inTree(root, rel, async (l) => {
    const d = await l.openDir().catch((e: unknown) => (e instanceof ToolError ? undefined : Promise.reject(e)));
    if (!d) return undefined;
    try {
      return (await readdirAt(d)).map((e) => e.name);
    } finally {
      await d.close();
    }
  });
}

/** Write `content` to `p` beneath the workspace atomically, creating missing directories. */
export async function writeBeneath(workspace: string, p: string, content: string | Buffer): Promise<void> {
  await withLocated(workspace, p, { mkdirs: true }, (l) => l.write(content));
}

/** sha256-able bytes of `p` beneath the workspace, or null when it does not exist. */
export async function readBeneathOrNull(workspace: string, p: string, maxBytes?: number): Promise<Buffer | null> {
  try {
    return await withLocated(workspace, p, { mustExist: true }, (l) => l.read({ maxBytes }));
  } catch (e) {
    if (e instanceof MissingParent || (e instanceof ToolError && /no such file/.test(e.message))) return null;
    throw e;
  }
}

/**
 * The bytes of a small file, or undefined when it does not exist. With `beneath` (a root the file
 * is inside: a workspace), the walk goes beneath that root; without, the path is the operator's
 * and only its last component is untrusted. Either way: regular files only (a FIFO or device is
 * refused without blocking), no symlink out, at most `maxBytes` (refused when larger).
 */
export async function readSmallFile(file: string, opts: { beneath?: string; maxBytes: number }): Promise<Buffer | undefined> {
  if (opts.beneath !== undefined) {
    const root = await workspaceRoot(opts.beneath);
    const abs = path.resolve(file);
    // The caller's path may spell the root differently (through a symlink to it).
    const rel = isInside(opts.beneath, abs) ? path.relative(opts.beneath, abs) : path.relative(root, abs);
    try {
      return await withLocated(opts.beneath, rel, { mustExist: true }, (l) => l.read({ maxBytes: opts.maxBytes }));
    } catch (e) {
      if (e instanceof MissingParent || (e instanceof ToolError && / no such file or directory\.$/.test(e.message))) return undefined;
      throw e;
    }
  }
  const dir = await open(path.dirname(file), O_DIR).catch((e: unknown) => (errCode(e) === 'ENOENT' ? undefined : Promise.reject(e)));
  if (!dir) return undefined;
  try {
    const { fh, size } = await openRegularAt(dir, path.basename(file), file, { maxBytes: opts.maxBytes }).catch((e: unknown) => {
      if (e instanceof ToolError && / no such file or directory\.$/.test(e.message)) return { fh: undefined, size: 0 };
      throw e;
    });
    if (!fh) return undefined;
    try {
      return await readHead(fh, size);
    } finally {
      await fh.close();
    }
  } finally {
    await dir.close();
  }
}
