// File enumeration shared by list_files, search_files and list_code_definition_names: a walk
// that applies the .gitignore files it meets. Never git: the workspace's .git is the agent's, and
// its configuration (core.fsmonitor, hooks) would run programs as the worker.
import { closeSync, openSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import ignore, { type Ignore } from 'ignore';
import { at, O_DIR, openSubdirSync, readdirAt, readdirAtSync, readSmallAt, readSmallAtSync, type Located } from '../workspace/beneath.js';

export interface FileList {
  /** Paths relative to the workspace root, forward slashes, sorted. */
  files: string[];
  /** True when the limit cut the list short. */
  truncated: boolean;
  source: 'walk';
}

/**
 * A FileList whose directories stay open: `dirFds[i]` is a descriptor of the directory holding
 * `files[i]` (-1 where too many were open; reach it from the root), valid until `close()`.
 */
export interface HeldFileList extends FileList {
  dirFds: Int32Array;
  close(): void;
}

/** A .gitignore larger than this is read only this far. */
const IGNORE_FILE_BYTES = 1024 * 1024;

interface IgnoreLayer {
  base: string; // relative to root, '' for the root
  ig: Ignore;
}

/** The rules of the `.gitignore` in an open directory: read without following a link or blocking on a FIFO. */
async function loadIgnore(dir: FileHandle, relDir: string): Promise<IgnoreLayer | null> {
  const text = await readSmallAt(dir, '.gitignore', IGNORE_FILE_BYTES);
  return text === undefined ? null : { base: relDir, ig: ignore().add(text) };
}

function ignoredBy(layers: IgnoreLayer[], rel: string, isDir: boolean): boolean {
  let ignored = false;
  for (const l of layers) {
    const sub = l.base === '' ? rel : rel.slice(l.base.length + 1);
    const r = l.ig.test(isDir ? sub + '/' : sub);
    if (r.ignored) ignored = true;
    else if (r.unignored) ignored = false;
  }
  return ignored;
}

/** Layers for the located directory and its ancestors (so a walk started in a subdirectory sees the root's rules). */
async function ancestorLayers(loc: Located, dir: FileHandle): Promise<IgnoreLayer[]> {
  const names = loc.rel === '.' ? [] : loc.rel.split('/');
  const dirs = [...loc.ancestors(), dir];
  const layers: IgnoreLayer[] = [];
  for (let i = 0; i < dirs.length; i++) {
    const l = await loadIgnore(dirs[i]!, names.slice(0, i).join('/'));
    if (l) layers.push(l);
  }
  return layers;
}

/** Directory descriptors one walk keeps open at once (queued and held); beyond, it reopens by name. */
const OPEN_DIRS_MAX = 1024;
/** The walk runs synchronously (a few system calls per directory) and yields this often. */
const SLICE_MS = 10;

/**
 * Files under the located directory (recursively), relative to the workspace root, honouring
 * ignore rules; breadth first, every directory opened once, beneath the one before it (a symlink
 * is never entered). `limit` bounds the list; `deadline` (epoch ms) bounds the walk.
 */
export async function listFilesRecursive(loc: Located, opts: { limit: number; deadline?: number }): Promise<FileList> {
  const r = await walkTree(loc, { ...opts, hold: false });
  return { files: r.files, truncated: r.truncated, source: 'walk' };
}

/** listFilesRecursive that keeps each file's directory open for the caller (search_files reads beneath them). */
export async function listFilesHeld(loc: Located, opts: { limit: number; deadline?: number }): Promise<HeldFileList> {
  return walkTree(loc, { ...opts, hold: true });
}

async function walkTree(loc: Located, opts: { limit: number; deadline?: number; hold: boolean }): Promise<HeldFileList> {
  const startFh = await loc.openDir();
  const startRel = loc.rel === '.' ? '' : loc.rel;
  const open = new Set<number>();
  const track = (fd: number | undefined): number => {
    if (fd !== undefined && fd >= 0) open.add(fd);
    return fd ?? -1;
  };
  const release = (fd: number) => {
    if (open.delete(fd)) closeSync(fd);
  };
  const closeAll = () => {
    for (const fd of open) closeSync(fd);
    open.clear();
  };
  const found: { rel: string; dir: number }[] = [];
  let truncated = false;
  try {
    const start = track(openSync(at(startFh, '.'), O_DIR));
    const startLayers = await ancestorLayers(loc, startFh);
    await startFh.close();
    // A directory queued while too many were open is reopened from the start, one name at a time;
    // siblings come one after the other, so their parent is walked to once for all of them.
    let parent: { rel: string; fd: number } | undefined;
    const reopen = (rel: string): number => {
      const cut = rel.lastIndexOf('/');
      const parentRel = cut < 0 ? '' : rel.slice(0, cut);
      if (parent?.rel !== parentRel) {
        if (parent) release(parent.fd);
        parent = undefined;
        let fd = start;
        for (const name of (startRel === '' ? parentRel : parentRel.slice(startRel.length + 1)).split('/').filter(Boolean)) {
          const next = track(openSubdirSync(fd, name));
          if (fd !== start) release(fd);
          fd = next;
          if (fd < 0) return -1;
        }
        parent = { rel: parentRel, fd };
      }
      return track(openSubdirSync(parent.fd, rel.slice(cut + 1)));
    };
    const queue: { rel: string; layers: IgnoreLayer[]; fd: number }[] = [{ rel: startRel, layers: startLayers, fd: start }];
    let sliceStart = performance.now();
    for (let q = 0; q < queue.length; q++) {
      const { rel, fd: queued } = queue[q]!;
      let layers = queue[q]!.layers;
      if (opts.deadline && Date.now() > opts.deadline) {
        truncated = true;
        break;
      }
      if (performance.now() - sliceStart > SLICE_MS) {
        await new Promise((r) => setImmediate(r));
        sliceStart = performance.now();
      }
      const dir = queued >= 0 ? queued : reopen(rel);
      if (dir < 0) continue;
      let entries;
      try {
        entries = readdirAtSync(dir);
      } catch {
        if (dir !== start) release(dir);
        continue;
      }
      // A directory's own rules apply to what is below it (the start's are among its ancestors').
      if (rel !== startRel && entries.some((e) => e.name === '.gitignore')) {
        const own = loadIgnoreSync(dir, rel);
        if (own) layers = [...layers, own];
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : 1));
      // Its files name this descriptor, so once one is listed it stays open until close().
      const hold = opts.hold && open.size <= OPEN_DIRS_MAX;
      let held = false;
      for (const e of entries) {
        if (e.name === '.git') continue;
        const childRel = rel === '' ? e.name : `${rel}/${e.name}`;
        const isDir = e.isDirectory();
        if (ignoredBy(layers, childRel, isDir)) continue;
        if (isDir) {
          let sub = -1;
          if (open.size < OPEN_DIRS_MAX) {
            sub = track(openSubdirSync(dir, e.name));
            // Not a directory any more (or not ours to read): nothing to walk.
            if (sub < 0) continue;
          }
          queue.push({ rel: childRel, layers, fd: sub });
        } else {
          if (found.length >= opts.limit) {
            truncated = true;
            break;
          }
          held ||= hold;
          found.push({ rel: childRel, dir: hold ? dir : -1 });
        }
      }
      // The start stays open to the end: directories queued without a descriptor are reopened from it.
      if (!held && dir !== start) release(dir);
      queue[q] = undefined as never;
      if (truncated) break;
    }
    for (let q = 0; q < queue.length; q++) if (queue[q]) release(queue[q]!.fd);
    if (parent) release(parent.fd);
    if (!found.some((f) => f.dir === start)) release(start);
  } catch (e) {
    await startFh.close().catch(() => undefined);
    closeAll();
    throw e;
  }
  found.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  if (!opts.hold) closeAll();
  const files = found.map((f) => f.rel);
  return { files, truncated, source: 'walk', dirFds: Int32Array.from(found, (f) => f.dir), close: closeAll };
}

