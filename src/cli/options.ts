// Run options from flags, a config file and the environment, validated into a RunConfig.
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, normalize, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { parseDuration, runConfigSchema, type RunConfig } from '../config.js';
import { parseSafeZone } from '../context/safe-zone.js';
import { contextWindowFor } from '../model/tokens.js';
import { profileFor } from '../model/call.js';
import { isScripted, scriptedFile } from '../model/client.js';
import { isRecorded, recordedId } from '../model/scripted/recorded.js';
import type { ProviderName } from '../model/providers.js';
import { loadScript } from '../model/scripted/script.js';
import { CliError } from './errors.js';
import { agentrunHome } from '../runtime/home.js';
import { networkRefusal } from '../sandbox/network.js';
import { envRefusal } from '../sandbox/policy.js';
import { assertWorkspaceSafe, UnsafeWorkspaceError, workerPlaces } from '../workspace/guard.js';
import { repositorySourceRefusal, repositorySourcesFromEnv } from '../workspace/sources.js';
import { flagOf, RUN_SETTINGS, type RunSetting } from './settings.js';
import { SettingsError } from '../extensions/settings.js';
import { readRepositoryExtensions, repositoryExtensionsFromEnv, repositorySettings } from '../extensions/repository.js';
import { cacheDirRefusal } from '../workspace/setup-created.js';

export const QUICKSTART_SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), '../../examples/quickstart.yaml');

/** Flags shared by `run`, `start` and `schedule create`: the keys of RUN_SETTINGS, as commander parsed them. */
export type RunFlags = Record<string, string | string[] | boolean | undefined>;

/** The flag or config-file key a value came from, for error messages. */
type Source = { flag: string } | { file: string; key: string } | { env: string };

function where(s: RunSetting, src: Source): string {
  if ('flag' in src) return src.flag;
  if ('file' in src) return `${s.key} in ${src.file}`;
  return `$${src.env}`;
}

/** A number with an optional k (thousand) or M (million): `128000`, `32k`, `1M`, `1.5M`. */
export function parseTokenCount(v: string | number): number {
  if (typeof v === 'number') return v;
  const m = /^(\d+(?:\.\d+)?)\s*([kKmM]?)$/.exec(v.trim());
  if (!m) return NaN;
  return Math.round(Number(m[1]) * (m[2] ? (m[2].toLowerCase() === 'k' ? 1_000 : 1_000_000) : 1));
}

