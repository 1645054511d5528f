// Disk stays bounded without an operator: a real `agentrun worker` (its own gc pass every second
// here) runs repository jobs that push their branches, under each --keep-workspace policy, some
// failing; afterwards its workspaces are exactly those the policies keep, and its dependency
// caches (each job's setup makes a cache entry of its own) stay within AGENTRUN_CACHE_MAX_SIZE,
// the least recently used gone.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationResult } from '../../src/client/outcome.js';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../helpers/child-worker.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';

const CACHE_MAX = 600 * 1024;
/** Each job's setup makes this much in node_modules, under a key of its own. */
const ENTRY = 200 * 1024;

let h: Harness;
let worker: ChildWorker;
let workspaces: string;
let home: string;
beforeAll(async () => {
  h = await createHarness({ worker: false });
  workspaces = await tempDir('agentrun-disk-ws-');
  home = await tempDir('agentrun-disk-home-');
  worker = await startChildWorker(h, {
    AGENTRUN_HOST_ID: `disk-${h.taskQueue}`,
    AGENTRUN_WORKSPACES: workspaces,
    AGENTRUN_HOME: home,
    AGENTRUN_GC_INTERVAL: '1s',
    AGENTRUN_CACHE_MAX_SIZE: String(CACHE_MAX),
    AGENTRUN_KEEP_WORKSPACE_FOR: '1h',
  });
});
afterAll(async () => {
  await stopChildWorkers([worker]);
  await h?.close();
});

const du = (dir: string) => Number(execFileSync('du', ['-s', '-B1', dir], { encoding: 'utf8' }).split('\t')[0]);

async function until(what: string, ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !ok(); await new Promise((r) => setTimeout(r, 100)))
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
}

describe('disk stays bounded', { timeout: 600_000 }, () => {
  it('after finished jobs under each --keep-workspace policy: the workspaces their policy keeps, and caches within the size limit', async () => {
    const src = await tempRepo({ 'README.md': 'hello\n' });
    const remote = join(await tempDir('agentrun-disk-remote-'), 'repo.git');
    execFileSync('git', ['clone', '-q', '--bare', src, remote]);
    const jobs: { id: string; policy: string; ok: boolean }[] = [];
    let n = 0;
    for (const policy of ['never', 'failed', 'always'] as const) {
      for (const ok of [true, true, false]) {
        const id = uid(`disk-${policy}`);
        const model = await scriptModel({
          turns: [
            { say: `<write_to_file>\n<path>job-${n}.txt</path>\n<content>\njob ${n}\n</content>\n</write_to_file>` },
            { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
          ],
        });
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
});
