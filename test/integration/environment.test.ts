// Repository environments when a worker is lost (real workflow, bwrap, git, npm): a worker
// SIGKILLed during setup means setup runs again; a job moved to another host (drained or SIGKILLed
// during setup or verify) gets setup there before its next step. environment-setup.test.ts has the
// rest, which runs beside another file.
import { conversationResult } from '../../src/client/outcome.js';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { cacheRoot } from '../../src/environment/cache.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environmentOf, gatherInspection } from '../../src/client/inspection.js';
import { printInspection } from '../../src/cli/inspect.js';
import type { Session } from '../../src/cli/session.js';
import { stateQuery } from '../../workflows/api.js';
import { hostMarkEnv, onHost, startChildWorker, stopChildWorkers, type ChildWorker } from '../helpers/child-worker.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { npmFixtureRepo, startFixtureRegistry, type NpmRegistry } from '../helpers/npm-registry.js';
import { tempDir } from '../helpers/temp.js';

const cmd = (command: string) => ({
  say: `<execute_command>\n<command>${command}</command>\n<requires_approval>false</requires_approval>\n</execute_command>`,
});
const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };

let registry: NpmRegistry;
beforeAll(async () => {
  registry = await startFixtureRegistry();
});
afterAll(async () => {
  await registry?.close();
});

const fixtureRepo = (more?: (dir: string) => Promise<void>) => npmFixtureRepo(registry, more);

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
    // The first attempt's heartbeats stopped; the new worker answered the host's probe and setup ran
    // again there, its attempts numbered on from the most the first round could have used (three).
    expect(stream.filter((r) => r.event.type === 'setup_started').map((r) => (r.event as { attempt: number }).attempt)).toEqual([1, 4]);
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