/** The value of one setting in the unit RunConfig holds (ms, USD, tokens), or a CliError naming where it came from. */
function convert(s: RunSetting, raw: unknown, src: Source): unknown {
  const name = where(s, src);
  const bad = (what: string): never => {
    throw new CliError(`${name} must be ${what}, got ${JSON.stringify(raw)}`);
  };
  const str = typeof raw === 'string' ? raw : typeof raw === 'number' ? String(raw) : undefined;
  switch (s.kind) {
    case 'int':
    case 'count': {
      const n = typeof raw === 'number' ? raw : Number(str);
      const min = s.kind === 'int' ? 1 : 0;
      if (str === undefined || str.trim() === '' || !Number.isInteger(n) || n < min || (s.max !== undefined && n > s.max)) {
        bad(`a whole number${s.kind === 'int' ? ' ≥ 1' : ' ≥ 0'}${s.max !== undefined ? ` and ≤ ${s.max}` : ''}`);
      }
      return n;
    }
    case 'list': {
      const items = Array.isArray(raw) ? raw : str !== undefined ? str.split(',') : bad('a list of names');
      return (items as unknown[]).map((x) => String(x).trim()).filter(Boolean);
    }
    case 'commands':
    case 'paths': {
      // Never split on commas: a shell command may hold one.
      const items = Array.isArray(raw)
        ? raw
        : str !== undefined
          ? [str]
          : bad(s.kind === 'commands' ? 'a shell command or a list of them' : 'a directory or a list of them');
      return (items as unknown[]).map((x) => {
        if (typeof x !== 'string' || !x.trim()) bad(s.kind === 'commands' ? 'non-empty shell commands (strings)' : 'directory names (strings)');
        return (x as string).trim();
      });
    }
    case 'number': {
      const n = typeof raw === 'number' ? raw : Number(str);
      const inRange = (s.min === undefined || n >= s.min) && (s.max === undefined || n <= s.max);
      if (str === undefined || str.trim() === '' || !Number.isFinite(n) || !inRange)
        bad(s.min !== undefined && s.max !== undefined ? `a number from ${s.min} to ${s.max}` : 'a number');
      return n;
    }
    case 'usd': {
      const n = typeof raw === 'number' ? raw : Number(str);
      if (str === undefined || str.trim() === '' || !Number.isFinite(n) || n <= 0) bad('a positive number (USD)');
      return n;
    }
    case 'duration':
      if (str === undefined) bad('a duration (90s, 30m, 2h)');
      try {
        const ms = parseDuration(str!);
        if (ms <= 0) throw new Error('must be positive');
        return ms;
      } catch {
        return bad('a duration such as 90s, 30m, 2h or 1d');
      }
    case 'tokens': {
      const n = str === undefined ? NaN : parseTokenCount(typeof raw === 'number' ? raw : str);
      if (!Number.isInteger(n) || n <= 0) bad('a token count such as 128000, 32k or 1M');
      return n;
    }
    case 'size':
      if (str === undefined) bad('a token count (80k), a fraction (0.8) or a percentage (80%)');
      return typeof raw === 'number' ? raw : str;
    case 'enum':
      if (str === undefined || !s.values!.includes(str)) bad(`one of ${s.values!.join(', ')}`);
      return str;
    case 'network': {
      const refused = str === undefined ? 'expected off, on, or allow:HOST[,HOST…]' : networkRefusal(str);
      // The refusal names the flag it came from (--network, --setup-network), the file's key or the variable.
      if (refused) throw new CliError(`${name}${'flag' in src ? ' ' : ': '}${refused.replace(/^--network /, '')}`);
      return str!.trim();
    }
    case 'bool':
      if (typeof raw === 'boolean') return raw;
      if (str === 'true' || str === 'false') return str === 'true';
      return bad('true or false');
    default:
      if (str === undefined || str.trim() === '') bad('a non-empty string');
      return str;
  }
}

const FILE_KEYS = new Map(RUN_SETTINGS.filter((s) => !s.flagOnly).map((s) => [s.key, s]));

/** Unknown keys are refused (a key that is silently dropped is an option that lies). */
function checkFileKeys(file: Record<string, unknown>, path: string): void {
  for (const key of Object.keys(file)) {
    if (FILE_KEYS.has(key)) continue;
    const near = closest(key, [...FILE_KEYS.keys()]);
    throw new CliError(
      `config file ${path}: unknown key "${key}"${near ? ` (did you mean "${near}"?)` : ''}; keys are the flags' names in camelCase (docs/configuration.md)`,
    );
  }
}

/** The known key nearest to a mistyped one (same letters ignoring case and a unit suffix, or a small edit distance). */
function closest(key: string, known: string[]): string | undefined {
  const norm = (k: string) =>
    k
      .toLowerCase()
      .replace(/(usd|ms|turns|action)$/, '')
      .replace(/[-_]/g, '');
  const same = known.find((k) => norm(k) === norm(key));
  if (same) return same;
  let best: { k: string; d: number } | undefined;
  for (const k of known) {
    const d = editDistance(k.toLowerCase(), key.toLowerCase());
    if (d <= 3 && (!best || d < best.d)) best = { k, d };
  }
  return best?.k;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

export async function readConfigFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    const v = YAML.parse(text) as unknown;
    if (!v || typeof v !== 'object') throw new Error('expected a mapping of option names to values');
    return v as Record<string, unknown>;
  } catch (err) {
    throw new CliError(`config file ${file} is not valid JSON/YAML: ${(err as Error).message}`);
  }
}

/** The repository a batch's options are read with: a stand-in for each line of its repositories file. */
export const EACH_REPOSITORY_LINE = 'batch://each-line-of-the-repos-file';

