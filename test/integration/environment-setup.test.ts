// Repository environments end to end (real workflow, bwrap, git, npm): setup installs from a
// loopback npm registry through the egress proxy before turn 1, the agent's commands then work with
// the network off, the cache makes the next job's setup a copy, verify checks the result, and a
// failing setup ends the job before any model call. No worker is killed or stopped here and no
// timeout is shortened (environment.test.ts has those), so this file runs beside another.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { environmentOf, gatherInspection } from '../../src/client/inspection.js';
import { printInspection } from '../../src/cli/inspect.js';
import type { Session } from '../../src/cli/session.js';
import { EgressProxy, setEgressProxy } from '../../src/sandbox/proxy.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { npmFixtureRepo, npmProject, startFixtureRegistry, type NpmRegistry } from '../helpers/npm-registry.js';
import { tempDir } from '../helpers/temp.js';
import { runCli } from '../helpers/dist.js';

const cmd = (command: string) => ({
  say: `<execute_command>\n<command>${command}</command>\n<requires_approval>false</requires_approval>\n</execute_command>`,
});
const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };

let registry: NpmRegistry;
let home: string;
beforeAll(async () => {
  registry = await startFixtureRegistry();
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

const fixtureRepo = (more?: (dir: string) => Promise<void>) => npmFixtureRepo(registry, more);

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
