// Repository jobs on a fleet: two worker processes act as two hosts (own AGENTRUN_HOST_ID and
// AGENTRUN_WORKSPACES) with a local bare repository as the remote. Real Temporal, PostgreSQL, git.
import { conversationResult } from '../../src/client/outcome.js';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowUpdateStage } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationState } from '../../workflows/api.js';
import type { SessionInput } from '../../workflows/session/types.js';
import { runConfigSchema } from '../../src/config.js';
import { listConversations } from '../../src/client/list.js';
import { privateGitDir } from '../../src/workspace/checkpoint.js';
import { workspaceOrigin } from '../../src/workspace/identity.js';
import { gatherInspection } from '../../src/client/inspection.js';
import { printInspection } from '../../src/cli/inspect.js';
import { answerUpdate, rollbackUpdate, stateQuery, WORKFLOW_TYPE } from '../../workflows/api.js';
import { recordHistory as recordHistoryOf } from '../histories/manifest.js';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../helpers/child-worker.js';
import { checkpointGit, agentrunEnv, createHarness, gitOut, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { bareRemote, command, complete, until, write } from '../helpers/fleet.js';
import { tempDir } from '../helpers/temp.js';
import { crashGates, type CrashGates } from '../helpers/crash-gate.js';
import { CLI } from '../helpers/dist.js';
import { fleetLines } from '../../src/cli/render/fleet.js';

let h: Harness;
const children: ChildWorker[] = [];
beforeAll(async () => {
  h = await createHarness({ worker: false, repositoryExtensions: true });
});
afterAll(async () => {
  await stopChildWorkers(children);
  await h?.close();
});

/** Stop every worker a previous test left, so the next job lands where the test says. */
async function stopHosts(): Promise<void> {
  await stopChildWorkers(children);
}

/** AGENTRUN_RECORD_HISTORIES=1 writes the run's history as a replay fixture (test/histories/). */
const recordHistory = (id: string, name: string) => recordHistoryOf(h.client, id, name);

/** A host worker; `workspaces` reuses a disk (a pod restarted under its old name keeps its volume). */
async function host(id: string, workspaces?: string, env: NodeJS.ProcessEnv = {}): Promise<{ worker: ChildWorker; workspaces: string }> {
  workspaces ??= await tempDir(`agentrun-ws-${id}-`);
  const worker = await startChildWorker(h, { AGENTRUN_HOST_ID: `${id}-${h.taskQueue}`, AGENTRUN_WORKSPACES: workspaces, ...env });
  children.push(worker);
  return { worker, workspaces };
}

const state = (id: string) => h.client.workflow.getHandle(id).query(stateQuery) as Promise<ConversationState>;

/** Turn 2's command runs until its host is killed; turns 1 and 3 write a file each. */
const killedDuringCommand = {
  turns: [
    { say: write('a.txt', 'from turn 1') },
    { say: command('echo ran >> side.txt; sleep 300') },
    { say: write('b.txt', 'from turn 3') },
    { say: complete },
  ],
};

describe('repository jobs on two hosts', () => {
  it('fails over from a SIGKILLed host to the other and pushes the branch with every file', async () => {
    const remote = await bareRemote({ 'README.md': 'hello\n', 'src/app.ts': 'export const x = 1;\n' });
    const model = await scriptModel(killedDuringCommand);
    await stopHosts();
    const a = await host('A');
    const id = uid('fleet');
    const handle = await h.start({
      id,
      task: 'write a and b',
      workspace: remote,
      // Its workspaces are looked at after the end: kept (a pushed job's goes as it ends).
      config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000, repo: remote, push: true, keepWorkspace: 'always' },
    });
    const first = await until('the job to be placed on host A', async () => (await state(id).catch(() => undefined))?.host);
    expect(first.hostId).toBe(`A-${h.taskQueue}`);
    expect(first.workspace.startsWith(a.workspaces)).toBe(true);
    const b = await host('B');

    // Kill host A while turn 2's command runs there.
    await until('the command to start on host A', async () => existsSync(join(first.workspace, 'side.txt')));
    await a.worker.kill('SIGKILL');

    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    const after = await state(id).catch(() => undefined);
    // How fast: bench/failover.ts (timing goals live in benches, not in tests).

    // The branch on the remote has every file the surviving turns wrote, on top of the base.
    const branch = `agentrun/${id}`;
    expect(result.branch).toMatchObject({ branch, pushed: true });
    expect(gitOut(remote, 'rev-parse', `refs/heads/${branch}`)).toBe(result.branch!.commit);
    const files = gitOut(remote, 'ls-tree', '-r', '--name-only', branch).split('\n').sort();
    expect(files).toEqual(['README.md', 'a.txt', 'b.txt', 'src/app.ts']);
    expect(gitOut(remote, 'show', `${branch}:a.txt`)).toBe('from turn 1');
    expect(result.branch!.diffstat).toMatchObject({ files: 2, insertions: 2, deletions: 0 });
    expect(gitOut(remote, 'log', '-1', '--format=%B', branch)).toContain(id);
    // Checkpoints left the host: turn refs on the remote.
    expect(gitOut(remote, 'for-each-ref', '--format=%(refname)', `refs/agentrun/${id}/`)).toContain(`refs/agentrun/${id}/turn-1`);

    // The job moved to B's disk; the transcript tells the model what was restored.
    const newHost = (
      after ??
      (await h.client.workflow
        .getHandle(id)
        .query(stateQuery)
        .catch(() => undefined))
    )?.host;
    const messages = await h.store.getMessages(id);
    const notice = messages.find((m) => m.kind === 'notice' && m.content.includes('was lost'));
    expect(notice?.content).toContain('after turn 1');
    expect(notice?.content).toContain(`B-${h.taskQueue}`);
    const interrupted = messages.find((m) => m.kind === 'tool_result' && m.toolName === 'execute_command');
    expect(interrupted?.content).toContain('interrupted');
    // The command ran once, on A; its effect went with A and it did not run again on B.
    const restored = (await h.store.readStream(id, 0, 10_000)).map((r) => r.event).find((e) => e.type === 'workspace_restored');
    expect(restored).toMatchObject({ host: `B-${h.taskQueue}`, turn: 1 });
    const bWorkspace = join(b.workspaces, id);
    expect(existsSync(join(bWorkspace, 'side.txt'))).toBe(false);
    expect(existsSync(join(bWorkspace, 'b.txt'))).toBe(true);
    // inspect away from the workers: each turn names where its commit is (the remote and the turn's
    // ref), and the workspace line the clone on host B.
    const operator = await tempDir('agentrun-operator-home-');
    const inspection = (await gatherInspection({ store: h.store, client: h.client, home: operator }, id, { maxChars: 200, diffs: true }))!;
    const turn1 = inspection.checkpoints.find((c) => c.turn === 1)!;
    expect(turn1.diff).toBe(
      `(diff not here: turn 1's commit ${turn1.commit.slice(0, 12)} is on the job's remote ${remote} as refs/agentrun/${id}/turn-1 (on the workers' AGENTRUN_CHECKPOINT_REMOTE instead, if they set one): git fetch ${remote} refs/agentrun/${id}/turn-1 && git show ${turn1.commit})`,
    );
    expect(gitOut(remote, 'rev-parse', `refs/agentrun/${id}/turn-1`)).toBe(turn1.commit);
    let printed = '';
    printInspection(inspection, (t) => (printed += t));
    expect(printed).toContain(
      `  workspace: ${bWorkspace} on host B-${h.taskQueue} (a clone of ${remote}; first placed at ${first.workspace} on A-${h.taskQueue})\n`,
    );
    void newHost;
    await recordHistory(id, 'fleet-failover.json');
  }, 300_000);
});

