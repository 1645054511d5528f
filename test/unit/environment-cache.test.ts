// The dependency cache on a real filesystem: the key follows the lockfiles and setup commands, a
// save is restored as a copy (an edit in one workspace never reaches the cache), gc removes what
// was not used for --older-than.
import { mkdir, readdir, readFile, rename, rm, symlink, writeFile, utimes } from 'node:fs/promises';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheKey, DirectoryCache, entriesOf, gcCaches, newDirectories, scanWorkspace, untrackedIn } from '../../src/environment/cache.js';
import { createCheckpoint, privateGitDir } from '../../src/workspace/checkpoint.js';
import { cacheDirRefusal } from '../../src/workspace/setup-created.js';
import { environmentPlan, runSetup } from '../../src/environment/setup.js';
import { diskLimitsFromEnv } from '../../src/environment/disk.js';
import { runSandboxed } from '../../src/sandbox/index.js';
import { parseSettings, settingsSchema } from '../../src/extensions/settings.js';
import type { SandboxSettings } from '../../src/sandbox/policy.js';
import { tempDir } from '../helpers/temp.js';

async function project(lock: string): Promise<string> {
  const dir = await tempDir('agentrun-cache-ws-');
  await writeFile(join(dir, 'package-lock.json'), lock);
  await mkdir(join(dir, 'node_modules', 'dep'), { recursive: true });
  await writeFile(join(dir, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
  return dir;
}

describe('the dependency cache', () => {
  it('keys on the repository, lockfiles and commands', async () => {
    const a = await project('{"v":1}');
    const b = await project('{"v":1}');
    const c = await project('{"v":2}');
    const k = (ws: string, commands = ['npm ci']) => cacheKey({ repo: 'git@example.com:o/r.git', workspace: ws, commands }).then((r) => r.key);
    expect(await k(a)).toBe(await k(b));
    expect(await k(a)).not.toBe(await k(c));
    expect(await k(a)).not.toBe(await k(a, ['npm install']));
    expect((await cacheKey({ repo: 'x', workspace: a, commands: [] })).files).toHaveProperty('package-lock.json');
  });

  it('restores a copy, and gc removes caches unused for --older-than', async () => {
    const root = await tempDir('agentrun-cache-root-');
    const cache = new DirectoryCache(root);
    const src = await project('{}');
    const { key } = await cacheKey({ repo: src, workspace: src, commands: ['npm ci'] });
    const saved = await cache.put(key, src, { key, repo: src, commands: ['npm ci'], files: {} }, ['node_modules', '.venv']);
    expect(saved).toMatchObject({ dirs: ['node_modules'], entries: 3 });
    const dest = await tempDir('agentrun-cache-dest-');
    expect((await cache.get(key, dest))?.dirs).toEqual(['node_modules']);
    await writeFile(join(dest, 'node_modules', 'dep', 'index.js'), 'changed\n');
    expect(await readFile(join(root, key, 'dirs', 'node_modules', 'dep', 'index.js'), 'utf8')).toBe('module.exports = 1;\n');
    expect(await cache.get('0'.repeat(32), dest)).toBeUndefined();

    expect((await gcCaches(root, { olderThanMs: 60_000 })).removed).toEqual([]);
    const old = new Date(Date.now() - 3 * 86_400_000);
    await utimes(join(root, key, 'meta.json'), old, old);
    expect((await gcCaches(root, { olderThanMs: 86_400_000, dryRun: true })).removed.map((c) => c.key)).toEqual([key]);
    expect(existsSync(join(root, key))).toBe(true);
    expect((await gcCaches(root, { olderThanMs: 86_400_000 })).removed.map((c) => c.key)).toEqual([key]);
    expect(existsSync(join(root, key))).toBe(false);
  });

  it('keys on the tenant too', async () => {
    const a = await project('{"v":1}');
    const k = (tenant?: string) => cacheKey({ repo: 'r', workspace: a, commands: ['npm ci'], ...(tenant ? { tenant } : {}) }).then((r) => r.key);
    expect(await k('acme')).not.toBe(await k('globex'));
    expect(await k()).toBe(await k('default'));
  });

  it('never saves or restores through a link, nor a directory outside the workspace', async () => {
    const root = await tempDir('agentrun-cache-root-');
    const cache = new DirectoryCache(root);
    const ws = await project('{}');
    const outside = await tempDir('agentrun-cache-outside-');
    await mkdir(join(outside, 'secret'), { recursive: true });
    await writeFile(join(outside, 'secret', 'key'), 'CANARY-OUTSIDE');
    await symlink(outside, join(ws, 's'));
    const meta = { key: 'cd'.repeat(16), repo: ws, commands: [], files: {} };
    await expect(cache.put('cd'.repeat(16), ws, meta, ['../x'])).rejects.toThrow(/outside the workspace/);
    await expect(cache.put('cd'.repeat(16), ws, meta, ['/etc'])).rejects.toThrow(/relative to the workspace/);
    expect(await cache.put('cd'.repeat(16), ws, meta, ['s/secret'])).toBeUndefined();
    const saved = await cache.put('cd'.repeat(16), ws, meta, ['s/secret', 'node_modules']);
    expect(saved?.dirs).toEqual(['node_modules']);
    expect(spawnSync('grep', ['-rl', 'CANARY-OUTSIDE', root], { encoding: 'utf8' }).stdout).toBe('');
    // A restore (of an entry a shared volume could hold) whose directory leads through the workspace's link: refused, nothing written outside.
    const forged = join(root, 'ef'.repeat(16));
    await mkdir(join(forged, 'dirs', 's', 'secret'), { recursive: true });
    await writeFile(join(forged, 'dirs', 's', 'secret', 'planted'), 'x');
    await writeFile(join(forged, 'meta.json'), JSON.stringify({ ...meta, dirs: ['s/secret'] }));
    await expect(cache.get('ef'.repeat(16), ws)).rejects.toThrow(/symbolic link: not restored/);
    expect(existsSync(join(outside, 'secret', 'planted'))).toBe(false);
    expect(await readFile(join(outside, 'secret', 'key'), 'utf8')).toBe('CANARY-OUTSIDE');
    await writeFile(join(forged, 'meta.json'), JSON.stringify({ ...meta, dirs: ['../escape'] }));
    await expect(cache.get('ef'.repeat(16), ws)).rejects.toThrow(/outside the workspace/);
  });

  it('the same verify passes after a cold and a cached setup: a venv console script naming its workspace, node_modules/.bin shims', async () => {
    const settings: SandboxSettings = { policy: 'workspace-write', network: 'off', env: [] };
    const cache = new DirectoryCache(await tempDir('agentrun-cache-root-'), settings);
    // A console script as pip writes it: its shebang names the interpreter by the workspace's absolute path.
    const commands = [
      'python3 -m venv --without-pip .venv',
      `printf '#!%s/.venv/bin/python\\nimport sys\\nprint("venv", sys.prefix)\\n' "$PWD" > .venv/bin/fixture-check && chmod +x .venv/bin/fixture-check`,
      "mkdir -p node_modules/tool node_modules/.bin && printf '#!/bin/sh\\necho tool ok\\n' > node_modules/tool/cli.sh && chmod +x node_modules/tool/cli.sh && ln -s ../tool/cli.sh node_modules/.bin/tool",
    ];
    const verify =
      '.venv/bin/fixture-check && node_modules/.bin/tool && . .venv/bin/activate && echo "active $VIRTUAL_ENV" && python -c "import sys; print(sys.prefix)"';
    const job = async () => {
      const ws = realpathSync(await tempDir('agentrun-cache-venv-'));
      const setup = await runSetup({ repo: 'venv-fixture', workspace: ws, commands, settings, timeoutMs: 60_000, cache });
      expect(setup, setup.tail).toMatchObject({ ok: true });
      const run = await runSandboxed({ command: verify, workspace: ws, settings, timeoutSec: 60 });
      return { ws, cached: setup.cached, run };
    };
    const cold = await job();
    const warm = await job();
    expect([cold.cached, warm.cached]).toEqual([false, true]);
    for (const { run } of [cold, warm]) {
      expect(run.exitCode, run.tail).toBe(0);
      // Both jobs see their workspace at the sandbox's fixed path: what setup wrote there holds for the next.
      expect(run.tail).toContain('venv /workspace/.venv\n');
      expect(run.tail).toContain('tool ok');
      expect(run.tail).toContain('active /workspace/.venv\n');
    }
    expect(await readFile(join(warm.ws, '.venv', 'pyvenv.cfg'), 'utf8')).not.toContain(cold.ws);
    expect(execFileSync('readlink', [join(warm.ws, 'node_modules', '.bin', 'tool')], { encoding: 'utf8' }).trim()).toBe('../tool/cli.sh');
    // The entry holds the paths as setup wrote them: nothing moved, nothing rewritten.
    const [entry] = (await readdir(cache.root)).filter((n) => !n.startsWith('.'));
    expect(await readFile(join(cache.root, entry!, 'dirs', '.venv', 'bin', 'fixture-check'), 'utf8')).toContain('#!/workspace/.venv/bin/python');
    expect(JSON.parse(await readFile(join(cache.root, entry!, 'meta.json'), 'utf8'))).toMatchObject({ workspace: '/workspace' });
  });

  it('maintenance runs after a cold setup and after a hit, so both jobs get what the cache does not hold; a failing one fails setup', async () => {
    const settings: SandboxSettings = { policy: 'workspace-write', network: 'off', env: [] };
    const cache = new DirectoryCache(await tempDir('agentrun-cache-root-'), settings);
    const commands = ['mkdir -p node_modules/dep && echo "dep $(date +%N)" > node_modules/dep/stamp'];
    const maintenance = ['mkdir -p generated && cat messages.po | tr a-z A-Z > generated/messages.mo'];
    const job = async (more: Partial<Parameters<typeof runSetup>[0]> = {}) => {
      const ws = realpathSync(await tempDir('agentrun-cache-maint-'));
      await writeFile(join(ws, 'messages.po'), 'hello\n');
      const setup = await runSetup({ repo: 'maint-fixture', workspace: ws, commands, maintenance, settings, timeoutMs: 60_000, cache, ...more });
      return { ws, setup };
    };
    const cold = await job();
    const warm = await job();
    expect([cold.setup, warm.setup]).toMatchObject([
      { ok: true, cached: false, maintenance: 1 },
      { ok: true, cached: true, maintenance: 1 },
    ]);
    for (const { ws } of [cold, warm]) expect(await readFile(join(ws, 'generated', 'messages.mo'), 'utf8')).toBe('HELLO\n');
    // The cached directory is the cold job's own copy.
    expect(await readFile(join(warm.ws, 'node_modules', 'dep', 'stamp'), 'utf8')).toBe(await readFile(join(cold.ws, 'node_modules', 'dep', 'stamp'), 'utf8'));
    // Without a cache (--no-cache) setup runs in full.
    expect((await job({ cache: undefined })).setup).toMatchObject({ ok: true, cached: false });
    const failed = await job({ maintenance: ['true', 'exit 4'] });
    expect(failed.setup).toMatchObject({ ok: false, cached: true, exitCode: 4, reason: 'setup failed (exit 4) at maintenance command 2 of 2' });
  });

  it('keys on what setup reads besides lockfiles: setup.cfg, setup.py, a pinned toolchain version', async () => {
    const ws = await tempDir('agentrun-cache-keyfiles-');
    const k = () => cacheKey({ repo: 'r', workspace: ws, commands: ['pip install -e .'] });
    const bare = await k();
    await writeFile(join(ws, 'setup.cfg'), '[metadata]\nname = a\n');
    const cfg = await k();
    await writeFile(join(ws, '.python-version'), '3.11\n');
    const pinned = await k();
    expect(new Set([bare.key, cfg.key, pinned.key]).size).toBe(3);
    expect(Object.keys(pinned.files).sort()).toEqual(['.python-version', 'setup.cfg']);
  });

  it('keeps the caches under a size limit, the least recently used out first', async () => {
    const root = await tempDir('agentrun-cache-lru-');
    const cache = new DirectoryCache(root);
    const keys: string[] = [];
    for (const i of [0, 1, 2]) {
      const ws = await project(`{"v":${i}}`);
      await writeFile(join(ws, 'node_modules', 'dep', 'blob'), 'x'.repeat(10_000));
      const { key } = await cacheKey({ repo: 'lru', workspace: ws, commands: [] });
      expect(await cache.put(key, ws, { key, repo: 'lru', commands: [], files: {} }, ['node_modules'])).toBeDefined();
      // Last use: the first oldest, the second restored most recently.
      await utimes(join(root, key, 'meta.json'), new Date(Date.now() - (3 - i) * 60_000), new Date(Date.now() - (3 - i) * 60_000));
      keys.push(key);
    }
    await cache.get(keys[1]!, await tempDir('agentrun-cache-lru-ws-'));
    const dry = await gcCaches(root, { maxBytes: 25_000, dryRun: true });
    expect(dry.removed.map((e) => e.key)).toEqual([keys[0]]);
    const done = await gcCaches(root, { maxBytes: 12_000 });
    expect(done.removed.map((e) => e.key).sort()).toEqual([keys[0], keys[2]].sort());
    expect((await readdir(root)).filter((n) => !n.startsWith('.'))).toEqual([keys[1]]);
    expect(done.bytes).toBeLessThanOrEqual(12_000);
  });

  it('reads the disk limits of a worker, refusing a bad size in one line', () => {
    expect(diskLimitsFromEnv({ AGENTRUN_CACHE_MAX_SIZE: '1.5G', AGENTRUN_KEEP_WORKSPACE_FOR: '2d', AGENTRUN_GC_INTERVAL: '0s' })).toEqual({
      cacheMaxBytes: 1.5 * 1024 ** 3,
      keepForMs: 2 * 86_400_000,
      intervalMs: 0,
    });
    expect(diskLimitsFromEnv({}).cacheMaxBytes).toBe(20 * 1024 ** 3);
    expect(() => diskLimitsFromEnv({ AGENTRUN_CACHE_MAX_SIZE: 'lots' })).toThrow(/^AGENTRUN_CACHE_MAX_SIZE: expected a size such as 20G/);
  });

  it('finds the directories setup made as whole ones, never one that replaced a file or link of the tree', async () => {
    const ws = await tempDir('agentrun-cache-newdirs-');
    await mkdir(join(ws, 'src', 'pkg'), { recursive: true });
    await symlink('elsewhere', join(ws, 'lib'));
    await writeFile(join(ws, 'notes'), 'x');
    const before = await entriesOf(ws);
    await mkdir(join(ws, 'src', 'pkg.egg-info', 'deep'), { recursive: true });
    await mkdir(join(ws, 'build', 'lib'), { recursive: true });
    await rm(join(ws, 'lib'));
    await mkdir(join(ws, 'lib', 'node_modules'), { recursive: true });
    await rm(join(ws, 'notes'));
    await mkdir(join(ws, 'notes'));
    expect(newDirectories(before, await entriesOf(ws))).toEqual(['build', 'src/pkg.egg-info']);
  });

  it('refuses cache directories outside the workspace', () => {
    expect(cacheDirRefusal('node_modules')).toBeUndefined();
    expect(cacheDirRefusal('packages/a/node_modules')).toBeUndefined();
    expect(cacheDirRefusal('../x')).toMatch(/outside the workspace/);
    expect(cacheDirRefusal('.')).toMatch(/workspace itself/);
    expect(cacheDirRefusal('.git')).toMatch(/\.git/);
  });
});

describe('where setup and verify come from', () => {
  const settings = (operator: object, workspace: object) => ({ operator: parseSettings(operator, 'op.json'), workspace: parseSettings(workspace, 'ws.json') });
  it('the flag wins; the repository next, unless the operator forbids it', () => {
    expect(environmentPlan({ setup: ['make deps'] }, settings({}, { setup: 'npm ci', verify: 'npm test' }))).toMatchObject({
      setup: ['make deps'],
      verify: 'npm test',
      source: { setup: 'flag', verify: 'repository' },
    });
    expect(environmentPlan({}, settings({ repositorySetup: false }, { setup: ['npm ci'], verify: 'npm test' }))).toEqual({ setupNetwork: 'on', source: {} });
    expect(() => parseSettings({ setup: ['npm ci', 5] }, 'ws.json')).toThrow(/ws\.json: setup: a setup command must be a string/);
    expect(settingsSchema.parse({}).setup).toBeUndefined();
  });

  it("setup's network: the flag, the repository's, the operator's, else on; a bad one is refused in one line", () => {
    const repo = { setup: 'npm ci', setupNetwork: 'allow:registry.npmjs.org' };
    expect(environmentPlan({}, settings({}, {})).setupNetwork).toBe('on');
    expect(environmentPlan({}, settings({ setupNetwork: 'off' }, repo)).setupNetwork).toBe('allow:registry.npmjs.org');
    expect(environmentPlan({ setupNetwork: 'allow:mirror.example.com' }, settings({}, repo)).setupNetwork).toBe('allow:mirror.example.com');
    expect(environmentPlan({}, settings({ repositorySetup: false, setupNetwork: 'off' }, repo)).setupNetwork).toBe('off');
    expect(() => parseSettings({ setupNetwork: 'allow:10.0.0.1' }, 'ws.json')).toThrow(/ws\.json: setupNetwork: allow:10\.0\.0\.1: private \(RFC 1918\)/);
    expect(() => parseSettings({ setupNetwork: 'sometimes' }, 'ws.json')).toThrow(/setupNetwork: "sometimes": expected off, on, or allow:HOST/);
  });
});

describe('nested dependency directories (monorepos)', () => {
  async function monorepo(): Promise<string> {
    const dir = await tempDir('agentrun-cache-mono-');
    for (const [file, text] of Object.entries({
      'package-lock.json': '{"root":1}',
      'packages/a/package-lock.json': '{"a":1}',
      'packages/a/node_modules/dep/index.js': 'a',
      'packages/a/node_modules/dep/node_modules/inner/index.js': 'inner',
      'packages/b/sub/deep/node_modules/x/index.js': 'too deep: packages/b/sub/deep/node_modules is level 5',
      'apps/web/node_modules/y/index.js': 'y',
      'vendored/node_modules/z/index.js': 'tracked by git',
      'node_modules/top/index.js': 'top',
    })) {
      await mkdir(join(dir, file, '..'), { recursive: true });
      await writeFile(join(dir, file), text);
    }
    return dir;
  }

  it('finds node_modules below the root (not followed through links, not too deep, not in the starting checkpoint), and keys on the packages’ lockfiles', async () => {
    const dir = await monorepo();
    const outside = await tempDir('agentrun-cache-outside-');
    await mkdir(join(outside, 'pkg', 'node_modules'), { recursive: true });
    await symlink(outside, join(dir, 'linked'));
    // The starting tree (the private checkpoint repository's turn 0) holds the vendored tree only;
    // the workspace's own .git says the opposite and is never asked.
    const home = await tempDir('agentrun-cache-home-');
    const hidden = ['packages', 'apps', 'node_modules'];
    for (const d of hidden) await rename(join(dir, d), join(outside, `aside-${d}`));
    const turnZero = (await createCheckpoint(dir, 'c-tracked', 0, home))!;
    for (const d of hidden) await rename(join(outside, `aside-${d}`), join(dir, d));
    execFileSync('git', ['init', '-q', dir]);
    execFileSync('git', ['-C', dir, 'add', '-f', 'apps/web/node_modules/y/index.js']);
    const scan = await scanWorkspace(dir);
    expect(scan.nested).toEqual(['apps/web/node_modules', 'packages/a/node_modules', 'vendored/node_modules']);
    expect(await untrackedIn({ gitDir: privateGitDir(home, dir), commit: turnZero.commit }, scan.nested)).toEqual([
      'apps/web/node_modules',
      'packages/a/node_modules',
    ]);
    expect(scan.keyFiles).toEqual(['package-lock.json', 'packages/a/package-lock.json']);

    const k = () => cacheKey({ repo: 'r', workspace: dir, commands: ['npm ci'] });
    const before = await k();
    expect(Object.keys(before.files)).toEqual(['package-lock.json', 'packages/a/package-lock.json']);
    await writeFile(join(dir, 'packages/a/package-lock.json'), '{"a":2}');
    expect((await k()).key).not.toBe(before.key);
  });

  it('saves and restores them with the top-level ones', async () => {
    const dir = await monorepo();
    const root = await tempDir('agentrun-cache-root-');
    const cache = new DirectoryCache(root);
    const dirs = ['node_modules', ...(await scanWorkspace(dir)).nested];
    const saved = await cache.put('ab'.repeat(16), dir, { key: 'ab'.repeat(16), repo: dir, commands: [], files: {} }, dirs);
    expect(saved?.dirs).toEqual(['node_modules', 'apps/web/node_modules', 'packages/a/node_modules', 'vendored/node_modules']);
    const dest = await tempDir('agentrun-cache-dest-');
    await cache.get('ab'.repeat(16), dest);
    expect(await readFile(join(dest, 'packages/a/node_modules/dep/node_modules/inner/index.js'), 'utf8')).toBe('inner');
    expect(await readFile(join(dest, 'apps/web/node_modules/y/index.js'), 'utf8')).toBe('y');
  });
});
