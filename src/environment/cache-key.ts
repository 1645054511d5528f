// What the dependency cache keeps (a directory given to `--cache` is checked in
// src/workspace/setup-created.ts). Free of Node APIs.

/** What setup usually produces, kept when `--cache` names nothing: those that exist after setup. */
export const DEFAULT_CACHE_DIRS: readonly string[] = ['node_modules', '.venv', 'vendor/bundle'];

/**
 * Dependency directories setup makes inside the packages of a monorepo (packages/a/node_modules),
 * found at any depth down to NESTED_DEPTH and cached with the defaults when `--cache` names nothing.
 */
export const NESTED_CACHE_DIRS: readonly string[] = ['node_modules'];

/** How deep below the workspace nested dependency directories and lockfiles are looked for (packages/a/node_modules is 3). */
export const NESTED_DEPTH = 4;

/** Files whose content decides what setup installs (lockfiles, and the manifests where there is none), at the root or in a package. */
export const KEY_FILES: readonly RegExp[] = [
  /^package-lock\.json$/,
  /^npm-shrinkwrap\.json$/,
  /^yarn\.lock$/,
  /^pnpm-lock\.yaml$/,
  /^bun\.lockb?$/,
  /^package\.json$/,
  /^poetry\.lock$/,
  /^uv\.lock$/,
  /^Pipfile\.lock$/,
  /^requirements.*\.txt$/,
  /^pyproject\.toml$/,
  /^Cargo\.lock$/,
  /^go\.sum$/,
  /^Gemfile\.lock$/,
  /^composer\.lock$/,
  // What else installs read: setuptools' own manifests, workspace lists, the toolchain's pinned versions.
  /^setup\.(py|cfg)$/,
  /^Pipfile$/,
  /^pnpm-workspace\.yaml$/,
  /^\.(python|node|ruby)-version$/,
  /^\.nvmrc$/,
  /^\.tool-versions$/,
  /^go\.mod$/,
  /^Cargo\.toml$/,
  /^Gemfile$/,
];