describe('local workspaces on two hosts', () => {
  const read = (dir: string, file: string) => readFile(join(dir, file), 'utf8').then((t) => t.trim());

  it('rebuilds a local workspace from its checkpoint bundles on another host after a SIGKILL', async () => {
    const workspace = await tempRepo({ 'README.md': 'hello\n' });
    const model = await scriptModel(killedDuringCommand);
    await stopHosts();
    const a = await host('LA');
    const id = uid('local');
    const handle = await h.start({ id, task: 'write a and b', workspace, config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 } });
    const first = await until('the workspace to be placed on host LA', async () => (await state(id).catch(() => undefined))?.host);
    expect(first).toMatchObject({ hostId: `LA-${h.taskQueue}`, workspace });
    const b = await host('LB');
    await until('the command to start on host LA', async () => existsSync(join(workspace, 'side.txt')));
    await a.worker.kill('SIGKILL');
    // Host LA's disk goes with it: LB has to rebuild the workspace from the store.
    await rm(workspace, { recursive: true, force: true });

    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    const restored = join(b.workspaces, id);
    expect((await state(id)).host).toMatchObject({ hostId: `LB-${h.taskQueue}`, workspace: restored });
    expect(await read(restored, 'README.md')).toBe('hello');
    expect(await read(restored, 'a.txt')).toBe('from turn 1');
    expect(await read(restored, 'b.txt')).toBe('from turn 3');
    // The command's effect went with LA, and it did not run again on LB.
    expect(existsSync(join(restored, 'side.txt'))).toBe(false);
    const messages = await h.store.getMessages(id);
    expect(messages.find((m) => m.kind === 'tool_result' && m.toolName === 'execute_command')?.content).toContain('interrupted');
    const notice = messages.find((m) => m.kind === 'notice' && m.content.includes('was lost'))?.content;
    expect(notice).toContain('after turn 1');
    expect(notice).toContain(`The workspace directory is now ${restored} (${workspace} was on the lost host)`);
    // One bundle per checkpoint, each incremental: the first against the directory's bundle base (stored once, in parts).
    const bundled = await h.store.getBundledCommits(id);
    expect(bundled.map((c) => c.turn)).toEqual([0, 1, 3]);
    expect(bundled[0]!.base).toEqual(expect.any(String));
    expect(await h.store.getBundleBase(bundled[0]!.base!)).toMatchObject({ parts: 1 });
    const checkpoints = await h.store.getCheckpoints(id);
    expect(bundled.map((c) => c.commit)).toEqual(checkpoints.map((c) => c.commit));
    expect(checkpointGit(h.home, restored, 'show', `${checkpoints[2]!.commit}:b.txt`)).toBe('from turn 3');
    const events = (await h.store.readStream(id, 0, 10_000)).map((r) => r.event);
    expect(events.find((e) => e.type === 'workspace_restored')).toMatchObject({ host: `LB-${h.taskQueue}`, turn: 1 });
    // list: the host and the disk the workspace takes (measured in the background after each checkpoint).
    const row = await until('the disk use of the restored workspace', async () => {
      const r = (await listConversations({ client: h.client, store: h.store, searchAttributes: false }, { limit: 1000 })).find((c) => c.conversationId === id);
      return r?.host === `LB-${h.taskQueue}` && r.diskBytes !== undefined && r;
    });
    expect(row.diskBytes).toBeGreaterThan(0);
    expect(row.hostWorkspace).toBe(restored);

    // inspect from a machine that is not the worker's (its own AGENTRUN_HOME): the diffs come from
    // the store's bundles, and the workspace line names the host and directory it is in now.
    const operator = await tempDir('agentrun-operator-home-');
    const inspection = (await gatherInspection({ store: h.store, client: h.client, home: operator }, id, { maxChars: 200, diffs: true }))!;
    const diff = (turn: number) => inspection.checkpoints.find((c) => c.turn === turn)?.diff;
    expect(diff(1)).toContain('a.txt');
    expect(diff(1)).toContain('+from turn 1');
    expect(diff(3)).toContain('b.txt');
    expect(diff(3)).toContain('+from turn 3');
    expect(diff(3)).not.toContain('a.txt');
    expect(inspection.workspace).toEqual({ dir: restored, host: `LB-${h.taskQueue}`, first: { dir: workspace, host: `LA-${h.taskQueue}` } });
    let printed = '';
    printInspection(inspection, (t) => (printed += t));
    expect(printed).toContain(`  workspace: ${restored} on host LB-${h.taskQueue} (first placed at ${workspace} on LA-${h.taskQueue})\n`);
    expect(printed).toContain('    +from turn 3');
    expect(await readdir(join(operator, 'inspect'))).toEqual([]);
    // The worker's own AGENTRUN_HOME: turn 1 from the first directory's private repository, turn 3 from the restored one's.
    const onWorker = (await gatherInspection({ store: h.store, client: h.client, home: h.home }, id, { maxChars: 200, diffs: true }))!;
    expect(onWorker.checkpoints.map((c) => c.diff)).toEqual(inspection.checkpoints.map((c) => c.diff));
    expect(existsSync(join(h.home, 'inspect'))).toBe(false);
    await recordHistory(id, 'fleet-local-failover.json');
  }, 300_000);

  it('places a conversation first on the machine it was started on, never on another machine that has a tree at the same path', async () => {
    const workspace = await tempRepo({ 'README.md': 'hello\n' });
    const model = await scriptModel({ turns: [{ say: write('a.txt', 'one') }, { say: complete }] });
    await stopHosts();
    // Host OA is "another machine" that sees a tree at the same path (here the very same one: the path alone proves nothing).
    const elsewhere = await host('OA', undefined, { AGENTRUN_MACHINE_ID: 'another-machine' });
    expect(process.env.AGENTRUN_MACHINE_ID).toBeUndefined();
    const origin = (await workspaceOrigin(workspace))!;
    expect(origin.machine).not.toBe('another-machine');
    const id = uid('origin');
    const handle = await h.start({
      id,
      task: 'write a',
      workspace,
      origin,
      config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 },
    });
    // Host OA takes the placement and declines it (the activity's last failure says why); nothing is placed.
    const declined = await until('host OA to decline the first placement', async () => {
      const pending = (await handle.describe()).raw.pendingActivities?.find((a) => a.activityType?.name === 'placeLocalWorkspace');
      return pending?.lastFailure?.message?.includes('declined') && pending.lastFailure.message;
    });
    expect(declined).toBe(`workspace ${workspace} on host OA-${h.taskQueue} declined: it was started on machine ${origin.machine}, this is another-machine`);
    expect((await state(id)).host).toBeUndefined();
    // OA's waiting polls come before OB's: Temporal would offer OA a dozen more retries (5 s apart by
    // then), each declined as the first was. Drained now, OA leaves the retries to OB.
    await elsewhere.worker.kill('SIGTERM');
    // The host on the machine it was started on takes it.
    const here = await host('OB');
    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    expect((await state(id)).host).toMatchObject({ hostId: `OB-${h.taskQueue}`, workspace });
    expect(await read(workspace, 'a.txt')).toBe('one');
    expect(here.worker.output()).not.toContain('first placement declined');
    await recordHistory(id, 'fleet-local-origin.json');
  }, 300_000);

  it('goes on without off-host checkpoints above AGENTRUN_MAX_BASE_BUNDLE_BYTES, says so, and fails in one line when its host is lost', async () => {
    // 64 KB that do not compress: the repository's bundle base (turn 0's tree) is above a 16 KB cap.
    const workspace = await tempRepo({ 'README.md': 'hello\n', 'big.bin': randomBytes(64 * 1024).toString('base64') });
    const model = await scriptModel(killedDuringCommand);
    await stopHosts();
    const cap = { AGENTRUN_MAX_BASE_BUNDLE_BYTES: String(16 * 1024) };
    const a = await host('CA', undefined, cap);
    const id = uid('cap');
    const handle = await h.start({ id, task: 'write a and b', workspace, config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 } });
    await until('the command to start on host CA', async () => existsSync(join(workspace, 'side.txt')));
    // Turn 1 checkpointed too, but nothing more was bundled after turn 0's was over the cap.
    const bundled = await h.store.getBundledCommits(id);
    expect(bundled).toEqual([{ turn: 0, commit: expect.any(String), bytes: expect.any(Number), skipped: true, base: expect.any(String) }]);
    expect(bundled[0]!.bytes).toBeGreaterThan(16 * 1024);
    const events = (await h.store.readStream(id, 0, 10_000)).map((r) => r.event);
    const skipped = events.find((e) => e.type === 'offhost_skipped');
    expect(skipped).toMatchObject({ turn: 0, maxBytes: 16 * 1024 });
    expect(skipped && 'reason' in skipped && skipped.reason).toMatch(
      /^its repository's bundle base \(.+ kB\) is above AGENTRUN_MAX_BASE_BUNDLE_BYTES \(16\.4 kB\): the conversation goes on without off-host checkpoints/,
    );
    const inspection = (await gatherInspection({ store: h.store, client: h.client, home: h.home }, id, { maxChars: 200, diffs: false }))!;
    let printed = '';
    printInspection(inspection, (t) => (printed += t));
    expect(printed).toContain("  off-host checkpoints: none from turn 0 (its repository's bundle base (");
    // Away from the worker, turn 1's diff is nowhere to read: one line says why and where it is.
    const operator = await tempDir('agentrun-operator-home-');
    const away = (await gatherInspection({ store: h.store, client: h.client, home: operator }, id, { maxChars: 200, diffs: true }))!;
    expect(away.checkpoints.find((c) => c.turn === 1)?.diff).toMatch(
      new RegExp(
        `^\\(diff unavailable: not under this AGENTRUN_HOME \\(.+\\), and the store has no off-host checkpoint from turn 0 on \\(its repository's bundle base, .+ kB, was above AGENTRUN_MAX_BASE_BUNDLE_BYTES\\); inspect it with the AGENTRUN_HOME of the worker on host CA-${h.taskQueue}, which holds the workspace\\)$`,
      ),
    );

    await host('CB', undefined, cap);
    await a.worker.kill('SIGKILL');
    await rm(workspace, { recursive: true, force: true });
    const result = await conversationResult(handle);
    expect(result.status).toBe('failed');
    expect(result.reason).toBe(
      `the workspace of ${id} cannot be rebuilt on another host: it has no off-host checkpoint since turn 0 (its repository's bundle base was above AGENTRUN_MAX_BASE_BUNDLE_BYTES); restart its host, where the directory is`,
    );
  }, 300_000);

  it('moves the workspace when a rollback finds its host lost, then rolls back there', async () => {
    const workspace = await tempRepo({ 'README.md': 'hello\n' });
    const ask = '<ask_followup_question>\n<question>Go on?</question>\n</ask_followup_question>';
    const model = await scriptModel({ turns: [{ say: write('a.txt', 'one') }, { say: write('b.txt', 'two') }, { say: ask }, { say: complete }] });
    await stopHosts();
    const a = await host('RA');
    const id = uid('rbmove');
    const handle = await h.start({
      id,
      task: 'write, then ask',
      workspace,
      config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 },
    });
    await until('the question', async () => (await state(id).catch(() => undefined))?.pendingQuestion);
    const b = await host('RB');
    await a.worker.kill('SIGKILL');
    await rm(workspace, { recursive: true, force: true });

    // Nothing runs on the host while the question waits: the rollback is what finds it gone.
    const r = await handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 1 }] });
    expect(r.removed).toEqual(['b.txt']);
    const moved = join(b.workspaces, id);
    const s = await state(id);
    expect(s.host).toMatchObject({ hostId: `RB-${h.taskQueue}`, workspace: moved });
    expect(s.failovers?.[0]).toMatchObject({ fromHost: `RA-${h.taskQueue}`, toHost: `RB-${h.taskQueue}`, restoredTurn: 2 });
    expect(await read(moved, 'a.txt')).toBe('one');
    expect(existsSync(join(moved, 'b.txt'))).toBe(false);

    await handle.executeUpdate(answerUpdate, { args: [{ text: 'yes' }] });
    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    const notices = (await h.store.getMessages(id)).filter((m) => m.kind === 'notice').map((m) => m.content);
    expect(notices.some((n) => n.includes('was lost') && n.includes('after turn 2'))).toBe(true);
    expect(notices.some((n) => n.includes('rolled the workspace back to its state after turn 1'))).toBe(true);
    await recordHistory(id, 'fleet-rollback-move.json');
  }, 300_000);

  describe('the turn-0 checkpoint made alongside the first model step', () => {
    let gates: CrashGates;
    beforeAll(async () => {
      gates = await crashGates(h.databaseUrl, h.schema);
    });
    afterAll(async () => {
      await gates?.close();
    });
    const ask = '<ask_followup_question>\n<question>Go on?</question>\n</ask_followup_question>';
    /** A gate that holds the turn-0 checkpoint's step at its store write (the commit made, the store not told yet). */
    const holdTurnZero = async () => {
      const gate = `turn0_${Math.random().toString(36).slice(2, 8)}`;
      await gates.add({ name: gate, table: 'checkpoints', event: 'INSERT', when: 'NEW.turn = 0' });
      return gate;
    };
    /** On one host `hostName`, a conversation over `answers` whose turn-0 checkpoint is held at its store write. */
    const startHeldAtTurnZero = async (hostName: string, idPrefix: string, task: string, answers: string[]) => {
      const workspace = await tempRepo({ 'README.md': 'hello\n' });
      const model = await scriptModel({ turns: answers.map((say) => ({ say })) });
      await stopHosts();
      await host(hostName);
      const gate = await holdTurnZero();
      const id = uid(idPrefix);
      const handle = await h.start({ id, task, workspace, config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 } });
      return { workspace, id, handle, gate, blocked: await gates.waitBlocked(gate) };
    };
    const pendingSteps = async (id: string) =>
      ((await h.client.workflow.getHandle(id).describe()).raw.pendingActivities ?? []).map((a) => a.activityType?.name).sort();

    it('runs the first model step while the checkpoint is made, no tool call before it exists, and rolls back to it', async () => {
      const { workspace, id, handle, gate, blocked } = await startHeldAtTurnZero('ZA', 'turn0', 'write a, then ask', [write('a.txt', 'one'), ask, complete]);
      // The first model step answered meanwhile; its write_to_file waits for the checkpoint.
      await until('the first model step to finish while turn 0 is held', async () => {
        const answered = (await h.store.getMessages(id)).some((m) => m.role === 'assistant' && m.turn === 1);
        return answered && !(await pendingSteps(id)).includes('modelTurn');
      });
      expect(await pendingSteps(id)).toEqual(['checkpointTurnZero']);
      expect(existsSync(join(workspace, 'a.txt'))).toBe(false);
      expect((await h.store.getMessages(id)).some((m) => m.kind === 'tool_result')).toBe(false);
      // A rollback to turn 0 asked for now is accepted: it waits for the checkpoint, and the tool call for it.
      const early = await handle.startUpdate(rollbackUpdate, { args: [{ toTurn: 0 }], waitForStage: WorkflowUpdateStage.ACCEPTED });
      expect(blocked).toBeGreaterThan(0);
      await gates.open(gate);
      expect(await early.result()).toMatchObject({ restored: [], removed: [] });
      await until('the question', async () => (await state(id).catch(() => undefined))?.pendingQuestion);
      expect(await read(workspace, 'a.txt')).toBe('one');

      const r = await handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 0 }] });
      expect(r.removed).toEqual(['a.txt']);
      expect(existsSync(join(workspace, 'a.txt'))).toBe(false);
      expect(await read(workspace, 'README.md')).toBe('hello');
      await handle.executeUpdate(answerUpdate, { args: [{ text: 'yes' }] });
      const result = await conversationResult(handle);
      expect(result.status, result.reason).toBe('completed');
      // Turn 0 is in the store and off the host (bundled against the directory's base), before turn 1's checkpoint.
      expect((await h.store.getCheckpoints(id)).map((c) => c.turn)).toEqual([0, 1]);
      const bundled = await h.store.getBundledCommits(id);
      expect(bundled.map((c) => c.turn)).toEqual([0, 1]);
      expect(bundled[0]!.base).toEqual(expect.any(String));
      expect((await state(id)).checkpointTurns).toEqual([0, 1]);
      await recordHistory(id, 'fleet-turn-zero-alongside.json');
    }, 300_000);

    it('places the workspace again when its host is lost while the checkpoint and the first model step run; the step runs again there', async () => {
      const workspace = await tempRepo({ 'README.md': 'hello\n' });
      const model = await scriptModel({ turns: [{ say: write('a.txt', 'one') }, { say: complete }] });
      await stopHosts();
      const a = await host('YA');
      const gate = await holdTurnZero();
      // The first model step is held too (at its answer's store write): both are lost with the host.
      const step = `step1_${Math.random().toString(36).slice(2, 8)}`;
      await gates.add({ name: step, table: 'messages', event: 'INSERT', when: "NEW.role = 'assistant' AND NEW.turn = 1" });
      const id = uid('turn0lost');
      const handle = await h.start({ id, task: 'write a', workspace, config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 } });
      const blocked = await gates.waitBlocked(gate);
      const stepBlocked = await gates.waitBlocked(step);
      const b = await host('YB');
      await a.worker.kill('SIGKILL');
      await gates.open(gate, blocked);
      await gates.open(step, stepBlocked);

      const result = await conversationResult(handle);
      expect(result.status, result.reason).toBe('completed');
      // The directory was there for YB as it was: placed again, nothing restored, nothing lost.
      expect((await state(id)).host).toMatchObject({ hostId: `YB-${h.taskQueue}`, workspace });
      expect((await state(id)).failovers ?? []).toEqual([]);
      expect(await read(workspace, 'a.txt')).toBe('one');
      const checkpoints = await h.store.getCheckpoints(id);
      expect(checkpoints.map((c) => c.turn)).toEqual([0, 1]);
      expect(checkpointGit(h.home, workspace, 'show', `${checkpoints[0]!.commit}:README.md`)).toBe('hello');
      expect((await h.store.getBundledCommits(id)).map((c) => c.turn)).toEqual([0, 1]);
      // Placed twice: YA, then YB once the checkpoint's step found YA gone.
      const placements = (await handle.fetchHistory()).events?.filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'placeLocalWorkspace',
      );
      expect(placements?.length).toBe(2);
      // The first model step, lost with YA before the checkpoint existed, ran again on YB (no restore, no notice).
      const steps = (await handle.fetchHistory()).events?.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn');
      expect(steps?.length).toBe(3);
      expect((await h.store.getMessages(id)).some((m) => m.kind === 'notice' && m.content.includes('was lost'))).toBe(false);
      expect(b.workspaces).not.toBe(workspace);
      await recordHistory(id, 'fleet-turn-zero-host-lost.json');
    }, 300_000);

    const look = '<read_file>\n<path>README.md</path>\n</read_file>\n<list_files>\n<path>.</path>\n</list_files>';
    const toolResults = async (id: string) => (await h.store.getMessages(id)).filter((m) => m.kind === 'tool_result');

    it("runs the first turn's reads while the checkpoint is made; the first write waits for it", async () => {
      const { workspace, id, handle, gate, blocked } = await startHeldAtTurnZero('XA', 'turn0reads', 'look, then write a', [
        look,
        write('a.txt', 'one'),
        complete,
      ]);
      // Turn 1's reads are answered and turn 2's model step runs while turn 0 is held; turn 2's write waits.
      await until('the reads answered and the second model step done while turn 0 is held', async () => {
        const answered = (await h.store.getMessages(id)).some((m) => m.role === 'assistant' && m.turn === 2);
        return answered && (await toolResults(id)).length === 2 && !(await pendingSteps(id)).includes('modelTurn');
      });
      expect(await pendingSteps(id)).toEqual(['checkpointTurnZero']);
      const reads = await toolResults(id);
      expect(reads.map((m) => m.toolName).sort()).toEqual(['list_files', 'read_file']);
      expect(reads.find((m) => m.toolName === 'read_file')?.content).toContain('hello');
      expect(existsSync(join(workspace, 'a.txt'))).toBe(false);
      await gates.open(gate, blocked);

      const result = await conversationResult(handle);
      expect(result.status, result.reason).toBe('completed');
      expect(await read(workspace, 'a.txt')).toBe('one');
      // Turn 0 holds the tree as the agent found it; turn 1 only read, so the write is turn 2's.
      const checkpoints = await h.store.getCheckpoints(id);
      expect(checkpoints.map((c) => c.turn)).toEqual([0, 2]);
      expect(checkpointGit(h.home, workspace, 'ls-tree', '--name-only', checkpoints[0]!.commit)).toBe('README.md');
      await recordHistory(id, 'fleet-turn-zero-reads-first.json');
    }, 300_000);

    it('a read lost with its host while the checkpoint is made runs again where the workspace is placed next', async () => {
      const workspace = await tempRepo({ 'README.md': 'hello\n' });
      const model = await scriptModel({ turns: [{ say: look }, { say: write('a.txt', 'one') }, { say: complete }] });
      await stopHosts();
      const a = await host('WA');
      const gate = await holdTurnZero();
      // The read is held too, at its result's store write: both go with the host.
      const held = `read_${Math.random().toString(36).slice(2, 8)}`;
      await gates.add({ name: held, table: 'messages', event: 'INSERT', when: "NEW.kind = 'tool_result' AND NEW.tool_name = 'read_file'" });
      const id = uid('turn0readlost');
      const handle = await h.start({
        id,
        task: 'look, then write a',
        workspace,
        config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 },
      });
      const blocked = await gates.waitBlocked(gate);
      const readBlocked = await gates.waitBlocked(held);
      const b = await host('WB');
      await a.worker.kill('SIGKILL');
      await gates.open(gate, blocked);
      await gates.open(held, readBlocked);

      const result = await conversationResult(handle);
      expect(result.status, result.reason).toBe('completed');
      // Placed again on WB (the directory as it was: nothing restored, no notice), where the read ran again and the write ran.
      expect((await state(id)).host).toMatchObject({ hostId: `WB-${h.taskQueue}`, workspace });
      expect((await state(id)).failovers ?? []).toEqual([]);
      const reads = (await toolResults(id)).filter((m) => m.toolName === 'read_file');
      expect(reads).toHaveLength(1);
      expect(reads[0]!.content).toContain('hello');
      expect(reads[0]!.meta?.status).not.toBe('interrupted');
      expect(await read(workspace, 'a.txt')).toBe('one');
      expect((await h.store.getCheckpoints(id)).map((c) => c.turn)).toEqual([0, 2]);
      // The read's step on WA timed out (lost with the host) and ran again on WB's queue.
      const events = (await handle.fetchHistory()).events ?? [];
      const toolSteps = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'toolCall');
      const onA = toolSteps.filter((e) => e.activityTaskScheduledEventAttributes!.taskQueue!.name!.includes('WA-')).map((e) => Number(e.eventId));
      const timedOut = events.filter((e) => e.activityTaskTimedOutEventAttributes).map((e) => Number(e.activityTaskTimedOutEventAttributes!.scheduledEventId));
      expect(onA.some((scheduled) => timedOut.includes(scheduled))).toBe(true);
      expect(toolSteps.filter((e) => e.activityTaskScheduledEventAttributes!.taskQueue!.name!.includes('WB-')).length).toBeGreaterThanOrEqual(2);
      expect(b.workspaces).not.toBe(workspace);
      await recordHistory(id, 'fleet-turn-zero-read-host-lost.json');
    }, 300_000);

    it('ends the conversation as failed, in one line, when the checkpoint fails for another reason than a lost host; no tool call runs', async () => {
      const workspace = await tempRepo({ 'README.md': 'hello\n' });
      const model = await scriptModel({ turns: [{ say: write('a.txt', 'one') }, { say: complete }] });
      await stopHosts();
      await host('XA');
      // The workspace's private checkpoint repository on the host is broken (a HEAD that names
      // nothing, no objects): placement writes only its marker there, every checkpoint's git fails.
      const broken = privateGitDir(h.home, workspace);
      await mkdir(broken, { recursive: true });
      await writeFile(join(broken, 'HEAD'), 'not a git HEAD\n');
      const id = uid('turn0fails');
      const handle = await h.start({ id, task: 'write a', workspace, config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 } });
      const result = await conversationResult(handle);

      expect(result.status).toBe('failed');
      // Whose repository, what is wrong with it and what to do (not a bare path under AGENTRUN_HOME).
      expect(
        result.reason!.startsWith(
          `checkpointTurnZero failed: the checkpoints of ${workspace} cannot be made: its private git repository ${broken} is broken (`,
        ),
      ).toBe(true);
      expect(result.reason).toMatch(
        /not a git repository.*; remove that directory \(its checkpoints are lost, those stored off the host stay\) and start the conversation again$/,
      );
      expect(result.reason).not.toContain('\n');
      // The first model step answered while the checkpoint was tried; its tool call never ran.
      const messages = await h.store.getMessages(id);
      expect(messages.some((m) => m.role === 'assistant' && m.turn === 1)).toBe(true);
      expect(messages.some((m) => m.kind === 'tool_result')).toBe(false);
      expect(existsSync(join(workspace, 'a.txt'))).toBe(false);
      expect(await h.store.getCheckpoints(id)).toEqual([]);
      // What the user sees: the store's row and `inspect`, the same status and reason.
      expect(await h.store.getConversation(id)).toMatchObject({ status: 'failed', reason: result.reason });
      const inspection = (await gatherInspection({ store: h.store, client: h.client, home: h.home }, id, { maxChars: 200, diffs: false }))!;
      let printed = '';
      printInspection(inspection, (t) => (printed += t));
      expect(printed).toContain(`  status: failed (${result.reason})\n`);
      // The step failed once, for good, at once (retrying does not repair the repository; no workflow task failed, none retried for ever); nothing runs on.
      const history = (await handle.fetchHistory()).events ?? [];
      const failed = history.filter((e) => e.activityTaskFailedEventAttributes);
      expect(failed).toHaveLength(1);
      const scheduled = history.find((e) => e.eventId?.toString() === failed[0]!.activityTaskFailedEventAttributes!.scheduledEventId?.toString());
      expect(scheduled?.activityTaskScheduledEventAttributes?.activityType?.name).toBe('checkpointTurnZero');
      expect(history.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
      const described = await handle.describe();
      expect(described.status.name).toBe('FAILED');
      expect(described.raw.pendingActivities ?? []).toEqual([]);
      // The first model step's usage counts in the result as in the store (it was billed), though
      // the checkpoint it waited for failed.
      const billed = await h.store.getUsage(id);
      expect(billed.length).toBeGreaterThan(0);
      expect(result.usage.totalTokens).toBe(billed.reduce((n, u) => n + u.usage.totalTokens, 0));
      expect(result.costUsd).toBeCloseTo(
        billed.reduce((n, u) => n + u.costUsd, 0),
        10,
      );
      await recordHistory(id, 'fleet-turn-zero-failed.json');
    }, 400_000);
  });
});

