// The workflow code the newest recorded history was recorded against (test/histories/workflows.manifest, JSON).
// The replay test compares it with the current code: workflow code changed without a new
// recorded history of the changed path fails there, with how to record one.
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
export const MANIFEST = join(import.meta.dirname, 'workflows.manifest');

export interface HistoryManifest {
  /** sha256 over the workflow code (workflowSources). */
  workflows: string;
  /** Per file, to name what changed. */
  files: Record<string, string>;
  /** The history recorded last, against that code. */
  history: string;
  recordedAt: string;
}

/**
 * The .ts files under workflows/ and the project modules they import at run time (type-only imports are not in
 * the bundle): what the workflow bundle runs, minus npm packages.
 */
export function workflowSources(): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?\sfrom\s+'(\.{1,2}\/[^']+)'/gms))
      visit(resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
  };
  for (const f of (readdirSync(join(ROOT, 'workflows'), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'))) visit(join(ROOT, 'workflows', f));
  return [...seen].map((f) => relative(ROOT, f)).sort();
}

export function workflowsHash(): string {
  const h = createHash('sha256');
  for (const f of workflowSources()) h.update(`${f}\0${readFileSync(join(ROOT, f), 'utf8')}\0`);
  return h.digest('hex');
}

export function fileHashes(): Record<string, string> {
  return Object.fromEntries(
    workflowSources().map((f) => [
      f,
      createHash('sha256')
        .update(readFileSync(join(ROOT, f)))
        .digest('hex'),
    ]),
  );
}

/** The workflow files added, removed or changed since the manifest was written. */
export function changedSince(m: HistoryManifest): string[] {
  const now = fileHashes();
  const before = m.files ?? {};
  return [...new Set([...Object.keys(now), ...Object.keys(before)])].filter((f) => now[f] !== before[f]).sort();
}

/** Called by whatever writes a history (test/histories/record.ts, the fleet test's recorder). */
export function recordManifest(history: string): void {
  const m: HistoryManifest = { workflows: workflowsHash(), files: fileHashes(), history, recordedAt: new Date().toISOString() };
  writeFileSync(MANIFEST, JSON.stringify(m, null, 2) + '\n');
}

/** AGENTRUN_RECORD_HISTORIES=1 (integration tests): write workflow `id`'s history as test/histories/`name`, a replay fixture. */
export async function recordHistory(client: Client, id: string, name: string): Promise<void> {
  if (!process.env.AGENTRUN_RECORD_HISTORIES) return;
  const history = await client.workflow.getHandle(id).fetchHistory();
  writeFileSync(join(import.meta.dirname, name), JSON.stringify(JSON.parse(historyToJSON(history)), null, 2) + '\n');
  recordManifest(name);
}

export function readManifest(): HistoryManifest | undefined {
  return existsSync(MANIFEST) ? (JSON.parse(readFileSync(MANIFEST, 'utf8')) as HistoryManifest) : undefined;
}
