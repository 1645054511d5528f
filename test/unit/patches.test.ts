// The registry of live workflow patches (workflows/patches.ts) and the workflow code agree: every
// `patched()` / `deprecatePatch()` names an entry, every entry is still called, and its recorded
// history holds the patch's marker, so the patched path is replayed in CI.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PATCH_BUDGET, PATCHES } from '../../workflows/patches.js';

const ROOT = resolve(import.meta.dirname, '../..');
const WORKFLOWS = join(ROOT, 'workflows');
const HISTORIES = join(ROOT, 'test/histories');

type PatchCall = { id: string; call: 'patched' | 'deprecatePatch'; file: string };

/** Each patch call in `sources`: its id (a literal, or a constant declared in any of them) and the call. */
function callsIn(sources: { file: string; text: string }[]): PatchCall[] {
  // Comments may mention a call; only code counts.
  const code = sources.map(({ file, text }) => ({ file, text: text.replace(/^\s*\/\/.*$|\/\*[\s\S]*?\*\//gm, '') }));
  // Patch ids held in constants, wherever they are declared (one file may import another's).
  const constants = new Map(code.flatMap(({ text }) => [...text.matchAll(/\bconst\s+([A-Z][A-Z0-9_]*)\s*=\s*'([^']+)'/g)].map((m) => [m[1]!, m[2]!] as const)));
  const calls: PatchCall[] = [];
  for (const { file, text } of code) {
    for (const m of text.matchAll(/\b(patched|deprecatePatch)\(\s*(?:'([^']+)'|([A-Za-z_][\w.]*))\s*\)/g)) {
      const id = m[2] ?? constants.get(m[3]!);
      expect(id, `${file}: ${m[0]} names no constant or literal id this test can read`).toBeDefined();
      calls.push({ id: id!, call: m[1] as 'patched' | 'deprecatePatch', file });
    }
  }
  return calls;
}

/** Each patch call in workflow code. */
function patchCalls(): PatchCall[] {
  return callsIn(
    (readdirSync(WORKFLOWS, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts') && f !== 'patches.ts')
      .map((file) => ({ file, text: readFileSync(join(WORKFLOWS, file), 'utf8') })),
  );
}

/** The patch ids a recorded history carries as markers (`patched`: only those recorded while the code called `patched()`). */
function markers(history: string, only?: 'patched'): Set<string> {
  const h = JSON.parse(readFileSync(join(HISTORIES, history), 'utf8')) as {
    events: { markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, { payloads?: { data?: string }[] }> } }[];
  };
  const ids = new Set<string>();
  for (const e of h.events) {
    const a = e.markerRecordedEventAttributes;
    if (a?.markerName !== 'core_patch') continue;
    for (const p of a.details?.['patch-data']?.payloads ?? []) {
      const marker = JSON.parse(Buffer.from(p.data ?? '', 'base64').toString()) as { id: string; deprecated?: boolean };
      if (only !== 'patched' || !marker.deprecated) ids.add(marker.id);
    }
  }
  return ids;
}

describe('live workflow patches', () => {
  const calls = patchCalls();

  it('reads patch calls by literal id and by a constant declared in another file, and not in comments', () => {
    const found = callsIn([
      { file: 'a.ts', text: "export const LATER = 'later-id';\nif (patched('first-id')) x();\n// deprecatePatch('in-a-comment')" },
      { file: 'b.ts', text: "deprecatePatch(LATER);\n/* patched('in-a-block') */" },
    ]);
    expect(found).toEqual([
      { id: 'first-id', call: 'patched', file: 'a.ts' },
      { id: 'later-id', call: 'deprecatePatch', file: 'b.ts' },
    ]);
  });

  it('names every patch the workflow code calls in the registry, with the call its stage says', () => {
    for (const c of calls) {
      const entry = PATCHES.find((p) => p.id === c.id);
      expect(entry, `${c.file} calls ${c.call}('${c.id}'), which workflows/patches.ts does not list`).toBeDefined();
      expect(c.call, `${c.id} is '${entry!.stage}' in workflows/patches.ts but ${c.file} calls ${c.call}()`).toBe(
        entry!.stage === 'deprecated' ? 'deprecatePatch' : 'patched',
      );
    }
  });

  it('lists only patches still called, each once', () => {
    const called = new Set(calls.map((c) => c.id));
    for (const p of PATCHES) expect(called.has(p.id), `workflows/patches.ts lists ${p.id}, which no workflow code calls any more: remove the entry`).toBe(true);
    expect(new Set(PATCHES.map((p) => p.id)).size).toBe(PATCHES.length);
  });

  it('has a recorded history with each live patch marker', () => {
    for (const p of PATCHES) {
      expect(p.since).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(markers(p.history).has(p.id), `${p.history} records no marker of ${p.id}: record a history that takes the patched path`).toBe(true);
    }
  });

  it('stays within the patch budget, itself at most 4 (a patch is deprecated within a release of going out)', () => {
    expect(PATCH_BUDGET).toBeLessThanOrEqual(4);
    const patched = PATCHES.filter((p) => p.stage === 'patched');
    expect(patched.length, `more than ${PATCH_BUDGET} live patches: deprecate the ones \`agentrun doctor\` says no open run needs`).toBeLessThanOrEqual(
      PATCH_BUDGET,
    );
  });
  it('names, for each deprecated patch, the recorded histories that still hold its marker from before (its call goes when they do)', () => {
    const histories = readdirSync(HISTORIES).filter((f) => f.endsWith('.json'));
    for (const p of PATCHES.filter((x) => x.stage === 'deprecated')) {
      const holding = histories.filter((h) => markers(h, 'patched').has(p.id)).sort();
      expect(
        holding,
        `${p.id}: heldBy in workflows/patches.ts must list the histories recorded while it was patched (without them, delete its deprecatePatch call and entry)`,
      ).toEqual([...(p.heldBy ?? [])].sort());
    }
  });

  it('has no recorded history holding a marker, recorded while patched, of a patch the code no longer calls', () => {
    // Temporal refuses such a history on replay: its patch's call and entry go only once no history holds it.
    const listed = new Set(PATCHES.map((p) => p.id));
    for (const h of readdirSync(HISTORIES).filter((f) => f.endsWith('.json'))) {
      const gone = [...markers(h, 'patched')].filter((id) => !listed.has(id));
      expect(gone, `${h} holds markers of patches deleted from workflow code: record it again or delete it`).toEqual([]);
    }
  });

  it('says, for each live patch, what deprecating it removes', () => {
    for (const p of PATCHES.filter((x) => x.stage === 'patched')) expect(p.removes, `${p.id} names nothing its deprecation removes`).toBeTruthy();
  });
});