describe('placement by identity', () => {
  const read = (dir: string, file: string) => readFile(join(dir, file), 'utf8').then((t) => t.trim());

  it('a host with another AGENTRUN_HOME that sees the same path leaves that directory alone and rebuilds the workspace in its own', async () => {
    const workspace = await tempRepo({ 'README.md': 'hello\n' });
    const model = await scriptModel(killedDuringCommand);
    await stopHosts();
    const homeA = await tempDir('agentrun-home-IA-');
    const a = await host('IA', undefined, { AGENTRUN_HOME: homeA });
    const id = uid('ident');
    const handle = await h.start({ id, task: 'write a and b', workspace, config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 } });
    await until('the command to start on host IA', async () => existsSync(join(workspace, 'side.txt')));
    // The marker of the first placement: this conversation, IA's machine id, that directory.
    const marker = JSON.parse(await readFile(join(privateGitDir(homeA, workspace), 'agentrun', 'placed', `${id}.json`), 'utf8'));
    expect(marker).toMatchObject({ conversationId: id, machineId: (await readFile(join(homeA, 'machine-id'), 'utf8')).trim(), workspace });
    const b = await host('IB', undefined, { AGENTRUN_HOME: await tempDir('agentrun-home-IB-') });
    await a.worker.kill('SIGKILL');
    // The directory stays where IB sees it too: by path alone IB would take it over.

    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    const rebuilt = join(b.workspaces, id);
    expect((await state(id)).host).toMatchObject({ hostId: `IB-${h.taskQueue}`, workspace: rebuilt });
    expect(await read(rebuilt, 'a.txt')).toBe('from turn 1');
    expect(await read(rebuilt, 'b.txt')).toBe('from turn 3');
    expect(existsSync(join(rebuilt, 'side.txt'))).toBe(false);
    // IA's directory is as IA left it: nothing of turn 3 was written there.
    expect(await read(workspace, 'a.txt')).toBe('from turn 1');
    expect(await read(workspace, 'side.txt')).toBe('ran');
    expect(existsSync(join(workspace, 'b.txt'))).toBe(false);
    expect(b.worker.output()).toContain(`directory declined, rebuilt from the bundles instead: this host (AGENTRUN_HOME`);
  }, 300_000);

  it('a host restarted under its id that finds another tree at the path moves the workspace instead of working in it', async () => {
    const workspace = await tempRepo({ 'README.md': 'hello\n' });
    const ask = '<ask_followup_question>\n<question>Go on?</question>\n</ask_followup_question>';
    const model = await scriptModel({ turns: [{ say: write('a.txt', 'one') }, { say: ask }, { say: write('b.txt', 'two') }, { say: complete }] });
    await stopHosts();
    const a = await host('XA');
    const id = uid('replaced');
    const handle = await h.start({
      id,
      task: 'write, ask, write',
      workspace,
      config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 },
    });
    await until('the question', async () => (await state(id).catch(() => undefined))?.pendingQuestion);
    await a.worker.kill('SIGKILL');
    // Meanwhile someone put another tree at that path.
    await rm(workspace, { recursive: true, force: true });
    await mkdir(workspace);
    await writeFile(join(workspace, 'other.txt'), 'not yours\n');
    const again = await host('XA', a.workspaces);

    await handle.executeUpdate(answerUpdate, { args: [{ text: 'yes' }] });
    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    const moved = join(a.workspaces, id);
    const s = await state(id);
    expect(s.host, again.worker.output()).toMatchObject({ hostId: `XA-${h.taskQueue}`, workspace: moved });
    expect(s.failovers?.[0]?.reason).toContain(`${workspace} is another directory than the one placed there (replaced since)`);
    expect(await read(moved, 'a.txt')).toBe('one');
    expect(await read(moved, 'b.txt')).toBe('two');
    // The other tree was never read or written: the model step, the first step after the restart,
    // found it (it reads the workspace's context files) and the workspace moved before any tool ran.
    expect((await readdir(workspace)).sort()).toEqual(['other.txt']);
    expect(again.worker.output()).toMatch(/"activity":"modelTurn".*is not the directory placed there/);
    const writes = (await h.store.getMessages(id)).filter((m) => m.kind === 'tool_result' && m.toolName === 'write_to_file');
    expect(writes.map((w) => w.content).join('\n')).not.toContain('interrupted');
  }, 300_000);
});

