// `agentrun --version`: the package version and the git commit the code was built from.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface VersionInfo {
  version: string;
  /** Short commit (with `-dirty` when the build had uncommitted changes); undefined outside git. */
  commit?: string;
}

let cached: VersionInfo | undefined;

/** From dist/build-info.json (written by `npm run build`), else, running the sources, package.json and git. */
export function versionInfo(): VersionInfo {
  if (cached) return cached;
  // dist/src/runtime/version.js → dist/build-info.json; src/runtime/version.ts → <checkout>/package.json.
  const built = readJson(new URL('../../build-info.json', import.meta.url));
  if (built?.version) return (cached = { version: String(built.version), ...(built.commit ? { commit: String(built.commit) } : {}) });
  const pkg = readJson(new URL('../../package.json', import.meta.url));
  let commit: string | undefined;
  try {
    const cwd = new URL('../..', import.meta.url);
    commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
      commit += '-dirty';
  } catch {
    // not a git checkout
  }
  return (cached = { version: String(pkg?.version ?? '0.0.0'), ...(commit ? { commit } : {}) });
}

/** `0.1.0 (3f2a9c1b7d0e)`, the form Temporal's build ids and `--version` use. */
export function versionString(v: VersionInfo = versionInfo()): string {
  return v.commit ? `${v.version} (${v.commit})` : v.version;
}

function readJson(url: URL): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(url, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The Worker Versioning build id of this code: `0.1.0-3f2a9c1b7d0e` (version and commit). */
export function buildId(v: VersionInfo = versionInfo()): string {
  return v.commit ? `${v.version}-${v.commit}` : v.version;
}
