// Checkpoints through the conversation's kept index: each turn records exactly what changed,
// also after a restore, and the user's own index stays untouched.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCheckpoint, restoreCheckpoint } from '../../src/workspace/checkpoint.js';

describe('incremental checkpoints', () => {
  it('records each turn exactly, after restores too, without touching the user index', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'agentrun-cp-'));
    const home = mkdtempSync(join(tmpdir(), 'agentrun-cp-home-'));
    writeFileSync(join(ws, 'a.txt'), 'a');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, encoding: 'utf8' }).trim();
    git('init', '-q');
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init');
    expect((await createCheckpoint(ws, 'c', 0, home))?.files).toEqual([]);
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
    expect(git('rev-parse', `${c4!.commit}^{tree}`)).toBe(git('rev-parse', `${c1!.commit}^{tree}`));
    expect(git('status', '--short')).toBe('?? b.txt');
  });
});