/** loadIgnore on a raw descriptor, synchronously. */
function loadIgnoreSync(dir: number, relDir: string): IgnoreLayer | null {
  const text = readSmallAtSync(dir, '.gitignore', IGNORE_FILE_BYTES);
  return text === undefined ? null : { base: relDir, ig: ignore().add(text) };
}

export interface DirEntry {
  name: string;
  isDir: boolean;
  isSymlink: boolean;
}

/** Direct children of the located directory that are not ignored (and never .git). */
export async function listDirectory(loc: Located): Promise<DirEntry[]> {
  const dir = await loc.openDir();
  try {
    const entries = (await readdirAt(dir)).filter((e) => e.name !== '.git');
    const all: DirEntry[] = entries.map((e) => ({ name: e.name, isDir: e.isDirectory(), isSymlink: e.isSymbolicLink() }));
    const rel = loc.rel === '.' ? '' : loc.rel;
    const layers = await ancestorLayers(loc, dir);
    const ignored = new Set<string>();
    for (const e of all) if (ignoredBy(layers, rel === '' ? e.name : `${rel}/${e.name}`, e.isDir)) ignored.add(e.name);
    return all.filter((e) => !ignored.has(e.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } finally {
    await dir.close();
  }
}

/** Minimal glob → RegExp: `*`, `**`, `?`, `[...]`, `{a,b}`. A pattern without `/` matches the base name. */
function globToRegExp(glob: string): { re: RegExp; basename: boolean } {
  let re = '';
  let inBrace = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const slash = glob[i + 2] === '/';
        re += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        let cls = glob.slice(i + 1, end).replace(/\\/g, '\\\\');
        if (cls.startsWith('!')) cls = '^' + cls.slice(1);
        re += `[${cls}]`;
        i = end;
      }
    } else if (c === '{') {
      inBrace++;
      re += '(?:';
    } else if (c === '}' && inBrace > 0) {
      inBrace--;
      re += ')';
    } else if (c === ',' && inBrace > 0) re += '|';
    else re += c.replace(/[.+^$()|\\]/g, '\\$&');
  }
  const basename = !glob.includes('/');
  return { re: new RegExp(`^${re}$`), basename };
}

export function globMatcher(glob: string | undefined): (rel: string) => boolean {
  if (!glob || glob.trim() === '' || glob.trim() === '*') return () => true;
  const { re, basename } = globToRegExp(glob.trim().replace(/^\.\//, ''));
  return (rel) => re.test(basename ? rel.slice(rel.lastIndexOf('/') + 1) : rel);
}
