// File enumeration shared by list_files, search_files and list_code_definition_names: a walk
// that applies the .gitignore files it meets. Never git: the workspace's .git is the agent's, and
// its configuration (core.fsmonitor, hooks) would run programs as the worker.
import type { FileHandle } from 'node:fs/promises';
import ignore, { type Ignore } from 'ignore';
import { openSubdir, readdirAt, readSmallAt, type Located } from '../workspace/beneath.js';

export interface FileList {
  /** Paths relative to the workspace root, forward slashes, sorted. */
  files: string[];
  /** True when the limit cut the list short. */
  truncated: boolean;
  source: 'walk';
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

/**
 * Files under the located directory (recursively), relative to the workspace root, honouring
 * ignore rules; breadth first, every directory opened beneath the one before it (a symlink is
 * never entered). `limit` bounds the list; `deadline` (epoch ms) bounds the walk.
 */
export async function listFilesRecursive(loc: Located, opts: { limit: number; deadline?: number }): Promise<FileList> {
  const start = await loc.openDir();
  const startRel = loc.rel === '.' ? '' : loc.rel;
  const files: string[] = [];
  let truncated = false;
  // Siblings come one after the other, so their parent is opened once for all of them.
  let parent: { rel: string; fh: FileHandle } | undefined;
  const openRel = async (rel: string): Promise<FileHandle | undefined> => {
    if (rel === startRel) return start;
    const cut = rel.lastIndexOf('/');
    const parentRel = cut < 0 ? '' : rel.slice(0, cut);
    if (parent?.rel !== parentRel) {
      if (parent && parent.fh !== start) await parent.fh.close();
      parent = undefined;
      let fh: FileHandle | undefined = start;
      for (const name of (startRel === '' ? parentRel : parentRel.slice(startRel.length + 1)).split('/').filter(Boolean)) {
        const next: FileHandle | undefined = await openSubdir(fh, name);
        if (fh !== start) await fh.close();
        fh = next;
        if (!fh) return undefined;
      }
      parent = { rel: parentRel, fh };
    }
    return openSubdir(parent.fh, rel.slice(cut + 1));
  };
  try {
    const queue: { rel: string; layers: IgnoreLayer[] }[] = [{ rel: startRel, layers: await ancestorLayers(loc, start) }];
    while (queue.length) {
      const { rel, layers } = queue.shift()!;
      if (opts.deadline && Date.now() > opts.deadline) {
        truncated = true;
        break;
      }
      const dir = await openRel(rel);
      if (!dir) continue;
      try {
        let entries;
        try {
          entries = await readdirAt(dir);
        } catch {
          continue;
        }
        entries.sort((a, b) => (a.name < b.name ? -1 : 1));
        for (const e of entries) {
          if (e.name === '.git') continue;
          const childRel = rel === '' ? e.name : `${rel}/${e.name}`;
          const isDir = e.isDirectory();
          if (ignoredBy(layers, childRel, isDir)) continue;
          if (isDir) {
            const sub = await openSubdir(dir, e.name);
            const own = sub ? await loadIgnore(sub, childRel) : null;
            await sub?.close();
            queue.push({ rel: childRel, layers: own ? [...layers, own] : layers });
          } else {
            if (files.length >= opts.limit) {
              truncated = true;
              break;
            }
            files.push(childRel);
          }
        }
      } finally {
        if (dir !== start) await dir.close();
      }
      if (truncated) break;
    }
  } finally {
    if (parent && parent.fh !== start) await parent.fh.close();
    await start.close();
  }
  files.sort();
  return { files, truncated, source: 'walk' };
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
