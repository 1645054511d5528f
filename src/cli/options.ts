// Run options from flags, a config file and the environment, validated into a RunConfig.
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { parseDuration, runConfigSchema, type RunConfig } from '../config.js';
import { parseSafeZone } from '../context/safe-zone.js';
import { contextWindowFor } from '../context/tokens.js';
import { defaultContinuation, isScripted, scriptedFile } from '../model/client.js';
import { loadScript } from '../scripted/script.js';
import { CliError } from './errors.js';

export const QUICKSTART_SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), '../../examples/quickstart.yaml');

/** Flags shared by `run`, `start` and `schedule create`. */
export interface RunFlags {
  task?: string;
  taskFile?: string;
  workspace?: string;
  model?: string;
  config?: string;
  maxTurns?: string;
  maxTokens?: string;
  maxCost?: string;
  maxTime?: string;
  approval?: string;
  approvalTimeout?: string;
  approvalDefault?: string;
  toolFormat?: string;
  continuation?: string;
  maxContinuations?: string;
  safeZone?: string;
  contextWindow?: string;
  continueAsNewEvery?: string;
  heartbeatTimeout?: string;
  planMode?: boolean;
  instructions?: string;
}

export const RUN_OPTIONS: [flags: string, description: string][] = [
  ['--task <text>', 'what the agent should do'],
  ['--task-file <file>', 'read the task from a file instead of --task'],
  ['--workspace <dir>', 'the repository the agent works in'],
  ['--model <model>', 'model name, or scripted:FILE (default: $AGENTRUN_MODEL, else gpt-4o with OPENAI_API_KEY, else the quick-start script)'],
  ['--config <file>', 'JSON or YAML file with any of these options (flags win)'],
  ['--max-turns <n>', 'turn limit (default 50)'],
  ['--max-tokens <n>', 'total token budget'],
  ['--max-cost <usd>', 'cost budget in USD'],
  ['--max-time <duration>', 'wall-time budget (90s, 30m, 2h)'],
  ['--approval <mode>', 'never | dangerous | always (default dangerous)'],
  ['--approval-timeout <duration>', 'how long a call waits for approve/deny (default 30m)'],
  ['--approval-default <action>', 'deny | approve when the approval times out (default deny)'],
  ['--tool-format <format>', 'xml | native (default xml)'],
  ['--continuation <strategy>', 'prefill | prompt (default per model)'],
  ['--max-continuations <n>', 'segments after a length cut-off (default 6)'],
  ['--safe-zone <size>', 'prompt token limit: 80k, 1.5M, 0.8 (of the window)'],
  ['--context-window <n>', "the model's context window in tokens"],
  ['--continue-as-new-every <n>', 'continue-as-new after this many turns in one run'],
  ['--heartbeat-timeout <duration>', 'how fast a dead worker is noticed (default 30s)'],
  ['--plan-mode', 'only read-only tools; the model presents a plan'],
  ['--instructions <text>', 'extra system instructions'],
];

function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`${name} must be a positive whole number, got "${v}"`);
  return n;
}

function num(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new CliError(`${name} must be a positive number, got "${v}"`);
  return n;
}

function duration(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  try {
    return parseDuration(v);
  } catch (err) {
    throw new CliError(`${name}: ${(err as Error).message}`);
  }
}

function oneOf<T extends string>(name: string, v: string | undefined, values: readonly T[]): T | undefined {
  if (v === undefined) return undefined;
  if (!values.includes(v as T)) throw new CliError(`${name} must be one of ${values.join(', ')}, got "${v}"`);
  return v as T;
}

async function readConfigFile(file: string): Promise<Record<string, unknown>> {
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
  if (!/^[\w.:/@-]+$/.test(model)) throw new CliError(`unknown model "${model}": use a provider model name (e.g. gpt-4o) or scripted:FILE`);
  if (!process.env.OPENAI_API_KEY) throw new CliError(`model "${model}" needs OPENAI_API_KEY (and OPENAI_BASE_URL for other providers); without a key use --model scripted:FILE`);
  return model;
}

export interface RunRequest {
  task: string;
  workspace: string;
  config: RunConfig;
}

export async function runRequestFromFlags(flags: RunFlags): Promise<RunRequest> {
  const file = flags.config ? await readConfigFile(flags.config) : {};
  const pick = <T>(flag: T | undefined, key: string): T | undefined => (flag !== undefined ? flag : (file[key] as T | undefined));

  let task = pick(flags.task, 'task');
  const taskFile = pick(flags.taskFile, 'taskFile');
  if (task && taskFile) throw new CliError('give either --task or --task-file, not both');
  if (taskFile) {
    try {
      task = await readFile(taskFile, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read task file ${taskFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  if (!task?.trim()) throw new CliError('no task: give --task "…" or --task-file FILE');

  const ws = pick(flags.workspace, 'workspace');
  if (!ws) throw new CliError('no workspace: give --workspace DIR (the repository the agent works in)');
  const workspace = resolve(ws);
  if (!existsSync(workspace) || !statSync(workspace).isDirectory()) throw new CliError(`workspace ${workspace} does not exist or is not a directory`);

  const model = await checkModel(pick(flags.model, 'model') ?? defaultModel());
  const raw = {
    ...file,
    task: undefined,
    taskFile: undefined,
    workspace: undefined,
    config: undefined,
    model,
    maxTurns: int('--max-turns', flags.maxTurns) ?? file.maxTurns,
    maxTokens: int('--max-tokens', flags.maxTokens) ?? file.maxTokens,
    maxCostUsd: num('--max-cost', flags.maxCost) ?? file.maxCostUsd,
    maxTimeMs: duration('--max-time', flags.maxTime) ?? file.maxTimeMs,
    approval: oneOf('--approval', flags.approval, ['never', 'dangerous', 'always'] as const) ?? file.approval,
    approvalTimeoutMs: duration('--approval-timeout', flags.approvalTimeout) ?? file.approvalTimeoutMs,
    approvalTimeoutAction: oneOf('--approval-default', flags.approvalDefault, ['deny', 'approve'] as const) ?? file.approvalTimeoutAction,
    toolFormat: oneOf('--tool-format', flags.toolFormat, ['xml', 'native'] as const) ?? file.toolFormat,
    continuation: oneOf('--continuation', flags.continuation, ['prefill', 'prompt'] as const) ?? file.continuation ?? defaultContinuation(model),
    maxContinuations: flags.maxContinuations !== undefined ? Number(flags.maxContinuations) : file.maxContinuations,
    safeZone: flags.safeZone ?? file.safeZone,
    contextWindow: int('--context-window', flags.contextWindow) ?? file.contextWindow,
    continueAsNewEveryTurns: int('--continue-as-new-every', flags.continueAsNewEvery) ?? file.continueAsNewEveryTurns,
    heartbeatTimeoutMs: duration('--heartbeat-timeout', flags.heartbeatTimeout) ?? file.heartbeatTimeoutMs,
    planMode: flags.planMode ?? file.planMode,
    instructions: flags.instructions ?? file.instructions,
  };
  const parsed = runConfigSchema.safeParse(Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined)));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CliError(`invalid option ${issue.path.join('.') || ''}: ${issue.message}`);
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
