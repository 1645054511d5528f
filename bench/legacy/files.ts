// A frozen copy of this module as it was before the file tools went through descriptors (2334ddd),
// kept only so bench/tools.ts can time the old string-path access beside the new in one run.
// File enumeration shared by list_files, search_files and list_code_definition_names: a walk
// that applies the .gitignore files it meets. Never git: the workspace's .git is the agent's, and
// its configuration (core.fsmonitor, hooks) would run programs as the worker.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';

export interface FileList {
  /** Paths relative to the workspace root, forward slashes, sorted. */
  files: string[];
  /** True when the limit cut the list short. */
  truncated: boolean;
  source: 'walk';
}

/**
 * Files under `dirAbs` (recursively), relative to `root`, honouring ignore rules.
 * `limit` bounds the list; `deadline` (epoch ms) bounds the walk.
 */
export async function listFilesRecursive(root: string, dirAbs: string, opts: { limit: number; deadline?: number }): Promise<FileList> {
  return walk(root, dirAbs, opts);
}

interface IgnoreLayer {
  base: string; // relative to root, '' for the root
  ig: Ignore;
}

async function loadIgnore(root: string, relDir: string): Promise<IgnoreLayer | null> {
  try {
    const text = await readFile(path.join(root, relDir, '.gitignore'), 'utf8');
    return { base: relDir, ig: ignore().add(text) };
  } catch {
    return null;
  }
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

/** Layers for the ancestors of `relDir` (so a walk started in a subdirectory sees the root's rules). */
async function ancestorLayers(root: string, relDir: string): Promise<IgnoreLayer[]> {
  const layers: IgnoreLayer[] = [];
  const parts = relDir === '' ? [] : relDir.split('/');
  for (let i = 0; i <= parts.length; i++) {
    const l = await loadIgnore(root, parts.slice(0, i).join('/'));
    if (l) layers.push(l);
  }
  return layers;
}

async function walk(root: string, dirAbs: string, opts: { limit: number; deadline?: number }): Promise<FileList> {
  const startRel = path.relative(root, dirAbs).split(path.sep).join('/');
  const files: string[] = [];
  let truncated = false;
  const queue: { rel: string; layers: IgnoreLayer[] }[] = [{ rel: startRel, layers: await ancestorLayers(root, startRel) }];
  while (queue.length) {
    const { rel, layers } = queue.shift()!;
    if (opts.deadline && Date.now() > opts.deadline) {
      truncated = true;
      break;
    }
    let entries;
    try {
      entries = await readdir(path.join(root, rel), { withFileTypes: true });
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
        const own = await loadIgnore(root, childRel);
        queue.push({ rel: childRel, layers: own ? [...layers, own] : layers });
      } else {
        if (files.length >= opts.limit) {
          truncated = true;
          break;
        }
        files.push(childRel);
      }
    }
    if (truncated) break;
  }
  files.sort();
  return { files, truncated, source: 'walk' };
}

export interface DirEntry {
  name: string;
  isDir: boolean;
  isSymlink: boolean;
}

/** Direct children of `dirAbs` that are not ignored (and never .git). */
export async function listDirectory(root: string, dirAbs: string): Promise<DirEntry[]> {
  const entries = (await readdir(dirAbs, { withFileTypes: true })).filter((e) => e.name !== '.git');
  const all: DirEntry[] = entries.map((e) => ({ name: e.name, isDir: e.isDirectory(), isSymlink: e.isSymbolicLink() }));
  const ignored = new Set<string>();
  const rel = path.relative(root, dirAbs).split(path.sep).join('/');
  const layers = await ancestorLayers(root, rel);
  for (const e of all) if (ignoredBy(layers, rel === '' ? e.name : `${rel}/${e.name}`, e.isDir)) ignored.add(e.name);
  return all.filter((e) => !ignored.has(e.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Minimal glob → RegExp: `*`, `**`, `?`, `[...]`, `{a,b}`. A pattern without `/` matches the base name. */
export function globToRegExp(glob: string): { re: RegExp; basename: boolean } {
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
