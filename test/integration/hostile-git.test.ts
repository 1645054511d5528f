// Git is code: the agent, following a prompt injection, plants every way git runs a program
// (core.fsmonitor, clean/smudge/process filters, textconv, diff.external, hooks, core.hooksPath,
// core.sshCommand, credential.helper, receivepack/uploadpack, include.path, alternates) in the
// workspace's own .git, then does what used to make the worker run them outside the sandbox: a
// checkpoint, list_files, search_files, list_package_info, `agentrun inspect` with diffs, a
// rollback, and a repository job's push. The planted program, run anywhere the sandbox does not
// reach, would leave a marker in a directory the sandbox cannot see and copy the worker's secret
// and environment into the workspace. Through the real workflow and a worker process (worker/main.ts,
// host queue, sandbox and checkpoints as `agentrun worker`), as root and as an unprivileged user.
import { conversationResult } from '../../src/client/outcome.js';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateGitDir } from '../../src/workspace/checkpoint.js';
import { workspaceDir } from '../../src/workspace/host.js';
import type { ConversationResult } from '../../workflows/api.js';
import { startChildWorker, type ChildWorker } from '../helpers/child-worker.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { runCli } from '../helpers/dist.js';

const _ROOT = fileURLToPath(new URL('../..', import.meta.url));
const _run = promisify(execFile);

const HOOKS = ['reference-transaction', 'post-commit', 'pre-commit', 'post-index-change', 'post-checkout', 'pre-push', 'pre-auto-gc', 'post-rewrite'];

/**
 * The injected commands: a program that proves it ran (outside the sandbox only) and every git
 * setting that starts it, by the workspace's path on the host (commands see it at /workspace; an
 * attacker who guessed the host's path is what the worker must withstand).
 */
function plantCommand(markers: string, hostWorkspace: string): string {
  return [
    // Inside the sandbox the marker directory does not exist: the program stops there.
    `printf '#!/bin/sh\\ntouch "${markers}/$1" 2>/dev/null || exit 0\\ncat "$HOME/secret" > "leak-$1.txt" 2>/dev/null\\nenv > "env-$1.txt"\\nexit 0\\n' > pwn.sh && chmod +x pwn.sh`,
    `W=${hostWorkspace}`,
    'git config core.fsmonitor "$W/pwn.sh fsmonitor"',
    'git config filter.evil.clean "$W/pwn.sh clean"',
    'git config filter.evil.smudge "$W/pwn.sh smudge"',
    'git config filter.evil.process "$W/pwn.sh process"',
    'git config diff.evil.textconv "$W/pwn.sh textconv"',
    'git config diff.external "$W/pwn.sh extdiff"',
    "printf '* filter=evil diff=evil\\n' > .gitattributes",
    `for h in ${HOOKS.join(' ')}; do printf '#!/bin/sh\\n%s/pwn.sh hook-%s\\n' "$W" "$h" > .git/hooks/$h; chmod +x .git/hooks/$h; done`,
    'mkdir -p hooks2 && cp .git/hooks/* hooks2/ && sed -i s/hook-/hookspath-/ hooks2/* && git config core.hooksPath "$W/hooks2"',
    'git config core.sshCommand "$W/pwn.sh ssh"',
    'git config credential.helper "!$W/pwn.sh credential"',
    'git config remote.origin.receivepack "$W/pwn.sh receivepack"',
    'git config remote.origin.uploadpack "$W/pwn.sh uploadpack"',
    'git config url."file:///nonexistent/".insteadOf file:///',
    `printf '[core]\\n\\tfsmonitor = %s/pwn.sh include\\n' "$W" > inc.cfg && git config include.path "$W/inc.cfg"`,
    'echo /var/tmp > .git/objects/info/alternates',
    'echo planted',
  ].join('\n');
}

