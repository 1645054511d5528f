// The terminal renderer over the real event stream of scripted conversations (real workflow,
// Temporal, PostgreSQL, git, sandbox): a fake TTY with fixed width and clock, NO_COLOR and a
// pipe; and the real CLI, whose log lines must never land in the conversation.
import { execFile, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import readline from 'node:readline';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { answerUpdate, decideApprovalUpdate } from '../../workflows/api.js';
import { TerminalRenderer, storeLookup, type RenderLookup } from '../../src/cli/render/index.js';
import type { StreamEvent } from '../../src/types.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { prose } from '../helpers/prose.js';
import { tempDir } from '../helpers/temp.js';
import { CLI } from '../helpers/dist.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const fixture = (name: string) => 'scripted:' + join(ROOT, 'test/fixtures', name);

/** A terminal as ora and picocolors see one: isTTY, a fixed width, everything written kept. */
class FakeTty extends Writable {
  readonly isTTY = true;
  readonly columns = 100;
  readonly rows = 40;
  text = '';
  // What tty.WriteStream adds to a stream; ora moves the cursor with them.
  cursorTo(x: number, y?: number | (() => void), cb?: () => void): boolean {
    return readline.cursorTo(this, x, typeof y === 'number' ? y : undefined, typeof y === 'function' ? y : cb);
  }
  moveCursor(dx: number, dy: number, cb?: () => void): boolean {
    return readline.moveCursor(this, dx, dy, cb);
  }
  clearLine(dir: -1 | 0 | 1, cb?: () => void): boolean {
    return readline.clearLine(this, dir, cb);
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += String(chunk);
    cb();
  }
}

class Pipe extends FakeTty {
  override readonly isTTY = false as unknown as true;
}

type Row = { offset: number; event: StreamEvent };

/**
 * The stream of a finished conversation, made independent of timing: deltas are re-cut into
 * 16-character pieces (the writer batches by time), commit hashes and the id are fixed.
 */
function normalised(rows: Row[], id: string): Row[] {
  const out: Row[] = [];
  for (const row of rows) {
    const e = row.event;
    if (e.type === 'delta') {
      const prev = out.at(-1)?.event;
      if (prev?.type === 'delta' && prev.seq === e.seq && prev.attempt === e.attempt) prev.text += e.text;
      else out.push({ offset: row.offset, event: { ...e } });
    } else if (e.type === 'checkpoint') out.push({ offset: row.offset, event: { ...e, commit: '0123456789abcdef' } });
    else out.push(row);
  }
  return out.flatMap((row) => {
    const e = row.event;
    if (e.type !== 'delta') return [row];
    const pieces: Row[] = [];
    for (let i = 0; i < e.text.length; i += 16) pieces.push({ offset: row.offset, event: { ...e, text: e.text.slice(i, i + 16) } });
    return pieces;
  });
}

/** The store's answers read ahead, so rendering never waits on I/O (the spinner cannot tick). */
async function preloaded(lookup: RenderLookup, rows: Row[]): Promise<RenderLookup> {
  const calls = new Map<string, Awaited<ReturnType<RenderLookup['toolCall']>>>();
  const results = new Map<string, string | undefined>();
  for (const { event: e } of rows) {
    if (e.type === 'tool_started' || e.type === 'approval_requested' || e.type === 'tool_completed') {
      calls.set(e.callId, await lookup.toolCall(e.callId));
      results.set(e.callId, await lookup.toolResult(e.callId));
    }
  }
  const zone = await lookup.safeZone();
  return { toolCall: async (id) => calls.get(id), toolResult: async (id) => results.get(id), safeZone: async () => zone };
}

async function render(stream: FakeTty, rows: Row[], id: string, lookup: RenderLookup, env: NodeJS.ProcessEnv = {}): Promise<string> {
  let t = Date.parse('2026-01-01T00:00:00Z');
  const r = new TerminalRenderer({ conversationId: id, stream, env, lookup, now: () => (t += 700) });
  await r.ready();
  for (const row of rows) await r.print(row.offset, row.event);
  r.close();
  return stream.text.replaceAll(id, '<id>').replaceAll(ROOT, '<root>/');
}

/** Token counts and costs depend on the system prompt (temporary paths): the snapshot keeps their shape. */
const stableNumbers = (s: string) => s.replace(/(turn \d+ · )([^\n]*)/g, (_m, head: string, rest: string) => head + rest.replace(/\d[\d,]*(\.\d+)?/g, '#'));

/** Escape codes made visible, so the snapshot file reads as text. */
const visible = (s: string) => s.replace(/\x1b/g, '␛');

/** The stream once it holds an event of `type` (written just before the workflow starts waiting). */
async function streamUntil(id: string, type: StreamEvent['type']): Promise<Row[]> {
  for (let i = 0; ; i++) {
    const rows = await h.store.readStream(id, 0, 10_000);
    if (rows.some((r) => r.event.type === type) || i >= 100) return rows;
    await new Promise((r) => setTimeout(r, 100));
  }
}

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('terminal rendering of a real conversation', () => {
  it('draws prose, tool lines, command output, diffs, spinner and footers; plain without a TTY or with NO_COLOR', async () => {
    const id = uid('render');
    const workspace = await tempRepo({ 'README.md': '# demo\n' });
    const handle = await h.start({ id, task: 'Add a greet function in src/greet.ts', workspace, config: { model: fixture('render-tour.yaml') } });
    await handle.result();
    const rows = normalised(await h.store.readStream(id, 0, 10_000), id);
    const lookup = await preloaded(storeLookup(h.store, id), rows);

    const tty = await render(new FakeTty(), rows, id, lookup);
    const plain = await render(new Pipe(), rows, id, lookup);
    const noColor = await render(new FakeTty(), rows, id, lookup, { NO_COLOR: '1' });

    // Plain output: no escape code at all, the same for a pipe and for NO_COLOR on a terminal.
    expect(plain).not.toMatch(/\x1b/);
    expect(noColor).toBe(plain);
    // Tool blocks never show as XML; each call is one readable line.
    expect(plain).not.toMatch(/<write_to_file>|<execute_command>|<replace_in_file>|<path>/);
    expect(plain).toContain('▶ write_to_file src/greet.ts (3 lines)');
    expect(plain).toContain('▶ execute_command for i in $(seq 1 30); do echo "line $i"; done');
    // A command's head and tail with the exit code; the failing one with its error.
    expect(plain).toMatch(/✓ exit 0 .*\n(.*\n){6}.*… 18 lines …\n(.*\n){5}.*line 30\n/);
    expect(plain).toMatch(/✗ exit 2 [^\n]*\n[^\n]*No such file/);
    // The edit as a diff with the unchanged lines as context.
    expect(plain).toContain("  -   return 'Hello, ' + name;\n  +   return `Hello, ${name}!`;");
    expect(plain).toContain('    export function greet(name: string): string {');
    // A footer per turn: tokens, context against the safe zone, cost.
    expect(plain).toMatch(
      /turn 1 · [\d,]+ tokens \([\d,]+ in, [\d,]+ out\) · context [\d,]+ = \d+% of the safe zone \([\d,]+\) · \$\d\.\d{4} \(total \$\d\.\d{4}\) · [\d.]+s/,
    );
    // What the model handed back closes the run, as watch shows it.
    expect(plain).toMatch(/■ completed: [^\n]*\n  src\/greet\.ts exports greet\(name\)\.\n/);

    // The terminal: colours, the diff in red and green, a spinner while waiting.
    expect(tty).toContain('\x1b[32m+   return `Hello, ${name}!`;');
    expect(tty).toContain('\x1b[31m-   return');
    expect(tty).toMatch(/waiting for the model/);
    expect(tty).toMatch(/running execute_command/);
    expect(tty).toMatch(/writing write_to_file/);
    expect(tty.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')).toContain("I'll create the greeting module first.\n");

    await expect(stableNumbers(plain)).toMatchFileSnapshot('__snapshots__/render-plain.txt');
    await expect(stableNumbers(visible(tty))).toMatchFileSnapshot('__snapshots__/render-tty.txt');
  });

  it('shows the waiting state with the exact command to run', async () => {
    const id = uid('render-q');
    const workspace = await tempRepo();
    const handle = await h.start({ id, task: 'Write a note', workspace, config: { model: fixture('question.yaml') } });
    await h.waitForState(id, (s) => s.status === 'waiting');
    const rows = normalised(await streamUntil(id, 'question_asked'), id);
    const plain = await render(new Pipe(), rows, id, await preloaded(storeLookup(h.store, id), rows));
    expect(plain).toContain('? Which greeting should the module use: "Hello" or "Hi"?\n  answer: agentrun answer <id> "…"');
    await handle.executeUpdate(answerUpdate, { args: [{ text: 'Hi' }] });
    await handle.result();
  });

  it('shows an approval with the exact approve and deny commands', async () => {
    const id = uid('render-a');
    const model = await scriptModel({
      turns: [
        { say: 'Checking privileges.\n<execute_command>\n<command>sudo true</command>\n<requires_approval>false</requires_approval>\n</execute_command>' },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    const handle = await h.start({ id, task: 'Check sudo', workspace: await tempRepo(), config: { model } });
    await h.waitForState(id, (s) => s.status === 'waiting');
    const rows = normalised(await streamUntil(id, 'approval_requested'), id);
    const plain = await render(new Pipe(), rows, id, await preloaded(storeLookup(h.store, id), rows));
    expect(plain).toMatch(
      /⏸ waiting for your approval: execute_command sudo true\n  .*sudo.*\n  approve: agentrun approve <id> --call 1\.0\n  deny:    agentrun deny <id> --call 1\.0 --reason "…"\n/,
    );
    await handle.executeUpdate(decideApprovalUpdate, { args: [{ callId: '1.0', approved: false, reason: 'not here' }] });
    await handle.result();
  });

  it('shows a pruning pass of the context', async () => {
    const id = uid('render-p');
    const files: Record<string, string> = {};
    const turns = [];
    for (let n = 1; n <= 5; n++) {
      files[`data/${n}.txt`] = prose(n, 12 * 1024);
      turns.push({ say: `<read_file>\n<path>data/${n}.txt</path>\n</read_file>` });
    }
    turns.push({ say: '<attempt_completion>\n<result>read</result>\n</attempt_completion>' });
    const model = await scriptModel({ default_chunk: 4096, turns });
    await (
      await h.start({ id, task: 'Read', workspace: await tempRepo(files), config: { model, contextWindow: 16_000, safeZone: 12_000, keepRecentTurns: 1 } })
    ).result();
    const rows = normalised(await h.store.readStream(id, 0, 10_000), id);
    const plain = await render(new Pipe(), rows, id, await preloaded(storeLookup(h.store, id), rows));
    expect(plain).toMatch(/⇣ context pruned at turn \d+: [\d,]+ → [\d,]+ tokens\n  \S/);
    expect(plain).toMatch(/context [\d,]+ = \d+% of the safe zone \(12,000\)/);
  });
});

describe('the CLI keeps logs out of the conversation', () => {
  const exec = promisify(execFile);
  const queue = uid('render-tq');
  const env = (home: string): NodeJS.ProcessEnv => ({
    ...process.env,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    DATABASE_URL: inject('databaseUrl'),
    AGENTRUN_HOME: home,
    AGENTRUN_TASK_QUEUE: queue,
    AGENTRUN_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    // Every info line of the in-process worker is written: there is plenty that could leak.
    AGENTRUN_LOG_LEVEL: 'info',
    OPENAI_API_KEY: '',
    NO_COLOR: '',
  });
  const args = async () => ['run', '--task', 'greet', '--workspace', await tempRepo(), '--model', fixture('edit-and-complete.yaml')];
  const isLogLine = (l: string) => /^\{.*"level":/.test(l.trim());

  it('writes them to AGENTRUN_HOME/logs, and to stderr only with --verbose', async () => {
    const home = await tempDir('agentrun-render-home-');
    const r = await exec(process.execPath, [CLI, ...(await args())], { cwd: ROOT, env: env(home), timeout: 120_000 });
    expect(r.stdout).toContain('▶ write_to_file src/greet.ts');
    expect(r.stdout).toMatch(/completed after 4 turns/);
    expect(r.stdout.split('\n').filter(isLogLine)).toEqual([]);
    expect(r.stderr).toBe('');
    const files = await readdir(join(home, 'logs'));
    expect(files).toHaveLength(1);
    const logged = (await readFile(join(home, 'logs', files[0]!), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; conversationId?: string });
    expect(logged.some((l) => l.msg === 'tool call answered' && l.conversationId?.startsWith('conv-'))).toBe(true);

    const verbose = await exec(process.execPath, [CLI, '--verbose', ...(await args())], {
      cwd: ROOT,
      env: env(home),
      timeout: 120_000,
    });
    expect(verbose.stdout.split('\n').filter(isLogLine)).toEqual([]);
    expect(verbose.stderr.split('\n').filter(isLogLine).length).toBeGreaterThan(5);
  });

  it('on a real terminal (a pseudo-terminal from script(1)): colours and spinner, and no log line', async () => {
    const home = await tempDir('agentrun-render-home-');
    const command = 'stty cols 100 rows 40; exec ' + [process.execPath, CLI, ...(await args())].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const out = await new Promise<string>((resolve, reject) => {
      // script gives the CLI a terminal of its own and copies everything it shows (stdout and stderr).
      const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env: { ...env(home), TERM: 'xterm-256color', COLUMNS: '100' } });
      let text = '';
      child.stdout.on('data', (d) => (text += d));
      child.on('error', reject);
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(text);
        else reject(new Error(`exit ${code}:\n${JSON.stringify(text)}`));
      });
    });
    expect(out).toContain('\x1b[36m▶\x1b[39m \x1b[1mwrite_to_file\x1b[22m');
    expect(out).toMatch(/waiting for the model/);
    expect(out).toMatch(/completed after 4 turns/);
    expect(out.split(/\r?\n/).filter((l) => l.includes('"level":'))).toEqual([]);
  });
});
