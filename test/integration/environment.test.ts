// Repository environments end to end (real workflow, bwrap, git, npm): setup installs from a
// loopback npm registry through the egress proxy before turn 1, the agent's commands then work with
// the network off, the cache makes the next job's setup a copy, verify checks the result, a failing
// setup ends the job before any model call, and a worker lost during setup means setup runs again.
import { conversationResult } from '../../src/client/outcome.js';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { readFile, readdir, writeFile, mkdir } from 'node:fs/promises';
import { cacheRoot } from '../../src/environment/cache.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { environmentOf, gatherInspection } from '../../src/client/inspection.js';
import { printInspection } from '../../src/cli/inspect.js';
import type { Session } from '../../src/cli/session.js';
import { EgressProxy, setEgressProxy } from '../../src/sandbox/proxy.js';
import { stateQuery } from '../../workflows/api.js';
import { hostMarkEnv, onHost, startChildWorker, stopChildWorkers, type ChildWorker } from '../helpers/child-worker.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { npmProject, startNpmRegistry, type NpmRegistry } from '../helpers/npm-registry.js';
import { tempDir } from '../helpers/temp.js';
import { runCli } from '../helpers/dist.js';

const _ROOT = fileURLToPath(new URL('../..', import.meta.url));
const _exec = promisify(execFile);

const cmd = (command: string) => ({
  say: `<execute_command>\n<command>${command}</command>\n<requires_approval>false</requires_approval>\n</execute_command>`,
});
const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };

let registry: NpmRegistry;
let home: string;
beforeAll(async () => {
  registry = await startNpmRegistry([{ name: 'left-pad-fixture', main: 'module.exports = (s, n) => String(s).padStart(n);\n' }, { name: 'tiny-dep' }]);
  home = await tempDir('agentrun-env-home-');
});
afterAll(async () => {
  await registry?.close();
});

function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    DATABASE_URL: inject('databaseUrl'),
    AGENTRUN_HOME: home,
    AGENTRUN_TASK_QUEUE: uid('env-tq'),
    AGENTRUN_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    AGENTRUN_LOG_LEVEL: 'warn',
    AGENTRUN_PROXY_ALLOW_LOOPBACK_PORTS: String(registry.port),
    OPENAI_API_KEY: '',
    ...extra,
  };
}

/** `agentrun ARGS`: exit code, stdout, stderr (never throws on a non-zero exit). */
async function cli(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string; lines: Record<string, any>[] }> {
  const r = await runCli(args, { env: env(extra), timeout: 240_000 });
  return { code: r.code, out: r.stdout, err: r.stderr, lines: r.lines };
}

