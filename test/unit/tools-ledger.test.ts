// runToolOnce against the PostgreSQL ledger (the one workers use): replays, crash recovery for
// file writes (no torn file, no double edit), interrupted commands (re-run only when repeatable),
// and concurrent attempts racing for one call. Crashes are simulated by leaving the ledger in the
// state a worker dying at that point would leave it.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/index.js';
import { runToolOnce, validateToolArgs, type LedgerEntry, type LedgerPort } from '../../src/tools/index.js';
import { ledgerArgsHash } from '../../src/tools/ledger-runner.js';
import { replaceInFile } from '../../src/tools/replace-in-file.js';
import { writeToFile } from '../../src/tools/write-to-file.js';
import { tempDirSync } from '../helpers/temp.js';
import { DATABASE_URL, dropSchema, freshSchemaName } from '../helpers/store-schema.js';

const SCHEMA = freshSchemaName('t_ledger');
let store: Store;
beforeAll(async () => {
  store = await Store.connect(DATABASE_URL, { schema: SCHEMA, max: 4 });
});
afterAll(async () => {
  await store?.close();
  await dropSchema(SCHEMA);
});

let ws: string;
let ledger: LedgerPort;
let conversationId: string;
beforeEach(() => {
  ws = tempDirSync('agentrun-ledger-');
  execFileSync('git', ['init', '-q', ws]);
  conversationId = `c-${randomUUID()}`;
  ledger = store.ledger(conversationId);
});
afterEach(() => rmSync(ws, { recursive: true, force: true }));
const ledgerRows = async () => (await store.pool.query('SELECT count(*)::int AS n FROM ledger WHERE conversation_id = $1', [conversationId])).rows[0].n;

const ctx = () => ({ workspace: ws });
const read = (p: string) => readFileSync(path.join(ws, p), 'utf8');
const diff = (s: string, r: string) => `<<<<<<< SEARCH\n${s}\n=======\n${r}\n>>>>>>> REPLACE`;

/** The ledger as a worker that died right after recording `start` (before or after applying) leaves it. */
async function crashAfterStart(call: { id: string; name: string; args: Record<string, unknown> }, applied: boolean): Promise<void> {
  const v = validateToolArgs(call.name, call.args);
  if (!v.ok) throw new Error(v.error);
  const tool = call.name === 'write_to_file' ? writeToFile : replaceInFile;
  const prepared = await tool.prepare(v.args as never, ctx());
  const entry: LedgerEntry = {
    callId: call.id,
    tool: call.name,
    argsHash: ledgerArgsHash(call.name, v.args),
    state: 'started',
    intent: { path: prepared.path, beforeHash: prepared.beforeHash, afterHash: prepared.afterHash },
  };
  await ledger.start(entry);
  if (applied) await tool.apply(prepared, ctx());
}

