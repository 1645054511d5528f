// Two tenants on one worker, one of them hostile. The victim (tenant `acme`) runs a repository job
// that reads a secret file and writes a note (both canaries, so they sit in its workspace,
// transcript and checkpoints) and a local-workspace conversation; the attacker (tenant `mallory`)
// then tries every way the options of a conversation reached them: `--id .`, `..` and
// `../../../x` with those workspaces present, `file://` to the victim's private checkpoint
// repository and a path into the workspaces directory, the victim's local workspace as a source,
// the victim's local workspace as the attacker's own workspace, `--replace`, `recorded:`, `fork`
// and `rerun` across tenants. Each is refused at the CLI (one line,
// exit 2) and again by the worker when the CLI is bypassed (a start straight through Temporal);
// the victim's workspace stays, and no canary appears in anything the attacker gets. Through the
// real workflow and a worker process (worker/main.ts), as root and as the unprivileged user `arun`.
import { conversationResult } from '../../src/client/outcome.js';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../src/config.js';
import { privateGitDir } from '../../src/workspace/checkpoint.js';
import { workspaceDir, workspacesDir } from '../../src/workspace/host.js';
import { WORKFLOW_TYPE, type ConversationInput } from '../../workflows/api.js';
import { runCli } from '../helpers/dist.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { arun, handTo, startWorkerAs, type User, type WorkerAs } from '../helpers/worker-as.js';

const _ROOT = fileURLToPath(new URL('../..', import.meta.url));
const _run = promisify(execFile);

interface Setup {
  h: Harness;
  w: WorkerAs;
  user?: User;
  canary: { workspace: string; transcript: string; checkpoint: string; task: string; local: string };
  /** The victim's repository job and local-workspace conversation (tenant acme). */
  victim: { job: string; local: string; localWorkspace: string; repo: string };
  /** A repository the attacker may clone (beneath the operator's directories). */
  ownRepo: string;
  /** Every conversation the attacker started, and everything it was shown. */
  attacker: { ids: string[]; outputs: string[] };
}

async function model(s: Pick<Setup, 'user'>, turns: unknown[]): Promise<string> {
  const m = await scriptModel({ turns });
  if (s.user) chmodSync(path.dirname(m.slice('scripted:'.length)), 0o755);
  return m;
}

