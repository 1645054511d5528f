// Checkpoints through the conversation's kept index: each turn records exactly what changed,
// also after a restore, and the user's own index stays untouched.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  atLeastEntries,
  checkoutFiles,
  createCheckpoint,
  HALVES_MIN_FILES,
  openRepo,
  privateGitDir,
  restoreCheckpoint,
} from '../../src/workspace/checkpoint.js';
import { bundleCheckpoint, restoreFromBundles } from '../../src/workspace/bundle.js';
import { unbundleInto } from '../../src/workspace/unbundle.js';
import { tempDirSync } from '../helpers/temp.js';

describe('incremental checkpoints', () => {
  it('checks a large first snapshot in as two halves at once: the same tree as one git add, in packs, and the next turn sees only its change', async () => {
    const ws = tempDirSync('agentrun-cp-');
    const home = tempDirSync('agentrun-cp-home-');
    for (let d = 0; d < 20; d++) {
      mkdirSync(join(ws, `d${d}`));
      for (let f = 0; f < HALVES_MIN_FILES / 20 + 5; f++) writeFileSync(join(ws, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
    }
    writeFileSync(join(ws, '.gitignore'), 'build/\n*.log\n');
    mkdirSync(join(ws, 'build'));
    writeFileSync(join(ws, 'build', 'out.js'), 'ignored');
    writeFileSync(join(ws, 'd0', 'x.log'), 'ignored');
    symlinkSync('d0/f0.txt', join(ws, 'link'));
    // A nested repository: git add makes it a gitlink, which the halves leave to it.
    const nested = join(ws, 'nested');
    mkdirSync(nested);
    writeFileSync(join(nested, 'n.txt'), 'n');
    const nestedGit = (...args: string[]) => execFileSync('git', args, { cwd: nested, encoding: 'utf8' }).trim();
    nestedGit('init', '-q');
    nestedGit('add', '-A');
    nestedGit('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'n');

    const c0 = (await createCheckpoint(ws, 'h', 0, home))!;
    const gitDir = privateGitDir(home, ws);
    const privateGit = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8' }).trim();
    // What one plain `git add -A` of the same files makes, in a repository of its own.
    const plain = join(tempDirSync('agentrun-cp-plain-'), 'p.git');
    execFileSync('git', ['init', '-q', '--bare', plain]);
    const env = { ...process.env, GIT_DIR: plain, GIT_WORK_TREE: ws, GIT_INDEX_FILE: join(plain, 'index') };
    execFileSync('git', ['add', '-A', '--', '.'], { cwd: ws, env, stdio: 'ignore' });
    const tree = execFileSync('git', ['write-tree'], { cwd: ws, env, encoding: 'utf8' }).trim();
    expect(privateGit('rev-parse', `${c0.commit}^{tree}`)).toBe(tree);
    expect(c0.files).toContain('link');
    expect(c0.files).toContain('nested');
    expect(c0.files).not.toContain('build/out.js');
    expect(c0.files.length).toBe(20 * (HALVES_MIN_FILES / 20 + 5) + 3);
    // Two packs (one per half) hold the files' blobs.
    expect(readdirSync(join(gitDir, 'objects', 'pack')).filter((f) => f.endsWith('.pack')).length).toBeGreaterThanOrEqual(2);
    expect(Number(/^in-pack: (\d+)$/m.exec(privateGit('count-objects', '-v'))?.[1])).toBeGreaterThanOrEqual(20 * (HALVES_MIN_FILES / 20 + 5));
    // The kept index has every file's stat data: the next checkpoint holds exactly what changed.
    writeFileSync(join(ws, 'd7', 'f3.txt'), 'changed\n');
    expect((await createCheckpoint(ws, 'h', 1, home))?.files).toEqual(['d7/f3.txt']);
  });

  it('counts a tree’s entries only up to the number asked, leaving .git out and following no link', async () => {
    const ws = tempDirSync('agentrun-cp-count-');
    mkdirSync(join(ws, 'a', 'b'), { recursive: true });
    for (let i = 0; i < 5; i++) writeFileSync(join(ws, 'a', 'b', `f${i}`), 'x');
    mkdirSync(join(ws, '.git', 'objects'), { recursive: true });
    for (let i = 0; i < 50; i++) writeFileSync(join(ws, '.git', `o${i}`), 'x');
    const outside = tempDirSync('agentrun-cp-count-outside-');
    for (let i = 0; i < 50; i++) writeFileSync(join(outside, `o${i}`), 'x');
    symlinkSync(outside, join(ws, 'link'));
    // a, a/b, its five files and the link: 8 entries.
    expect(await atLeastEntries(ws, 8)).toBe(true);
    expect(await atLeastEntries(ws, 9)).toBe(false);
    // A new directory's turn 0 below the threshold: one git add, and every file in the checkpoint.
    const home = tempDirSync('agentrun-cp-count-home-');
    rmSync(join(ws, '.git'), { recursive: true });
    const c0 = (await createCheckpoint(ws, 'count', 0, home))!;
    expect(c0.files).toEqual(['a/b/f0', 'a/b/f1', 'a/b/f2', 'a/b/f3', 'a/b/f4', 'link']);
    expect(existsSync(join(privateGitDir(home, ws), 'hooks'))).toBe(false);
  });

  it('records each turn exactly, after restores too, without touching the user index', async () => {
    const ws = tempDirSync('agentrun-cp-');
    const home = tempDirSync('agentrun-cp-home-');
    writeFileSync(join(ws, 'a.txt'), 'a');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, encoding: 'utf8' }).trim();
    git('init', '-q');
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init');
    // The private repository starts from the files, not from the workspace's own history.
    expect((await createCheckpoint(ws, 'c', 0, home))?.files).toEqual(['a.txt']);
    writeFileSync(join(ws, 'b.txt'), 'b');
    const c1 = await createCheckpoint(ws, 'c', 1, home);
    expect(c1?.files).toEqual(['b.txt']);
    unlinkSync(join(ws, 'a.txt'));
    writeFileSync(join(ws, 'b.txt'), 'b2');
    expect((await createCheckpoint(ws, 'c', 2, home))?.files).toEqual(['a.txt', 'b.txt']);
    expect(await createCheckpoint(ws, 'c', 3, home)).toBeNull();
    await restoreCheckpoint(ws, c1!.commit, home);
    expect(existsSync(join(ws, 'a.txt'))).toBe(true);
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('b');
    const c4 = await createCheckpoint(ws, 'c', 4, home);
    expect(c4?.files).toEqual(['a.txt', 'b.txt']);
    const privateGit = (...args: string[]) => execFileSync('git', ['--git-dir', privateGitDir(home, ws), ...args], { encoding: 'utf8' }).trim();
    expect(privateGit('rev-parse', `${c4!.commit}^{tree}`)).toBe(privateGit('rev-parse', `${c1!.commit}^{tree}`));
    // The workspace's own repository has none of it: no ref, no object, its index untouched.
    expect(git('status', '--short')).toBe('?? b.txt');
    expect(git('for-each-ref')).not.toContain('agentrun');
    expect(() => git('cat-file', '-e', c1!.commit)).toThrow();
  });

  it('bundles each checkpoint against the one before and rebuilds the workspace from them elsewhere', async () => {
    // A workspace that is not a git repository: its checkpoints live in a private git directory.
    const ws = tempDirSync('agentrun-cp-');
    const home = tempDirSync('agentrun-cp-home-');
    writeFileSync(join(ws, 'big.txt'), randomBytes(25_000).toString('hex')); // incompressible
    writeFileSync(join(ws, '.gitignore'), 'build/\n');
    const c0 = (await createCheckpoint(ws, 'b', 0, home))!;
    const bundles = [await bundleCheckpoint(ws, 'b', c0.commit, undefined, home)];
    writeFileSync(join(ws, 'small.txt'), 'one');
    execFileSync('mkdir', ['-p', join(ws, 'build')]);
    writeFileSync(join(ws, 'build', 'out.js'), 'ignored');
    const c1 = (await createCheckpoint(ws, 'b', 1, home))!;
    expect(c1.files).toEqual(['small.txt']);
    bundles.push(await bundleCheckpoint(ws, 'b', c1.commit, c0.commit, home));
    writeFileSync(join(ws, 'small.txt'), 'two');
    const c2 = (await createCheckpoint(ws, 'b', 2, home))!;
    bundles.push(await bundleCheckpoint(ws, 'b', c2.commit, c1.commit, home));
    // Incremental: later bundles do not carry the big file again.
    expect(bundles[1]!.length).toBeLessThan(bundles[0]!.length / 4);
    // Turn 0 is a root commit: its bundle is the tree, no more. Above a cap only its size comes back.
    expect(bundles[0]!.length).toBeLessThan(30_000);
    const capped = await bundleCheckpoint(ws, 'b', c0.commit, undefined, home, 10_000);
    expect(Buffer.isBuffer(capped) ? capped.length : capped.tooLarge).toBeGreaterThan(25_000);
    expect(Buffer.isBuffer(capped)).toBe(false);
    expect(Buffer.isBuffer(await bundleCheckpoint(ws, 'b', c1.commit, c0.commit, home, 10_000))).toBe(true);
    expect(bundles[2]!.length).toBeLessThan(bundles[0]!.length / 4);

    const other = join(tempDirSync('agentrun-cp-other-'), 'b');
    await restoreFromBundles(other, 'b', bundles, c1.commit, home);
    expect(readFileSync(join(other, 'small.txt'), 'utf8')).toBe('one');
    expect(readFileSync(join(other, 'big.txt'), 'utf8')).toHaveLength(50_000);
    expect(existsSync(join(other, 'build'))).toBe(false); // ignored files are not in checkpoints
    // Safe to run twice; the next checkpoint chains on the restored one.
    await restoreFromBundles(other, 'b', bundles, c1.commit, home);
    writeFileSync(join(other, 'small.txt'), 'three');
    const c3 = (await createCheckpoint(other, 'b', 3, home))!;
    expect(c3.files).toEqual(['small.txt']);
    expect(execFileSync('git', ['--git-dir', privateGitDir(home, other), 'rev-parse', `${c3.commit}^`], { encoding: 'utf8' }).trim()).toBe(c1.commit);
    expect(existsSync(join(other, '.git'))).toBe(false);
    await expect(restoreFromBundles(other, 'b', bundles.slice(0, 1), c2.commit, home)).rejects.toThrow(/not in its stored bundles/);
  });

  it('unbundles stored bundles in order, whole or in parts, from an async iterable; a missing prerequisite fails with git’s message and leaves no scratch file', async () => {
    const ws = tempDirSync('agentrun-cp-');
    const home = tempDirSync('agentrun-cp-home-');
    writeFileSync(join(ws, 'a.txt'), randomBytes(4_000).toString('hex'));
    const c0 = (await createCheckpoint(ws, 'u', 0, home))!;
    const first = (await bundleCheckpoint(ws, 'u', c0.commit, undefined, home)) as Buffer;
    writeFileSync(join(ws, 'a.txt'), 'changed');
    const c1 = (await createCheckpoint(ws, 'u', 1, home))!;
    const second = (await bundleCheckpoint(ws, 'u', c1.commit, c0.commit, home)) as Buffer;
    const target = join(tempDirSync('agentrun-cp-unbundle-'), 'repo.git');
    execFileSync('git', ['init', '--bare', '--quiet', target]);
    const has = (commit: string) => execFileSync('git', ['--git-dir', target, 'cat-file', '-t', commit], { encoding: 'utf8' }).trim();
    const scratchLeft = () => readdirSync(join(target, 'agentrun'));

    // Its prerequisite (turn 0) is not there yet: git's own message, nothing applied, nothing left.
    await expect(unbundleInto(target, [second])).rejects.toThrow(/prerequisite/);
    expect(() => has(c1.commit)).toThrow();
    expect(scratchLeft()).toEqual([]);

    // The first in three parts (as a bundle base comes from the store), the next whole; each read
    // from the iterable once the one before is applied.
    const read: string[] = [];
    async function* parts(buf: Buffer) {
      const third = Math.ceil(buf.length / 3);
      for (let i = 0; i < buf.length; i += third) yield buf.subarray(i, i + third);
    }
    async function* stored() {
      read.push('turn 0');
      yield parts(first);
      read.push(`turn 1, turn 0 applied: ${has(c0.commit)}`);
      yield second;
    }
    await unbundleInto(target, stored());
    expect(read).toEqual(['turn 0', 'turn 1, turn 0 applied: commit']);
    expect(has(c0.commit)).toBe('commit');
    expect(has(c1.commit)).toBe('commit');
    expect(scratchLeft()).toEqual([]);
  });

  it('is made every time while a process renames and replaces a directory of the tree in a loop (files gone between git listing and reading them)', async () => {
    const ws = tempDirSync('agentrun-cp-');
    const home = tempDirSync('agentrun-cp-home-');
    const other = tempDirSync('agentrun-cp-other-');
    mkdirSync(join(ws, 'real'));
    for (let f = 0; f < 12; f++) writeFileSync(join(ws, 'real', `f${f}.txt`), `file ${f}\n`);
    writeFileSync(join(ws, 'README.md'), 'hi\n');
    // `d` is in turn the directory, a link to another directory and a link to /proc/self, each gone a moment after.
    const script =
      'cd "$1"; while :; do rm -rf d; mv -T real d; mv -T d real; ln -sfn "$2" d.tmp; mv -T d.tmp d; rm -f d; ln -sfn /proc/self d.tmp; mv -T d.tmp d; rm -f d; done';
    const churn = spawn('sh', ['-c', script, 'sh', ws, other], { stdio: 'ignore' });
    try {
      // git fails about one checkpoint in fifty here when it is not run again: 150 find that nearly every time.
      for (let turn = 0; turn < 150; turn++) await createCheckpoint(ws, 'churn', turn, home);
    } finally {
      churn.kill('SIGKILL');
    }
    const made = execFileSync('git', ['--git-dir', privateGitDir(home, ws), 'rev-list', '--count', 'refs/agentrun/churn'], { encoding: 'utf8' });
    expect(Number(made)).toBeGreaterThan(1);
  });

  it('says whose private repository is broken and what to do, when git cannot use it', async () => {
    const ws = tempDirSync('agentrun-cp-');
    const home = tempDirSync('agentrun-cp-home-');
    writeFileSync(join(ws, 'a.txt'), 'a');
    const gitDir = privateGitDir(home, ws);
    mkdirSync(gitDir, { recursive: true });
    writeFileSync(join(gitDir, 'HEAD'), 'not a git HEAD\n');
    const made = createCheckpoint(ws, 'broken', 0, home);
    await expect(made).rejects.toThrow(`the checkpoints of ${ws} cannot be made: its private git repository ${gitDir} is broken (fatal: not a git repository:`);
    await expect(made).rejects.toThrow(
      /; remove that directory \(its checkpoints are lost, those stored off the host stay\) and start the conversation again$/,
    );
  });
});

describe('FIFOs where git reads ignore rules and attributes', () => {
  it('leave their directory out of checkpoints and rollbacks instead of making git wait; at the root the checkpoint is refused in one line', async () => {
    const ws = tempDirSync('agentrun-cp-fifo-');
    const home = tempDirSync('agentrun-cp-home-');
    mkdirSync(join(ws, 'sub'));
    mkdirSync(join(ws, 'attrs'));
    writeFileSync(join(ws, 'a.txt'), 'a\n');
    writeFileSync(join(ws, 'sub', 'kept.txt'), 'in sub\n');
    writeFileSync(join(ws, 'attrs', 'kept.txt'), 'in attrs\n');
    execFileSync('mkfifo', [join(ws, 'sub', '.gitignore'), join(ws, 'attrs', '.gitattributes')]);
    const first = await createCheckpoint(ws, 'c-fifo', 0, home);
    expect(first?.files).toEqual(['a.txt']);
    writeFileSync(join(ws, 'b.txt'), 'b\n');
    const second = await createCheckpoint(ws, 'c-fifo', 1, home);
    expect(second?.files).toEqual(['b.txt']);
    const back = await restoreCheckpoint(ws, first!.commit, home);
    expect(back.removed).toEqual(['b.txt']);
    expect(readFileSync(join(ws, 'sub', 'kept.txt'), 'utf8')).toBe('in sub\n');

    execFileSync('mkfifo', [join(ws, '.gitignore')]);
    await expect(createCheckpoint(ws, 'c-fifo', 2, home)).rejects.toThrow(
      /its \.gitignore or \.gitattributes is not a regular file .*remove it from the workspace's root$/,
    );
    for (const f of ['.gitignore', 'sub/.gitignore', 'attrs/.gitattributes']) unlinkSync(join(ws, f));
  });

  it("a rollback's checkout into a directory whose .gitattributes became a FIFO after the snapshot removes the FIFO instead of waiting on it", async () => {
    const ws = tempDirSync('agentrun-cp-fifo-co-');
    const home = tempDirSync('agentrun-cp-home-');
    mkdirSync(join(ws, 'y'));
    writeFileSync(join(ws, 'y', 'g.txt'), 'checkpointed\n');
    const cp = await createCheckpoint(ws, 'c-fifo-co', 0, home);
    writeFileSync(join(ws, 'y', 'g.txt'), 'changed\n');
    // Made between the rollback's snapshot and its checkout (by a process the agent left running).
    execFileSync('mkfifo', [join(ws, 'y', '.gitattributes')]);
    await checkoutFiles(await openRepo(ws, home), cp!.commit, ['y/g.txt']);
    expect(readFileSync(join(ws, 'y', 'g.txt'), 'utf8')).toBe('checkpointed\n');
    expect(existsSync(join(ws, 'y', '.gitattributes'))).toBe(false);
  });
});