/** A committed npm project whose test needs a devDependency from the registry; `more` adds to it before the commit. */
async function fixtureRepo(more?: (dir: string) => Promise<void>): Promise<string> {
  const dir = await tempDir('agentrun-npm-repo-');
  await npmProject(dir, registry, ['left-pad-fixture', 'tiny-dep'], {
    'test.js':
      "const pad = require('left-pad-fixture');\nif (pad('x', 3) !== '  x') { console.error('pad is wrong'); process.exit(1); }\nconsole.log('fixture tests passed');\n",
  });
  await more?.(dir);
  const git = (...a: string[]) =>
    execFileSync('git', a, {
      cwd: dir,
      stdio: 'pipe',
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'fixture');
  // A pushed result branch lands here: let the non-bare repository take pushes to other branches.
  git('config', 'receive.denyCurrentBranch', 'ignore');
  return dir;
}

describe('repository environments', { timeout: 600_000 }, () => {
  it('setup installs with the network, the agent tests offline, verify passes, and the next job restores the cache', async () => {
    const repo = await fixtureRepo();
    const model = await scriptModel({ turns: [cmd('npm test'), complete] });
    // npm's install, and a virtual environment with a console script whose shebang names the workspace, as pip writes them.
    const setup = [
      `npm ci --no-audit --no-fund --registry ${registry.url}`,
      'python3 -m venv --without-pip .venv',
      `printf '#!%s/.venv/bin/python\\nprint("venv script ran")\\n' "$PWD" > .venv/bin/fixture-check && chmod +x .venv/bin/fixture-check`,
    ].join(' && ');
    const verify = 'npm test && .venv/bin/fixture-check';
    const args = [
      'run',
      '--json',
      '--task',
      'check the tests',
      '--repo',
      repo,
      '--model',
      model,
      '--approval',
      'never',
      '--setup',
      setup,
      '--verify',
      verify,
      '--push',
      // The agent only runs the tests: a branch of no change is pushed only when asked.
      '--push-empty',
      // Its workspace is measured after the end: kept (a pushed job's goes as it ends).
      '--keep-workspace',
      'always',
    ];
    const before = registry.tarballRequests();
    const first = await cli(args);
    const end = first.lines.at(-1)!;
    expect(end, first.out + first.err).toMatchObject({
      type: 'result',
      status: 'completed',
      setup: { ok: true, cached: false },
      verify: { command: verify, passed: true, exitCode: 0, attempts: 1 },
    });
    expect(registry.tarballRequests()).toBeGreaterThan(before);
    // The agent's own `npm test` ran with the network off and passed (its dependency came from setup).
    const inspected = JSON.parse((await cli(['inspect', String(end.conversationId), '--json'])).out) as any;
    const results = inspected.transcript.flatMap((t: any) => t.messages).filter((m: any) => m.toolName === 'execute_command');
    expect(results[0].content).toContain('fixture tests passed');
    expect(inspected.conversation.config.network).toBe('off');
    expect(inspected.environment.setup.finished).toMatchObject({ ok: true, cached: false, dirs: ['node_modules', '.venv'] });
    expect(inspected.environment.verify[0]).toMatchObject({ command: verify, passed: true });
    // Setup's connections went through the egress proxy and are recorded.
    expect(inspected.network.some((n: any) => n.callId === 'setup' && n.allowed && n.port === registry.port)).toBe(true);
    // The branch holds the work, not node_modules; its commit says it was verified.
    const files = execFileSync('git', ['ls-tree', '-r', '--name-only', end.branch.branch], { cwd: repo, encoding: 'utf8' });
    expect(files).toContain('test.js');
    expect(files).not.toContain('node_modules');
    expect(files).not.toContain('.venv');
    expect(execFileSync('git', ['log', '-1', '--format=%B', end.branch.branch], { cwd: repo, encoding: 'utf8' })).toContain(`Verified: \`${verify}\` passed`);

    // The same repository, lockfile and setup: restored from the cache, no install.
    const requests = registry.tarballRequests();
    const second = await cli(args);
    const end2 = second.lines.at(-1)!;
    // The same verify passes after the restore: the venv's console script was moved to this workspace.
    expect(end2, second.out + second.err).toMatchObject({ status: 'completed', setup: { ok: true, cached: true }, verify: { passed: true } });
    expect(registry.tarballRequests()).toBe(requests);
    const inspected2 = JSON.parse((await cli(['inspect', String(end2.conversationId), '--json'])).out) as any;
    expect(inspected2.network.filter((n: any) => n.callId === 'setup')).toEqual([]);
    expect(inspected2.transcript.flatMap((t: any) => t.messages).find((m: any) => m.toolName === 'execute_command').content).toContain('fixture tests passed');
    // list's disk column was measured after the restore: it matches du of the workspace within 10%.
    const row = (await cli(['list', '--json'])).lines.find((l) => l.conversationId === end2.conversationId)!;
    const du = Number(execFileSync('du', ['-s', '-B1', String(row.hostWorkspace)], { encoding: 'utf8' }).split('\t')[0]);
    expect(Math.abs(Number(row.diskBytes) - du) / du, JSON.stringify(row)).toBeLessThanOrEqual(0.1);
  });

  it("a monorepo's nested node_modules are cached with the top-level one and restored for the next job", async () => {
    const repo = await fixtureRepo(async (dir) => {
      // A package with its own lockfile and a dependency of its own, installed by a second command.
      await mkdir(join(dir, 'packages', 'tool'), { recursive: true });
      await npmProject(join(dir, 'packages', 'tool'), registry, ['tiny-dep'], {
        'check.js': "console.log('tool sees', require('tiny-dep'));\n",
      });
    });
    const model = await scriptModel({ turns: [cmd('node packages/tool/check.js && npm test'), complete] });
    const setup = `npm ci --no-audit --no-fund --registry ${registry.url} && npm ci --no-audit --no-fund --registry ${registry.url} --prefix packages/tool`;
    const args = ['run', '--json', '--task', 't', '--workspace', repo, '--model', model, '--approval', 'never', '--setup', setup];
    const first = await cli(args);
    const end = first.lines.at(-1)!;
    expect(end, first.out + first.err).toMatchObject({ status: 'completed', setup: { ok: true, cached: false } });
    const inspected = JSON.parse((await cli(['inspect', String(end.conversationId), '--json'])).out) as any;
    expect(inspected.environment.setup.finished.dirs).toEqual(['node_modules', 'packages/tool/node_modules']);
    expect(Object.keys(inspected.environment.setup.finished)).toContain('key');
    const output = (i: any) => i.transcript.flatMap((t: any) => t.messages).find((m: any) => m.toolName === 'execute_command').content as string;
    expect(output(inspected)).toContain('tool sees tiny-dep');

    // A fresh copy of the repository (no node_modules anywhere): both directories come from the cache.
    rmSync(join(repo, 'node_modules'), { recursive: true, force: true });
    rmSync(join(repo, 'packages', 'tool', 'node_modules'), { recursive: true, force: true });
    const requests = registry.tarballRequests();
    const second = await cli(args);
    const end2 = second.lines.at(-1)!;
    expect(end2, second.out + second.err).toMatchObject({ status: 'completed', setup: { ok: true, cached: true } });
    expect(registry.tarballRequests()).toBe(requests);
    const inspected2 = JSON.parse((await cli(['inspect', String(end2.conversationId), '--json'])).out) as any;
    expect(inspected2.environment.setup.finished).toMatchObject({ cached: true, dirs: ['node_modules', 'packages/tool/node_modules'] });
    expect(output(inspected2)).toContain('tool sees tiny-dep');
    expect(output(inspected2)).toContain('fixture tests passed');
  });

  it("a Python job's branch holds only the agent's files: what setup created (egg-info, build/, .pytest_cache, a generated file) stays out unless the agent changed it", async () => {
    // A setuptools package that ignores nothing: setup's outputs would all be "untracked".
    const repo = await tempRepo({
      'setup.py': "from setuptools import setup\nsetup(name='fixturepkg', version='0.1', package_dir={'': 'src'}, packages=['fixturepkg'])\n",
      'src/fixturepkg/__init__.py': 'VALUE = 1\n',
      'README.md': '# fixturepkg\n',
    });
    execFileSync('git', ['config', 'receive.denyCurrentBranch', 'ignore'], { cwd: repo });
    const setup = [
      'python3 setup.py -q egg_info',
      'python3 setup.py -q build',
      'mkdir -p .pytest_cache/v && echo {} > .pytest_cache/v/lastfailed',
      "python3 -c \"open('src/fixturepkg/_version.py', 'w').write('version = 0.1\\n')\"",
      'echo generated > GENERATED.txt',
    ].join(' && ');
    const write = (path: string, content: string) => ({ say: `<write_to_file>\n<path>${path}</path>\n<content>\n${content}\n</content>\n</write_to_file>` });
    // The agent adds a module and rewrites one generated file; the other generated file it leaves alone.
    const model = await scriptModel({
      turns: [write('src/fixturepkg/feature.py', 'def feature():\n    return 2'), write('GENERATED.txt', 'edited by the agent'), complete],
    });
    const r = await cli(['run', '--json', '--task', 'add a feature', '--repo', repo, '--model', model, '--approval', 'never', '--setup', setup, '--push']);
    const end = r.lines.at(-1)!;
    expect(end, r.out + r.err).toMatchObject({ status: 'completed', setup: { ok: true }, branch: { pushed: true } });
    const inspected = JSON.parse((await cli(['inspect', String(end.conversationId), '--json'])).out) as any;
    const created = inspected.environment.setup.finished.created;
    // The directories setup made are kept by the cache with the dependencies (a hit restores them); the files it made, recorded.
    expect(inspected.environment.setup.finished.dirs).toEqual(expect.arrayContaining(['.pytest_cache', 'build', 'src/fixturepkg.egg-info']));
    expect(created.files.map((f: { path: string }) => f.path).sort()).toEqual(['GENERATED.txt', 'src/fixturepkg/_version.py']);
    const files = execFileSync('git', ['ls-tree', '-r', '--name-only', end.branch.branch], { cwd: repo, encoding: 'utf8' }).trim().split('\n').sort();
    expect(files).toEqual(['GENERATED.txt', 'README.md', 'setup.py', 'src/fixturepkg/__init__.py', 'src/fixturepkg/feature.py']);
    expect(execFileSync('git', ['show', `${end.branch.branch}:GENERATED.txt`], { cwd: repo, encoding: 'utf8' })).toContain('edited by the agent');
    expect(end.branch.diffstat.files).toBe(2);
  });

  it('a setup that exits 7 ends the job before any model call, with its log tail', async () => {
    const workspace = await tempRepo({ 'README.md': 'x\n' });
    const model = await scriptModel({ turns: [complete] });
    const r = await cli([
      'run',
      '--json',
      '--task',
      't',
      '--workspace',
      workspace,
      '--model',
      model,
      '--setup',
      'echo installing things; echo the mirror is down >&2; exit 7',
    ]);
    expect(r.code).toBe(1);
    const end = r.lines.at(-1)!;
    expect(end).toMatchObject({ status: 'failed', reason: 'setup failed (exit 7)', turns: 0, setup: { ok: false, exitCode: 7 } });
    expect(end.setup.tail).toContain('the mirror is down');
    expect(end.usage.totalTokens).toBe(0);
    const human = await cli(['run', '--task', 't', '--workspace', workspace, '--model', model, '--setup', 'echo the mirror is down; exit 7']);
    expect(human.code).toBe(1);
    expect(human.out).toContain('setup failed (exit 7)');
    // Followed live, the log is shown once: not again at the failure nor under the result.
    expect(human.out.split('\n').filter((l) => l.trim() === 'the mirror is down')).toHaveLength(1);
    const inspected = JSON.parse((await cli(['inspect', String(end.conversationId), '--json'])).out) as any;
    expect(inspected.transcript.flatMap((t: any) => t.messages).filter((m: any) => m.role === 'assistant')).toEqual([]);
    expect(inspected.environment.setup.log).toContain('the mirror is down');
    expect(inspected.environment.setup.finished).toMatchObject({ ok: false, reason: 'setup failed (exit 7)' });
  });

  it('a verify that keeps failing sends the failing part of its output, without colours, to the model and ends the job failed', async () => {
    // A coloured FAIL block first, then more passing output than the tail keeps (an npm-workspaces run's last package).
    const check = [
      "printf '\\033[1;31mFAIL\\033[0m packages/widgets\\n'",
      'echo "  assertion failed: widget count is 3, expected 4"',
      'i=0; while [ $i -lt 300 ]; do echo "PASS packages/other case $i"; i=$((i+1)); done',
      'exit 1',
    ].join('\n');
    const workspace = await tempRepo({ 'check.sh': `${check}\n` });
    // A command whose output is coloured, as a test runner's in a terminal is.
    const coloured = {
      say: "<execute_command>\n<command>printf '\\033[32mall green\\033[0m\\n'</command>\n<requires_approval>false</requires_approval>\n</execute_command>",
    };
    const model = await scriptModel({ turns: [coloured, complete, complete, complete] });
    const r = await cli(['run', '--json', '--task', 't', '--workspace', workspace, '--model', model, '--approval', 'never', '--verify', 'sh check.sh']);
    expect(r.code).toBe(1);
    const end = r.lines.at(-1)!;
    expect(end).toMatchObject({
      status: 'failed',
      reason: 'verification failed',
      turns: 4,
      verify: { command: 'sh check.sh', passed: false, exitCode: 1, attempts: 3 },
    });
    const inspected = JSON.parse((await cli(['inspect', String(end.conversationId), '--json', '--max-chars', '20000'])).out) as any;
    const messages = inspected.transcript.flatMap((t: any) => t.messages);
    const notices = messages.filter((m: any) => m.kind === 'notice' && m.content.includes('widget count is 3'));
    expect(notices).toHaveLength(3);
    // The FAIL block, far above the end, comes first; then the end; no terminal escapes.
    expect(notices[0].content).toContain('[lines that name failures]\nFAIL packages/widgets\n  assertion failed: widget count is 3, expected 4');
    expect(notices[0].content).toContain('[the end of the output]');
    expect(notices[0].content).toContain('PASS packages/other case 299');
    expect(notices[0].content).not.toContain('\u001b');
    expect(JSON.stringify(end)).not.toContain('\\u001b');
    const toolResult = messages.find((m: any) => m.content.includes('all green'));
    expect(toolResult.content).toContain('all green');
    expect(toolResult.content).not.toContain('\u001b');
    expect(inspected.environment.verify.map((v: any) => v.attempt)).toEqual([1, 2, 3]);
  });

  it('refuses bad input with one line and exit 2', async () => {
    const workspace = await tempRepo({ 'README.md': 'x\n' });
    const base = ['run', '--task', 't', '--workspace', workspace];
    for (const [flags, says] of [
      [['--cache', '../elsewhere'], /--cache \.\.\/elsewhere: the directory is outside the workspace/],
      [['--cache', '/etc'], /--cache \/etc: the directory is outside the workspace/],
      [['--setup-timeout', '-5m'], /--setup-timeout must be a duration/],
      [['--setup-timeout', 'soon'], /--setup-timeout must be a duration/],
      [['--verify-attempts', '0'], /--verify-attempts must be a whole number ≥ 1/],
      [['--verify-attempts', 'many'], /--verify-attempts must be a whole number ≥ 1/],
      [['--setup-network', 'sometimes'], /--setup-network "sometimes": expected off, on, or allow:HOST/],
      [['--setup-network', 'allow:10.0.0.1'], /--setup-network allow:10\.0\.0\.1: private \(RFC 1918\) addresses are never reachable/],
    ] as const) {
      const r = await cli([...base, ...flags]);
      expect(r.code, r.err).toBe(2);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(says);
    }
    await mkdir(join(workspace, '.agentrun'));
    await writeFile(join(workspace, '.agentrun', 'settings.json'), JSON.stringify({ setup: ['npm ci', 5] }));
    const r = await cli(base, { AGENTRUN_REPOSITORY_EXTENSIONS: 'on' });
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/settings\.json: setup.*must be a string/);
  });
});

