// The environment of a command: built from an allowlist, never from the worker's environment
// minus a pattern (a new secret name would slip through a denylist).
import { ENV_NAME_PATTERN, type SandboxSettings } from './policy.js';

/** Passed through from the worker when set. Everything else needs `--env NAME`. */
export const PASSED_THROUGH = ['PATH', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'TZ'] as const;

export function commandEnv(settings: SandboxSettings, home: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of [...PASSED_THROUGH, ...settings.env.filter((n) => ENV_NAME_PATTERN.test(n))]) {
    const v = base[name];
    if (v !== undefined) env[name] = v;
  }
  env.PATH ??= '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
  env.LANG ??= 'C.UTF-8';
  return {
    ...env,
    HOME: home,
    TMPDIR: '/tmp',
    // Nothing may wait for a terminal: there is none.
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
  };
}