/** A git URL (scheme://, user@host:path) rather than a path on this machine. */
export function isRemoteRepo(repo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[^/\s]+@[^/\s]+:/.test(repo);
}

export function defaultModel(): string {
  if (process.env.AGENTRUN_MODEL) return process.env.AGENTRUN_MODEL;
  if (process.env.OPENAI_API_KEY) return 'gpt-4o';
  return `scripted:${QUICKSTART_SCRIPT}`;
}

/** Check a model spec now, so a bad one is a clear error at the CLI, not a failed activity later. */
export async function checkModel(model: string): Promise<string> {
  if (isScripted(model)) {
    const file = scriptedFile(model);
    try {
      await loadScript(file);
    } catch (err) {
      throw new CliError(`model ${model}: ${(err as Error).message}`);
    }
    return `scripted:${file}`;
  }
  // recorded:<id> is checked against the store where the command has one (src/cli/commands.ts).
  if (isRecorded(model)) {
    if (!/^[\w.:@-]+$/.test(recordedId(model))) throw new CliError(`model ${model}: recorded: takes a conversation id, e.g. recorded:conv-abc123`);
    return model;
  }
  if (!/^[\w.:/@-]+$/.test(model)) throw new CliError(`unknown model "${model}": use a provider model name (e.g. gpt-4o) or scripted:FILE`);
  if (!process.env.OPENAI_API_KEY)
    throw new CliError(`model "${model}" needs OPENAI_API_KEY (and OPENAI_BASE_URL for other providers); without a key use --model scripted:FILE`);
  return model;
}

export interface RunRequest {
  task: string;
  workspace: string;
  config: RunConfig;
}

/**
 * The request from flags (as commander gave them: only those the user typed), the `--config` file
 * (same names and units as the flags) and the environment, in that order of precedence.
 */
