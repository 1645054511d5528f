// A cache hit is a cold run, on real packaging: each project is set up cold by one job and from
// the dependency cache by the next (real workflow, worker, bwrap, git), both with the same scripted
// agent and verify; the two workspaces' trees, the environments verify prints and verify's
// outcomes must be the same. Packages are real ones from PyPI and npm (fetched once, served on
// loopback): editable installs with setuptools and hatchling (a source-only dependency built at
// install), an npm-workspaces monorepo with .bin links, and generated files made by maintenance
// commands that run on every job.
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCli } from '../helpers/dist.js';
import { scriptModel, tempRepo, uid } from '../helpers/harness.js';
import { startNpmRegistry, type NpmRegistry } from '../helpers/npm-registry.js';
import { corpusProjects, npmTarball, pythonDists, startFindLinks, treeOf, type FindLinks, type Project } from '../helpers/package-corpus.js';
import { tempDir } from '../helpers/temp.js';

const _ROOT = fileURLToPath(new URL('../..', import.meta.url));
const _exec = promisify(execFile);

let npm: NpmRegistry;
let pypi: FindLinks;
let home: string;
beforeAll(async () => {
  npm = await startNpmRegistry([
    { name: 'semver', tarball: npmTarball('semver@7.6.3') },
    { name: 'ms', tarball: npmTarball('ms@2.1.3') },
  ]);
  pypi = await startFindLinks(pythonDists('editable-builds-v2', ['setuptools', 'wheel', 'hatchling', 'editables'], ['six==1.16.0']));
  home = await tempDir('agentrun-corpus-home-');
}, 300_000);
afterAll(async () => {
  await npm?.close();
  await pypi?.close();
});

async function cli(args: string[]): Promise<{ out: string; lines: Record<string, any>[] }> {
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    DATABASE_URL: inject('databaseUrl'),
    AGENTRUN_HOME: home,
    AGENTRUN_TASK_QUEUE: uid('corpus-tq'),
    AGENTRUN_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    AGENTRUN_LOG_LEVEL: 'warn',
    AGENTRUN_PROXY_ALLOW_LOOPBACK_PORTS: `${npm.port},${pypi.port}`,
    OPENAI_API_KEY: '',
  };
  const r = await runCli(args, { env, timeout: 400_000 });
  if (r.code !== 0) throw new Error(`agentrun ${args[0]} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  const { lines } = r;
  return { out: r.stdout, lines };
}

const write = (path: string, content: string) => ({ say: `<write_to_file>\n<path>${path}</path>\n<content>\n${content}\n</content>\n</write_to_file>` });
const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };

/** Two jobs of `project`'s repository: cold, then from the cache; their results and workspaces. */
async function coldThenCached(project: Project) {
  const repo = await tempRepo({ ...project.files, ...(await project.lock?.()) });
  execFileSync('git', ['config', 'receive.denyCurrentBranch', 'ignore'], { cwd: repo });
  const jobs = [];
  // The first job sets up cold, the second from the cache the first saved.
  for (let run = 0; run < 2; run++) {
    const model = await scriptModel({ turns: [write(...project.edit), complete] });
    const before = project.downloads();
    const args = ['run', '--json', '--task', `change ${project.edit[0]}`, '--repo', repo, '--model', model, '--approval', 'never', '--setup', project.setup];
    if (project.maintenance) args.push('--maintenance', project.maintenance);
    args.push('--verify', project.verify, '--keep-workspace', 'always');
    const end = (await cli(args)).lines.at(-1)!;
    const inspected = JSON.parse((await cli(['inspect', String(end.conversationId), '--json'])).out) as Record<string, any>;
    const row = (await cli(['list', '--json'])).lines.find((l) => l.conversationId === end.conversationId)!;
    jobs.push({ end, inspected, workspace: String(row.hostWorkspace), fetched: project.downloads() - before });
  }
  return jobs;
}

function expectSameRun(cold: Awaited<ReturnType<typeof coldThenCached>>[number], cached: typeof cold) {
  expect(cold.end, JSON.stringify(cold.end)).toMatchObject({ status: 'completed', setup: { ok: true, cached: false }, verify: { passed: true } });
  expect(cached.end, JSON.stringify(cached.end)).toMatchObject({ status: 'completed', setup: { ok: true, cached: true }, verify: { passed: true } });
  expect(cold.fetched).toBeGreaterThan(0);
  expect(cached.fetched).toBe(0);
  // The same tree, file for file and link for link.
  expect(treeOf(cached.workspace)).toEqual(treeOf(cold.workspace));
  // The same environment and the same checks, as verify printed them.
  const verifyTail = (i: Record<string, any>) => i.environment.verify.at(-1).tail as string;
  expect(verifyTail(cached.inspected)).toBe(verifyTail(cold.inspected));
}

describe('a cache hit is a cold run, on real packaging', { timeout: 900_000 }, () => {
  it('setuptools: an editable install (pyproject, src layout, an sdist dependency built at install) and a compiled message catalogue', async () => {
    const project = corpusProjects(pypi, npm).setuptools;
    const [cold, cached] = await coldThenCached(project);
    expectSameRun(cold!, cached!);
    // Verify imported this job's own source, at the sandbox's fixed path.
    expect(cached!.inspected.environment.verify.at(-1).tail).toContain('/workspace/src/corpus_st/__init__.py 2 bonjour 1.16.0');
    expect(treeOf(cached!.workspace)).toHaveProperty(['src/corpus_st/messages.mo']);
  });

  it('hatchling: an editable install whose .pth names the workspace, with a generated module made at maintenance', async () => {
    const project = corpusProjects(pypi, npm).hatchling;
    const [cold, cached] = await coldThenCached(project);
    expectSameRun(cold!, cached!);
    const tail = cached!.inspected.environment.verify.at(-1).tail as string;
    expect(tail).toContain("/workspace/src/corpus_hl/__init__.py 2 ['value.py']");
    // The editable .pth names the sandbox's path, never a host's workspace.
    expect(tail).toMatch(/^\/workspace\/src$/m);
    expect(tail).not.toContain(cold!.workspace);
  });

  it('npm workspaces: packages linked into node_modules, a real package with its .bin link, and code generated at maintenance', async () => {
    const project = corpusProjects(pypi, npm).npmWorkspaces;
    const [cold, cached] = await coldThenCached(project);
    expectSameRun(cold!, cached!);
    const tail = cached!.inspected.environment.verify.at(-1).tail as string;
    expect(tail).toContain('app 86400000 2 1.0.0');
    expect(tail).toContain('node_modules/.bin/semver -> ../semver/bin/semver.js');
    expect(treeOf(cached!.workspace)['node_modules/@corpus/lib']).toBe('link ../../packages/lib');
  });
});
