// The dependency cache on a real filesystem: the key follows the lockfiles and setup commands, a
// save is restored as a copy (an edit in one workspace never reaches the cache), gc removes what
// was not used for --older-than.
import { mkdir, readFile, writeFile, utimes } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheKey, DirectoryCache, gcCaches } from '../../src/environment/cache.js';
import { cacheDirRefusal } from '../../src/environment/cache-key.js';
import { environmentPlan } from '../../src/environment/setup.js';
import { parseSettings, settingsSchema } from '../../src/extensions/settings.js';
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

    expect(await gcCaches(root, 60_000)).toEqual([]);
    const old = new Date(Date.now() - 3 * 86_400_000);
    await utimes(join(root, key, 'meta.json'), old, old);
    expect((await gcCaches(root, 86_400_000, true)).map((c) => c.key)).toEqual([key]);
    expect(existsSync(join(root, key))).toBe(true);
    expect((await gcCaches(root, 86_400_000)).map((c) => c.key)).toEqual([key]);
    expect(existsSync(join(root, key))).toBe(false);
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
    expect(environmentPlan({}, settings({ repositorySetup: false }, { setup: ['npm ci'], verify: 'npm test' }))).toEqual({ source: {} });
    expect(() => parseSettings({ setup: ['npm ci', 5] }, 'ws.json')).toThrow(/ws\.json: setup: a setup command must be a string/);
    expect(settingsSchema.parse({}).setup).toBeUndefined();
  });
});