/** `defaults`: values for settings that no flag, config file or environment variable gives (a batch's jobs pause at their budget). */
export async function runRequestFromFlags(flags: RunFlags, defaults: Record<string, unknown> = {}): Promise<RunRequest> {
  // Commander files `--no-cache` as the negation of `--cache DIR`: it is the noCache setting.
  if (flags.cache === false) flags = { ...flags, cache: undefined, noCache: true };
  const configPath = typeof flags.config === 'string' ? flags.config : undefined;
  const file = configPath ? await readConfigFile(configPath) : {};
  if (configPath) checkFileKeys(file, configPath);

  const values = new Map<string, unknown>();
  for (const s of RUN_SETTINGS) {
    if (s.flagOnly) continue;
    const fromFlag = flags[s.key];
    const fromEnv = s.env ? process.env[s.env]?.trim() : undefined;
    if (fromFlag !== undefined) values.set(s.key, convert(s, fromFlag, { flag: flagOf(s).split(' ')[0]! }));
    else if (file[s.key] !== undefined && file[s.key] !== null) values.set(s.key, convert(s, file[s.key], { file: configPath!, key: s.key }));
    else if (fromEnv) values.set(s.key, convert(s, fromEnv, { env: s.env! }));
    else if (defaults[s.key] !== undefined) values.set(s.key, defaults[s.key]);
  }

  let task = values.get('task') as string | undefined;
  const taskFile = values.get('taskFile') as string | undefined;
  if (task && taskFile) throw new CliError('give either --task or --task-file, not both');
  if (taskFile) {
    try {
      task = await readFile(taskFile, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read task file ${taskFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  if (!task?.trim()) throw new CliError('no task: give --task "…" or --task-file FILE');

  const setupFile = values.get('setupFile') as string | undefined;
  if (setupFile && values.has('setup')) throw new CliError('give either --setup or --setup-file, not both');
  if (setupFile) {
    try {
      const script = await readFile(setupFile, 'utf8');
      if (!script.trim()) throw new CliError(`setup file ${setupFile} is empty`);
      values.set('setup', [script]);
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(`cannot read setup file ${setupFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }

  const ws = values.get('workspace') as string | undefined;
  let repo = values.get('repo') as string | undefined;
  if (repo && ws) throw new CliError('give either --repo (a repository job, cloned by the worker) or --workspace (a directory on the worker), not both');
  if (!repo && (values.has('ref') || values.has('branch') || values.get('push')))
    throw new CliError('--ref, --branch and --push belong to repository jobs: give --repo too');
  if (repo && !isRemoteRepo(repo)) {
    repo = resolve(repo);
    if (!existsSync(repo)) throw new CliError(`repository ${repo} does not exist: give a git URL or the path of a git repository`);
    values.set('repo', repo);
  }
  // A batch's stand-in: each line of its repositories file is checked as it is read (src/cli/fleet.ts).
  if (repo && repo !== EACH_REPOSITORY_LINE) {
    const refused = repositorySourceRefusal(repo, repositorySourcesFromEnv(), workerPlaces(agentrunHome()));
    if (refused) throw new CliError(refused);
  }
  if (!ws && !repo) throw new CliError('no workspace: give --workspace DIR (the repository the agent works in) or --repo URL');
  // A repository job's directory is chosen by the worker that clones it; until then, show the repository.
  const workspace = repo ?? resolve(ws!);
  if (!repo && (!existsSync(workspace) || !statSync(workspace).isDirectory()))
    throw new CliError(`workspace ${workspace} does not exist or is not a directory`);
  if (!repo) {
    try {
      assertWorkspaceSafe(workspace, workerPlaces(agentrunHome()));
    } catch (err) {
      if (err instanceof UnsafeWorkspaceError) throw new CliError(err.message);
      throw err;
    }
  }
  if (values.has('cache')) values.set('cache', cacheDirs(values.get('cache') as string[], repo ? undefined : workspace));
  // A local workspace's settings are read now (when this process's worker runs them), so a bad `setup` there is one line, not a failed job later.
  if (!repo && repositoryExtensionsFromEnv()) {
    try {
      repositorySettings(await readRepositoryExtensions(workspace, true));
    } catch (err) {
      if (err instanceof SettingsError) throw new CliError(err.message);
      throw err;
    }
  }
  // Which names a worker passes is the worker's to say (--allow-env); the worker's own never pass.
  const refused = envRefusal((values.get('env') as string[] | undefined) ?? []);
  if (refused) throw new CliError(refused);

  const model = await checkModel((values.get('model') as string | undefined) ?? defaultModel());
  const raw: Record<string, unknown> = {
    model,
    continuation: profileFor({ model, provider: values.get('provider') as ProviderName | undefined }).continuation,
  };
  for (const s of RUN_SETTINGS) {
    if (s.field === null || s.key === 'model' || !values.has(s.key)) continue;
    raw[s.field ?? s.key] = values.get(s.key);
  }
  const parsed = runConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = String(issue.path[0] ?? '');
    const setting = RUN_SETTINGS.find((s) => (s.field ?? s.key) === field);
    throw new CliError(`invalid option ${setting ? flagOf(setting).split(' ')[0] : field}: ${issue.message}`);
  }
  if (parsed.data.safeZone !== undefined) {
    try {
      parseSafeZone(parsed.data.safeZone, parsed.data.contextWindow ?? contextWindowFor(model));
    } catch (err) {
      throw new CliError(`--safe-zone: ${(err as Error).message}`);
    }
  }
  return { task, workspace, config: parsed.data };
}

/** `--cache` directories as paths relative to the workspace; one outside it (or absolute, for a repository job) is refused. */
function cacheDirs(dirs: string[], workspace: string | undefined): string[] {
  return dirs.map((d) => {
    let rel = d;
    if (isAbsolute(d)) {
      if (!workspace) throw new CliError(`--cache ${d}: give a directory relative to the repository (e.g. node_modules), not an absolute path`);
      rel = relative(workspace, d);
    }
    const refused = cacheDirRefusal(rel);
    if (refused) throw new CliError(`--cache ${d}: ${refused}`);
    return normalize(rel).replace(/\/+$/, '');
  });
}