describe('runToolOnce', () => {
  it('returns the recorded result for a call already done, without running it again', async () => {
    const call = { id: '3.0', name: 'execute_command', args: { command: 'echo run >> count.txt', requires_approval: 'false' } };
    const first = await runToolOnce(call, ctx(), ledger);
    expect(first.ok).toBe(true);
    expect(first.replayed).toBeUndefined();
    const again = await runToolOnce(call, ctx(), ledger);
    expect(again).toMatchObject({ ok: true, output: first.output, replayed: true });
    expect(read('count.txt')).toBe('run\n');
  });

  it('records tool errors as results and replays them', async () => {
    const call = { id: '4.0', name: 'read_file', args: { path: '../escape' } };
    const r = await runToolOnce(call, ctx(), ledger);
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/outside the workspace/);
    expect((await runToolOnce(call, ctx(), ledger)).replayed).toBe(true);
  });

  it('returns invalid arguments as a result without touching the ledger', async () => {
    const r = await runToolOnce({ id: '5.0', name: 'write_to_file', args: { path: 'a.txt' } }, ctx(), ledger);
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/Missing value for required parameter "content"/);
    expect(await ledgerRows()).toBe(0);
  });

  it('refuses a call id recorded with other arguments', async () => {
    await runToolOnce({ id: '6.0', name: 'write_to_file', args: { path: 'a.txt', content: 'one' } }, ctx(), ledger);
    await expect(runToolOnce({ id: '6.0', name: 'write_to_file', args: { path: 'a.txt', content: 'two' } }, ctx(), ledger)).rejects.toThrow(/other arguments/);
  });

  it('write_to_file: records the intent, then the result', async () => {
    const call = { id: '7.0', name: 'write_to_file', args: { path: 'src/new.ts', content: 'x\n' } };
    const r = await runToolOnce(call, ctx(), ledger);
    expect(r.ok).toBe(true);
    const e = await ledger.get('7.0');
    expect(e).toMatchObject({ state: 'done', intent: { path: 'src/new.ts', beforeHash: null, afterHash: expect.stringMatching(/^[0-9a-f]{64}$/) } });
  });

  it('write_to_file crash after the write landed: recognised by hash, not written again', async () => {
    writeFileSync(path.join(ws, 'a.txt'), 'old\n');
    const call = { id: '8.0', name: 'write_to_file', args: { path: 'a.txt', content: 'new\n' } };
    await crashAfterStart(call, true);
    const r = await runToolOnce(call, ctx(), ledger);
    expect(r.ok).toBe(true);
    expect(r.output).toMatch(/had landed before a worker restart; it was not repeated/);
    expect(read('a.txt')).toBe('new\n');
    expect((await ledger.get('8.0'))?.state).toBe('done');
  });

  it('write_to_file crash before the write: applied once on the retry', async () => {
    writeFileSync(path.join(ws, 'a.txt'), 'old\n');
    const call = { id: '9.0', name: 'write_to_file', args: { path: 'a.txt', content: 'new\n' } };
    await crashAfterStart(call, false);
    expect(read('a.txt')).toBe('old\n');
    const r = await runToolOnce(call, ctx(), ledger);
    expect(r.ok).toBe(true);
    expect(r.meta?.recovered).toBe('reapplied');
    expect(read('a.txt')).toBe('new\n');
  });

  it('replace_in_file crash after the edit landed: no double edit', async () => {
    writeFileSync(path.join(ws, 'n.ts'), 'let n = 1;\n');
    // Applying this twice would give "let n = 1 + 1 + 1;".
    const call = { id: '10.0', name: 'replace_in_file', args: { path: 'n.ts', diff: diff('let n = 1', 'let n = 1 + 1') } };
    await crashAfterStart(call, true);
    expect(read('n.ts')).toBe('let n = 1 + 1;\n');
    const r = await runToolOnce(call, ctx(), ledger);
    expect(r.ok).toBe(true);
    expect(read('n.ts')).toBe('let n = 1 + 1;\n');
    const replay = await runToolOnce(call, ctx(), ledger);
    expect(replay.replayed).toBe(true);
    expect(read('n.ts')).toBe('let n = 1 + 1;\n');
  });

  it('replace_in_file crash before the edit: applied exactly once', async () => {
    writeFileSync(path.join(ws, 'n.ts'), 'let n = 1;\n');
    const call = { id: '11.0', name: 'replace_in_file', args: { path: 'n.ts', diff: diff('let n = 1', 'let n = 1 + 1') } };
    await crashAfterStart(call, false);
    const r = await runToolOnce(call, ctx(), ledger);
    expect(r.ok).toBe(true);
    expect(read('n.ts')).toBe('let n = 1 + 1;\n');
  });

  it('replace_in_file crash, then the file changed by someone else: conflict reported, nothing written', async () => {
    writeFileSync(path.join(ws, 'n.ts'), 'let n = 1;\n');
    const call = { id: '12.0', name: 'replace_in_file', args: { path: 'n.ts', diff: diff('let n = 1', 'let n = 2') } };
    await crashAfterStart(call, false);
    writeFileSync(path.join(ws, 'n.ts'), 'let n = 1; // edited by a person\n');
    const r = await runToolOnce(call, ctx(), ledger);
    expect(r.ok).toBe(false);
    expect(r.meta?.conflict).toBe(true);
    expect(r.output).toMatch(/changed after this edit was prepared/);
    expect(read('n.ts')).toBe('let n = 1; // edited by a person\n');
  });

  it('an interrupted command that is not repeatable is reported, not re-run', async () => {
    const call = { id: '13.0', name: 'execute_command', args: { command: 'echo once >> log.txt', requires_approval: 'false' } };
    const v = validateToolArgs(call.name, call.args);
    await ledger.start({
      callId: call.id,
      tool: call.name,
      argsHash: ledgerArgsHash(call.name, (v as { args: Record<string, unknown> }).args),
      state: 'started',
    });
    const r = await runToolOnce(call, ctx(), ledger);
    // Named, so the model knows which command it was.
    expect(r).toMatchObject({ ok: false, interrupted: true });
    expect(r.output).toBe(
      'The command `echo once >> log.txt` was interrupted by a worker crash and may not be safe to run twice, so it was not run again; its outcome is unknown. Check the workspace state before running it again.',
    );
    expect(existsSync(path.join(ws, 'log.txt'))).toBe(false);
    const replay = await runToolOnce(call, ctx(), ledger);
    expect(replay).toMatchObject({ replayed: true, interrupted: true });
  });

  it('an interrupted repeatable command is run again', async () => {
    writeFileSync(path.join(ws, 'data.txt'), 'a\nb\n');
    const call = { id: '14.0', name: 'execute_command', args: { command: 'cat data.txt | wc -l', requires_approval: 'false' } };
    const v = validateToolArgs(call.name, call.args);
    await ledger.start({
      callId: call.id,
      tool: call.name,
      argsHash: ledgerArgsHash(call.name, (v as { args: Record<string, unknown> }).args),
      state: 'started',
    });
    const r = await runToolOnce(call, ctx(), ledger);
    expect(r.ok).toBe(true);
    expect(r.interrupted).toBeUndefined();
    expect(r.output).toMatch(/exited with code 0\.\nOutput:\n2\n/);
    expect((await ledger.get('14.0'))?.state).toBe('done');
  });

  it('an interrupted read-only tool simply runs again', async () => {
    writeFileSync(path.join(ws, 'r.txt'), 'content\n');
    const call = { id: '15.0', name: 'read_file', args: { path: 'r.txt' } };
    await ledger.start({ callId: call.id, tool: call.name, argsHash: ledgerArgsHash(call.name, { path: 'r.txt' }), state: 'started' });
    const r = await runToolOnce(call, ctx(), ledger);
    expect(r).toMatchObject({ ok: true, output: 'content\n' });
  });

  it('two attempts racing for one call id: exactly one runs the tool, both answer with its result', async () => {
    // Both look the call up before either claims it (the window a get-then-insert left open).
    const gate = { waiting: 0, open: () => undefined as void };
    const opened = new Promise<void>((r) => (gate.open = r));
    const racing = (): LedgerPort => ({
      get: async (id) => {
        const e = await ledger.get(id);
        if (e === null && gate.waiting < 2) {
          if (++gate.waiting === 2) gate.open();
          await opened;
        }
        return e;
      },
      start: (e) => store.ledger(conversationId).start(e),
      finish: (id, r) => store.ledger(conversationId).finish(id, r),
    });
    const call = { id: '20.0', name: 'execute_command', args: { command: 'echo ran >> runs.txt; sleep 0.3; echo finished', requires_approval: 'false' } };
    const [a, b] = await Promise.all([runToolOnce(call, ctx(), racing()), runToolOnce(call, ctx(), racing())]);
    expect(gate.waiting).toBe(2);
    expect(read('runs.txt')).toBe('ran\n');
    // One ran it, the other waited for its result.
    expect([a.replayed, b.replayed].sort()).toEqual([true, undefined]);
    expect(a.output).toBe(b.output);
    expect(a.output).toContain('finished');
    expect(await ledgerRows()).toBe(1);
  });

  it('the store claims a call once: a second claim of the same id loses', async () => {
    const entry: LedgerEntry = { callId: '21.0', tool: 'read_file', argsHash: ledgerArgsHash('read_file', { path: 'x' }), state: 'started' };
    const claims = await Promise.all([0, 1, 2, 3].map(() => store.ledger(conversationId).start(entry)));
    expect(claims.filter(Boolean)).toHaveLength(1);
  });

  it('refuses control tools: the workflow handles them', async () => {
    await expect(runToolOnce({ id: '16.0', name: 'attempt_completion', args: { result: 'done' } }, ctx(), ledger)).rejects.toThrow(/control tool/);
  });
});