describe('a worker lost during setup', { timeout: 300_000 }, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ worker: false });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('runs setup again on another worker; turn 1 runs once', async () => {
    const workspace = await tempRepo({ '.gitignore': 'setup-runs.txt\n' });
    const model = await scriptModel({ turns: [cmd('cat setup-runs.txt'), complete] });
    const doomed = await startChildWorker(h);
    const handle = await h.start({
      task: 'after setup',
      workspace,
      config: { model, heartbeatTimeoutMs: 2000, approval: 'never' as const, setup: ['echo run >> setup-runs.txt; sleep 3; echo done >> setup-runs.txt'] },
    });
    const end = Date.now() + 60_000;
    while (!existsSync(join(workspace, 'setup-runs.txt'))) {
      if (Date.now() > end) throw new Error('setup did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    await doomed.kill('SIGKILL');
    const survivor = await startChildWorker(h);
    const result = await conversationResult(handle);
    await survivor.kill('SIGTERM');
    expect(result, result.reason).toMatchObject({ status: 'completed', setup: { ok: true } });
    expect(await readFile(join(workspace, 'setup-runs.txt'), 'utf8')).toBe('run\nrun\ndone\n');
    const messages = await h.store.getMessages(handle.workflowId);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.turn)).toEqual([1, 2]);
    const stream = await h.store.readStream(handle.workflowId, 0, 10_000);
    expect(stream.filter((r) => r.event.type === 'setup_started').map((r) => (r.event as { attempt: number }).attempt)).toEqual([1, 2]);
  });
});

