// The published package as a new user gets it: `npm pack` of the build, `npm install` of the
// tarball into an empty directory, then the README's quick start with the embedded servers and the
// scripted model. As root the directory is mode 0700, like a checkout in root's home: the embedded
// PostgreSQL (run as `postgres`) must still start, without opening that directory to others.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/dist.js';
import { tempDir } from '../helpers/temp.js';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const isRoot = process.getuid?.() === 0;

let work: string;
let app: string;
let tarball: string;
let postgresDir: string;
const pkg = JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

/** The environment of a new user: no servers configured, no key, nothing from the checkout. */
function userEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AGENTRUN_HOME: home,
    AGENTRUN_POSTGRES_DIR: postgresDir,
    OPENAI_API_KEY: '',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
  for (const k of [
    'TEMPORAL_ADDRESS',
    'DATABASE_URL',
    'TEMPORAL_NAMESPACE',
    'AGENTRUN_WORKFLOW_BUNDLE',
    'AGENTRUN_TASK_QUEUE',
    'AGENTRUN_MODEL',
    'AGENTRUN_LOG_LEVEL',
    'NODE_OPTIONS',
  ])
    delete env[k];
  return env;
}

async function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeout = 300_000) {
  try {
    const r = await exec(cmd, args, { cwd, env, timeout, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  work = await tempDir('agentrun-pack-');
  postgresDir = await tempDir('agentrun-pack-pg-');
  await fs.chmod(postgresDir, 0o755);
  // The tarball holds what the sources compile to now: dist/ as `ensureBuilt` left it (built again
  // if the sources changed). `prepare` (the same build) is skipped: the other test files run dist/.
  ensureBuilt();
  const packed = await sh('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], ROOT, { ...process.env }, 300_000);
  expect(packed.code, packed.stderr).toBe(0);
  const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  tarball = path.join(work, info!.filename);
  const files = info!.files.map((f) => f.path);
  expect(files).toContain('bin/agentrun.js');
  expect(files).toContain('dist/src/cli/main.js');
  expect(files).toContain('dist/src/index.d.ts');
  expect(files).toContain('dist/src/ui/page.html');
  expect(files).toContain('dist/workflow-bundle.js');
  // Only what runs: no sources, tests, benches or dev entry points.
  expect(files.filter((f) => /^(src|test|bench|workflows|activities|worker)\//.test(f) || f === 'bin/agentrun-dev.js' || f.endsWith('.map'))).toEqual([]);

  // An empty directory only root may enter (when we are root), as a checkout in /root would be.
  app = path.join(work, 'app');
  await fs.mkdir(app, { mode: 0o700 });
  await fs.chmod(work, isRoot ? 0o700 : 0o755);
  // --prefer-offline: dependency metadata already in npm's cache is not checked against the
  // registry again (about 20 s of round trips here); what is missing is still fetched, and the
  // package itself comes from the tarball either way.
  const installed = await sh(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball],
    app,
    userEnv(path.join(work, 'home-install')),
    480_000,
  );
  expect(installed.code, installed.stderr).toBe(0);
}, 900_000);

afterAll(async () => {
  if (work) await fs.rm(work, { recursive: true, force: true });
  if (postgresDir) await fs.rm(postgresDir, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('installs production dependencies only, and prints its version and commit', async () => {
    const nm = path.join(app, 'node_modules');
    for (const devOnly of ['tsx', 'typescript', 'vitest', 'playwright-core', '@temporalio/testing', 'fast-check']) {
      expect(
        await fs.access(path.join(nm, devOnly)).then(
          () => true,
          () => false,
        ),
        devOnly,
      ).toBe(false);
    }
    const v = await sh('npx', ['agentrun', '--version'], app, userEnv(path.join(work, 'home-v')));
    expect(v.code, v.stderr).toBe(0);
    const commit = (await exec('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT })).stdout.trim();
    expect(v.stdout.trim()).toMatch(new RegExp(`^agentrun ${pkg.version.replace(/\./g, '\\.')} \\(${commit}(-dirty)?\\)$`));
  });

  it('gives the library face with types', async () => {
    const r = await sh(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('agentrun'); console.log(typeof m.createWorker, typeof m.runConfigSchema.parse)"],
      app,
      userEnv(path.join(work, 'home-lib')),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('function function');
    const types = await fs.readFile(path.join(app, 'node_modules', pkg.name, 'dist', 'src', 'index.d.ts'), 'utf8');
    expect(types).toContain('createWorker');
  });

  it.each([
    ['a directory only root may enter', 0o700],
    ['an ordinary directory', 0o755],
  ])('runs the README quick start from %s', async (_name, mode) => {
    await fs.chmod(work, isRoot ? mode : 0o755);
    const workspace = await tempDir('agentrun-pack-ws-');
    const home = path.join(app, `home-${mode.toString(8)}`);
    try {
      const r = await sh(
        'npx',
        ['agentrun', 'run', '--task', 'Write hello.py and make it greet with an exclamation mark', '--workspace', workspace],
        app,
        userEnv(home),
        240_000,
      );
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/completed after \d+ turns/);
      expect(await fs.readFile(path.join(workspace, 'hello.py'), 'utf8')).toContain('!');
      // After `run` returned its servers are gone: inspect and list start them again on demand.
      const id = /conversation (conv-\S+)/.exec(r.stdout)![1]!;
      const inspected = await sh('npx', ['agentrun', 'inspect', id, '--no-diffs'], app, userEnv(home), 120_000);
      expect(inspected.code, inspected.stderr).toBe(0);
      expect(inspected.stdout).toContain('── turn 1 ──');
      const listed = await sh('npx', ['agentrun', 'list', '--json'], app, userEnv(home), 120_000);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(id);
      if (isRoot) expect((await fs.stat(work)).mode & 0o777).toBe(mode); // not opened up for `postgres`
    } finally {
      await fs.rm(workspace, { recursive: true, force: true });
    }
  });
});