const TURNS = [
  { tool_calls: [{ name: 'write_to_file', arguments: { path: 'notes.txt', content: 'turn 2\n' } }] },
  { tool_calls: [{ name: 'list_files', arguments: { path: '.', recursive: true } }] },
  { tool_calls: [{ name: 'search_files', arguments: { path: '.', regex: 'turn' } }] },
  { tool_calls: [{ name: 'list_package_info', arguments: { path: '.' } }] },
  { tool_calls: [{ name: 'replace_in_file', arguments: { path: 'notes.txt', diff: '<<<<<<< SEARCH\nturn 2\n=======\nturn 6\n>>>>>>> REPLACE' } }] },
  { tool_calls: [{ name: 'read_file', arguments: { path: 'leak-fsmonitor.txt' } }] },
  { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
];

interface Setup {
  h: Harness;
  worker: ChildWorker;
  /** The worker's AGENTRUN_HOME (its private git directories). */
  home: string;
  markers: string;
  canary: { secret: string; apiKey: string };
  cleanup(): void;
}

/** A worker with a secret in its HOME and a canary API key; `user` makes it an unprivileged one. */
async function setUp(user?: { uid: number; gid: number }): Promise<Setup> {
  const h = await createHarness({ worker: false });
  const tag = randomBytes(6).toString('hex');
  const canary = { secret: `canary-secret-${tag}`, apiKey: `sk-canary-${tag}` };
  // Outside /tmp (the sandbox has a private one) and world-writable, so a program run as the worker, whoever that is, can mark it.
  const markers = mkdtempSync('/var/tmp/agentrun-markers-');
  chmodSync(markers, 0o777);
  const decoy = mkdtempSync('/var/tmp/agentrun-decoy-home-');
  writeFileSync(path.join(decoy, 'secret'), canary.secret);
  let home = h.home;
  let mount: string | undefined;
  const env: NodeJS.ProcessEnv = { HOME: decoy, OPENAI_API_KEY: canary.apiKey, AGENTRUN_LOG_LEVEL: 'debug' };
  if (user) {
    home = mkdtempSync('/var/tmp/agentrun-worker-home-');
    mount = mkdtempSync(path.join(tmpdir(), 'agentrun-src-'));
    chmodSync(mount, 0o755);
    const bundle = path.join(home, 'workflow-bundle.js');
    copyFileSync(h.workflowBundlePath, bundle);
    for (const p of [home, bundle, decoy, path.join(decoy, 'secret')]) chownSync(p, user.uid, user.gid);
    Object.assign(env, { AGENTRUN_HOME: home, AGENTRUN_WORKFLOW_BUNDLE: bundle });
  }
  const worker = await startChildWorker(h, env, user && mount ? { ...user, mount } : undefined);
  return {
    h,
    worker,
    home,
    markers,
    canary,
    cleanup() {
      for (const d of [markers, decoy, ...(user ? [home, mount!] : [])]) rmSync(d, { recursive: true, force: true });
    },
  };
}

async function tearDown(s: Setup | undefined): Promise<void> {
  if (!s) return;
  await s.worker.kill();
  await s.h.close();
  s.cleanup();
}

/** No planted program ran outside the sandbox, nothing leaked into the workspace, no canary anywhere. */
async function expectNothingRan(s: Setup, id: string, workspace: string, extraText: string[] = []): Promise<void> {
  expect(readdirSync(s.markers)).toEqual([]);
  expect(readdirSync(workspace).filter((f) => /^(leak|env)-/.test(f))).toEqual([]);
  const messages = await s.h.store.getMessages(id);
  const stream = JSON.stringify(await s.h.store.readStream(id, 0, 100_000));
  const dump = execFileSync('pg_dump', ['--data-only', '--schema', s.h.schema, s.h.databaseUrl], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const texts = { transcript: JSON.stringify(messages), stream, dump, logs: s.worker.output(), cli: extraText.join('\n') };
  for (const [name, text] of Object.entries(texts)) for (const c of Object.values(s.canary)) expect(text.includes(c), `${c} in the ${name}`).toBe(false);
}

function agentrunEnv(s: Setup): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: s.h.temporalAddress,
    DATABASE_URL: s.h.databaseUrl,
    AGENTRUN_DB_SCHEMA: s.h.schema,
    AGENTRUN_HOME: s.home,
    AGENTRUN_TASK_QUEUE: s.h.taskQueue,
    AGENTRUN_LOG_LEVEL: 'warn',
    OPENAI_API_KEY: '',
  };
}