describe('sub-agents on two hosts', () => {
  it("a child whose host is SIGKILLed before its first checkpoint fails with the reason; the parent's delegate result says so and the parent moves", async () => {
    // The agent file is on host SA's disk only: read there (its host queue), not on the shared queue.
    const workspace = await tempRepo({ 'README.md': 'hello\n' });
    const child = await scriptModel({ turns: [{ say: command('echo child > child.txt; sleep 300') }, { say: complete }] });
    await mkdir(join(workspace, '.agentrun/agents'), { recursive: true });
    await writeFile(join(workspace, '.agentrun/agents/helper.md'), `---\ndescription: Does a slow job.\nmodel: ${child}\n---\nYou help.\n`);
    const delegate = '<delegate>\n<agent>helper</agent>\n<task>do the slow job</task>\n</delegate>';
    const model = await scriptModel({
      turns: [{ say: write('a.txt', 'from turn 1') }, { say: delegate }, { say: write('b.txt', 'from turn 3') }, { say: complete }],
    });
    await stopHosts();
    const a = await host('SA');
    const id = uid('subhost');
    const handle = await h.start({ id, task: 'delegate', workspace, config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 } });
    await until('the workspace to be placed on host SA', async () => (await state(id).catch(() => undefined))?.host);
    const b = await host('SB');
    await until("the child's command to start on host SA", async () => existsSync(join(workspace, 'child.txt')));
    // The child ran on its parent's host, in its parent's directory.
    const childId = `${id}.sub-1`;
    expect((await state(childId)).host).toMatchObject({ hostId: `SA-${h.taskQueue}`, workspace });
    await a.worker.kill('SIGKILL');
    await rm(workspace, { recursive: true, force: true });

    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    const childResult = await conversationResult(h.client.workflow.getHandle(childId));
    expect(childResult.status).toBe('failed');
    expect(childResult.reason).toContain(`workspace host SA-${h.taskQueue} was lost`);
    expect(childResult.reason).toContain('a sub-agent stays in its parent');
    // It never moved on its own into another directory.
    expect((await state(childId)).host).toMatchObject({ hostId: `SA-${h.taskQueue}`, workspace });
    expect((await state(childId)).failovers ?? []).toEqual([]);
    const delegated = (await h.store.getMessages(id)).find((m) => m.kind === 'tool_result' && m.toolName === 'delegate')?.content;
    expect(delegated).toContain('ended failed');
    expect(delegated).toContain(`workspace host SA-${h.taskQueue} was lost`);
    expect(delegated).toContain(
      'Whatever it changed went with that host: the workspace was restored to its checkpoint after turn 1; redo what is still needed',
    );
    // The parent moved to SB from its own checkpoint after turn 1 and finished there.
    const moved = join(b.workspaces, id);
    const s = await state(id);
    expect(s.host).toMatchObject({ hostId: `SB-${h.taskQueue}`, workspace: moved });
    expect(s.failovers?.[0]).toMatchObject({ fromHost: `SA-${h.taskQueue}`, toHost: `SB-${h.taskQueue}`, restoredTurn: 1 });
    expect(s.children?.[0]).toMatchObject({ status: 'failed' });
    expect((await readFile(join(moved, 'a.txt'), 'utf8')).trim()).toBe('from turn 1');
    expect((await readFile(join(moved, 'b.txt'), 'utf8')).trim()).toBe('from turn 3');
    expect(existsSync(join(moved, 'child.txt'))).toBe(false);
    // Nothing of the child left the host: it never moves, so it needs no bundles.
    expect(await h.store.getBundledCommits(childId)).toEqual([]);
  }, 300_000);
});

