// What setup makes in a workspace: the directories a cache may keep (checked before anything loads:
// the CLI's `--cache`, a repository's settings, the cache itself), what setup created besides them
// as recorded with `setup_finished` (src/environment/setup-outputs.ts lists it), and what a result
// commit leaves out because of it. Free of Node APIs.

/** Why a `--cache` directory cannot be used (outside the workspace, the .git directory), or undefined. */
export function cacheDirRefusal(rel: string): string | undefined {
  const parts = rel.split('/').filter((p) => p && p !== '.');
  if (rel.startsWith('/')) return 'give a directory relative to the workspace (e.g. node_modules)';
  if (!parts.length) return 'the workspace itself cannot be cached: name a directory inside it (e.g. node_modules)';
  if (parts.includes('..')) return 'the directory is outside the workspace: name one inside it (e.g. node_modules)';
  if (parts[0] === '.git') return 'the .git directory is not a dependency directory';
  return undefined;
}

/** Recorded with `setup_finished`: directories setup created, and the files it created elsewhere with their blob ids. */
export interface SetupCreated {
  dirs: string[];
  files: { path: string; blob: string }[];
}

/**
 * The paths a result commit leaves out of `entries` (path → blob id in the tree to commit): setup's
 * directories whole, and its files whose content is still what setup left.
 */
export function unchangedSetupPaths(created: SetupCreated[], entries: Map<string, string>): string[] {
  const out = new Set<string>();
  for (const c of created) {
    for (const d of c.dirs) out.add(d);
    for (const f of c.files) if (entries.get(f.path) === f.blob) out.add(f.path);
  }
  return [...out];
}