async function setUp(user?: User): Promise<Setup> {
  const h = await createHarness({ worker: false });
  const tag = randomBytes(6).toString('hex');
  const canary = {
    workspace: `canary-workspace-${tag}`,
    transcript: `canary-transcript-${tag}`,
    checkpoint: `canary-checkpoint-${tag}`,
    task: `canary-task-${tag}`,
    local: `canary-local-${tag}`,
  };
  const repo = await tempRepo({ 'secret.txt': `${canary.workspace}\n`, 'README.md': 'victim\n' });
  const localWorkspace = await tempRepo({ 'local-secret.txt': `${canary.local}\n` });
  const ownRepo = await tempRepo({ 'README.md': 'mine\n' });
  handTo(user, repo, localWorkspace, ownRepo);
  const w = await startWorkerAs(h, {}, user);
  const s: Setup = {
    h,
    w,
    canary,
    victim: { job: uid('victim-job'), local: uid('victim-local'), localWorkspace, repo },
    ownRepo,
    attacker: { ids: [], outputs: [] },
  };
  if (user) s.user = user;
  // The victim's repository job: its transcript holds the secret file, its checkpoint a note.
  const jobModel = await model(s, [
    { tool_calls: [{ name: 'read_file', arguments: { path: 'secret.txt' } }] },
    { say: canary.transcript, tool_calls: [{ name: 'write_to_file', arguments: { path: 'note.txt', content: `${canary.checkpoint}\n` } }] },
    { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
  ]);
  const job = await h.start({
    id: s.victim.job,
    task: `keep ${canary.task}`,
    workspace: repo,
    config: { model: jobModel, repo, tenant: 'acme', approval: 'never', toolFormat: 'native' },
  });
  expect((await conversationResult(job)).status).toBe('completed');
  const localModel = await model(s, [
    { tool_calls: [{ name: 'read_file', arguments: { path: 'local-secret.txt' } }] },
    { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
  ]);
  const local = await h.start({
    id: s.victim.local,
    task: `look at ${canary.task}`,
    workspace: localWorkspace,
    config: { model: localModel, tenant: 'acme', approval: 'never', toolFormat: 'native' },
  });
  expect((await conversationResult(local)).status).toBe('completed');
  return s;
}

/** `agentrun` as the attacker (AGENTRUN_TENANT=mallory unless `tenant`): exit code and output, kept for the canary check. */
async function cli(s: Setup, args: string[], tenant = 'mallory'): Promise<{ code: number; err: string; out: string }> {
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: s.h.temporalAddress,
    DATABASE_URL: s.h.databaseUrl,
    AGENTRUN_DB_SCHEMA: s.h.schema,
    AGENTRUN_HOME: s.w.home,
    AGENTRUN_TASK_QUEUE: s.h.taskQueue,
    AGENTRUN_TENANT: tenant,
    AGENTRUN_LOG_LEVEL: 'warn',
  };
  const ran = await runCli(args, { env });
  const r = { code: ran.code, err: ran.stderr, out: ran.stdout };
  if (tenant === 'mallory') s.attacker.outputs.push(r.err, r.out);
  return r;
}

/** A one-line refusal, exit 2. */
function refused(r: { code: number; err: string }, pattern: RegExp): void {
  expect(r.code, r.err).toBe(2);
  expect(r.err.trim().split('\n'), r.err).toHaveLength(1);
  expect(r.err).toMatch(pattern);
}

/** The attacker's conversation, started straight through Temporal (no CLI check), to its end. */
async function attack(s: Setup, input: { id?: string; workspace: string; config: Record<string, unknown>; fork?: ConversationInput['fork'] }) {
  const id = input.id ?? uid('mallory');
  s.attacker.ids.push(id);
  const args: ConversationInput = {
    task: 'take what is not mine',
    workspace: input.workspace,
    // As a hand-made client would send it: the worker's own checks are the subject.
    config: { ...runConfigSchema.parse({ model: 'x' }), ...input.config, tenant: 'mallory' } as ConversationInput['config'],
    searchAttributes: true,
    ...(input.fork ? { fork: input.fork } : {}),
  };
  const handle = await s.h.client.workflow.start(WORKFLOW_TYPE, { workflowId: id, taskQueue: s.h.taskQueue, args: [args] });
  const result = await conversationResult(handle);
  s.attacker.outputs.push(JSON.stringify(result));
  return result;
}

/** The victim's workspace is where it was, with its files. */
function victimIntact(s: Setup): void {
  const ws = workspaceDir(s.w.home, s.victim.job);
  expect(readFileSync(path.join(ws, 'secret.txt'), 'utf8')).toBe(`${s.canary.workspace}\n`);
  expect(readFileSync(path.join(ws, 'note.txt'), 'utf8')).toBe(`${s.canary.checkpoint}\n`);
  expect(readdirSync(workspacesDir(s.w.home))).toContain(path.basename(ws));
  expect(existsSync(privateGitDir(s.w.home, ws))).toBe(true);
}

/** `user`: the unprivileged worker's user, looked up when its scenarios start. */
function scenarios(user?: () => User) {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp(user?.());
  }, 300_000);
  afterAll(async () => {
    if (!s) return;
    await s.w.worker.kill();
    await s.h.close();
    s.w.cleanup();
  });

  it('a conversation id of `.`, `..` or a path is one line at the CLI and a failed first step on the worker; no workspace is removed or cloned into', async () => {
    const m = await model(s, [{ tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] }]);
    for (const id of ['.', '..', '../../../x', 'a/b', '-rf'])
      refused(
        await cli(s, ['start', '--task', 'x', '--repo', s.ownRepo, '--model', m, '--id', id]),
        /conversation id ".*" is refused: a conversation id is 1-240 letters/,
      );
    for (const id of ['.', '..', 'x..y']) {
      const result = await attack(s, { id, workspace: s.ownRepo, config: { model: m, repo: s.ownRepo, approval: 'never', toolFormat: 'native' } });
      expect(result.status).toBe('failed');
      expect(result.reason).toMatch(/conversation id ".*" is refused/);
      victimIntact(s);
    }
    // A bad ref or branch name is refused before any turn runs, by the CLI and by the worker.
    refused(
      await cli(s, ['start', '--task', 'x', '--repo', s.ownRepo, '--model', m, '--branch', 'a/../../b']),
      /invalid option --branch: branch "a\/\.\.\/\.\.\/b" is not a valid git branch name/,
    );
    refused(await cli(s, ['start', '--task', 'x', '--repo', s.ownRepo, '--model', m, '--ref', '--upload-pack=touch /tmp/x']), /invalid option --ref/);
    const bad = await attack(s, { workspace: s.ownRepo, config: { model: m, repo: s.ownRepo, branch: 'x..y', approval: 'never', toolFormat: 'native' } });
    expect(bad.status).toBe('failed');
    expect(bad.reason).toMatch(/branch "x\.\.y" is not a valid git branch name/);
    expect(bad.turns).toBe(0);
  }, 300_000);

  it("another tenant's checkpoint repository, workspace or local workspace is no repository source, by file://, by path or through the CLI", async () => {
    const m = await model(s, [
      { tool_calls: [{ name: 'read_file', arguments: { path: 'secret.txt' } }] },
      { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
    ]);
    const checkpoints = privateGitDir(s.w.home, workspaceDir(s.w.home, s.victim.job));
    const sources = [`file://${checkpoints}`, checkpoints, workspaceDir(s.w.home, s.victim.job)];
    for (const repo of sources) {
      refused(
        await cli(s, ['start', '--task', 'x', '--repo', repo, '--ref', `agentrun/${s.victim.job}`, '--model', m]),
        /is refused: it is inside (AGENTRUN_HOME|the workspaces directory)/,
      );
      const result = await attack(s, { workspace: repo, config: { model: m, repo, ref: `agentrun/${s.victim.job}`, approval: 'never', toolFormat: 'native' } });
      expect(result.status).toBe('failed');
      expect(result.reason).toMatch(/is refused: it is inside (AGENTRUN_HOME|the workspaces directory)/);
      expect(result.turns).toBe(0);
    }
    // The victim's local workspace lies beneath the operator's directories, and is still another tenant's.
    const local = await attack(s, {
      workspace: s.victim.localWorkspace,
      config: { model: m, repo: s.victim.localWorkspace, approval: 'never', toolFormat: 'native' },
    });
    expect(local.status).toBe('failed');
    expect(local.reason).toMatch(/workspace of another tenant's conversation/);
    // A scheme the worker does not clone, and a remote helper.
    refused(await cli(s, ['start', '--task', 'x', '--repo', 'http://127.0.0.1:1/r.git', '--model', m]), /clones only https, ssh, git URLs/);
    const helper = await attack(s, { workspace: 'x', config: { model: m, repo: 'ext::sh -c id', approval: 'never', toolFormat: 'native' } });
    expect(helper.reason).toMatch(/remote helpers/);
    victimIntact(s);
  }, 300_000);

  it("another tenant's local workspace is no workspace: naming it, a directory inside it or one holding it fails at the first step, nothing read or written; a refused start claims nothing", async () => {
    const m = await model(s, [
      { tool_calls: [{ name: 'read_file', arguments: { path: 'local-secret.txt' } }] },
      { tool_calls: [{ name: 'write_to_file', arguments: { path: 'pwned.txt', content: 'mallory was here\n' } }] },
      { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
    ]);
    const victimWs = s.victim.localWorkspace;
    mkdirSync(path.join(victimWs, 'sub'), { recursive: true });
    handTo(s.user, path.join(victimWs, 'sub'));
    for (const [workspace, why] of [
      [victimWs, /is refused: it is, holds or lies inside the workspace of another tenant's conversation/],
      [path.join(victimWs, 'sub'), /is refused: it is, holds or lies inside the workspace of another tenant's conversation/],
      [path.dirname(victimWs), /is refused: it is, holds or lies inside the workspace of another tenant's conversation|AGENTRUN_HOME/],
    ] as const) {
      const result = await attack(s, { workspace, config: { model: m, approval: 'never', toolFormat: 'native' } });
      expect(result.status, `${workspace}: ${JSON.stringify(result)}`).toBe('failed');
      expect(result.reason).toMatch(why);
      expect(result.turns).toBe(0);
    }
    expect(existsSync(path.join(victimWs, 'pwned.txt'))).toBe(false);
    // The attacker's refused starts named the victim's directory; they claim nothing: its owner works there still.
    const again = await model(s, [{ tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] }]);
    const own = await s.h.start({
      id: uid('victim-again'),
      task: 'again',
      workspace: victimWs,
      config: { model: again, tenant: 'acme', approval: 'never', toolFormat: 'native' },
    });
    expect((await conversationResult(own)).status).toBe('completed');
    victimIntact(s);
  }, 300_000);

  it("replace, recorded:, fork and rerun act only within the caller's tenant; a replacement in one's own tenant is recorded", async () => {
    const m = await model(s, [{ tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] }]);
    refused(
      await cli(s, ['start', '--task', 'x', '--repo', s.ownRepo, '--model', m, '--id', s.victim.local, '--replace']),
      /is another tenant's: --replace acts only on conversations of tenant mallory/,
    );
    expect(await s.h.store.getConversation(s.victim.local)).not.toBeNull();
    refused(
      await cli(s, ['start', '--task', 'x', '--repo', s.ownRepo, '--model', `recorded:${s.victim.job}`]),
      /no conversation with id \S+ of tenant mallory/,
    );
    refused(await cli(s, ['fork', s.victim.job, '--at-turn', '1']), /no conversation with id \S+ of tenant mallory/);
    refused(await cli(s, ['rerun', s.victim.job, '--detach']), /no conversation with id \S+ of tenant mallory/);
    // Past the CLI, the worker refuses the same.
    const replay = await attack(s, {
      workspace: s.ownRepo,
      config: { model: `recorded:${s.victim.job}`, repo: s.ownRepo, approval: 'never', toolFormat: 'native' },
    });
    expect(replay.status).toBe('failed');
    expect(replay.reason).toMatch(/no conversation with id \S+ of tenant mallory in the store to replay/);
    const fork = await attack(s, {
      workspace: s.victim.repo,
      config: { model: m, repo: s.victim.repo, approval: 'never', toolFormat: 'native' },
      fork: { parentId: s.victim.job, atTurn: 2 },
    });
    expect(fork.status).toBe('failed');
    expect(fork.reason).toMatch(/no conversation with id \S+ of tenant mallory to fork/);
    expect(await s.h.store.getMessages(s.attacker.ids.at(-1)!)).toEqual([]);
    // The victim's own tenant may replace its finished conversation: the replacement is recorded.
    const mine = await cli(
      s,
      ['start', '--task', 'again', '--workspace', s.victim.localWorkspace, '--model', m, '--id', s.victim.local, '--replace', '--tenant', 'acme'],
      'acme',
    );
    expect(mine.code, mine.err).toBe(0);
    expect(await s.h.store.getReplacements(s.victim.local)).toMatchObject([{ tenant: 'acme', oldStatus: 'completed' }]);
    expect((await conversationResult(s.h.client.workflow.getHandle(s.victim.local))).status).toBe('completed');
  }, 300_000);

  it("list, inspect, watch, approve and rollback show and touch only the caller's tenant; the administrator's CLI sees all", async () => {
    const ids = (out: string) =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { conversationId: string }).conversationId);
    const listed = await cli(s, ['list', '--json', '--limit', '200']);
    expect(listed.code, listed.err).toBe(0);
    // Its own conversations only (their reasons name the ids it tried, which it typed itself). The
    // Temporal namespace is shared with other files' tenants `mallory`: of this store's rows, only the attacker's.
    const mine = ids(listed.out);
    expect(mine).toEqual(expect.arrayContaining(s.attacker.ids));
    expect(mine).not.toContain(s.victim.job);
    expect(mine).not.toContain(s.victim.local);
    for (const id of mine) if (await s.h.store.getConversation(id)) expect(s.attacker.ids, id).toContain(id);
    for (const args of [
      ['inspect', s.victim.job],
      ['watch', s.victim.job],
      ['approve', s.victim.job, '--as', 'mallory'],
      ['rollback', s.victim.job, '--to', '0'],
    ])
      refused(await cli(s, args), /no conversation with id \S+ of tenant mallory/);
    const theirs = await cli(s, ['list', '--json', '--limit', '200'], 'acme');
    expect(ids(theirs.out)).toContain(s.victim.job);
    expect(ids(theirs.out)).not.toContain(s.attacker.ids[0]);
    const admin = await cli(s, ['list', '--json', '--limit', '200'], '');
    expect(ids(admin.out)).toEqual(expect.arrayContaining([s.victim.job, s.attacker.ids[0]]));
  }, 300_000);

  it('a worker not started for test inputs runs no scripted or recorded model: the conversation fails at its first step, nothing is read', async () => {
    const queue = uid('tq-production');
    const production = await startWorkerAs(s.h, { AGENTRUN_TASK_QUEUE: queue, AGENTRUN_SCRIPTS_DIR: '', AGENTRUN_RECORDED_MODELS: '' }, s.user);
    try {
      const m = await model(s, [{ tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] }]);
      for (const [modelSpec, why] of [
        [m, /this worker runs no scripted models/],
        ['scripted:/dev/zero', /this worker runs no scripted models/],
        [`recorded:${s.victim.job}`, /does not replay recorded conversations/],
      ] as const) {
        const id = uid('mallory');
        s.attacker.ids.push(id);
        const handle = await s.h.start({
          id,
          task: 'x',
          workspace: s.ownRepo,
          taskQueue: queue,
          config: { model: modelSpec, repo: s.ownRepo, tenant: 'mallory', approval: 'never' },
        });
        const result = await conversationResult(handle);
        s.attacker.outputs.push(JSON.stringify(result));
        expect(result.status).toBe('failed');
        expect(result.reason).toMatch(why);
        expect(result.turns).toBe(0);
      }
    } finally {
      await production.worker.kill();
      production.cleanup();
    }
  }, 300_000);

  it("no canary of the victim's workspace, transcript, task or checkpoints is in anything the attacker got", async () => {
    const texts: Record<string, string> = { outputs: s.attacker.outputs.join('\n') };
    for (const id of s.attacker.ids) {
      texts[`transcript ${id}`] = JSON.stringify(await s.h.store.getMessages(id));
      texts[`stream ${id}`] = JSON.stringify(await s.h.store.readStream(id, 0, 100_000));
      const ws = (() => {
        try {
          return workspaceDir(s.w.home, id);
        } catch {
          return undefined;
        }
      })();
      if (ws && existsSync(ws)) texts[`workspace ${id}`] = readdirSync(ws, { recursive: true }).join('\n');
    }
    expect(s.attacker.ids.length).toBeGreaterThan(8);
    for (const [name, text] of Object.entries(texts))
      for (const [what, c] of Object.entries(s.canary)) expect(text.includes(c), `the victim's ${what} canary in the attacker's ${name}`).toBe(false);
    // The victim's transcript does hold them: the check above looks for something that exists.
    const victim = JSON.stringify(await s.h.store.getMessages(s.victim.job));
    expect(victim).toContain(s.canary.workspace);
    expect(victim).toContain(s.canary.transcript);
  }, 120_000);
}

describe('tenants cannot touch each other, worker as root', () => {
  scenarios();
});

describe('tenants cannot touch each other, worker as an unprivileged user', () => {
  scenarios(arun);
});