describe('drain', () => {
  it('hands a conversation to another host on SIGTERM without waiting for a timeout', async () => {
    const remote = await bareRemote({ 'README.md': 'hello\n' });
    const model = await scriptModel({
      // Turn 2's command may not run twice (it appends): cut off by the grace, it is answered, not run again.
      turns: [{ say: write('a.txt', 'one') }, { say: command('echo began >> started; sleep 300') }, { say: write('b.txt', 'three') }, { say: complete }],
    });
    await stopHosts();
    const a = await host('DA');
    const id = uid('drain');
    // Long timeouts: a hand-over that waited for them would take minutes.
    const handle = await h.start({
      id,
      task: 'drain me',
      workspace: remote,
      config: { model, approval: 'never', heartbeatTimeoutMs: 120_000, hostTimeoutMs: 120_000, repo: remote, push: true },
    });
    const first = await until('placement on DA', async () => (await state(id).catch(() => undefined))?.host);
    expect(first.hostId).toBe(`DA-${h.taskQueue}`);
    await host('DB');
    await until('turn 2 to run on DA', async () => existsSync(join(first.workspace, 'started')));
    await a.worker.kill('SIGTERM');
    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    const s = await state(id);
    expect(s.host?.hostId).toBe(`DB-${h.taskQueue}`);
    expect(s.failovers?.[0]).toMatchObject({ fromHost: `DA-${h.taskQueue}`, toHost: `DB-${h.taskQueue}`, restoredTurn: 1 });
    // Moved because of the drain signal, not a timeout (both timeouts are 120 s here).
    expect(s.failovers?.[0]?.reason).toBe('it is being drained');
    // The command outlasted the 1 s shutdown grace and may not run twice: the one kind of call a drain interrupts, and its answer says so.
    const cut = (await h.store.getMessages(id)).find((m) => m.kind === 'tool_result' && m.toolName === 'execute_command');
    expect(cut?.meta?.status).toBe('interrupted');
    expect(cut?.content).toContain('outlasted the shutdown grace');
    await recordHistory(id, 'fleet-drain.json');
    expect(gitOut(remote, 'ls-tree', '-r', '--name-only', `agentrun/${id}`).split('\n').sort()).toEqual(['README.md', 'a.txt', 'b.txt']);
  }, 300_000);
});