async function cli(s: Setup, args: string[]): Promise<string> {
  const r = await runCli(args, { env: agentrunEnv(s) });
  if (r.code !== 0) throw new Error(`agentrun ${args[0]} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}

// A fake mounted secret (as a Kubernetes Secret volume lands it, group-readable by the worker) and
// a fake PostgreSQL data directory; /etc/shadow's own first line is the third thing to look for.
const TLS_CANARY = `canary-tls-key-${randomBytes(6).toString('hex')}`;
const PG_CANARY = `canary-pg-data-${randomBytes(6).toString('hex')}`;
const SHADOW_CANARY = readFileSync('/etc/shadow', 'utf8').split('\n')[0]!;
const pgDir = '/var/lib/agentrun-postgres-test';

beforeAll(() => {
  mkdirSync('/etc/agentrun/temporal-tls', { recursive: true });
  writeFileSync('/etc/agentrun/temporal-tls/tls.key', TLS_CANARY, { mode: 0o440 });
  mkdirSync(pgDir, { recursive: true });
  writeFileSync(path.join(pgDir, 'PG_VERSION'), PG_CANARY);
});
afterAll(() => {
  rmSync('/etc/agentrun/temporal-tls/tls.key', { force: true });
  rmSync(pgDir, { recursive: true, force: true });
});

function scenarios(user?: { uid: number; gid: number }) {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp(user);
  }, 120_000);
  afterAll(() => tearDown(s));

  it('a local workspace: checkpoints, file tools, inspect with diffs, rollback and rerun run none of it', async () => {
    const ws = await tempRepo({ 'README.md': 'hello\n', 'a.txt': 'a\n' });
    if (user) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, ws]);
    const model = await scriptModel({
      turns: [
        { tool_calls: [{ name: 'execute_command', arguments: { command: plantCommand(s.markers, realpathSync(ws)), requires_approval: false } }] },
        ...TURNS,
      ],
    });
    if (user) chmodSync(path.dirname(model.slice('scripted:'.length)), 0o755);
    const handle = await s.h.start({ task: 'tidy the notes', workspace: ws, config: { model, approval: 'never', toolFormat: 'native', loopDetection: false } });
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');
    const messages = await s.h.store.getMessages(handle.workflowId);
    const out = (tool: string) => messages.find((m) => m.toolName === tool)?.content ?? '';
    expect(out('execute_command')).toContain('planted');
    expect(out('list_files')).toContain('notes.txt');
    expect(out('search_files')).toContain('turn 2');
    expect(out('read_file')).toMatch(/does not exist|not found|No such file/i);
    // The checkpoints were made, in the private repository, not in the workspace's .git.
    const gitDir = privateGitDir(s.home, ws);
    expect(execFileSync('git', ['--git-dir', gitDir, 'for-each-ref', '--format=%(refname)'], { encoding: 'utf8' })).toContain(handle.workflowId);
    // (Read as files: git itself would now read the workspace's hostile configuration.)
    expect(existsSync(path.join(ws, '.git/refs/agentrun'))).toBe(false);
    expect(existsSync(path.join(ws, '.git/packed-refs')) ? readFileSync(path.join(ws, '.git/packed-refs'), 'utf8') : '').not.toContain('refs/agentrun');
    // The operator's side: inspect with the checkpoint diffs, then a rollback to turn 1.
    const inspected = await cli(s, ['inspect', handle.workflowId]);
    expect(inspected).toContain('notes.txt');
    const rolled = await cli(s, ['rollback', handle.workflowId, '--to', '1', '--json']);
    expect(rolled).toContain('"restored"');
    expect(existsSync(path.join(ws, 'notes.txt'))).toBe(false);
    // A rerun copies the checkpoint's files (never the workspace's .git) and runs the script again there.
    const rerun = await cli(s, ['rerun', handle.workflowId, '--json']);
    expect(rerun).toContain('"rerunOf"');
    const history = JSON.stringify(JSON.parse(JSON.stringify(await handle.fetchHistory())), (k, v) =>
      k === 'data' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v,
    );
    expect(history).toContain('tidy the notes');
    await expectNothingRan(s, handle.workflowId, ws, [inspected, rolled, rerun, history]);
    // The control: the planted settings are live. A plain `git status` in the workspace, as the
    // worker used to run git, runs them (the marker directory fills).
    try {
      execFileSync('git', ['-c', 'safe.directory=*', 'status', '--short'], { cwd: ws, env: { ...process.env, HOME: '/nonexistent' }, stdio: 'pipe' });
    } catch {
      // the planted filter does not speak git's process protocol: git gives up after running it
    }
    expect(readdirSync(s.markers).length).toBeGreaterThan(0);
    for (const f of readdirSync(s.markers)) rmSync(path.join(s.markers, f));
  }, 300_000);

  it("the command's root holds no secret: no shadow, no mounted secret, no PostgreSQL data, not root", async () => {
    const ws = await tempRepo({ 'README.md': 'hello\n' });
    if (user) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, ws]);
    const probe = [
      'id -u',
      'cat /etc/shadow /etc/gshadow 2>&1 | head -3',
      `cat /etc/agentrun/temporal-tls/tls.key 2>&1`,
      `ls ${pgDir} 2>&1; ls /var/lib 2>&1; ls /srv /opt /root /home 2>&1`,
      `cat ${s.markers}/../agentrun-decoy-home-*/secret 2>&1`,
      'echo probed',
    ].join('; ');
    const model = await scriptModel({
      turns: [
        { tool_calls: [{ name: 'execute_command', arguments: { command: probe, requires_approval: false } }] },
        { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
      ],
    });
    if (user) chmodSync(path.dirname(model.slice('scripted:'.length)), 0o755);
    const handle = await s.h.start({ task: 'look around', workspace: ws, config: { model, approval: 'never', toolFormat: 'native' } });
    expect(((await handle.result()) as ConversationResult).status).toBe('completed');
    const out = (await s.h.store.getMessages(handle.workflowId)).find((m) => m.toolName === 'execute_command')!.content;
    expect(out).toContain('probed');
    // The command runs as an unprivileged uid: the sandbox user for a root worker, the worker's own otherwise.
    expect(out).toMatch(new RegExp(`\\b${user ? user.uid : 65534}\\b`));
    expect(out).not.toMatch(/^0$/m);
    for (const secret of [SHADOW_CANARY, TLS_CANARY, PG_CANARY, s.canary.secret]) expect(out).not.toContain(secret);
    expect(readdirSync(s.markers)).toEqual([]);
  }, 300_000);

  it('a repository job: the push goes from the private clone to the real remote, none of the planted settings apply', async () => {
    const source = await tempRepo({ 'src/app.ts': 'export const a = 1;\n' });
    const remote = mkdtempSync(path.join(tmpdir(), 'agentrun-remote-')) + '/repo.git';
    execFileSync('git', ['clone', '--bare', '--quiet', source, remote]);
    if (user) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, path.dirname(remote)]);
    const id = uid('hostile-repo');
    const model = await scriptModel({
      turns: [
        { tool_calls: [{ name: 'execute_command', arguments: { command: plantCommand(s.markers, workspaceDir(s.home, id)), requires_approval: false } }] },
        { tool_calls: [{ name: 'write_to_file', arguments: { path: 'src/app.ts', content: 'export const a = 2;\n' } }] },
        { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
      ],
    });
    if (user) chmodSync(path.dirname(model.slice('scripted:'.length)), 0o755);
    const handle = await s.h.start({
      id,
      task: 'bump a',
      workspace: '',
      // Kept after the end (a pushed job's goes as it ends), so what ran there is checked.
      config: {
        model,
        repo: remote,
        branch: 'hostile/bump',
        push: true,
        approval: 'never',
        toolFormat: 'native',
        loopDetection: false,
        keepWorkspace: 'always',
      },
    });
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');
    // The branch reached the job's real remote (not the insteadOf target), with the agent's edit and without its planted files' effects.
    expect(execFileSync('git', ['--git-dir', remote, 'show', 'hostile/bump:src/app.ts'], { encoding: 'utf8' })).toBe('export const a = 2;\n');
    // The agent's copy of the repository knows the remote by its URL, never by the private clone's path.
    const ws = workspaceDir(s.home, handle.workflowId);
    if (existsSync(ws)) await expectNothingRan(s, handle.workflowId, ws);
    else expect(readdirSync(s.markers)).toEqual([]);
    rmSync(path.dirname(remote), { recursive: true, force: true });
  }, 300_000);
}

describe('hostile git configuration, worker as root', () => {
  scenarios();
});

describe('hostile git configuration, worker as an unprivileged user', () => {
  const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim());
  mkdirSync('/var/tmp', { recursive: true });
  scenarios({ uid, gid });
});