// A call that finished on a host that was then lost: the workspace is restored from a checkpoint
// that lacks what it did, and the call runs again there with `afterMove`.
describe('runToolOnce after the workspace was restored on another host', () => {
  /** Run `call` to its end here (the lost host), then restore the workspace to `restored` (the checkpoint). */
  async function doneThenRestored(call: { id: string; name: string; args: Record<string, unknown> }, restored: Record<string, string | null>) {
    const first = await runToolOnce(call, ctx(), ledger);
    for (const [p, content] of Object.entries(restored))
      if (content === null) rmSync(path.join(ws, p), { force: true });
      else writeFileSync(path.join(ws, p), content);
    return first;
  }

  it('a finished write whose file the checkpoint lacks is made again, with its recorded result', async () => {
    const call = { id: '30.0', name: 'write_to_file', args: { path: 'a.txt', content: 'made on the lost host\n' } };
    const first = await doneThenRestored(call, { 'a.txt': null });
    const r = await runToolOnce({ ...call, afterMove: true }, ctx(), ledger);
    expect(r).toMatchObject({ ok: true, output: first.output, recovery: 'reapplied' });
    expect(r.replayed).toBeUndefined();
    expect(read('a.txt')).toBe('made on the lost host\n');
    // Without the move it is a plain replay: nothing is written.
    rmSync(path.join(ws, 'a.txt'));
    expect(await runToolOnce(call, ctx(), ledger)).toMatchObject({ replayed: true });
    expect(existsSync(path.join(ws, 'a.txt'))).toBe(false);
  });

  it('a finished edit already in the restored file is kept, not made twice', async () => {
    writeFileSync(path.join(ws, 'n.ts'), 'let n = 1;\n');
    const call = { id: '31.0', name: 'replace_in_file', args: { path: 'n.ts', diff: diff('let n = 1;', 'let n = 2;') } };
    await doneThenRestored(call, {});
    expect(await runToolOnce({ ...call, afterMove: true }, ctx(), ledger)).toMatchObject({ ok: true, recovery: 'kept' });
    expect(read('n.ts')).toBe('let n = 2;\n');
  });

  it('a chain of edits is made again in order, each over the one before', async () => {
    writeFileSync(path.join(ws, 'c.txt'), 'one\ntwo\n');
    const first = { id: '32.0', name: 'replace_in_file', args: { path: 'c.txt', diff: diff('one', 'ONE') } };
    const second = { id: '32.1', name: 'replace_in_file', args: { path: 'c.txt', diff: diff('two', 'TWO') } };
    await runToolOnce(first, ctx(), ledger);
    await doneThenRestored(second, { 'c.txt': 'one\ntwo\n' });
    expect(await runToolOnce({ ...first, afterMove: true }, ctx(), ledger)).toMatchObject({ recovery: 'reapplied' });
    expect(await runToolOnce({ ...second, afterMove: true }, ctx(), ledger)).toMatchObject({ recovery: 'reapplied' });
    expect(read('c.txt')).toBe('ONE\nTWO\n');
  });

  it('a file neither as the edit found it nor as it left it is a conflict, named, and left alone', async () => {
    writeFileSync(path.join(ws, 'k.txt'), 'base\n');
    const call = { id: '33.0', name: 'replace_in_file', args: { path: 'k.txt', diff: diff('base', 'edited') } };
    await doneThenRestored(call, { 'k.txt': 'base\nsomething else\n' });
    const r = await runToolOnce({ ...call, afterMove: true }, ctx(), ledger);
    expect(r).toMatchObject({ ok: false, recovery: 'conflict', meta: { conflict: true, path: 'k.txt' } });
    expect(read('k.txt')).toBe('base\nsomething else\n');
  });

  it('a finished command runs again only if it may run twice; one that may not is named and not run', async () => {
    writeFileSync(path.join(ws, 'x.txt'), 'x\n');
    const repeatable = { id: '34.0', name: 'execute_command', args: { command: 'cat x.txt > copy.txt', requires_approval: 'false' } };
    await doneThenRestored(repeatable, { 'copy.txt': null });
    expect(await runToolOnce({ ...repeatable, afterMove: true }, ctx(), ledger)).toMatchObject({ ok: true, recovery: 'ran-again' });
    expect(read('copy.txt')).toBe('x\n');
    const once = { id: '34.1', name: 'execute_command', args: { command: 'echo once >> log.txt', requires_approval: 'false' } };
    await doneThenRestored(once, { 'log.txt': null });
    const r = await runToolOnce({ ...once, afterMove: true }, ctx(), ledger);
    expect(r).toMatchObject({ ok: false, interrupted: true, recovery: 'interrupted' });
    expect(r.output).toContain('The command `echo once >> log.txt` finished on a host that was lost');
    expect(existsSync(path.join(ws, 'log.txt'))).toBe(false);
  });

  it('a read that finished keeps its recorded result', async () => {
    writeFileSync(path.join(ws, 'r.txt'), 'content\n');
    const call = { id: '35.0', name: 'read_file', args: { path: 'r.txt' } };
    await runToolOnce(call, ctx(), ledger);
    expect(await runToolOnce({ ...call, afterMove: true }, ctx(), ledger)).toMatchObject({ ok: true, replayed: true });
  });
});
