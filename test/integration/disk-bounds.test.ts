// Disk stays bounded without an operator: a real `agentrun worker` (its own gc pass every second
// here) runs repository jobs that push their branches, under each --keep-workspace policy, some
// failing; afterwards its workspaces are exactly those the policies keep, and its dependency
// caches (each job's setup makes a cache entry of its own) stay within AGENTRUN_CACHE_MAX_SIZE,
// the least recently used gone. A worker with no passes at all (AGENTRUN_GC_INTERVAL=0) removes a
// pushed job's workspace as the job ends, under the default policy, and keeps a failed one; so
// does `agentrun run`'s own worker, which runs the same passes.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationResult } from '../../src/client/outcome.js';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../helpers/child-worker.js';
import { agentrunEnv, createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';
import { runCli } from '../helpers/dist.js';

const CACHE_MAX = 600 * 1024;
/** Each job's setup makes this much in node_modules, under a key of its own. */
const ENTRY = 200 * 1024;

let h: Harness;
let worker: ChildWorker | undefined;
let workspaces: string;
let home: string;
beforeAll(async () => {
  h = await createHarness({ worker: false });
});
afterAll(async () => {
  if (worker) await stopChildWorkers([worker]);
  await h?.close();
});

/** The one worker of the test (the previous test's stopped), with a disk and a home of its own. */
async function startHost(name: string, env: NodeJS.ProcessEnv): Promise<void> {
  if (worker) await stopChildWorkers([worker]);
  workspaces = await tempDir('agentrun-disk-ws-');
  home = await tempDir('agentrun-disk-home-');
  worker = await startChildWorker(h, {
    AGENTRUN_HOST_ID: `${name}-${h.taskQueue}`,
    AGENTRUN_WORKSPACES: workspaces,
    AGENTRUN_HOME: home,
    AGENTRUN_KEEP_WORKSPACE_FOR: '1h',
    ...env,
  });
}

/** A scripted model that writes job-`n`.txt, then completes. */
const writeModel = (n: number) =>
  scriptModel({
    turns: [
      { say: `<write_to_file>\n<path>job-${n}.txt</path>\n<content>\njob ${n}\n</content>\n</write_to_file>` },
      { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
    ],
  });

/** A bare remote of one file, for repository jobs that push. */
async function remoteRepo(): Promise<string> {
  const src = await tempRepo({ 'README.md': 'hello\n' });
  const remote = join(await tempDir('agentrun-disk-remote-'), 'repo.git');
  execFileSync('git', ['clone', '-q', '--bare', src, remote]);
  return remote;
}

const du = (dir: string) => Number(execFileSync('du', ['-s', '-B1', dir], { encoding: 'utf8' }).split('\t')[0]);

async function until(what: string, ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !ok(); await new Promise((r) => setTimeout(r, 100)))
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
}

describe('disk stays bounded', { timeout: 600_000 }, () => {
  it('after finished jobs under each --keep-workspace policy: the workspaces their policy keeps, and caches within the size limit', async () => {
    await startHost('disk', { AGENTRUN_GC_INTERVAL: '1s', AGENTRUN_CACHE_MAX_SIZE: String(CACHE_MAX) });
    const remote = await remoteRepo();
    const jobs: { id: string; policy: string; ok: boolean }[] = [];
    let n = 0;
    for (const policy of ['never', 'failed', 'always'] as const) {
      for (const ok of [true, true, false]) {
        const id = uid(`disk-${policy}`);
        const model = await writeModel(n);
        const handle = await h.start({
          id,
          task: 'write a file',
          workspace: remote,
          config: {
            model,
            approval: 'never',
            repo: remote,
            push: true,
            keepWorkspace: policy,
            // A key of its own per job: the caches together pass the limit.
            setup: [`mkdir -p node_modules/blob && head -c ${ENTRY} /dev/urandom > node_modules/blob/data # job ${n}`],
            verify: ok ? 'true' : 'false',
            verifyAttempts: 1,
          },
        });
        const result = await conversationResult(handle);
        expect(result.status, result.reason).toBe(ok ? 'completed' : 'failed');
        if (ok) expect(result.branch).toMatchObject({ pushed: true });
        jobs.push({ id, policy, ok });
        n++;
      }
    }
    // never: none kept; failed: the failed job only; always: every one (until AGENTRUN_KEEP_WORKSPACE_FOR).
    const kept = jobs.filter((j) => j.policy === 'always' || (j.policy === 'failed' && !j.ok)).map((j) => j.id);
    await until('the worker removes the workspaces its jobs do not keep', () => readdirSync(workspaces).sort().join() === [...kept].sort().join());
    for (const j of jobs) expect(existsSync(join(workspaces, j.id)), `${j.policy} ${j.ok ? 'completed' : 'failed'}`).toBe(kept.includes(j.id));
    // What is left is what the kept jobs hold: about their setup's output and a clone each.
    const clone = join(await tempDir('agentrun-disk-clone-'), 'c');
    execFileSync('git', ['clone', '-q', remote, clone]);
    const detail = () => execFileSync('sh', ['-c', `du -a -B1 ${workspaces} | sort -n | tail -15`], { encoding: 'utf8' });
    expect(du(workspaces), detail()).toBeLessThan(kept.length * (ENTRY + du(clone) + 256 * 1024));
    // Nine entries were made; the size limit keeps the newest that fit (directories and meta.json add a few blocks each).
    const cache = join(home, 'cache');
    const entries = readdirSync(cache).filter((e) => !e.startsWith('.'));
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.length).toBeLessThanOrEqual(Math.floor(CACHE_MAX / ENTRY));
    expect(du(cache)).toBeLessThanOrEqual(CACHE_MAX + entries.length * 32 * 1024);
  });

  it("with no gc pass: a pushed job's workspace goes as the job ends (the default policy), a failed one stays", async () => {
    await startHost('release', { AGENTRUN_GC_INTERVAL: '0' });
    const remote = await remoteRepo();
    const jobs: { id: string; ok: boolean }[] = [];
    for (const [n, ok] of [true, true, false, true].entries()) {
      const id = uid('release');
      const model = await writeModel(n);
      const handle = await h.start({
        id,
        task: 'write a file',
        workspace: remote,
        config: { model, approval: 'never', repo: remote, push: true, verify: ok ? 'true' : 'false', verifyAttempts: 1 },
      });
      const result = await conversationResult(handle);
      expect(result.status, result.reason).toBe(ok ? 'completed' : 'failed');
      expect(result.branch).toMatchObject({ pushed: true });
      jobs.push({ id, ok });
      // No pass runs: what removes it is the job's own end.
      if (ok) await until(`${id}'s workspace to go once its branch is pushed and the job ended`, () => !existsSync(join(workspaces, id)));
    }
    const kept = jobs.filter((j) => !j.ok).map((j) => j.id);
    expect(readdirSync(workspaces).sort()).toEqual(kept);
    // What is left is the failed job's workspace: about a clone.
    const clone = join(await tempDir('agentrun-disk-clone-'), 'c');
    execFileSync('git', ['clone', '-q', remote, clone]);
    expect(du(workspaces)).toBeLessThan(kept.length * (du(clone) + 256 * 1024) + 64 * 1024);
  });

  it("`agentrun run`'s own worker: a pushed job's workspace goes before it exits, and its disk pass removes what a finished job no longer keeps", async () => {
    if (worker) await stopChildWorkers([worker]);
    worker = undefined;
    const remote = await remoteRepo();
    const runWorkspaces = await tempDir('agentrun-disk-run-ws-');
    const runHome = await tempDir('agentrun-disk-run-home-');
    const model = await writeModel(0);
    const run = async (keep: string, env: NodeJS.ProcessEnv = {}) => {
      const args = ['run', '--json', '--task', 'write a file', '--repo', remote, '--push', '--keep-workspace', keep, '--model', model, '--approval', 'never'];
      const r = await runCli(args, {
        timeout: 240_000,
        env: agentrunEnv(h, {
          AGENTRUN_TASK_QUEUE: uid('disk-run-tq'),
          AGENTRUN_WORKFLOW_BUNDLE: h.workflowBundlePath,
          AGENTRUN_HOME: runHome,
          AGENTRUN_WORKSPACES: runWorkspaces,
          ...env,
        }),
      });
      const end = r.lines.at(-1) as { conversationId: string; status: string };
      expect(end?.status, r.stdout + r.stderr).toBe('completed');
      return end.conversationId;
    };
    // The default policy: its branch pushed and the job ended, the workspace goes before `run` exits.
    const released = await run('failed');
    expect(existsSync(join(runWorkspaces, released))).toBe(false);
    // `always` keeps it (for AGENTRUN_KEEP_WORKSPACE_FOR, three days by default)...
    const kept = await run('always');
    expect(readdirSync(runWorkspaces)).toEqual([kept]);
    // ...until a pass of a later `run`'s worker finds it past a shorter AGENTRUN_KEEP_WORKSPACE_FOR.
    const last = await run('always', { AGENTRUN_KEEP_WORKSPACE_FOR: '0' });
    expect(existsSync(join(runWorkspaces, kept)), 'the kept workspace').toBe(false);
    expect(existsSync(join(runWorkspaces, last))).toBe(false);
  });
});
