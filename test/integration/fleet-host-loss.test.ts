// What a lost host keeps: repository jobs on two `agentrun worker` hosts (child processes), the
// job's host SIGKILLed inside a call, between a finished call and its checkpoint, and at random
// moments. Every change the transcript shows as made is on the pushed branch; a call cut off by the
// loss runs again on the new host (file tools from the stored call, commands only where they may
// run twice) and the notice, the state (`inspect`) and the result say what became of it. A writing
// sub-agent's changes leave the host before its delegate call is answered. Real Temporal,
// PostgreSQL, git and bwrap; the scripted model never redoes work.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { conversationResult } from '../../src/client/outcome.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateQuery, type ConversationState, type Failover } from '../../workflows/api.js';
import { fleetLines } from '../../src/cli/render/fleet.js';
import { recordHistory } from '../histories/manifest.js';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../helpers/child-worker.js';
import { createHarness, gitOut, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { bareRemote, command, complete, LOST_WORKER_TASK_TIMEOUT, until, write } from '../helpers/fleet.js';
import { tempDir } from '../helpers/temp.js';
import { crashGates, type CrashGates } from '../helpers/crash-gate.js';
import { seededRandom } from '../helpers/seeded.js';

let h: Harness;
let gates: CrashGates;
/** The live hosts, by host id. */
const hosts = new Map<string, ChildWorker>();
let started = 0;
beforeAll(async () => {
  h = await createHarness({ worker: false });
  gates = await crashGates(h.databaseUrl, h.schema);
});
afterAll(async () => {
  await stopChildWorkers([...hosts.values()]);
  await gates?.close();
  await h?.close();
});

/** A new host (its own id and disk), as a replacement pod would come up. */
async function addHost(): Promise<void> {
  const id = `H${++started}-${h.taskQueue}`;
  hosts.set(id, await startChildWorker(h, { AGENTRUN_HOST_ID: id, AGENTRUN_WORKSPACES: await tempDir(`agentrun-ws-H${started}-`) }));
}

/** Two live hosts, whatever the tests before killed. */
async function twoHosts(): Promise<void> {
  while (hosts.size < 2) await addHost();
}

/** SIGKILL the host that holds `id`'s workspace now; a replacement starts meanwhile. */
async function killJobHost(id: string): Promise<{ killed: string; replacement: Promise<void> }> {
  const s = await state(id);
  const killed = s.host!.hostId;
  await hosts.get(killed)!.kill('SIGKILL');
  hosts.delete(killed);
  return { killed, replacement: addHost() };
}

const state = (id: string) => h.client.workflow.getHandle(id).query(stateQuery) as Promise<ConversationState>;
const replace = (path: string, search: string, by: string) =>
  `<replace_in_file>\n<path>${path}</path>\n<diff>\n<<<<<<< SEARCH\n${search}\n=======\n${by}\n>>>>>>> REPLACE\n</diff>\n</replace_in_file>`;
const config = (model: string, remote: string) => ({
  model,
  approval: 'never' as const,
  heartbeatTimeoutMs: 2000,
  hostTimeoutMs: 3000,
  repo: remote,
  push: true,
});

/** One row of `sql` over the test's schema (the store's tables), or undefined. */
async function row(sql: string, params: unknown[]): Promise<Record<string, unknown> | undefined> {
  const { rows } = await h.store.pool.query(sql, params);
  return rows[0];
}

/** The pushed branch of `id`: every file and its content (as gitOut gives it: trimmed). */
function branchFiles(remote: string, id: string): Record<string, string> {
  const branch = `agentrun/${id}`;
  const names = gitOut(remote, 'ls-tree', '-r', '--name-only', branch).split('\n').filter(Boolean);
  return Object.fromEntries(names.map((n) => [n, gitOut(remote, 'show', `${branch}:${n}`)]));
}

/** The answers to the job's tool calls (the completion aside), each with its call, in order. */
async function madeCalls(id: string): Promise<{ tool: string; args: Record<string, unknown>; ok: boolean; content: string; recovery?: string }[]> {
  const { rows } = await h.store.pool.query(
    `SELECT c.name, c.args, m.content, m.meta FROM messages m JOIN tool_calls c ON c.conversation_id = m.conversation_id AND c.call_id = m.tool_call_id
     WHERE m.conversation_id = $1 AND m.kind = 'tool_result' AND c.name <> 'attempt_completion' ORDER BY m.seq`,
    [id],
  );
  return rows.map((r) => ({ tool: r.name, args: r.args, ok: r.meta?.ok === true, content: r.content, recovery: r.meta?.recovery }));
}

/** Every move's cut-off calls, as the state (what `inspect` prints) records them. */
const movedCalls = (failovers: Failover[] | undefined) => (failovers ?? []).flatMap((f) => f.calls ?? []);

describe('a host lost at a pinned moment', () => {
  it('a kill inside a write (the file written, its ledger entry not finished): the write is made again on the new host from the stored call', async () => {
    await twoHosts();
    const remote = await bareRemote({ 'README.md': 'hello\n' });
    const model = await scriptModel({
      turns: [{ say: write('f1.txt', 'one') }, { say: write('f2.txt', 'two') }, { say: write('f3.txt', 'three') }, { say: complete }],
    });
    const id = uid('loss-in-write');
    const gate = `inwrite_${id.slice(-8)}`;
    // The ledger's finish of turn 2's write: the file is on the host's disk, nothing of it has left.
    await gates.add({
      name: gate,
      table: 'ledger',
      event: 'UPDATE',
      when: `NEW.conversation_id = '${id}' AND NEW.state = 'done' AND OLD.state = 'started' AND NEW.intent->>'path' = 'f2.txt'`,
    });
    const handle = await h.start({ id, task: 'a file a turn', workspace: remote, config: config(model, remote) });
    const pid = await gates.waitBlocked(gate);
    const { killed, replacement } = await killJobHost(id);
    await gates.open(gate, pid);

    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    expect(branchFiles(remote, id)).toEqual({ 'README.md': 'hello', 'f1.txt': 'one', 'f2.txt': 'two', 'f3.txt': 'three' });
    // The call ran again on the new host: the file was as the call had found it (absent), so the write was made again.
    const calls = await madeCalls(id);
    expect(calls.map((c) => [c.tool, c.ok])).toEqual([
      ['write_to_file', true],
      ['write_to_file', true],
      ['write_to_file', true],
    ]);
    expect(calls[1]!.recovery).toBe('reapplied');
    // The notice, the state (inspect) and the result say so.
    const notice = (await h.store.getMessages(id)).find((m) => m.kind === 'notice' && m.content.includes('was lost'))!;
    expect(notice.content).toContain(`held the workspace (${killed})`);
    expect(notice.content).toMatch(/- write_to_file f2\.txt \(call [^)]+\): its change was made again from the transcript/);
    const s = await state(id);
    expect(movedCalls(s.failovers)).toEqual([expect.objectContaining({ tool: 'write_to_file', target: 'f2.txt', recovery: 'reapplied' })]);
    expect(fleetLines(s)).toContain('write_to_file f2.txt: made again from the transcript');
    expect(movedCalls(result.failovers)).toEqual(movedCalls(s.failovers));
    await replacement;
    await recordHistory(h.client, id, 'fleet-host-loss-pinned-write.json');
  }, 300_000);

  /** Turn 2's edit of x.txt cut off by a kill at the write `gate` blocks (on `table`, turn 2); the job completes with every edit. */
  async function editCutOff(
    name: string,
    table: 'messages' | 'checkpoints',
    when: string,
    before?: (id: string, remote: string) => Promise<void>,
  ): Promise<void> {
    await twoHosts();
    const remote = await bareRemote({ 'README.md': 'hello\n' });
    const model = await scriptModel({
      turns: [
        { say: write('x.txt', 'alpha\nbeta\ngamma') },
        { say: replace('x.txt', 'beta', 'BETA') },
        { say: replace('x.txt', 'gamma', 'GAMMA') },
        { say: complete },
      ],
    });
    const id = uid(name);
    const gate = `${name.replace(/-/g, '_')}_${id.slice(-8)}`;
    await gates.add({ name: gate, table, event: 'INSERT', when: `NEW.conversation_id = '${id}' AND NEW.turn = 2 AND ${when}` });
    const handle = await h.start({ id, task: 'edit x', workspace: remote, config: config(model, remote) });
    const pid = await gates.waitBlocked(gate);
    expect(await row(`SELECT state FROM ledger WHERE conversation_id = $1 AND tool = 'replace_in_file'`, [id])).toEqual({ state: 'done' });
    await before?.(id, remote);
    const { replacement } = await killJobHost(id);
    await gates.open(gate, pid);

    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    expect(branchFiles(remote, id)).toEqual({ 'README.md': 'hello', 'x.txt': 'alpha\nBETA\nGAMMA' });
    const calls = await madeCalls(id);
    expect(calls.every((c) => c.ok)).toBe(true);
    expect(calls[1]).toMatchObject({ tool: 'replace_in_file', recovery: 'reapplied' });
    expect(movedCalls((await state(id)).failovers)).toEqual([expect.objectContaining({ tool: 'replace_in_file', recovery: 'reapplied' })]);
    await replacement;
  }

  it('a kill between a finished replace_in_file and its checkpoint: the edit is made again over the restored file, checked against the hash it found', async () => {
    // Turn 2's result message: the edit landed and is recorded done in the ledger; its checkpoint is not made yet.
    await editCutOff('loss-before-cp', 'messages', `NEW.role = 'tool'`);
  }, 300_000);

  it('a kill after the checkpoint was pushed but before the workflow heard of it: restored to the turn before, the edit made again, its ref replaced', async () => {
    // Turn 2's checkpoint row: its ref is on the remote already, the workflow still knows turn 1's.
    await editCutOff('loss-after-push', 'checkpoints', 'true', async (id, remote) => {
      expect(gitOut(remote, 'for-each-ref', '--format=%(refname)', `refs/agentrun/${id}/`)).toContain(`refs/agentrun/${id}/turn-2`);
    });
  }, 300_000);
});

