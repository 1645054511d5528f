// The layering of docs/decisions.md ("Layers"), checked on the imports of the sources: no import
// cycles, and each layer imports only what is below it. A scan of the import statements (type-only
// imports included: a circle of types couples the layers as much as one of values).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

interface Edge {
  from: string;
  to: string;
  /** `import type` / `export type`, or every name imported with `type`: erased from the JavaScript. */
  typeOnly: boolean;
}

function sources(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(root, dir))) {
      const p = join(dir, e);
      if (statSync(join(root, p)).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(p);
    }
  };
  for (const d of ['src', 'workflows', 'activities', 'worker']) walk(d);
  return files.sort();
}

const IMPORT = /\b(import|export)\s+(type\s+)?([\w$*{},\s]*?)\s*from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm;

/** Every import of `file`: relative ones resolved to a source path, packages as they are written. */
function importsOf(file: string): Edge[] {
  const text = readFileSync(join(root, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const edges: Edge[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[4] ?? m[5] ?? m[6]!;
    const names = m[3] ?? '';
    const typeOnly =
      Boolean(m[2]) ||
      (/^\{[^}]*\}$/.test(names.trim()) &&
        names
          .replace(/[{}\s]/g, '')
          .split(',')
          .filter(Boolean)
          .every((n) => n.startsWith('type')));
    const to = spec.startsWith('.') ? relative(root, resolve(dirname(join(root, file)), spec.replace(/\.js$/, '.ts'))) : spec;
    if (spec.startsWith('.') && !existsSync(join(root, to))) continue; // non-source files (page.html, package.json)
    edges.push({ from: file, to, typeOnly });
  }
  return edges;
}

const files = sources();
const edges = files.flatMap(importsOf);
const local = edges.filter((e) => files.includes(e.to));

/** Strongly connected components of more than one file (Tarjan): each is an import cycle. */
function cycles(): string[][] {
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const e of local) next.get(e.from)!.push(e.to);
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1) found.push(c.sort());
    }
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return found;
}

/**
 * Cycles that existed before this check, each to be broken by the change that owns it; a new
 * cycle, or one of these growing, fails.
 */
const KNOWN_CYCLES: string[][] = [];

/** The deterministic modules of src/ the workflow code runs (no Node APIs, no I/O, nothing else of src/). */
const WORKFLOW_LEAVES = ['src/types.ts', 'src/workspace/routing.ts', 'src/model/error-types.ts', 'src/search-attributes.ts'];
/** Packages workflow code may load (the bundle runs in Temporal's sandbox). */
const WORKFLOW_PACKAGES = ['@temporalio/workflow', '@temporalio/common'];

/** Imports that run against the layers today, each to be moved by the change that owns it. */
const KNOWN_UPWARD: string[] = [];

const layer = (f: string): string => {
  if (f === 'workflows/api.ts') return 'api';
  if (f === 'src/index.ts') return 'library';
  for (const l of ['workflows', 'activities', 'worker', 'src/cli', 'src/client', 'src/ui']) if (f.startsWith(`${l}/`)) return l;
  return f.startsWith('src/') ? 'core' : 'other';
};

/** Which layers each layer may import (its own included); docs/decisions.md explains them. */
const ALLOWED: Record<string, string[]> = {
  core: ['core'],
  // Which modules of core, and how (types, or the deterministic leaves), the two tests above say.
  api: ['core'],
  workflows: ['workflows', 'api', 'core'],
  activities: ['activities', 'api', 'core'],
  worker: ['worker', 'activities', 'api', 'core'],
  'src/client': ['src/client', 'api', 'workflows', 'core'],
  'src/ui': ['src/ui', 'src/client', 'api', 'core'],
  'src/cli': ['src/cli', 'src/client', 'src/ui', 'api', 'workflows', 'core'],
  library: ['src/client', 'src/cli', 'api', 'core', 'src/ui'],
};
/** The library faces that start a worker in the caller's process. */
const WORKER_FACES = ['src/client/worker.ts', 'src/index.ts'];

describe('layers', () => {
  it('the scan sees the imports (a sanity check of the scanner itself)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(local).toContainEqual({ from: 'worker/index.ts', to: 'activities/index.ts', typeOnly: false });
    expect(local).toContainEqual({ from: 'workflows/session.ts', to: 'activities/types.ts', typeOnly: true });
    expect(edges.some((e) => e.from === 'src/tracing/index.ts' && e.to === '@opentelemetry/api')).toBe(true); // a dynamic import
  });

  it('has no import cycles but the known ones', () => {
    const known = new Set(KNOWN_CYCLES.map((c) => c.join(' ')));
    expect(cycles().filter((c) => !known.has(c.join(' ')))).toEqual([]);
  });

  it('workflows/api.ts is a leaf: types of src/ at most', () => {
    for (const e of edges.filter((e) => e.from === 'workflows/api.ts'))
      expect(e.to.startsWith('src/') ? e.typeOnly : WORKFLOW_PACKAGES.includes(e.to), `${e.from} -> ${e.to}`).toBe(true);
  });

  it('workflow code runs only workflow code, the deterministic leaves and the Temporal workflow packages; the rest it may name as types', () => {
    for (const e of edges.filter((e) => e.from.startsWith('workflows/') && !e.typeOnly)) {
      const ok = e.to.startsWith('workflows/') || WORKFLOW_LEAVES.includes(e.to) || WORKFLOW_PACKAGES.includes(e.to);
      expect(ok, `${e.from} -> ${e.to}`).toBe(true);
    }
    for (const leaf of WORKFLOW_LEAVES)
      for (const e of edges.filter((e) => e.from === leaf && !e.typeOnly))
        expect(WORKFLOW_LEAVES.includes(e.to) || WORKFLOW_PACKAGES.includes(e.to), `${e.from} -> ${e.to}`).toBe(true);
  });

  it('each layer imports only the layers below it', () => {
    const wrong: string[] = [];
    for (const e of local) {
      const [from, to] = [layer(e.from), layer(e.to)];
      // Workflow code names the activities' inputs and results (erased; Temporal's samples do the same).
      if (from === 'workflows' && to === 'activities' && e.typeOnly) continue;
      // The CLI runs workers (`agentrun worker`, `dev`); the library faces start one in the caller's process.
      if (to === 'worker' && (from === 'src/cli' || WORKER_FACES.includes(e.from))) continue;
      if (!ALLOWED[from]?.includes(to)) wrong.push(`${e.from} -> ${e.to}`);
    }
    expect(wrong.filter((w) => !KNOWN_UPWARD.includes(w))).toEqual([]);
  });

  it('the allowlists hold only imports that still exist', () => {
    const present = new Set(local.map((e) => `${e.from} -> ${e.to}`));
    expect(KNOWN_UPWARD.filter((w) => !present.has(w))).toEqual([]);
    const all = cycles().map((c) => c.join(' '));
    expect(KNOWN_CYCLES.map((c) => c.join(' ')).filter((c) => !all.includes(c))).toEqual([]);
  });
});
