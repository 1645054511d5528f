// Workspace access through descriptors opened beneath the root (src/workspace/beneath.ts), against the
// ways out: a symlink at every level, `..`, absolute paths, links into /proc (magic links), special
// files, oversize files, and a process swapping a directory for a symlink while the tools run.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { locate, openRegularAt, readBeneathOrNull, readTreeDir, readTreeFile, writeBeneath } from '../../src/workspace/beneath.js';
import { runTool, ToolError } from '../../src/tools/index.js';
import { loadRules } from '../../src/context/rules.js';
import { loadAgents } from '../../src/extensions/agents.js';
import { loadSettingsFile, workspaceSettingsPath } from '../../src/extensions/settings.js';
import { nodeAsUser } from '../helpers/as-user.js';
import { tempDirSync } from '../helpers/temp.js';
import { unprivilegedTestUser } from '../helpers/prerequisites.js';

const CANARY = 'canary-beneath-secret';
let ws: string;
let outside: string;

beforeEach(() => {
  ws = tempDirSync('agentrun-beneath-ws-');
  outside = tempDirSync('agentrun-beneath-out-');
  writeFileSync(path.join(outside, 'secret'), CANARY);
  mkdirSync(path.join(ws, 'a/b/c'), { recursive: true });
  writeFileSync(path.join(ws, 'a/b/c/f.txt'), 'inside\n');
});

const read = async (p: string) => (await readBeneathOrNull(ws, p))?.toString('utf8');