describe("a writing sub-agent's changes", () => {
  /**
   * Turn 2 delegates to an operator's agent that writes two files; the job's host is killed at the
   * write `when` blocks (a row of the parent's, on `table`), after the sub-agent finished.
   */
  async function subagentCutOff(name: string, table: 'messages' | 'checkpoints', when: string, keepDirectory = false) {
    await twoHosts();
    // Sub-agents run in local workspaces (repository jobs do not offer delegate): each host sees
    // this directory until the kill, which takes it (removed, as the lost machine's disk would be).
    const workspace = await tempRepo({ 'README.md': 'hello\n' });
    const child = await scriptModel({ turns: [{ say: write('c1.txt', 'child one') }, { say: write('c2.txt', 'child two') }, { say: complete }] });
    // An operator's agent (the hosts share AGENTRUN_HOME here): it may write.
    await mkdir(join(h.home, 'agents'), { recursive: true });
    await writeFile(join(h.home, 'agents/writer.md'), `---\ndescription: Writes files.\nmodel: ${child}\n---\nYou write.\n`);
    const delegate = '<delegate>\n<agent>writer</agent>\n<task>write the files</task>\n</delegate>';
    const model = await scriptModel({ turns: [{ say: write('a.txt', 'one') }, { say: delegate }, { say: write('b.txt', 'three') }, { say: complete }] });
    const id = uid(name);
    const gate = `${name.replace(/-/g, '_')}_${id.slice(-8)}`;
    await gates.add({ name: gate, table, event: 'INSERT', when: `NEW.conversation_id = '${id}' AND ${when}` });
    const handle = await h.start({
      id,
      task: 'delegate the files',
      workspace,
      // The parent's delegate answer is a store write in a workflow task: killed in it, the host holds that task.
      workflowTaskTimeout: LOST_WORKER_TASK_TIMEOUT,
      config: { model, approval: 'never', heartbeatTimeoutMs: 2000, hostTimeoutMs: 3000 },
    });
    const pid = await gates.waitBlocked(gate);
    const childResult = await conversationResult(h.client.workflow.getHandle(`${id}.sub-1`));
    expect(childResult.status, childResult.reason).toBe('completed');
    const { killed, replacement } = await killJobHost(id);
    if (!keepDirectory) await rm(workspace, { recursive: true, force: true });
    await gates.open(gate, pid);

    const result = await conversationResult(handle);
    expect(result.status, result.reason).toBe('completed');
    const s = await state(id);
    const read = (f: string) => readFile(join(s.host!.workspace, f), 'utf8').then((t) => t.trim());
    const delegated = (await h.store.getMessages(id)).find((m) => m.kind === 'tool_result' && m.toolName === 'delegate')!;
    await replacement;
    return { id, killed, failover: s.failovers?.[0], read, delegated };
  }

  /** The parent's two files and the sub-agent's two, in the workspace where the job ended. */
  async function expectEveryFile(read: (f: string) => Promise<string>): Promise<void> {
    const files = { 'a.txt': 'one', 'c1.txt': 'child one', 'c2.txt': 'child two', 'b.txt': 'three' };
    for (const [f, text] of Object.entries(files)) expect(await read(f), f).toBe(text);
  }

  it('a host killed after the sub-agent finished, before its delegate call was answered: the moved workspace holds every file the sub-agent wrote', async () => {
    // The parent's answer to the delegate call: before, the sub-agent's files were then on the host only.
    const { id, killed, failover, read, delegated } = await subagentCutOff('loss-subagent', 'messages', `NEW.role = 'tool' AND NEW.tool_name = 'delegate'`);
    expect(failover).toMatchObject({ fromHost: killed, restoredTurn: 2 });
    await expectEveryFile(read);
    expect(delegated.meta?.ok).toBe(true);
    expect(delegated.content).toContain('finished in 3 turns');
    await recordHistory(h.client, id, 'fleet-subagent-changes-kept.json');
  }, 300_000);

  it("a host killed while the sub-agent's changes are saved: the delegate call's answer says they are gone, and the model is told to redo them", async () => {
    // The parent's turn-2 checkpoint row: made after the sub-agent, the workflow has not heard of it.
    const { killed, failover, read, delegated } = await subagentCutOff('loss-subagent-save', 'checkpoints', 'NEW.turn = 2');
    expect(failover).toMatchObject({ fromHost: killed, restoredTurn: 1 });
    expect(await read('a.txt')).toBe('one');
    expect(await read('b.txt')).toBe('three');
    await expect(read('c1.txt')).rejects.toThrow(/ENOENT/);
    expect(delegated.meta?.ok).toBe(false);
    expect(delegated.content).toContain(`But the workspace host ${killed} was lost`);
    expect(delegated.content).toContain('they are gone, the workspace was restored to its checkpoint after turn 1; redo what is still needed');
  }, 300_000);

  it("a host killed while the sub-agent's changes are saved, its directory reached intact by the other host: they are saved there, and kept", async () => {
    const { killed, failover, read, delegated } = await subagentCutOff('loss-subagent-kept', 'checkpoints', 'NEW.turn = 2', true);
    // Nothing was restored, so the move is not a failover; the checkpoint was made on the new host.
    expect(failover).toBeUndefined();
    expect((await state(delegated.conversationId)).host?.hostId).not.toBe(killed);
    await expectEveryFile(read);
    expect(delegated.meta?.ok).toBe(true);
    expect((await h.store.getCheckpoints(delegated.conversationId)).find((c) => c.turn === 2)?.files).toEqual(expect.arrayContaining(['c1.txt', 'c2.txt']));
  }, 300_000);
});

