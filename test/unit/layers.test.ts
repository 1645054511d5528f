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
const WORKFLOW_LEAVES = [
  'src/types.ts',
  'src/ids.ts',
  'src/workspace/routing.ts',
  'src/model/error-types.ts',
  'src/model/pool-names.ts',
  'src/search-attributes.ts',
];
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

/**
 * The floors of src/ below its faces (the CLI, the client, the page, the library face), lowest
 * first: a module imports its own floor or the ones below it, never one above. docs/architecture.md
 * ("Layers") says what each floor holds and why it sits where it does.
 */
const FLOORS: string[][] = [
  ['kernel'],
  ['src/runtime'],
  ['src/command-safety', 'src/parser'],
  ['src/sandbox'],
  ['src/store', 'src/workspace'],
  ['src/model'],
  ['src/context'],
  ['src/tools'],
  ['src/extensions'],
  // The turn answers a call: it runs the tool and the hooks, so it stands above both.
  ['src/turn'],
  ['src/environment', 'src/tracing', 'src/embedded', 'src/conversation-result.ts'],
];
/** The kernel: types, time, logs, metrics, canonical JSON, the run config. */
const KERNEL = [
  'src/types.ts',
  'src/duration.ts',
  'src/canonical-json.ts',
  'src/log.ts',
  'src/metrics.ts',
  'src/search-attributes.ts',
  'src/config.ts',
  'src/retired.ts',
  'src/ids.ts',
];
/**
 * Modules of a room that hold only names, patterns and checks of values (no imports but the
 * kernel's): they stand on the kernel's floor, so the run config and the settings can use them.
 */
const KERNEL_LEAVES = [
  'src/model/pool-names.ts',
  'src/model/providers.ts',
  'src/model/error-types.ts',
  'src/sandbox/network.ts',
  'src/sandbox/policy.ts',
  'src/workspace/routing.ts',
];
const FACES = ['src/cli', 'src/client', 'src/ui', 'src/index.ts'];

/** The room of a src/ module: its folder under src/, or the file itself at the top of src/; the kernel is one room. */
const roomOf = (f: string): string => {
  if (KERNEL.includes(f) || KERNEL_LEAVES.includes(f)) return 'kernel';
  const parts = f.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : f;
};
/** The floor of a src/ module below the faces (its index in FLOORS), or undefined for the faces and the rest. */
const floorOf = (f: string): number | undefined => {
  if (!f.startsWith('src/') || FACES.some((face) => f === face || f.startsWith(`${face}/`))) return undefined;
  if (KERNEL.includes(f) || KERNEL_LEAVES.includes(f)) return 0;
  const i = FLOORS.findIndex((floor) => floor.includes(roomOf(f)));
  return i < 0 ? undefined : i;
};

describe('layers', () => {
  it('the scan sees the imports (a sanity check of the scanner itself)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(local).toContainEqual({ from: 'worker/index.ts', to: 'activities/index.ts', typeOnly: false });
    expect(local).toContainEqual({ from: 'workflows/session/loop.ts', to: 'activities/types.ts', typeOnly: true });
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

  it('the faces (the CLI, the page) reach workflow code only through its api files (and the patch registry, for doctor)', () => {
    const reachable = (f: string) => /(^|\/)api\.ts$/.test(f) || f === 'workflows/patches.ts';
    const wrong = local
      .filter((e) => (layer(e.from) === 'src/cli' || layer(e.from) === 'src/ui') && e.to.startsWith('workflows/') && !reachable(e.to))
      .map((e) => `${e.from} -> ${e.to}`);
    expect(wrong).toEqual([]);
  });

  it('the allowlists hold only imports that still exist', () => {
    const present = new Set(local.map((e) => `${e.from} -> ${e.to}`));
    expect(KNOWN_UPWARD.filter((w) => !present.has(w))).toEqual([]);
    const all = cycles().map((c) => c.join(' '));
    expect(KNOWN_CYCLES.map((c) => c.join(' ')).filter((c) => !all.includes(c))).toEqual([]);
  });
  it('every module of src/ below the faces has a floor', () => {
    expect(files.filter((f) => f.startsWith('src/') && !FACES.some((face) => f === face || f.startsWith(`${face}/`)) && floorOf(f) === undefined)).toEqual([]);
  });

  it('inside src/, each floor imports only its own floor and the ones below it', () => {
    const upward = local
      .filter((e) => floorOf(e.from) !== undefined && floorOf(e.to) !== undefined && floorOf(e.to)! > floorOf(e.from)!)
      .map((e) => `${e.from} -> ${e.to}`);
    expect(upward).toEqual([]);
    for (const leaf of KERNEL_LEAVES) for (const e of local.filter((e) => e.from === leaf)) expect(floorOf(e.to), `${e.from} -> ${e.to}`).toBe(0);
  });

  it('the statements of the store live in src/store/: the model room runs no SQL of its own', () => {
    const sql = /\.query\s*[(<]|\b(SELECT|INSERT INTO|DELETE FROM)\b|\bUPDATE \w+ SET\b/;
    const model = files.filter((f) => f.startsWith('src/model/'));
    expect(model.filter((f) => sql.test(readFileSync(join(root, f), 'utf8')))).toEqual([]);
    // It may name the database's type, never open a connection itself.
    expect(edges.filter((e) => e.from.startsWith('src/model/') && e.to === 'pg' && !e.typeOnly).map((e) => e.from)).toEqual([]);
  });

  it('the rooms of src/ import each other in no circle', () => {
    const rooms = new Map<string, Set<string>>();
    for (const e of local.filter((e) => e.from.startsWith('src/') && e.to.startsWith('src/') && roomOf(e.from) !== roomOf(e.to))) {
      if (!rooms.has(roomOf(e.from))) rooms.set(roomOf(e.from), new Set());
      rooms.get(roomOf(e.from))!.add(roomOf(e.to));
    }
    // A room that reaches itself through another is in a circle.
    const reaches = (from: string, target: string, seen = new Set<string>()): boolean => {
      for (const next of rooms.get(from) ?? []) {
        if (next === target) return true;
        if (!seen.has(next)) {
          seen.add(next);
          if (reaches(next, target, seen)) return true;
        }
      }
      return false;
    };
    expect([...rooms.keys()].filter((r) => reaches(r, r))).toEqual([]);
  });
});
