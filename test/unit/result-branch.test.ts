// The result branch (src/workspace/result-branch.ts) on real git: a job that changed nothing makes
// no commit; a commit is reused only by a retry of the same conversation, never by another one
// with the same tree on the same branch.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCheckpoint, privateGitDir } from '../../src/workspace/checkpoint.js';
import { commitResultBranch, commitSubject } from '../../src/workspace/result-branch.js';
import { tempDirSync } from '../helpers/temp.js';

function setup(): { ws: string; home: string; gitDir: string } {
  const ws = tempDirSync('agentrun-result-ws-');
  const home = tempDirSync('agentrun-result-home-');
  writeFileSync(join(ws, 'README.md'), '# demo\n');
  return { ws, home, gitDir: privateGitDir(home, ws) };
}

describe('result branch', () => {
  it('makes no commit and pushes nothing when the job changed nothing, unless asked to', async () => {
    const s = setup();
    const base = (await createCheckpoint(s.ws, 'c1', 0, s.home))!.commit;
    const opts = { dir: s.ws, home: s.home, conversationId: 'c1', task: 'nothing to do', base, branch: 'agentrun/c1', push: false };
    const none = await commitResultBranch(opts);
    expect(none).toMatchObject({ commit: base, pushed: false, empty: true, diffstat: { files: 0 } });
    expect(() => execFileSync('git', ['--git-dir', s.gitDir, 'rev-parse', '--verify', '--quiet', 'refs/heads/agentrun/c1'])).toThrow();
    const forced = await commitResultBranch({ ...opts, pushEmpty: true });
    expect(forced.empty).toBeUndefined();
    expect(forced.commit).not.toBe(base);
  });

  it("reuses a commit only for the same conversation's retry", async () => {
    const s = setup();
    const base = (await createCheckpoint(s.ws, 'c1', 0, s.home))!.commit;
    writeFileSync(join(s.ws, 'a.txt'), 'change\n');
    const first = { dir: s.ws, home: s.home, conversationId: 'c1', task: 'change', base, branch: 'nightly/x', push: false };
    const one = await commitResultBranch(first);
    expect(one.diffstat.files).toBe(1);
    expect((await commitResultBranch(first)).commit).toBe(one.commit);
    const other = await commitResultBranch({ ...first, conversationId: 'c2' });
    expect(other.commit).not.toBe(one.commit);
    expect(execFileSync('git', ['--git-dir', s.gitDir, 'log', '-1', '--format=%B', other.commit], { encoding: 'utf8' })).toContain(
      'agentrun conversation c2\n',
    );
  });
});

describe('setup outputs', () => {
  it('are left out of the result commit whether ignored or not; what the repository tracks there stays', async () => {
    const s = { ws: tempDirSync('agentrun-result-ws-'), home: tempDirSync('agentrun-result-home-') };
    mkdirSync(join(s.ws, 'vendor'), { recursive: true });
    writeFileSync(join(s.ws, 'vendor/TRACKED.md'), 'kept\n');
    const base = (await createCheckpoint(s.ws, 'c1', 0, s.home))!.commit;
    // Setup made a venv (not ignored by the repository) and wrote into a tracked directory; the agent edited one file.
    mkdirSync(join(s.ws, '.venv/bin'), { recursive: true });
    writeFileSync(join(s.ws, '.venv/bin/pytest'), '#!/work/first/.venv/bin/python\n');
    writeFileSync(join(s.ws, 'vendor/lib.js'), 'installed\n');
    writeFileSync(join(s.ws, 'fix.py'), 'fixed = True\n');
    const r = await commitResultBranch({
      dir: s.ws,
      home: s.home,
      conversationId: 'c1',
      task: 'fix',
      base,
      branch: 'agentrun/c1',
      push: false,
      setupOutputs: ['.venv', 'vendor/'],
    });
    const files = execFileSync('git', ['--git-dir', privateGitDir(s.home, s.ws), 'ls-tree', '-r', '--name-only', r.commit], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(files.sort()).toEqual(['fix.py', 'vendor/TRACKED.md']);
    expect(r.diffstat).toMatchObject({ files: 1, insertions: 1, deletions: 0 });
  });
});

describe('the result commit subject', () => {
  it("is the task's first line, cut at a word when long", () => {
    expect(commitSubject('\n  Fix the flaky test  \nin detail')).toBe('Fix the flaky test');
    const long = 'Refactor the configuration loader so that every option is validated before the worker starts';
    const subject = commitSubject(long);
    expect(subject).toBe('Refactor the configuration loader so that every option is validated…');
    expect(subject.length).toBeLessThanOrEqual(72);
    expect(commitSubject('x'.repeat(100))).toBe(`${'x'.repeat(71)}…`);
  });
});