const SEED = Number(process.env.AGENTRUN_HOST_LOSS_SEED ?? Date.now() % 1_000_000);
const RUNS = Number(process.env.AGENTRUN_HOST_LOSS_RUNS ?? 4);

/**
 * The moments a kill is aimed at, each a condition on the store after turn `k` began: the call's
 * ledger entry written (its write about to land or landed), its result stored (its checkpoint about
 * to be made), its turn's checkpoint recorded, the next answer stored; then a random few milliseconds more.
 */
const MOMENTS = ['ledger', 'result', 'checkpoint', 'answer'] as const;

async function killAtRandom(id: string, random: () => number, working: number): Promise<{ killed: string; replacement: Promise<void>; at: string }> {
  const k = 1 + Math.floor(random() * working);
  const moment = MOMENTS[Math.floor(random() * MOMENTS.length)]!;
  const jitterMs = Math.floor(random() * 40);
  const query = {
    ledger: [
      `SELECT 1 FROM ledger l JOIN tool_calls c USING (conversation_id, call_id) WHERE l.conversation_id = $1 AND c.seq IN (SELECT seq FROM messages WHERE conversation_id = $1 AND role = 'assistant' AND turn = $2)`,
    ],
    result: [`SELECT 1 FROM messages WHERE conversation_id = $1 AND role = 'tool' AND turn = $2`],
    checkpoint: [`SELECT 1 FROM checkpoints WHERE conversation_id = $1 AND turn = $2`],
    answer: [`SELECT 1 FROM messages WHERE conversation_id = $1 AND role = 'assistant' AND turn = $2 + 1`],
  }[moment][0]!;
  await until(`turn ${k}'s ${moment}`, async () => row(query, [id, k]), 120_000, 10);
  await new Promise((r) => setTimeout(r, jitterMs));
  return { ...(await killJobHost(id)), at: `turn ${k}, ${moment} + ${jitterMs} ms` };
}