describe('locate and read beneath the root', () => {
  it('reads through a path of real directories and through symlinks that stay inside (relative, absolute, with ..)', async () => {
    expect(await read('a/b/c/f.txt')).toBe('inside\n');
    symlinkSync('b/c', path.join(ws, 'a/rel'));
    symlinkSync(path.join(ws, 'a/b'), path.join(ws, 'abs'));
    symlinkSync('../../a/b/c/f.txt', path.join(ws, 'a/b/up'));
    expect(await read('a/rel/f.txt')).toBe('inside\n');
    expect(await read('abs/c/f.txt')).toBe('inside\n');
    expect(await read('a/b/up')).toBe('inside\n');
    const l = await locate(ws, 'a/rel/f.txt');
    expect(l.rel).toBe('a/b/c/f.txt');
    await l.close();
  });

  it('refuses a symlink out of the workspace at every level of the path, for reads and writes', async () => {
    for (const level of ['', 'a', 'a/b', 'a/b/c']) {
      const link = path.join(ws, level, 'out');
      symlinkSync(outside, link);
      const p = level ? `${level}/out/secret` : 'out/secret';
      await expect(read(p)).rejects.toThrow(/symbolic link .* outside the workspace/);
      await expect(writeBeneath(ws, level ? `${level}/out/new` : 'out/new', 'x')).rejects.toThrow(/outside the workspace/);
      // The last component a link out: refused too.
      const leaf = path.join(ws, level, 'leaf');
      symlinkSync(path.join(outside, 'secret'), leaf);
      await expect(read(level ? `${level}/leaf` : 'leaf')).rejects.toThrow(/outside the workspace/);
      await expect(writeBeneath(ws, level ? `${level}/leaf` : 'leaf', 'x')).rejects.toThrow(/outside the workspace/);
    }
    expect(readdirSync(outside)).toEqual(['secret']);
    expect(readFileSync(path.join(outside, 'secret'), 'utf8')).toBe(CANARY);
  });

  it('refuses `..` that climbs above the root, in the path or in a link at every level', async () => {
    await expect(read('../x')).rejects.toThrow(/leads outside the workspace/);
    await expect(read('a/b/../../../x')).rejects.toThrow(/leads outside the workspace/);
    const up = ['..', '../..', '../../..', '../../../..'];
    ['', 'a', 'a/b', 'a/b/c'].forEach((level, i) => symlinkSync(`${up[i]}/${path.basename(outside)}`, path.join(ws, level, 'climb')));
    for (const level of ['', 'a', 'a/b', 'a/b/c'])
      await expect(read(level ? `${level}/climb/secret` : 'climb/secret')).rejects.toThrow(/outside the workspace/);
  });

  it('refuses absolute paths, with a hint when they point inside', async () => {
    await expect(read('/etc/passwd')).rejects.toThrow(/Absolute paths are not allowed/);
    await expect(read(path.join(ws, 'a/b/c/f.txt'))).rejects.toThrow(/Use "a\/b\/c\/f.txt" instead/);
  });

  it('refuses links into /proc (magic links), at the root and below', async () => {
    symlinkSync('/proc/self', path.join(ws, 'self'));
    symlinkSync('/proc/self/root', path.join(ws, 'a/root'));
    symlinkSync('/proc/self/fd/0', path.join(ws, 'a/b/fd0'));
    symlinkSync('/proc/self/cwd', path.join(ws, 'a/b/c/cwd'));
    for (const p of ['self/environ', 'self', 'a/root/etc/passwd', 'a/b/fd0', 'a/b/c/cwd/package.json'])
      await expect(read(p), p).rejects.toThrow(/symbolic link .* outside the workspace/);
    await expect(writeBeneath(ws, 'a/root/tmp/pwned', 'x')).rejects.toThrow(/outside the workspace/);
    expect(existsSync('/tmp/pwned')).toBe(false);
  });

  it('the /proc/self/fd step resolves only the one name: a symlink there is never followed by the kernel', async () => {
    symlinkSync(outside, path.join(ws, 'a/b/out'));
    const dir = await open(path.join(ws, 'a/b'), constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const e = await open(`/proc/self/fd/${dir.fd}/out`, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).then(
        (fh) => fh.close(),
        (err: NodeJS.ErrnoException) => err.code,
      );
      expect(['ELOOP', 'ENOTDIR']).toContain(e);
      await expect(openRegularAt(dir, 'out', 'a/b/out')).rejects.toThrow(/symbolic link/);
    } finally {
      await dir.close();
    }
  });

  it('refuses FIFOs, sockets and devices without blocking, and files over the cap', async () => {
    execFileSync('mkfifo', [path.join(ws, 'fifo')]);
    execFileSync('python3', ['-c', `import socket; s=socket.socket(socket.AF_UNIX); s.bind(${JSON.stringify(path.join(ws, 'sock'))})`]);
    await expect(read('fifo')).rejects.toThrow(/not a regular file/);
    await expect(read('sock')).rejects.toThrow(/not a regular file/);
    // A real device, through the same call the walk makes (no device node can be made in a workspace without privileges).
    const dev = await open('/dev', constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await expect(openRegularAt(dev, 'null', 'null')).rejects.toThrow(/not a regular file/);
      await expect(openRegularAt(dev, 'zero', 'zero')).rejects.toThrow(/not a regular file/);
    } finally {
      await dev.close();
    }
    writeFileSync(path.join(ws, 'big'), Buffer.alloc(2048));
    await expect(readBeneathOrNull(ws, 'big', 1024)).rejects.toThrow(/too large/);
    // Readers of repository files get nothing, quickly, from a FIFO or a link out.
    symlinkSync(path.join(outside, 'secret'), path.join(ws, 'AGENTS.md'));
    expect(await readTreeFile(ws, 'fifo', 1024)).toBeUndefined();
    expect(await readTreeFile(ws, 'AGENTS.md', 1024)).toBeUndefined();
    symlinkSync(outside, path.join(ws, 'rules'));
    expect(await readTreeDir(ws, 'rules')).toBeUndefined();
    expect(await readTreeFile(ws, 'a/b/c/f.txt', 3)).toBe('ins');
  });

  it('writes atomically into the final open directory, creating directories, keeping the mode', async () => {
    await writeBeneath(ws, 'new/dir/x.txt', 'one');
    expect(readFileSync(path.join(ws, 'new/dir/x.txt'), 'utf8')).toBe('one');
    chmodSync(path.join(ws, 'new/dir/x.txt'), 0o600);
    await writeBeneath(ws, 'new/dir/x.txt', 'two');
    expect(readFileSync(path.join(ws, 'new/dir/x.txt'), 'utf8')).toBe('two');
    expect(execFileSync('stat', ['-c', '%a', path.join(ws, 'new/dir/x.txt')], { encoding: 'utf8' }).trim()).toBe('600');
    expect(readdirSync(path.join(ws, 'new/dir'))).toEqual(['x.txt']);
    // Writing over a symlink that stays inside writes its target.
    symlinkSync('a/b/c/f.txt', path.join(ws, 'alias'));
    await writeBeneath(ws, 'alias', 'via link');
    expect(readFileSync(path.join(ws, 'a/b/c/f.txt'), 'utf8')).toBe('via link');
    await expect(writeBeneath(ws, 'a/b/c/f.txt/under', 'x')).rejects.toThrow(ToolError);
  });
});

describe('repository files the worker reads itself', () => {
  it('a FIFO or a link out as settings, rules, agent files or .gitignore neither blocks nor leaks', async () => {
    mkdirSync(path.join(ws, '.agentrun/rules'), { recursive: true });
    mkdirSync(path.join(ws, '.agentrun/agents'), { recursive: true });
    for (const f of ['.agentrun/settings.json', 'AGENTS.md', '.agentrun/rules/a.md', '.agentrun/agents/x.md', '.gitignore', 'a/.gitignore'])
      execFileSync('mkfifo', [path.join(ws, f)]);
    symlinkSync(path.join(outside, 'secret'), path.join(ws, '.agentrun/rules/b.md'));
    writeFileSync(path.join(ws, '.agentrun/rules/c.md'), 'a real rule\n');
    await expect(loadSettingsFile(workspaceSettingsPath(ws), ws)).rejects.toThrow(/cannot read: .*not a regular file/);
    expect((await loadRules(ws)).map((r) => [r.file, r.body])).toEqual([['.agentrun/rules/c.md', 'a real rule']]);
    expect((await loadAgents(ws)).agents).toEqual([]);
    const listed = await runTool('list_files', { path: '.', recursive: true }, { workspace: ws });
    expect(listed.output).toContain('a/b/c/f.txt');
    const searched = await runTool('search_files', { path: 'a', regex: 'inside' }, { workspace: ws });
    expect(searched.output).toContain('a/b/c/f.txt');
    // A settings directory that is a link out is not read either.
    const ws2 = tempDirSync('agentrun-beneath-ws2-');
    mkdirSync(path.join(outside, 'dot'));
    writeFileSync(path.join(outside, 'dot/settings.json'), JSON.stringify({ mcpServers: { x: { command: CANARY } } }));
    symlinkSync(path.join(outside, 'dot'), path.join(ws2, '.agentrun'));
    await expect(loadSettingsFile(workspaceSettingsPath(ws2), ws2)).rejects.toThrow(/outside the workspace/);
  });
});

