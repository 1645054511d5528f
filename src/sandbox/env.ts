// The environment of a command: built from an allowlist, never from the worker's environment
// minus a pattern (a new secret name would slip through a denylist).
import { ENV_NAME_PATTERN, neverPassed, type SandboxSettings } from './policy.js';
import { networkPolicy } from './network.js';

/** Passed through from the worker when set. Everything else needs `--env NAME`. */
const PASSED_THROUGH = ['PATH', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'TZ'] as const;

/** A name `--env` may pass on this worker: in its `--allow-env` list and never one of its own. */
function passable(name: string, settings: SandboxSettings): boolean {
  return ENV_NAME_PATTERN.test(name) && !neverPassed(name) && (settings.allowedEnv?.includes(name) ?? false);
}

const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** What the sandbox's root holds of a PATH: the system's directories; the operator's toolchains are added by name. */
const SANDBOX_ROOTS = ['/usr', '/bin', '/sbin'];

/**
 * The worker's PATH as the sandbox sees it: only its directories under the sandbox's root (`/usr`,
 * `/bin`, `/sbin`) or the operator's toolchain directories (AGENTRUN_SANDBOX_PATHS). The rest
 * (a home's tools, the project's node_modules/.bin) is not there anyway, and would tell the agent
 * how the worker is laid out.
 */
function sandboxPath(workerPath: string | undefined, base: NodeJS.ProcessEnv): string {
  const toolchains = (base.AGENTRUN_SANDBOX_PATHS ?? '')
    .split(/[:,]/)
    .map((p) => p.trim())
    .filter((p) => p.startsWith('/') && p !== '/');
  const under = (dir: string, root: string) => dir === root || dir.startsWith(`${root.replace(/\/+$/, '')}/`);
  const kept = (workerPath ?? '')
    .split(':')
    .filter((d, i, all) => d.startsWith('/') && !d.includes('/../') && all.indexOf(d) === i)
    .filter((d) => [...SANDBOX_ROOTS, ...toolchains].some((root) => under(d, root)));
  return kept.length ? kept.join(':') : SYSTEM_PATH;
}

export function commandEnv(settings: SandboxSettings, home: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // The worker's list filters here too: a conversation whose first-step check was skipped (or ran
  // on another worker) still gets nothing this worker does not allow.
  for (const name of [...PASSED_THROUGH, ...settings.env.filter((n) => passable(n, settings))]) {
    const v = base[name];
    if (v !== undefined) env[name] = v;
  }
  env.PATH = sandboxPath(env.PATH, base);
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

/**
 * The names this worker lets `--env` pass: AGENTRUN_ALLOW_ENV (comma-separated; what
 * `agentrun worker --allow-env` sets), or `names` when given. Throws one line for a name that is
 * not a variable name or is one of the worker's own.
 */
export function allowedEnv(names?: readonly string[], environment: NodeJS.ProcessEnv = process.env): string[] {
  const list = names ?? (environment.AGENTRUN_ALLOW_ENV ?? '').split(',');
  const out: string[] = [];
  for (const raw of list) {
    const name = raw.trim();
    if (!name) continue;
    if (!ENV_NAME_PATTERN.test(name)) throw new Error(`--allow-env ${JSON.stringify(name)}: expected an environment variable name such as NPM_TOKEN`);
    const own = neverPassed(name);
    if (own) throw new Error(`--allow-env ${name}: ${name} is ${own} and is never passed to commands`);
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/**
 * What a sandboxed command is told about its network. Off: the package managers are offline, so
 * they fail at once instead of retrying lookups for minutes. Otherwise every proxy variable names
 * the egress proxy on the sandbox's loopback (and nothing bypasses it: NO_PROXY is empty).
 */
export function networkEnv(settings: SandboxSettings, proxyUrl: string): NodeJS.ProcessEnv {
  if (networkPolicy(settings.network).mode === 'off')
    return {
      npm_config_offline: 'true',
      YARN_ENABLE_OFFLINE_MODE: '1',
      PIP_NO_INDEX: '1',
      UV_OFFLINE: '1',
      CARGO_NET_OFFLINE: 'true',
      GOPROXY: 'off',
    };
  return {
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    ALL_PROXY: proxyUrl,
    all_proxy: proxyUrl,
    NO_PROXY: '',
    no_proxy: '',
    npm_config_proxy: proxyUrl,
    npm_config_https_proxy: proxyUrl,
    YARN_HTTP_PROXY: proxyUrl,
    YARN_HTTPS_PROXY: proxyUrl,
    PIP_PROXY: proxyUrl,
    CARGO_HTTP_PROXY: proxyUrl,
  };
}