describe('a rolling restart that loses nothing', () => {
  let gates: CrashGates;
  beforeAll(async () => {
    gates = await crashGates(h.databaseUrl, h.schema);
  });
  afterAll(async () => {
    await gates?.close();
  });
  /** The worker process has ended (after its drain: the hand-over is its last act). */
  const exited = (w: ChildWorker) =>
    w.process.exitCode !== null || w.process.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => w.process.once('exit', () => r()));
  /** toolCall inputs of the history, in order, with where each was scheduled and whether it completed. */
  const toolCalls = async (id: string) => {
    const events = (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const completed = new Map<number, number>();
    for (const e of events) {
      const c = e.activityTaskCompletedEventAttributes;
      if (c) completed.set(Number(c.scheduledEventId), Number(e.eventId));
    }
    return events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'toolCall')
      .map((e) => {
        const a = e.activityTaskScheduledEventAttributes!;
        const input = JSON.parse(Buffer.from(a.input!.payloads![0]!.data!).toString()) as { turn: number; callId: string };
        return { turn: input.turn, callId: input.callId, queue: a.taskQueue?.name, scheduled: Number(e.eventId), completed: completed.get(Number(e.eventId)) };
      });
  };

  it('restarts both hosts gracefully, one drained between a call being scheduled and starting, one during a long command: every file on the branch, no call interrupted', async () => {
    const remote = await bareRemote({ 'README.md': 'hello\n' });
    const turns = [
      write('f1.txt', 'one'),
      write('f2.txt', 'two'),
      write('f3.txt', 'three'),
      // Two reads of one answer: they overlap.
      '<read_file>\n<path>f1.txt</path>\n</read_file>\n<list_files>\n<path>.</path>\n</list_files>',
      write('f5.txt', 'five'),
      command('touch long-started && sleep 4 && echo done > long.txt'),
      write('f7.txt', 'seven'),
      write('f8.txt', 'eight'),
      write('f9.txt', 'nine'),
      complete,
    ];
    const model = await scriptModel({ turns: turns.map((say) => ({ say })) });
    await stopHosts();
    // A grace long enough for the call running at SIGTERM; info logs show when the drain began.
    const env = { AGENTRUN_SHUTDOWN_GRACE: '30s', AGENTRUN_LOG_LEVEL: 'info' };
    const hosts = { NA: await tempDir('agentrun-ws-NA-'), NB: await tempDir('agentrun-ws-NB-') };
    const started = await Promise.all([host('NA', hosts.NA, env), host('NB', hosts.NB, env)]);
    const workers: Record<string, ChildWorker> = { NA: started[0].worker, NB: started[1].worker };
    // Turn 3's model step is held at its answer's store write: the first drain starts while it runs.
    const gate = `drain3_${Math.random().toString(36).slice(2, 8)}`;
    const id = uid('nolosses');
    await gates.add({ name: gate, table: 'messages', event: 'INSERT', when: `NEW.conversation_id = '${id}' AND NEW.role = 'assistant' AND NEW.turn = 3` });
    // Long timeouts: every move here is a drain's, none a timeout's.
    const handle = await h.start({
      id,
      task: 'a file a turn',
      workspace: remote,
      config: { model, approval: 'never', heartbeatTimeoutMs: 120_000, hostTimeoutMs: 120_000, repo: remote, push: true },
    });
    const first = await until('placement', async () => (await state(id).catch(() => undefined))?.host);
    // Whichever host cloned the job is restarted first (X), then the other (Y).
    const x = first.hostId.startsWith('NA-') ? 'NA' : 'NB';
    const y = x === 'NA' ? 'NB' : 'NA';

    // Restart X: SIGTERM while turn 3's model step runs there. The step finishes within the grace;
    // its tool call is scheduled on X's queue, which no longer takes work, and X then hands over.
    await gates.waitBlocked(gate);
    workers[x]!.process.kill('SIGTERM');
    await until(`${x} to stop taking work`, async () => workers[x]!.output().includes('STOPPING'));
    await gates.open(gate);
    await exited(workers[x]!);
    const onY = await until(`the job to move to ${y}`, async () => {
      const s = await state(id).catch(() => undefined);
      return s?.host?.hostId === `${y}-${h.taskQueue}` && s.host;
    });
    // X comes back under its id, on its disk, while the job goes on on Y.
    const x2 = host(x, hosts[x], env);

    // Restart Y while turn 6's command runs there: it finishes within the grace, its checkpoint
    // leaves, then the job moves (to X's new process, once it is up).
    await until(`turn 6's command to run on ${y}`, async () => existsSync(join(onY.workspace, 'long-started')));
    await workers[y]!.kill('SIGTERM');
    const restarted = (await x2).worker;
    const back = await until(`the job to move back to ${x}`, async () => {
      const s = await state(id).catch(() => undefined);
      return s?.host?.hostId === `${x}-${h.taskQueue}` && s.host;
    });
    expect(back.incarnation).not.toBe(first.incarnation);
    const [X, Y] = [`${x}-${h.taskQueue}`, `${y}-${h.taskQueue}`];

    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    expect(result.branch).toMatchObject({ branch: `agentrun/${id}`, pushed: true });
    expect(gitOut(remote, 'ls-tree', '-r', '--name-only', `agentrun/${id}`).split('\n').sort()).toEqual(
      ['README.md', 'f1.txt', 'f2.txt', 'f3.txt', 'f5.txt', 'f7.txt', 'f8.txt', 'f9.txt', 'long-started', 'long.txt'].sort(),
    );
    expect(gitOut(remote, 'show', `agentrun/${id}:long.txt`)).toBe('done');
    const messages = await h.store.getMessages(id);
    const results = messages.filter((m) => m.kind === 'tool_result');
    expect(results.filter((m) => m.meta?.status !== 'ok').map((m) => m.content)).toEqual([]);
    expect(results.some((m) => m.content.includes('interrupted'))).toBe(false);

    // Turn 3's call was scheduled on X and never started there; it ran on Y under the same id.
    const calls = await toolCalls(id);
    const third = calls.filter((c) => c.turn === 3);
    expect(third.map((c) => c.queue)).toEqual([expect.stringContaining(X), expect.stringContaining(Y)]);
    expect(third[0]!.completed).toBeUndefined();
    expect(third[1]!.callId).toBe(third[0]!.callId);
    // Turn 6's command ran once, on Y, through the drain.
    expect(calls.filter((c) => c.turn === 6).map((c) => c.completed !== undefined)).toEqual([true]);
    // The reads of turn 4 overlap: the second was scheduled before the first completed.
    const reads = calls.filter((c) => c.turn === 4);
    expect(reads).toHaveLength(2);
    expect(reads[1]!.scheduled).toBeLessThan(reads[0]!.completed!);

    // inspect, the stream and the model say a drain moved the workspace, twice, with nothing lost.
    const s = await state(id);
    expect(s.failovers?.map((f) => [f.fromHost, f.toHost, f.drained])).toEqual([
      [X, Y, true],
      [Y, X, true],
    ]);
    expect(fleetLines(s)).toContain(`moved at turn 3: ${X} → ${Y} after a graceful drain`);
    const restored = (await h.store.readStream(id, 0, 10_000)).map((r) => r.event).filter((e) => e.type === 'workspace_restored');
    expect(restored).toEqual([
      expect.objectContaining({ host: Y, from: X, drained: true, turn: 2 }),
      expect.objectContaining({ host: X, from: Y, drained: true, turn: 6 }),
    ]);
    // Once per move: no loop of re-materialisations, and the branch pushed once.
    const logged = [workers.NA!, workers.NB!, restarted]
      .map((w) => w.output().split('re-materialised from the off-host checkpoint').length - 1)
      .reduce((m, n) => m + n, 0);
    expect(logged).toBe(2);
    expect((await h.store.readStream(id, 0, 10_000)).filter((r) => r.event.type === 'result_branch')).toHaveLength(1);
    const notices = messages.filter((m) => m.kind === 'notice').map((m) => m.content);
    expect(notices).toHaveLength(2);
    for (const n of notices) expect(n).toContain('restarted gracefully');
    await recordHistory(id, 'fleet-drain-loses-nothing.json');
  }, 300_000);
});