describe('a process swapping a directory and a symlink beside the tools', () => {
  let swapper: ReturnType<typeof spawn> | undefined;
  afterEach(() => {
    swapper?.kill('SIGKILL');
    swapper = undefined;
  });

  it('never lets a read, list or search see the outside, nor a write land there', async () => {
    mkdirSync(path.join(ws, 'real'));
    writeFileSync(path.join(ws, 'real/secret'), 'harmless\n');
    mkdirSync(path.join(ws, 'real/sub'));
    writeFileSync(path.join(ws, 'real/sub/secret'), 'harmless\n');
    symlinkSync(outside, path.join(ws, 'evil'));
    symlinkSync('/proc/self', path.join(ws, 'procself'));
    // `d` is in turn the real directory, a link to the canary directory and a link to /proc/self
    // (and whatever a write made of it while it was missing, removed).
    const script = `cd "$1"; while :; do rm -rf d; mv -T real d; mv -T d real; ln -sfn "$2" d.tmp; mv -T d.tmp d; rm -f d; ln -sfn /proc/self d.tmp; mv -T d.tmp d; rm -f d; done`;
    swapper = spawn('sh', ['-c', script, 'sh', ws, outside], { stdio: 'ignore' });
    const seen: string[] = [];
    // At least 25 rounds, and on until the race was seen both ways (a call in the real directory,
    // a call refused at the link): how the swaps and the calls interleave depends on the machine.
    const raced = () => seen.some((o) => o.includes('harmless')) && seen.some((o) => /symbolic link \(d\) that leads outside/.test(o));
    for (let i = 0; i < 400 && (i < 25 || !raced()); i++) {
      for (const [tool, args] of [
        ['read_file', { path: 'd/secret' }],
        ['read_file', { path: 'd/sub/secret' }],
        ['read_file', { path: 'd/environ' }],
        ['list_files', { path: 'd', recursive: true }],
        ['search_files', { path: 'd', regex: 'canar[y]|HOM[E]=|harmless' }],
        ['write_to_file', { path: `d/w${i}.txt`, content: 'written' }],
        ['replace_in_file', { path: 'd/secret', diff: '<<<<<<< SEARCH\nharmless\n=======\nharmless\n>>>>>>> REPLACE' }],
      ] as const) {
        const r = await runTool(tool, args as unknown as Record<string, unknown>, { workspace: ws });
        seen.push(r.output);
      }
    }
    swapper.kill('SIGKILL');
    const all = seen.join('\n');
    expect(all).not.toContain(CANARY);
    expect(all).not.toMatch(/HOME=|PATH=/);
    // A step the swap broke is told as a change of the path, never with the descriptor paths of the walk.
    expect(all).not.toContain('/proc/self/fd');
    expect(readdirSync(outside)).toEqual(['secret']);
    // The race was live: some calls landed in the real directory, some met the link and were refused.
    expect(all).toContain('harmless');
    expect(all).toMatch(/symbolic link \(d\) that leads outside/);
  }, 120_000);
});

describe('as an unprivileged user', () => {
  it('the walk through /proc/self/fd works for a worker that is not root', async () => {
    const { uid, gid } = unprivilegedTestUser();
    chownSync(ws, uid, gid);
    // Traversable by the user, keeping what the directory allowed (the run's TMPDIR is 1777: others make their directories there too).
    chmodSync(path.dirname(ws), statSync(path.dirname(ws)).mode | 0o755);
    for (const p of ['a', 'a/b', 'a/b/c', 'a/b/c/f.txt']) chownSync(path.join(ws, p), uid, gid);
    chmodSync(outside, 0o755);
    chmodSync(path.join(outside, 'secret'), 0o644);
    symlinkSync(outside, path.join(ws, 'a/out'));
    const mount = tempDirSync('agentrun-src-');
    chmodSync(mount, 0o755);
    const [file, args] = nodeAsUser({ uid, gid, mount }, 'test/helpers/beneath-probe.ts', [ws]);
    const r = await promisify(execFile)(file, args, { cwd: '/', env: { PATH: process.env.PATH, TMPDIR: tmpdir() }, encoding: 'utf8', timeout: 60_000 });
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, string>;
    expect(out).toEqual({ uid: String(uid), read: 'inside\n', out: 'refused', wrote: 'written' });
    expect(readFileSync(path.join(ws, 'a/b/c/new.txt'), 'utf8')).toBe('written');
  }, 90_000);
});
