// The one check of identifiers (src/ids.ts) and of repository sources (src/workspace/sources.ts):
// what a caller chooses never names a directory other than its own, and a ref name git refuses is
// refused before any turn runs. The branch rules are held against git itself on generated names.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { branchTemplateRefusal, childPath, fileNameOf, hostIdRefusal, idRefusal, refNameRefusal, runIdentifiersRefusal, tenantRefusal } from '../../src/ids.js';
import { runConfigSchema } from '../../src/config.js';
import { workerPlaces } from '../../src/workspace/guard.js';
import { repositorySourceRefusal, type RepositorySources } from '../../src/workspace/sources.js';
import { workspaceDir } from '../../src/workspace/host.js';

describe('identifiers', () => {
  it('a conversation id is never `.`, `..`, a path, empty or too long; generated ids, batch jobs, scheduled runs and sub-agents pass', () => {
    for (const bad of ['.', '..', '', '../x', '../../../x', 'a/b', '-rf', '.hidden', 'a..b', 'x.', 'x.lock', 'a b', 'a\nb', 'é', 'a@b', 'x'.repeat(241)])
      expect(idRefusal('conversation id', bad), JSON.stringify(bad)).toBeDefined();
    for (const good of [
      'conv-20261128235301-a1b2c3',
      'conv-20261128235301-a1b2c3.sub-1.sub-2',
      'batch-20261128-1',
      'nightly-2026-11-23T02:00:00Z',
      'my_sched-2026-11-23T02:00:00Z-3.sub-1',
      'x'.repeat(240),
    ])
      expect(idRefusal('conversation id', good), good).toBeUndefined();
    expect(idRefusal('conversation id', '..')).toMatch(/^conversation id "\.\." is refused: a conversation id is 1-240 letters/);
    expect(idRefusal('batch name', 'x'.repeat(161))).toMatch(/is 161 characters long/);
  });

  it('no two valid ids share a directory or a ref: `_` never stands where a scheduled time writes its `:`', () => {
    expect(fileNameOf('nightly-2026-11-23T02:00:00Z')).toBe('nightly-2026-11-23T02_00_00Z');
    for (const twin of ['nightly-2026-11-23T02_00_00Z', 'nightly-2026-11-23T02:00_00Z', 'nightly-2026-11-23T02_00:00Z'])
      expect(idRefusal('conversation id', twin), twin).toMatch(/':' stands only in a scheduled run's time/);
    expect(idRefusal('conversation id', 'a:b')).toMatch(/':' stands only/);
  });

  it('every id becomes a direct child of its directory, or nothing', () => {
    expect(childPath('/w', 'conv-1')).toBe('/w/conv-1');
    for (const bad of ['.', '..', '', 'a/b', 'a\0b']) expect(() => childPath('/w', bad), JSON.stringify(bad)).toThrow(/is not a name inside \/w/);
    expect(() => childPath('relative', 'x')).toThrow(/not an absolute directory/);
    // Whatever id reaches it (an older client, a hand-made start), the workspace is beneath the workspaces directory.
    expect(() => workspaceDir('/home/x', '.')).toThrow(/refused before anything there is removed/);
    expect(() => workspaceDir('/home/x', '..')).toThrow(/refused before anything there is removed/);
    expect(path.dirname(workspaceDir('/home/x', '../../../x'))).toBe(path.resolve(process.env.AGENTRUN_WORKSPACES?.trim() || '/home/x/workspaces'));
  });

  it('host ids are DNS labels', () => {
    expect(hostIdRefusal('worker-0.pods')).toBeUndefined();
    for (const bad of ['..', '.', 'a/b', '-x', 'x'.repeat(64), 'a_b']) expect(hostIdRefusal(bad), bad).toBeDefined();
  });

  it("tenants: a safe alphabet, at most 64, one line; the run config and the worker's first step refuse the same", () => {
    for (const ok of ['default', 'team-a', 'acme.corp', 'ops@acme', 'org:team', 'x'.repeat(64)]) expect(tenantRefusal(ok), ok).toBeUndefined();
    for (const bad of ['', '.', '..', 'a..b', '-x', 'a/b', 'a b', 'a\nb', 'x'.repeat(65), "a'b", 'ü']) {
      const why = tenantRefusal(bad);
      expect(why, bad).toMatch(/^tenant .* is refused: a tenant is 1-64 letters/);
      expect(why!.split('\n')).toHaveLength(1);
      expect(runIdentifiersRefusal({ tenant: bad })).toBe(why);
      expect(runConfigSchema.safeParse({ model: 'x', tenant: bad }).error?.issues[0]?.message).toBe(why);
    }
  });

  it('branch and ref names follow git check-ref-format: generated names agree with git itself', () => {
    // Names made of the characters the rules are about; a fixed seed, so a failure repeats.
    const alphabet = ['a', 'b', '1', '.', '/', '-', '@', '{', '~', '^', ':', '?', '*', '[', '\\', ' ', 'lock', '\t', '_'];
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const names: string[] = [];
    for (let i = 0; i < 600; i++) names.push(Array.from({ length: 1 + rand(7) }, () => alphabet[rand(alphabet.length)]).join(''));
    let agreed = 0;
    for (const name of names) {
      const git = spawnSync('git', ['check-ref-format', `refs/heads/${name}`]).status === 0;
      const ours = refNameRefusal(name) === undefined;
      // Ours refuses a little more (a leading '-', lone '@'): never less.
      if (ours) expect(git, `${JSON.stringify(name)} passed ours, git refuses it`).toBe(true);
      else if (!name.startsWith('-') && name !== '@') expect(git, `${JSON.stringify(name)} refused by ours, git takes it`).toBe(false);
      if (ours === git) agreed++;
    }
    expect(agreed).toBeGreaterThan(550);
    expect(refNameRefusal('--upload-pack=touch /tmp/pwn')).toMatch(/starts with '-'/);
    expect(refNameRefusal('a/../../b')).toMatch(/'\.\.'/);
    expect(branchTemplateRefusal('nightly/{{date}}/{{id}}')).toBeUndefined();
    expect(branchTemplateRefusal('nightly/{{date}}..x')).toMatch(/^branch "nightly\/\{\{date\}\}\.\.x" is not a valid git branch name/);
  });
});

describe('repository sources', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'agentrun-sources-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const home = path.join(root, 'home');
  const allowed = path.join(root, 'repos');
  mkdirSync(path.join(home, 'checkpoints', 'abc.git'), { recursive: true });
  mkdirSync(path.join(allowed, 'app'), { recursive: true });
  execFileSync('git', ['init', '-q', path.join(allowed, 'app')]);
  // A link beneath the allowed directory that leads into AGENTRUN_HOME.
  symlinkSync(path.join(home, 'checkpoints'), path.join(allowed, 'sneaky'));
  const places = workerPlaces(home);
  const sources: RepositorySources = { schemes: ['https', 'ssh', 'git'], dirs: [allowed] };

  it('remote URLs by scheme, and by host when the operator names hosts', () => {
    for (const ok of ['https://github.com/o/r.git', 'ssh://git@h/r.git', 'git@github.com:o/r.git', 'git://h/r'])
      expect(repositorySourceRefusal(ok, sources, places), ok).toBeUndefined();
    expect(repositorySourceRefusal('http://h/r.git', sources, places)).toMatch(/clones only https, ssh, git URLs \(AGENTRUN_REPO_SCHEMES\)/);
    expect(repositorySourceRefusal('ext::sh -c touch% /tmp/pwn', sources, places)).toMatch(/remote helpers/);
    expect(repositorySourceRefusal('-uhttps://h/r', sources, places)).toMatch(/starts with '-'/);
    const hosts = { ...sources, hosts: ['github.com'] };
    expect(repositorySourceRefusal('https://github.com/o/r.git', hosts, places)).toBeUndefined();
    expect(repositorySourceRefusal('git@evil.example:o/r.git', hosts, places)).toMatch(/host evil\.example is not one this worker clones from/);
    expect(repositorySourceRefusal('https://GitHub.com.evil.example/r', hosts, places)).toMatch(/is not one this worker clones from/);
  });

  it("local paths and file:// only beneath an operator's directory, never in AGENTRUN_HOME, through a link or not", () => {
    expect(repositorySourceRefusal(path.join(allowed, 'app'), sources, places)).toBeUndefined();
    expect(repositorySourceRefusal(`file://${path.join(allowed, 'app')}`, sources, places)).toBeUndefined();
    const checkpoint = path.join(home, 'checkpoints', 'abc.git');
    expect(repositorySourceRefusal(`file://${checkpoint}`, sources, places)).toMatch(/is inside AGENTRUN_HOME/);
    expect(repositorySourceRefusal(checkpoint, { ...sources, dirs: [root] }, places)).toMatch(/is inside AGENTRUN_HOME/);
    expect(repositorySourceRefusal(path.join(allowed, 'sneaky', 'abc.git'), sources, places)).toMatch(/is inside AGENTRUN_HOME/);
    expect(repositorySourceRefusal(`file://${root}/other`, sources, places)).toMatch(/must lie beneath a directory of AGENTRUN_REPO_DIRS/);
    expect(repositorySourceRefusal(path.join(allowed, 'app'), { ...sources, dirs: [] }, places)).toMatch(/clones no local paths/);
    expect(repositorySourceRefusal('relative/app', sources, places)).toMatch(/absolute path/);
  });
});