describe('bad input', () => {
  let remote: string;
  beforeAll(async () => {
    remote = await bareRemote({ 'README.md': 'hello\n' });
    await stopHosts();
    await host('C');
  });
  const job = async (config: Record<string, unknown>, script: unknown = { turns: [{ say: write('x.txt', 'x') }, { say: complete }] }) => {
    const model = await scriptModel(script);
    const handle = await h.start({ id: uid('bad'), task: 't', workspace: String(config.repo), config: { model, approval: 'never', ...config } });
    return { id: handle.workflowId, result: await conversationResult(handle) };
  };

  it('fails a job whose repository does not exist, with the reason', async () => {
    // Beneath the directories local repositories may come from (AGENTRUN_REPO_DIRS), but not there.
    const missing = join(tmpdir(), `agentrun-nonexistent-${process.pid}`, 'nothing.git');
    const { result } = await job({ repo: missing });
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/cannot clone \S*agentrun-nonexistent-\d+\/nothing\.git: .*(does not exist|not a git repository|not appear)/);
  });

  it('fails a job whose ref does not exist', async () => {
    const { result } = await job({ repo: remote, ref: 'no-such-branch' });
    expect(result.status).toBe('failed');
    expect(result.reason).toContain('ref "no-such-branch" does not exist');
  });

  it("checks out --ref and reports a rejected push with git's message, keeping the commit", async () => {
    const src = await tempRepo({ 'README.md': 'hello\n' });
    execFileSync('git', ['-C', src, 'checkout', '-q', '-b', 'feature']);
    execFileSync('git', ['-C', src, 'commit', '-q', '--allow-empty', '-m', 'feature commit'], {
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    });
    const bare = join(await tempDir('agentrun-remote-'), 'r.git');
    execFileSync('git', ['clone', '-q', '--bare', src, bare]);
    // Someone else already owns the branch: a non-fast-forward.
    const unrelated = execFileSync('git', ['-C', bare, 'commit-tree', 'main^{tree}', '-m', 'someone else'], {
      encoding: 'utf8',
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    }).trim();
    execFileSync('git', ['-C', bare, 'update-ref', 'refs/heads/taken', unrelated]);
    const { id, result } = await job({ repo: bare, ref: 'feature', branch: 'taken', push: true });
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/push of taken was rejected: .*(non-fast-forward|rejected|fetch first)/);
    const kept = gitOut(bare, 'rev-parse', `refs/agentrun/${id}/result`);
    expect(gitOut(bare, 'log', '-1', '--format=%s', `${kept}^`)).toBe('feature commit');
    expect(gitOut(bare, 'show', `${kept}:x.txt`)).toBe('x');
  });

  it('expands {{date}} and {{id}} in --branch', async () => {
    const { id, result } = await job({ repo: remote, branch: 'nightly/{{date}}/{{id}}', push: true });
    expect(result.status, result.reason).toBe('completed');
    const date = new Date().toISOString().slice(0, 10);
    expect(result.branch?.branch).toBe(`nightly/${date}/${id}`);
    expect(gitOut(remote, 'show', `nightly/${date}/${id}:x.txt`)).toBe('x');
  });

  it('fails a job when AGENTRUN_WORKSPACES is not writable', async () => {
    // The only host left has a workspaces folder under a file.
    await stopHosts();
    children.push(await startChildWorker(h, { AGENTRUN_HOST_ID: `U-${h.taskQueue}`, AGENTRUN_WORKSPACES: '/etc/hostname/workspaces' }));
    const { result } = await job({ repo: remote });
    expect(result.status).toBe('failed');
    expect(result.reason).toContain('/etc/hostname/workspaces is not writable');
    expect(result.reason).toContain('AGENTRUN_WORKSPACES');
  });
});

