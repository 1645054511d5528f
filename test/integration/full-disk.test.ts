// A full disk, as a hostile or careless agent makes one, through the real workflow and worker:
// a command that writes until ENOSPC in its workspace (a 16 MiB tmpfs mounted as the workspace),
// and a worker whose AGENTRUN_HOME (the private checkpoint repositories) is a 16 MiB tmpfs that a
// turn's files overflow (held as stalled, not failed, until there is space). Root only: the test mounts the tmpfs itself, in directories it made, and
// unmounts them at its end.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationResult } from '../../workflows/api.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';

const mounted: string[] = [];

/** A 16 MiB tmpfs at a new directory, unmounted after the file. */
async function smallDisk(prefix: string, at?: string): Promise<string> {
  const dir = at ?? (await tempDir(prefix));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0755', 'tmpfs', dir]);
  mounted.push(dir);
  return dir;
}

/** A git repository on a 16 MiB tmpfs. */
async function repoOnSmallDisk(): Promise<string> {
  const dir = await smallDisk('agentrun-fullws-');
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['commit', '-q', '--allow-empty', '-m', 'initial'],
  ])
    execFileSync('git', args, { cwd: dir, env, stdio: 'pipe' });
  return dir;
}

const command = (cmd: string) => ({ tool_calls: [{ name: 'execute_command', arguments: { command: cmd, requires_approval: false, timeout_seconds: 60 } }] });
const done = (result: string) => ({ tool_calls: [{ name: 'attempt_completion', arguments: { result } }] });
const config = (model: string) => ({ model, approval: 'never' as const, toolFormat: 'native' as const });

afterAll(() => {
  for (const dir of mounted.splice(0).reverse()) execFileSync('umount', ['-l', dir]);
});

describe('a full workspace disk', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a command that writes until ENOSPC gets the error as its result, the conversation goes on to complete, and another conversation on the same worker is unaffected', async () => {
    const full = await repoOnSmallDisk();
    const fill = await scriptModel({
      turns: [
        command('dd if=/dev/zero of=fill bs=1M count=64; echo "dd exit=$?"; echo more > after.txt; echo "echo exit=$?"'),
        command('rm -f fill; echo freed > after.txt && cat after.txt'),
        done('filled and freed'),
      ],
    });
    const a = await h.start({ task: 'fill the disk', workspace: full, config: config(fill) });
    const other = await scriptModel({ turns: [command('echo fine > note.txt && cat note.txt'), done('fine')] });
    const b = await h.start({ task: 'an ordinary job', workspace: await tempRepo(), config: config(other) });

    const [ra, rb] = (await Promise.all([a.result(), b.result()])) as ConversationResult[];
    expect(ra!.status, JSON.stringify(ra)).toBe('completed');
    expect(rb!.status, JSON.stringify(rb)).toBe('completed');
    const results = (await h.store.getMessages(a.workflowId)).filter((m) => m.toolName === 'execute_command').map((m) => m.content);
    // The agent is told what happened, naming the disk's error, and can act on it.
    expect(results[0]).toMatch(/No space left on device/);
    expect(results[0]).toMatch(/dd exit=1/);
    expect(results[1]).toContain('freed');
    const otherResults = (await h.store.getMessages(b.workflowId)).filter((m) => m.toolName === 'execute_command').map((m) => m.content);
    expect(otherResults[0]).toContain('fine');
  }, 180_000);
});

describe("a full AGENTRUN_HOME (the worker's checkpoint repositories)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ worker: false });
    await smallDisk('', h.home);
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a turn whose checkpoint cannot be written holds the conversation stalled with the disk named, the checkpoint repository intact; with space again it completes, and so does the next one', async () => {
    const big = await scriptModel({
      turns: [command('head -c 24000000 /dev/urandom > big.bin && echo wrote'), done('wrote a big file')],
    });
    const a = await h.start({ task: 'a big file', workspace: await tempRepo(), config: config(big) });
    // The turn's checkpoint does not fit: an infrastructure fault, held and retried, never a failed job.
    const state = await h.waitForState(a.workflowId, (s) => s.status === 'stalled', 120_000);
    expect(state.stalledReason).toMatch(/No space left on device/);
    // What was written before stays a sound repository: turn 0's checkpoint, no corrupt object.
    const repos = readdirSync(join(h.home, 'checkpoints')).filter((d) => d.endsWith('.git'));
    expect(repos).toHaveLength(1);
    const gitDir = join(h.home, 'checkpoints', repos[0]!);
    execFileSync('git', ['--git-dir', gitDir, 'fsck', '--no-dangling'], { stdio: 'pipe' });
    expect(execFileSync('git', ['--git-dir', gitDir, 'log', '--all', '--format=%s'], { encoding: 'utf8' })).toContain(`agentrun ${a.workflowId} turn 0`);
    // Space again (the operator grows the disk): the held step is retried and the job completes.
    execFileSync('mount', ['-o', 'remount,size=96m', h.home]);
    const ra = (await a.result()) as ConversationResult;
    expect(ra.status, JSON.stringify(ra)).toBe('completed');
    execFileSync('git', ['--git-dir', gitDir, 'fsck', '--no-dangling'], { stdio: 'pipe' });
    const small = await scriptModel({ turns: [command('echo small > s.txt'), done('small')] });
    const rb = (await h.run({ task: 'small', workspace: await tempRepo(), config: config(small) })) as ConversationResult;
    expect(rb.status).toBe('completed');
  }, 300_000);
});