/**
 * A job's transcript against its branch: every call shown as made (ok) has its change on the
 * branch, and a call cut off and not redone says so by name.
 */
async function checkAgainstBranch(id: string, remote: string, expected: (made: Set<string>) => Record<string, string>, at: string): Promise<void> {
  const calls = await madeCalls(id);
  const made = new Set(calls.filter((c) => c.ok).map((c) => String(c.args.command ?? c.args.path)));
  expect(branchFiles(remote, id), `seed ${SEED}, kill at ${at}`).toEqual(expected(made));
  for (const c of calls.filter((c) => !c.ok)) {
    expect(c.tool, `seed ${SEED}, kill at ${at}: only a command that may not run twice is left undone (${c.content})`).toBe('execute_command');
    expect(c.content).toContain(`\`${String(c.args.command)}\``);
  }
}

/** One line per run: where the kill landed and what became of the calls it cut off. */
function report(run: number, at: string, failovers: Failover[] | undefined): void {
  const calls = movedCalls(failovers).map((c) => `${c.tool} ${c.target ?? ''}: ${c.recovery}`);
  // eslint-disable-next-line no-console
  console.log(`seed ${SEED} run ${run}: killed at ${at}; ${failovers?.length ?? 0} move(s); cut-off calls: ${calls.join(', ') || 'none'}`);
}