describe('fork', () => {
  it('starts from turn N: transcript of N turns, workspace of turn N, both complete independently', async () => {
    await stopHosts();
    await host('F');
    const remote = await bareRemote({ 'README.md': 'hello\n' });
    const parentModel = await scriptModel({ turns: [{ say: write('f1.txt', 'one') }, { say: write('f2.txt', 'two') }, { say: complete }] });
    const forkModel = await scriptModel({ turns: [{ say: complete }, { say: write('g.txt', 'fork') }, { say: complete }] });
    const parentId = uid('parent');
    const config = runConfigSchema.parse({ model: parentModel, approval: 'never', repo: remote, push: true });
    const parent = await conversationResult(
      await h.client.workflow.start(WORKFLOW_TYPE, {
        workflowId: parentId,
        taskQueue: h.taskQueue,
        args: [{ task: 'write files', workspace: remote, config }],
      }),
    );
    expect(parent.status, parent.reason).toBe('completed');

    const forkId = uid('fork');
    const forkInput: SessionInput = {
      task: 'write files',
      workspace: remote,
      config: { ...config, model: forkModel },
      fork: { parentId, atTurn: 1, message: 'write g.txt instead' },
    };
    const fork = await conversationResult(await h.client.workflow.start(WORKFLOW_TYPE, { workflowId: forkId, taskQueue: h.taskQueue, args: [forkInput] }));
    expect(fork.status, fork.reason).toBe('completed');
    expect(fork.turns).toBe(3);

    // The fork's branch: turn 1's workspace plus its own work; the parent's branch is untouched.
    expect(gitOut(remote, 'ls-tree', '-r', '--name-only', `agentrun/${forkId}`).split('\n').sort()).toEqual(['README.md', 'f1.txt', 'g.txt']);
    expect(gitOut(remote, 'ls-tree', '-r', '--name-only', `agentrun/${parentId}`).split('\n').sort()).toEqual(['README.md', 'f1.txt', 'f2.txt']);
    // The transcript starts with the parent's first turn, then the new instruction.
    const parentMessages = (await h.store.getMessages(parentId)).filter((m) => m.turn <= 1);
    const forkMessages = await h.store.getMessages(forkId);
    expect(forkMessages.slice(0, parentMessages.length).map((m) => [m.seq, m.turn, m.kind, m.content])).toEqual(
      parentMessages.map((m) => [m.seq, m.turn, m.kind, m.content]),
    );
    expect(forkMessages.find((m) => m.kind === 'user')?.content).toBe('write g.txt instead');
    expect(forkMessages.some((m) => m.turn === 2 && m.kind === 'assistant' && m.content.includes('g.txt'))).toBe(true);
    const s = await state(forkId);
    expect(s.forkedFrom).toEqual({ parentId, atTurn: 1, message: 'write g.txt instead' });
    await recordHistory(forkId, 'fleet-fork.json');
  }, 240_000);

  it("agentrun fork: its own branch, never the parent's --branch; --branch and --no-push taken; a local workspace refused in one line", async () => {
    await stopHosts();
    await host('FB');
    const remote = await bareRemote({ 'README.md': 'hello\n' });
    const parentModel = await scriptModel({ turns: [{ say: write('f1.txt', 'one') }, { say: write('f2.txt', 'two') }, { say: complete }] });
    const parentId = uid('parent');
    const config = runConfigSchema.parse({ model: parentModel, approval: 'never', repo: remote, push: true, branch: 'nightly/cleanup' });
    const parent = await conversationResult(
      await h.client.workflow.start(WORKFLOW_TYPE, {
        workflowId: parentId,
        taskQueue: h.taskQueue,
        args: [{ task: 'write files', workspace: remote, config }],
      }),
    );
    expect(parent.status, parent.reason).toBe('completed');
    const parentTip = gitOut(remote, 'rev-parse', 'refs/heads/nightly/cleanup');

    // Through the CLI, as a user forks: started on the fleet's queue, run by host FB.
    const fork = async (...args: string[]) => {
      // The scripted model answers by turn: the fork's first own turn is turn 2.
      const forkModel = await scriptModel({ turns: [{ say: complete }, { say: write('g.txt', 'fork') }, { say: complete }] });
      const out = execFileSync(process.execPath, [CLI, 'fork', parentId, '--at-turn', '1', '--json', '--model', forkModel, ...args], {
        env: agentrunEnv(h),
        encoding: 'utf8',
      });
      const started = JSON.parse(out.trim().split('\n').at(-1)!) as { conversationId: string; branch: string; push: boolean };
      const result = await conversationResult(h.client.workflow.getHandle(started.conversationId));
      expect(result.status, result.reason).toBe('completed');
      return { started, result };
    };
    const own = await fork();
    expect(own.started).toMatchObject({ branch: `agentrun/${own.started.conversationId}`, push: true });
    expect(own.result.branch).toMatchObject({ branch: `agentrun/${own.started.conversationId}`, pushed: true });
    expect(gitOut(remote, 'ls-tree', '-r', '--name-only', `agentrun/${own.started.conversationId}`).split('\n').sort()).toEqual([
      'README.md',
      'f1.txt',
      'g.txt',
    ]);
    const named = await fork('--branch', 'fix/{{id}}', '--no-push');
    expect(named.result.branch).toMatchObject({ branch: `fix/${named.started.conversationId}`, pushed: false });
    // The parent's branch is where the parent left it.
    expect(gitOut(remote, 'rev-parse', 'refs/heads/nightly/cleanup')).toBe(parentTip);

    const localId = uid('local');
    const local = runConfigSchema.parse({ model: parentModel, approval: 'never' });
    const workspace = await tempRepo({ 'README.md': 'x\n' });
    const done = await conversationResult(
      await h.client.workflow.start(WORKFLOW_TYPE, { workflowId: localId, taskQueue: h.taskQueue, args: [{ task: 'local', workspace, config: local }] }),
    );
    expect(done.status, done.reason).toBe('completed');
    let refused: { status: number; stderr: string } | undefined;
    try {
      execFileSync(process.execPath, [CLI, 'fork', localId, '--at-turn', '1'], {
        env: agentrunEnv(h),
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (err) {
      refused = err as { status: number; stderr: string };
    }
    expect(refused?.status).toBe(2);
    expect(refused?.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^agentrun: conversation ${localId} works in a local directory: fork takes repository jobs`)),
    ]);
  }, 240_000);
});
