// Recorded re-runs through the CLI as a user runs it: a conversation that writes files and runs
// commands is recorded; `rerun <id> --model recorded:<id>` replays it offline from a copy of turn
// 0's checkpoint and leaves the same files byte for byte; a run whose workspace differs where the
// recording read it stops at that turn; an unknown id is one line and exit 2.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { gitOut, scriptModel, tempRepo, uid } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';
import { type CliRun, runCli } from '../helpers/dist.js';

const _ROOT = fileURLToPath(new URL('../..', import.meta.url));
const _exec = promisify(execFile);

let home: string;
let env: NodeJS.ProcessEnv;

/** One AGENTRUN_HOME for the file: the rerun reads the checkpoints the recorded run left there. */
function cli(...args: string[]): Promise<CliRun> {
  return runCli(args, { env, timeout: 180_000 });
}

/** Every file under dir but .git, with its bytes. */
async function files(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = relative(dir, join(entry.parentPath, entry.name));
    if (!entry.isFile() || path === '.git' || path.startsWith('.git/')) continue;
    out[path] = (await readFile(join(dir, path))).toString('base64');
  }
  return out;
}

const call = (tool: string, params: Record<string, string>) =>
  `<${tool}>\n${Object.entries(params)
    .map(([k, v]) => `<${k}>${v}</${k}>`)
    .join('\n')}\n</${tool}>`;

beforeAll(async () => {
  home = await tempDir('agentrun-rerun-home-');
  env = {
    ...process.env,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    DATABASE_URL: inject('databaseUrl'),
    AGENTRUN_HOME: home,
    AGENTRUN_TASK_QUEUE: uid('rerun-tq'),
    AGENTRUN_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    AGENTRUN_LOG_LEVEL: 'warn',
    OPENAI_API_KEY: '',
  };
});