describe("setup's network, narrowed with --setup-network", { timeout: 300_000 }, () => {
  let h: Harness;
  beforeAll(async () => {
    // The registry stands for a public host under a name: registry.example.test. Nothing else resolves.
    setEgressProxy(
      new EgressProxy({
        allowLoopbackPorts: [registry.port],
        resolve: async (host) => {
          if (host === 'registry.example.test') return ['127.0.0.1'];
          throw Object.assign(new Error('no such host'), { code: 'ENOTFOUND' });
        },
      }),
    );
    h = await createHarness();
  });
  afterAll(async () => {
    await h?.close();
    setEgressProxy(undefined);
  });

  it('allow:<another host> cannot reach the registry and setup fails saying what the proxy refused; allow:<the registry> installs', async () => {
    const repo = await fixtureRepo();
    const named = `http://registry.example.test:${registry.port}`;
    // The lockfile names 127.0.0.1: its tarballs are fetched from the registry's name instead.
    const setup = [`npm ci --no-audit --no-fund --fetch-retries=0 --registry ${named} --replace-registry-host=always`];
    const model = await scriptModel({ turns: [cmd('npm test'), complete] });
    const before = registry.tarballRequests();
    const refused = await h.run({ task: 't', workspace: repo, config: { model, approval: 'never', setup, setupNetwork: 'allow:mirror.example.test' } });
    expect(refused).toMatchObject({ status: 'failed', turns: 0, setup: { ok: false } });
    expect(refused.reason).toMatch(/^setup failed \(exit \d+\)$/);
    expect(refused.setup!.tail).toMatch(
      /\[agentrun: the egress proxy refused \d+ connections? \(--setup-network allow:mirror\.example\.test\):\n {2}.*registry\.example\.test/,
    );
    expect(registry.tarballRequests()).toBe(before);
    const env = await environmentOf(h.store, refused.conversationId);
    expect(env.setup).toMatchObject({ network: 'allow:mirror.example.test', finished: { ok: false } });
    expect(env.setup!.log).toContain('the egress proxy refused');
    const data = await gatherInspection({ store: h.store, client: h.client, home: h.home } as unknown as Session, refused.conversationId, {
      maxChars: 10_000,
      diffs: false,
    });
    let text = '';
    printInspection(data!, (t) => void (text += t));
    expect(text).toContain('Setup (1 command, network allow:mirror.example.test)');
    const connections = await h.store.getNetworkConnections(refused.conversationId);
    expect(connections.length).toBeGreaterThan(0);
    expect(connections.every((c) => c.callId === 'setup' && !c.allowed && c.host === 'registry.example.test')).toBe(true);

    const allowed = await h.run({ task: 't', workspace: repo, config: { model, approval: 'never', setup, setupNetwork: 'allow:registry.example.test' } });
    expect(allowed).toMatchObject({ status: 'completed', setup: { ok: true, cached: false } });
    expect(registry.tarballRequests()).toBeGreaterThan(before);
    const messages = await h.store.getMessages(allowed.conversationId);
    expect(messages.find((m) => m.toolName === 'execute_command')?.content).toContain('fixture tests passed');
  });
});

describe('setup after a host move', { timeout: 400_000 }, () => {
  let h: Harness;
  const workers: ChildWorker[] = [];
  beforeAll(async () => {
    h = await createHarness({ worker: false, repositoryExtensions: true });
  });
  afterAll(async () => {
    await stopChildWorkers(workers);
    await h?.close();
  });

  /** Wait until job `id` is placed on host `hostId` and `marker` appears in its workspace there (`what` has started). */
  async function runningOn(id: string, hostId: string, marker: string, what: string): Promise<void> {
    const first = await h.waitForState(id, (s) => s.host !== undefined, 120_000);
    expect(first.host!.hostId).toBe(hostId);
    const path = join(first.host!.workspace, marker);
    for (const end = Date.now() + 120_000; !existsSync(path); await new Promise((r) => setTimeout(r, 100)))
      if (Date.now() > end) throw new Error(`${what} did not start on host ${hostId}`);
  }

  /** A host: its own id, disk and AGENTRUN_HOME (so its own dependency cache). */
  async function host(name: string): Promise<{ id: string; workspaces: string; home: string }> {
    const id = `${name}-${h.taskQueue}`;
    const workspaces = await tempDir(`agentrun-ws-${name}-`);
    const home = await tempDir(`agentrun-home-${name}-`);
    workers.push(
      await startChildWorker(h, {
        AGENTRUN_HOST_ID: id,
        AGENTRUN_WORKSPACES: workspaces,
        AGENTRUN_HOME: home,
        AGENTRUN_PROXY_ALLOW_LOOPBACK_PORTS: String(registry.port),
        ...hostMarkEnv(name),
      }),
    );
    return { id, workspaces, home };
  }

  it('a job drained off the host that ran setup gets setup on the new host before its next turn; its later npm test passes there', async () => {
    const repo = await fixtureRepo();
    // Turn 2's command may not run twice (it appends): cut off by the drain's grace, it is answered, not run again.
    const model = await scriptModel({ turns: [cmd('npm test'), cmd('echo began >> started; sleep 300'), cmd('npm test'), complete] });
    const a = await host('SA');
    const id = uid('moved-setup');
    // Long timeouts: the move is the drain's, never a timeout's.
    const handle = await h.start({
      id,
      task: 'test, then test again',
      workspace: repo,
      config: {
        model,
        approval: 'never',
        heartbeatTimeoutMs: 120_000,
        hostTimeoutMs: 120_000,
        repo,
        setup: [`npm ci --no-audit --no-fund --registry ${registry.url}`],
        verify: 'npm test',
      },
    });
    await runningOn(id, a.id, 'started', 'turn 2');
    const b = await host('SB');
    const requests = registry.tarballRequests();
    await workers[0]!.kill('SIGTERM');

    const result = await conversationResult(handle);
    expect(result, result.reason).toMatchObject({ status: 'completed', setup: { ok: true }, verify: { passed: true } });
    const state = await h.client.workflow.getHandle(id).query(stateQuery);
    expect(state.failovers).toMatchObject([{ fromHost: a.id, toHost: b.id, reason: 'it is being drained' }]);
    // On SB, setup installed again (its own cache was empty): the registry served the tarballs once more.
    expect(registry.tarballRequests()).toBeGreaterThan(requests);
    expect(existsSync(join(b.workspaces, id, 'node_modules', 'left-pad-fixture', 'index.js'))).toBe(true);
    // Turn 3's npm test, on SB with the network off, found its dependency.
    const results = (await h.store.getMessages(id)).filter((m) => m.toolName === 'execute_command');
    expect(results.map((m) => m.turn)).toEqual([1, 2, 3]);
    expect(results[1]!.content).toContain('interrupted');
    expect(results[2]!.content).toContain('fixture tests passed');
    // The step is in the events and in inspect: setup after move 1, on SB, not from a cache.
    const stream = (await h.store.readStream(id, 0, 10_000)).map((r) => r.event);
    expect(stream.filter((e) => e.type === 'setup_finished')).toMatchObject([
      { ok: true, cached: false },
      { ok: true, cached: false, host: b.id, afterMove: 1 },
    ]);
    const env = await environmentOf(h.store, id);
    expect(env.setup!.afterMoves).toMatchObject([{ move: 1, host: b.id, attempts: 1, finished: { ok: true, cached: false } }]);
    expect(env.setup!.log).toContain(`the workspace moved to host ${b.id}`);
    const data = await gatherInspection({ store: h.store, client: h.client, home: h.home } as unknown as Session, id, { maxChars: 10_000, diffs: false });
    let text = '';
    printInspection(data!, (t) => void (text += t));
    expect(text).toMatch(new RegExp(`after move 1, on host ${b.id}: ran in \\d+\\.\\d s`));
  });

  it('a setup that fails on the new host after a move ends the job failed, naming that host; no step runs there', async () => {
    // The hosts of the test above are gone: the job is placed on FA only.
    await stopChildWorkers(workers.splice(0));
    const repo = await fixtureRepo();
    const model = await scriptModel({ turns: [cmd('echo one'), cmd('touch started; sleep 300'), cmd('echo never'), complete] });
    // Succeeds on FA, fails on FB: each host's commands see a mark of their own host.
    const setup = onHost('FA', 'echo toolchain ready', 'echo "no toolchain on this host" >&2; exit 3');
    const a = await host('FA');
    const id = uid('moved-setup-fails');
    const handle = await h.start({
      id,
      task: 'echo, then sleep',
      workspace: repo,
      config: { model, approval: 'never', heartbeatTimeoutMs: 120_000, hostTimeoutMs: 120_000, repo, setup: [setup] },
    });
    await runningOn(id, a.id, 'started', 'turn 2');
    const b = await host('FB');
    await workers[0]!.kill('SIGTERM');

    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('failed');
    expect(result.reason).toBe(`setup failed (exit 3), on host ${b.id} after the workspace moved there`);
    expect((await h.store.getConversation(id))?.status).toBe('failed');
    const state = await h.client.workflow.getHandle(id).query(stateQuery);
    expect(state.failovers).toMatchObject([{ fromHost: a.id, toHost: b.id, reason: 'it is being drained' }]);
    expect(state.host?.hostId).toBe(b.id);
    // Turn 2's call was answered as interrupted (it went with FA), before the notice of the move; nothing ran on FB: no turn 3.
    const results = (await h.store.getMessages(id)).filter((m) => m.toolName === 'execute_command');
    expect(results.map((m) => m.turn)).toEqual([1, 2]);
    expect(results[1]).toMatchObject({ seq: 4, content: expect.stringContaining('interrupted') });
    expect((await h.store.getMessages(id)).map((m) => m.kind).slice(-3)).toEqual(['assistant', 'tool_result', 'notice']);
    expect(existsSync(join(b.workspaces, id, 'started'))).toBe(false);
    // The events and inspect: setup ran on FA, failed after move 1 on FB with its output.
    const stream = (await h.store.readStream(id, 0, 10_000)).map((r) => r.event);
    expect(stream.filter((e) => e.type === 'setup_finished')).toMatchObject([
      { ok: true, cached: false },
      { ok: false, host: b.id, afterMove: 1, exitCode: 3, reason: 'setup failed (exit 3)' },
    ]);
    const env = await environmentOf(h.store, id);
    expect(env.setup!.afterMoves).toMatchObject([{ move: 1, host: b.id, attempts: 1, finished: { ok: false, exitCode: 3 } }]);
    expect(env.setup!.log).toContain(`the workspace moved to host ${b.id}`);
    expect(env.setup!.log).toContain('no toolchain on this host');
    const data = await gatherInspection({ store: h.store, client: h.client, home: h.home } as unknown as Session, id, { maxChars: 10_000, diffs: false });
    let text = '';
    printInspection(data!, (t) => void (text += t));
    expect(text).toMatch(new RegExp(`after move 1, on host ${b.id}: setup failed \\(exit 3\\) in \\d+\\.\\d s`));
    expect(text).toContain(`on host ${b.id} after the workspace moved there`);
    expect(text).toContain('tool execute_command [interrupted]');
  });

  it("setup after a move runs the starting tree's plan, not the repository settings the agent edited; nothing is cached from the agent's tree", async () => {
    await stopChildWorkers(workers.splice(0));
    const setup = 'mkdir -p out && echo turn0 >> out/setup.log';
    const repo = await tempRepo({
      'README.md': 'hello\n',
      '.gitignore': 'out/\n',
      '.agentrun/settings.json': JSON.stringify({ setup, setupNetwork: 'off', cache: ['out'] }),
    });
    const edited = JSON.stringify({ setup: 'touch agent-setup-ran', setupNetwork: 'on' });
    const model = await scriptModel({
      turns: [
        { say: `<write_to_file>\n<path>.agentrun/settings.json</path>\n<content>${edited}</content>\n</write_to_file>` },
        // Appending makes it a command that may not run twice: the drain answers it interrupted instead of running it again on RB.
        cmd('echo began >> started; sleep 300'),
        cmd('cat out/setup.log'),
        complete,
      ],
    });
    const a = await host('RA');
    const id = uid('moved-repo-setup');
    const handle = await h.start({
      id,
      task: 'edit the settings, then wait',
      workspace: repo,
      config: { model, approval: 'never', heartbeatTimeoutMs: 120_000, hostTimeoutMs: 120_000, repo },
    });
    await runningOn(id, a.id, 'started', 'turn 2');
    const b = await host('RB');
    await workers[0]!.kill('SIGTERM');

    const result = await conversationResult(handle);
    expect(result, result.reason).toMatchObject({ status: 'completed', setup: { ok: true } });
    const state = await h.client.workflow.getHandle(id).query(stateQuery);
    expect(state.failovers).toMatchObject([{ fromHost: a.id, toHost: b.id }]);
    // On RB the edited file is in the workspace (it came with the checkpoint), yet setup ran the turn-0 command, offline.
    const moved = join(b.workspaces, id);
    expect(JSON.parse(await readFile(join(moved, '.agentrun/settings.json'), 'utf8'))).toEqual(JSON.parse(edited));
    expect(existsSync(join(moved, 'agent-setup-ran'))).toBe(false);
    expect(await readFile(join(moved, 'out/setup.log'), 'utf8')).toBe('turn0\n');
    const started2 = (await h.store.readStream(id, 0, 10_000)).map((r) => r.event).filter((e) => e.type === 'setup_started');
    expect(started2).toMatchObject([
      { commands: [setup], network: 'off' },
      { commands: [setup], network: 'off', host: b.id, afterMove: 1 },
    ]);
    // RB's cache holds nothing: that setup ran in a tree the agent had worked in.
    expect(existsSync(cacheRoot(b.home)) ? await readdir(cacheRoot(b.home)) : []).toEqual([]);
  });

  it('a host SIGKILLed during setup: the job is placed again from its turn-0 checkpoint on the other host, setup runs there, turn 1 runs once', async () => {
    await stopChildWorkers(workers.splice(0));
    const repo = await tempRepo({ 'README.md': 'hello\n', '.gitignore': 'setup-*\n' });
    // Setup never ends on KA (the workspace is bound at its path in the sandbox): the host dies in it.
    const setup = `${onHost('KA', 'touch setup-began; sleep 300')}; echo ready > setup-ready`;
    const model = await scriptModel({ turns: [cmd('cat setup-ready'), complete] });
    const a = await host('KA');
    const id = uid('setup-host-lost');
    const handle = await h.start({
      id,
      task: 'after setup',
      workspace: repo,
      config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000, repo, setup: [setup] },
    });
    await runningOn(id, a.id, 'setup-began', 'setup');
    const b = await host('KB');
    await workers[0]!.kill('SIGKILL');

    const result = await conversationResult(handle);
    expect(result, result.reason).toMatchObject({ status: 'completed', setup: { ok: true } });
    const state = await h.client.workflow.getHandle(id).query(stateQuery);
    expect(state.host?.hostId).toBe(b.id);
    expect(state.failovers).toMatchObject([{ fromHost: a.id, toHost: b.id, restoredTurn: 0, atTurn: 0 }]);
    // Setup ran to its end on KB; the model's one command there read what it made.
    expect(await readFile(join(b.workspaces, id, 'setup-ready'), 'utf8')).toBe('ready\n');
    const messages = await h.store.getMessages(id);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.turn)).toEqual([1, 2]);
    expect(messages.find((m) => m.toolName === 'execute_command')?.content).toContain('ready');
    const stream = (await h.store.readStream(id, 0, 10_000)).map((r) => r.event);
    expect(stream.filter((e) => e.type === 'setup_finished')).toMatchObject([{ ok: true }]);
    expect(stream.filter((e) => e.type === 'setup_finished' && 'host' in e && e.host === a.id)).toEqual([]);
    const data = await gatherInspection({ store: h.store, client: h.client, home: h.home } as unknown as Session, id, { maxChars: 10_000, diffs: false });
    let text = '';
    printInspection(data!, (t) => void (text += t));
    // inspect says where setup ran: started on KA, lost with it, run again on KB.
    expect(text).toContain(`Setup (1 command, 2 attempts on hosts ${a.id}, then ${b.id}: the job moved when a host was lost)`);
    const env = await environmentOf(h.store, id);
    expect(env.setup).toMatchObject({ attempts: 2, hosts: [a.id, b.id], finished: { ok: true, host: b.id } });
    // Both runs' output is in its log: KB's is not taken for a retry of KA's.
    expect(env.setup!.log.split('$ if [ -d').length - 1).toBe(2);
  });

  it('a local workspace whose host is SIGKILLed during setup is rebuilt from its turn-0 bundle on the other host, where setup runs to its end', async () => {
    await stopChildWorkers(workers.splice(0));
    const workspace = await tempRepo({ 'README.md': 'hello\n', '.gitignore': 'setup-*\n' });
    // In the directory it started in (on LA) setup never ends; rebuilt under LB's AGENTRUN_WORKSPACES it does.
    const setup = onHost('LB', 'echo ready > setup-ready', 'touch setup-began; sleep 300');
    const model = await scriptModel({ turns: [cmd('cat setup-ready'), complete] });
    const a = await host('LA');
    const id = uid('local-setup-host-lost');
    const handle = await h.start({
      id,
      task: 'after setup',
      workspace,
      config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000, setup: [setup] },
    });
    await runningOn(id, a.id, 'setup-began', 'setup');
    const b = await host('LB');
    await workers[0]!.kill('SIGKILL');

    const result = await conversationResult(handle);
    expect(result, result.reason).toMatchObject({ status: 'completed', setup: { ok: true } });
    const state = await h.client.workflow.getHandle(id).query(stateQuery);
    expect(state.failovers).toMatchObject([{ fromHost: a.id, toHost: b.id, restoredTurn: 0, atTurn: 0 }]);
    expect(state.host?.workspace.startsWith(b.workspaces)).toBe(true);
    expect(await readFile(join(state.host!.workspace, 'setup-ready'), 'utf8')).toBe('ready\n');
    const messages = await h.store.getMessages(id);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.turn)).toEqual([1, 2]);
    expect(messages.find((m) => m.toolName === 'execute_command')?.content).toContain('ready');
  });

  it('a host SIGKILLed during verify: the workspace moves with its last checkpoint, setup runs again there, then verify, and the job completes', async () => {
    await stopChildWorkers(workers.splice(0));
    const repo = await tempRepo({ 'README.md': 'hello\n', '.gitignore': 'setup-*\nverify-*\n' });
    const setup = 'echo ready > setup-ready';
    // Verify never ends on VA: the host dies in it. On VB it checks the agent's file and setup's.
    const verify = `${onHost('VA', 'touch verify-began; sleep 300')}; test -f setup-ready && grep -q feature a.txt`;
    const model = await scriptModel({ turns: [{ say: `<write_to_file>\n<path>a.txt</path>\n<content>\nfeature\n</content>\n</write_to_file>` }, complete] });
    const a = await host('VA');
    const id = uid('verify-host-lost');
    const handle = await h.start({
      id,
      task: 'write a, then finish',
      workspace: repo,
      // The workspace is looked at after the end: kept (a pushed job's goes as it ends).
      config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000, repo, setup: [setup], verify, push: true, keepWorkspace: 'always' },
    });
    await runningOn(id, a.id, 'verify-began', 'verify');
    const b = await host('VB');
    await workers[0]!.kill('SIGKILL');

    const result = await conversationResult(handle);
    expect(result, result.reason).toMatchObject({ status: 'completed', setup: { ok: true }, verify: { passed: true } });
    const state = await h.client.workflow.getHandle(id).query(stateQuery);
    expect(state.failovers).toMatchObject([{ fromHost: a.id, toHost: b.id, restoredTurn: 1 }]);
    // Turn 1's file came with the checkpoint; setup ran again on VB before verify did.
    const moved = join(b.workspaces, id);
    expect(await readFile(join(moved, 'a.txt'), 'utf8')).toContain('feature');
    expect(existsSync(join(moved, 'setup-ready'))).toBe(true);
    const stream = (await h.store.readStream(id, 0, 10_000)).map((r) => r.event);
    expect(stream.filter((e) => e.type === 'setup_finished')).toMatchObject([{ ok: true }, { ok: true, host: b.id, afterMove: 1 }]);
    expect(result.branch).toMatchObject({ pushed: true });
    expect(execFileSync('git', ['show', `${result.branch!.branch}:a.txt`], { cwd: repo, encoding: 'utf8' })).toContain('feature');
  });
});
