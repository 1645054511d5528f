// The worker's repository-extensions switch (AGENTRUN_REPOSITORY_EXTENSIONS, `--repository-extensions`):
// apart from the reading of repository settings, so that commands which only check the switch
// (every CLI command opens a session) load nothing more.

export const REPOSITORY_EXTENSIONS_ENV = 'AGENTRUN_REPOSITORY_EXTENSIONS';

/** `off` or `on` (surrounding blanks ignored); anything else is an error naming `where`. */
export function parseRepositoryExtensions(value: string, where: string): boolean {
  const v = value.trim().toLowerCase();
  if (v === 'on') return true;
  if (v === 'off') return false;
  throw new Error(`${where} must be off or on, got "${value}"`);
}

/** The worker's switch from AGENTRUN_REPOSITORY_EXTENSIONS (unset or empty: off). */
export function repositoryExtensionsFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env[REPOSITORY_EXTENSIONS_ENV];
  return v === undefined || v.trim() === '' ? false : parseRepositoryExtensions(v, REPOSITORY_EXTENSIONS_ENV);
}