describe('agentrun rerun and recorded:<id>', () => {
  it('replays a recorded conversation offline to the same files; a changed input stops it at the turn that read it', async () => {
    const workspace = await tempRepo({ 'notes.txt': 'alpha\nbeta\n', 'src/app.txt': 'version 1\n' });
    const model = await scriptModel({
      turns: [
        { say: `First the notes.\n${call('read_file', { path: 'notes.txt' })}` },
        { say: call('write_to_file', { path: 'out/a.txt', content: 'written by the agent\n' }) },
        { say: call('execute_command', { command: 'sort -r notes.txt > out/b.txt && wc -l < out/b.txt', requires_approval: 'false' }) },
        { say: call('replace_in_file', { path: 'src/app.txt', diff: '<<<<<<< SEARCH\nversion 1\n=======\nversion 2\n>>>>>>> REPLACE' }) },
        {
          say: call('execute_command', {
            command: 'mkdir -p out/deep && printf "%s\\n" one two > out/deep/c.txt && rm notes.txt && ls -R out',
            requires_approval: 'false',
          }),
        },
        { say: call('attempt_completion', { result: 'Files written.' }) },
      ],
    });
    const recorded = await cli('run', '--json', '--task', 'Make the out files', '--workspace', workspace, '--model', model, '--approval', 'never');
    expect(recorded.lines.at(-1), recorded.stderr).toMatchObject({ type: 'result', status: 'completed', turns: 6 });
    const id = String(recorded.lines.at(-1)!.conversationId);
    const after = await files(workspace);
    expect(Object.keys(after).sort()).toEqual(['out/a.txt', 'out/b.txt', 'out/deep/c.txt', 'src/app.txt']);
    expect(Buffer.from(after['out/b.txt']!, 'base64').toString()).toBe('beta\nalpha\n');

    // The user goes on working in the workspace; the rerun starts from turn 0, not from this.
    await writeFile(join(workspace, 'out/a.txt'), 'edited by the user\n');

    const rerun = await cli('rerun', id, '--model', `recorded:${id}`, '--json');
    const started = rerun.lines.find((l) => l.type === 'conversation')!;
    expect(started, rerun.stderr).toMatchObject({ rerunOf: id, model: `recorded:${id}` });
    expect(rerun.lines.at(-1), rerun.stderr).toMatchObject({ type: 'result', status: 'completed', turns: 6, result: 'Files written.' });
    expect(rerun.code).toBe(0);
    const copy = String(started.workspace);
    expect(copy.startsWith(join(home, 'reruns'))).toBe(true);
    expect(await files(copy)).toEqual(after);
    // The checkpoint's files only: the original's .git is the agent's, never read outside the sandbox.
    expect(existsSync(join(copy, '.git'))).toBe(false);
    // The user's workspace is as they left it.
    expect(await readFile(join(workspace, 'out/a.txt'), 'utf8')).toBe('edited by the user\n');
    const tools = rerun.lines.filter((l) => l.type === 'tool_completed').map((l) => [l.name, l.ok]);
    expect(tools).toEqual([
      ['read_file', true],
      ['write_to_file', true],
      ['execute_command', true],
      ['replace_in_file', true],
      ['execute_command', true],
    ]);

    // The same recording on a workspace whose notes.txt differs: turn 1 read it, so the replay stops there.
    const other = await tempRepo({ 'notes.txt': 'alpha\ngamma\n', 'src/app.txt': 'version 1\n' });
    const diverged = await cli('run', '--json', '--task', 'Make the out files', '--workspace', other, '--model', `recorded:${id}`, '--approval', 'never');
    const end = diverged.lines.at(-1)!;
    // Turn 2's model step is where it stops: the answer recorded for turn 2 followed another read.
    expect(end, diverged.stderr).toMatchObject({ type: 'result', status: 'failed', turns: 2 });
    expect(end.reason).toBe(
      `modelTurn failed: diverged from ${id} at turn 1: read_file result differs (at character 6 of 11 recorded; this run has "gamma\\n")`,
    );
    expect(diverged.code).toBe(1);
    // It stopped before anything the recording did later: no file was written.
    expect(Object.keys(await files(other)).sort()).toEqual(['notes.txt', 'src/app.txt']);
  });

  it('a repository job reruns from the ref it started at, and the replay leaves the same tree on its result branch', async () => {
    const remote = await tempRepo({ 'README.md': '# demo\n' });
    const model = await scriptModel({
      turns: [
        { say: call('write_to_file', { path: 'docs/a.md', content: 'from the agent' }) },
        { say: call('execute_command', { command: 'cp README.md docs/b.md && echo copied', requires_approval: 'false' }) },
        { say: call('attempt_completion', { result: 'Docs written.' }) },
      ],
    });
    const recorded = await cli('run', '--json', '--task', 'Write docs', '--repo', remote, '--push', '--model', model, '--approval', 'never');
    const first = recorded.lines.at(-1)!;
    expect(first, recorded.stderr).toMatchObject({ type: 'result', status: 'completed', turns: 3 });
    const id = String(first.conversationId);
    // The main branch moves on; the rerun still starts where the recorded job did.
    await writeFile(join(remote, 'README.md'), '# changed later\n');
    gitOut(remote, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', 'later');

    const rerun = await cli('rerun', id, '--model', `recorded:${id}`, '--json');
    const second = rerun.lines.at(-1)!;
    expect(second, rerun.stderr).toMatchObject({ type: 'result', status: 'completed', turns: 3, result: 'Docs written.' });
    const tree = (branch: string) => gitOut(remote, 'ls-tree', '-r', branch);
    expect(tree(`agentrun/${second.conversationId}`)).toBe(tree(`agentrun/${id}`));
    expect(tree(`agentrun/${id}`)).toContain('docs/b.md');
  });

  it('an unknown conversation or recording is one line and exit 2', async () => {
    const r = await cli('rerun', 'conv-nosuch');
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['agentrun: no conversation with id conv-nosuch (see agentrun list)']);
    const workspace = await tempRepo();
    const m = await cli('run', '--task', 'x', '--workspace', workspace, '--model', 'recorded:conv-nosuch');
    expect(m.code).toBe(2);
    expect(m.stderr.trim().split('\n')).toEqual([
      'agentrun: model recorded:conv-nosuch: no conversation with id conv-nosuch in the store to replay (see agentrun list)',
    ]);
  });
});
