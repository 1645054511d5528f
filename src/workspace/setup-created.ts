// What setup created besides its cached directories, as recorded with `setup_finished`
// (src/environment/setup-outputs.ts lists it), and what a result commit leaves out because of it.

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
