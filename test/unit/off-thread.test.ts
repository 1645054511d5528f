// Programs started from the pool's threads (src/workspace/off-thread.ts): output, exit codes, a
// missing program, input on stdin and a timeout come back as execFile gives them on the main thread.
import { describe, expect, it } from 'vitest';
import { execFileOffThread } from '../../src/workspace/off-thread.js';
import { git } from '../../src/workspace/git.js';
import { tempDirSync } from '../helpers/temp.js';

const base = { cwd: '/', env: { PATH: process.env.PATH }, maxBuffer: 1024 * 1024, timeout: 10_000 };

describe('execFileOffThread', () => {
  it('returns stdout and stderr of a program, with its exit code when it fails', async () => {
    const ok = await execFileOffThread('sh', ['-c', 'printf out; printf err >&2'], base);
    expect(ok.error).toBeUndefined();
    expect(ok.stdout.toString()).toBe('out');
    expect(ok.stderr.toString()).toBe('err');
    const failed = await execFileOffThread('sh', ['-c', 'printf why >&2; exit 3'], base);
    expect(failed.error?.code).toBe(3);
    expect(failed.stderr.toString()).toBe('why');
  });

  it('says ENOENT for a program that is not there, feeds input on stdin and ends a program at its timeout', async () => {
    expect((await execFileOffThread('agentrun-no-such-program', [], base)).error?.code).toBe('ENOENT');
    expect((await execFileOffThread('cat', [], { ...base, input: Buffer.from('piped') })).stdout.toString()).toBe('piped');
    const slow = await execFileOffThread('sleep', ['5'], { ...base, timeout: 200 });
    expect(slow.error).toBeDefined();
  });

  it('serves many calls at once across the threads, each with its own answer', async () => {
    const outs = await Promise.all(Array.from({ length: 20 }, (_, i) => execFileOffThread('echo', [String(i)], base)));
    expect(outs.map((o) => o.stdout.toString().trim())).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
  });

  it('carries git through it: its errors keep git’s message and exit code', async () => {
    const dir = tempDirSync('agentrun-offthread-');
    await git(['init', '--quiet', '--bare', dir]);
    expect(await git(['rev-parse', '--is-bare-repository'], { gitDir: dir })).toBe('true');
    const err = await git(['rev-parse', '--verify', 'no-such-ref'], { gitDir: dir }).catch((e: Error & { code?: number }) => e);
    expect((err as Error).message).toContain('Needed a single revision');
    expect((err as { code?: number }).code).toBe(128);
  });
});
