// The one configuration schema: flags, config-file keys and environment variables from
// src/cli/settings.ts, in the flags' own names and units; docs/configuration.md generated from it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../src/config.js';
import { CliError } from '../../src/cli/errors.js';
import { buildProgram } from '../../src/cli/main.js';
import { parseTokenCount, runRequestFromFlags } from '../../src/cli/options.js';
import { configurationReference } from '../../src/cli/settings-doc.js';
import { ENVIRONMENT, RUN_SETTINGS } from '../../src/cli/settings.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
const savedModel = process.env.AGENTRUN_MODEL;

beforeAll(async () => {
  dir = await tempDir('agentrun-settings-');
});
afterEach(() => {
  if (savedModel === undefined) delete process.env.AGENTRUN_MODEL;
  else process.env.AGENTRUN_MODEL = savedModel;
});

async function configFile(text: string, name = `c-${Math.random().toString(36).slice(2)}.yaml`): Promise<string> {
  const file = path.join(dir, name);
  await fs.writeFile(file, text);
  return file;
}

async function failure(p: Promise<unknown>): Promise<CliError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CliError);
  return err as CliError;
}

describe('run options from flags, --config and the environment', () => {
  it('takes config-file keys under the flags’ names and units', async () => {
    const file = await configFile(
      [
        'task: write it',
        `workspace: ${dir}`,
        'maxCost: 2.5',
        'maxTime: 30m',
        'approvalTimeout: 90s',
        'contextWindow: 32k',
        'approvalDefault: approve',
        'loopDetection: false',
        'maxContinuations: 0',
      ].join('\n'),
    );
    const req = await runRequestFromFlags({ config: file });
    expect(req.task).toBe('write it');
    expect(req.workspace).toBe(dir);
    expect(req.config).toMatchObject({
      maxCostUsd: 2.5,
      maxTimeMs: 30 * 60_000,
      approvalTimeoutMs: 90_000,
      contextWindow: 32_000,
      approvalTimeoutAction: 'approve',
      loopDetection: false,
      maxContinuations: 0,
    });
  });

  it('lets flags win over the file, and the file over the environment', async () => {
    const file = await configFile(`task: from file\nworkspace: ${dir}\nmaxTurns: 7\nmodel: scripted:${path.join(ROOT, 'examples/quickstart.yaml')}`);
    process.env.AGENTRUN_MODEL = 'scripted:/nonexistent-from-env.yaml';
    const req = await runRequestFromFlags({ config: file, maxTurns: '9', contextWindow: '1M' });
    expect(req.config.maxTurns).toBe(9);
    expect(req.config.contextWindow).toBe(1_000_000);
    expect(req.config.model).toBe(`scripted:${path.join(ROOT, 'examples/quickstart.yaml')}`);
    // Without a model in flags or file, the environment's is used (and checked).
    const noModel = await configFile(`task: t\nworkspace: ${dir}`);
    expect((await failure(runRequestFromFlags({ config: noModel }))).message).toMatch(/nonexistent-from-env/);
  });

  it('refuses unknown keys with the nearest known one', async () => {
    const file = await configFile(`task: t\nworkspace: ${dir}\nmaxCostUsd: 2`);
    const err = await failure(runRequestFromFlags({ config: file }));
    expect(err.message).toBe(
      `config file ${file}: unknown key "maxCostUsd" (did you mean "maxCost"?); keys are the flags' names in camelCase (docs/configuration.md)`,
    );
    const typo = await configFile(`task: t\nworkspace: ${dir}\nmaxTurms: 2`);
    expect((await failure(runRequestFromFlags({ config: typo }))).message).toMatch(/unknown key "maxTurms" \(did you mean "maxTurns"\?\)/);
    // --config names a file; it is not a key of one.
    const nested = await configFile(`config: other.yaml`);
    expect((await failure(runRequestFromFlags({ config: nested }))).message).toMatch(/unknown key "config"/);
  });

  it('refuses bad values naming the flag or the key they came from', async () => {
    const file = await configFile(`task: t\nworkspace: ${dir}\nmaxTime: soon`);
    expect((await failure(runRequestFromFlags({ config: file }))).message).toBe(`maxTime in ${file} must be a duration such as 90s, 30m, 2h or 1d, got "soon"`);
    const base = { task: 't', workspace: dir };
    expect((await failure(runRequestFromFlags({ ...base, maxCost: 'lots' }))).message).toBe('--max-cost must be a positive number (USD), got "lots"');
    expect((await failure(runRequestFromFlags({ ...base, contextWindow: '32q' }))).message).toBe(
      '--context-window must be a token count such as 128000, 32k or 1M, got "32q"',
    );
    expect((await failure(runRequestFromFlags({ ...base, approval: 'sometimes' }))).message).toBe(
      '--approval must be one of never, dangerous, always, got "sometimes"',
    );
    expect((await failure(runRequestFromFlags({ ...base, maxContinuations: '21' }))).message).toMatch(
      /--max-continuations must be a whole number ≥ 0 and ≤ 20/,
    );
  });

  it('parses token counts with k and M', () => {
    expect(parseTokenCount('32k')).toBe(32_000);
    expect(parseTokenCount('1M')).toBe(1_000_000);
    expect(parseTokenCount('1.5m')).toBe(1_500_000);
    expect(parseTokenCount('128000')).toBe(128_000);
    expect(parseTokenCount('lots')).toBeNaN();
  });
});

describe('the schema itself', () => {
  it('maps every run setting to a RunConfig field, and every flag to one setting', () => {
    const fields = Object.keys(runConfigSchema.shape);
    for (const s of RUN_SETTINGS) if (s.field !== null) expect(fields, s.key).toContain(s.field ?? s.key);
    const keys = RUN_SETTINGS.map((s) => s.key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('lists every environment variable the code reads', () => {
    const out = execFileSync('grep', ['-rhoE', String.raw`process\.env\.[A-Z_]+|process\.env\[['"][A-Z_]+`, 'src', 'workflows', 'activities', 'worker'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const read = new Set(
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.replace(/^process\.env[.[]['"]?/, '')),
    );
    const system = new Set(['HOME', 'PATH', 'USER', 'SHELL', 'TERM', 'NO_COLOR', 'CI', 'TMPDIR', 'LANG']);
    const documented = new Set(ENVIRONMENT.map((e) => e.name));
    const missing = [...read].filter((v) => !system.has(v) && !documented.has(v));
    expect(missing, 'add these to ENVIRONMENT in src/cli/settings.ts').toEqual([]);
  });

  it('docs/configuration.md is up to date (npm run docs:config)', async () => {
    const onDisk = await fs.readFile(path.join(ROOT, 'docs/configuration.md'), 'utf8');
    expect(onDisk, 'docs/configuration.md is stale: run `npm run docs:config`').toBe(configurationReference(buildProgram(() => undefined)));
  });
});