describe(`host loss at random moments (seed ${SEED}: AGENTRUN_HOST_LOSS_SEED=${SEED} repeats it)`, () => {
  const random = seededRandom(SEED);
  // eslint-disable-next-line no-console
  console.log(`host loss at random moments: seed ${SEED}, ${RUNS} runs of each job`);

  it('a file-writing job: every file on the pushed branch, whenever its host is killed', async () => {
    const files = Array.from({ length: 6 }, (_, i) => [`f${i + 1}.txt`, `file ${i + 1}`] as const);
    const model = await scriptModel({ turns: [...files.map(([p, c]) => ({ say: write(p, c) })), { say: complete }] });
    for (let run = 0; run < RUNS; run++) {
      await twoHosts();
      const remote = await bareRemote({ 'README.md': 'hello\n' });
      const id = uid('loss-random');
      const handle = await h.start({ id, task: 'a file a turn', workspace: remote, config: config(model, remote) });
      const { replacement, at } = await killAtRandom(id, random, files.length);
      const result = await conversationResult(handle);
      expect(result.status, `seed ${SEED}, kill at ${at}: ${result.reason}`).toBe('completed');
      await checkAgainstBranch(id, remote, () => ({ 'README.md': 'hello', ...Object.fromEntries(files) }), at);
      report(run, at, result.failovers);
      await replacement;
    }
  }, 600_000);

  it('a replace_in_file chain with a repeatable and a non-repeatable command between the edits', async () => {
    const appendOnce = 'echo appended >> log.txt';
    const copy = 'cat x.txt > copy.txt';
    const turns = [
      write('x.txt', 'one\ntwo\nthree\nfour'),
      replace('x.txt', 'one', 'ONE'),
      command(copy),
      replace('x.txt', 'two', 'TWO'),
      command(appendOnce),
      replace('x.txt', 'three', 'THREE'),
      replace('x.txt', 'four', 'FOUR'),
      complete,
    ];
    const model = await scriptModel({ turns: turns.map((say) => ({ say })) });
    for (let run = 0; run < RUNS; run++) {
      await twoHosts();
      const remote = await bareRemote({ 'README.md': 'hello\n' });
      const id = uid('loss-chain');
      const handle = await h.start({ id, task: 'edit x', workspace: remote, config: config(model, remote) });
      const { replacement, at } = await killAtRandom(id, random, turns.length - 1);
      const result = await conversationResult(handle);
      expect(result.status, `seed ${SEED}, kill at ${at}: ${result.reason}`).toBe('completed');
      await checkAgainstBranch(
        id,
        remote,
        (made) => ({
          'README.md': 'hello',
          'x.txt': 'ONE\nTWO\nTHREE\nFOUR',
          // The repeatable command always ran (again, if it was cut off) after the first edit.
          'copy.txt': 'ONE\ntwo\nthree\nfour',
          // The append is on the branch exactly when the transcript says it was made, and once.
          ...(made.has(appendOnce) ? { 'log.txt': 'appended' } : {}),
        }),
        at,
      );
      report(run, at, result.failovers);
      // What each move says of its cut-off calls is what their results say.
      const calls = await madeCalls(id);
      for (const c of movedCalls(result.failovers)) expect(calls.find((m) => m.recovery === c.recovery && m.tool === c.tool)).toBeDefined();
      await replacement;
    }
  }, 600_000);
});
