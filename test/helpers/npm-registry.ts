// A small npm registry on loopback, from tarballs built here: packuments and tarballs, nothing
// else. Tests and bench/environment.ts install from it instead of the public registry; the egress
// proxy lets commands reach it through its test-only AGENTRUN_PROXY_ALLOW_LOOPBACK_PORTS.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { commitTree } from './git.js';
import { tempDirSync } from './temp.js';

export interface FixturePackage {
  name: string;
  version?: string;
  /** index.js's source (default: exports its name). */
  main?: string;
  dependencies?: Record<string, string>;
  /** A real package's tarball (from `npm pack NAME`): served as it is, its manifest read from it. */
  tarball?: string;
}

export interface NpmRegistry {
  url: string;
  port: number;
  /** Tarball downloads served so far (an install that ran, not a cache restore). */
  tarballRequests(): number;
  close(): Promise<void>;
}

/** Serve `packages` (each built into an npm tarball) on 127.0.0.1. */
export async function startNpmRegistry(packages: FixturePackage[]): Promise<NpmRegistry> {
  const dir = tempDirSync('agentrun-npm-');
  const tarballs = new Map<string, Buffer>();
  const built: { p: FixturePackage; version: string; file: string; data: Buffer; manifest?: Record<string, unknown> }[] = [];
  for (const p of packages) {
    if (p.tarball) {
      const manifest = JSON.parse(execFileSync('tar', ['xzf', p.tarball, '-O', 'package/package.json'], { encoding: 'utf8' })) as Record<string, unknown>;
      const version = String(manifest.version);
      const file = `${p.name}-${version}.tgz`;
      const data = readFileSync(p.tarball);
      tarballs.set(file, data);
      built.push({ p, version, file, data, manifest });
      continue;
    }
    const version = p.version ?? '1.0.0';
    const src = join(dir, `${p.name}-${version}`, 'package');
    mkdirSync(src, { recursive: true });
    writeFileSync(join(src, 'package.json'), JSON.stringify({ name: p.name, version, main: 'index.js', dependencies: p.dependencies ?? {} }));
    writeFileSync(join(src, 'index.js'), p.main ?? `module.exports = ${JSON.stringify(p.name)};\n`);
    const file = `${p.name}-${version}.tgz`;
    execFileSync('tar', ['czf', join(dir, file), '-C', join(src, '..'), 'package']);
    const data = readFileSync(join(dir, file));
    tarballs.set(file, data);
    built.push({ p, version, file, data });
  }
  let requests = 0;
  let base = '';
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!).replace(/^\//, '');
    if (path.startsWith('-/tarballs/')) {
      const data = tarballs.get(path.slice('-/tarballs/'.length));
      if (!data) return void res.writeHead(404).end();
      requests++;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length });
      return void res.end(data);
    }
    const versions = built.filter((b) => b.p.name === path);
    if (!versions.length) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    const packument = {
      name: path,
      'dist-tags': { latest: versions.at(-1)!.version },
      versions: Object.fromEntries(
        versions.map((b) => [
          b.version,
          {
            ...(b.manifest ?? { main: 'index.js', dependencies: b.p.dependencies ?? {} }),
            name: b.p.name,
            version: b.version,
            dist: {
              tarball: `${base}/-/tarballs/${b.file}`,
              shasum: createHash('sha1').update(b.data).digest('hex'),
              integrity: `sha512-${createHash('sha512').update(b.data).digest('base64')}`,
            },
          },
        ]),
      ),
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(packument));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  return {
    url: base,
    port,
    tarballRequests: () => requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * A project directory depending on `deps` (from `registry`), with its package-lock.json made by
 * `npm install` against the registry (then node_modules removed): what a repository commits.
 */
export async function npmProject(dir: string, registry: NpmRegistry, deps: string[], files: Record<string, string> = {}): Promise<void> {
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify(
      {
        name: 'fixture-project',
        version: '1.0.0',
        private: true,
        scripts: { test: 'node test.js' },
        devDependencies: Object.fromEntries(deps.map((d) => [d, '1.0.0'])),
      },
      null,
      2,
    ),
  );
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\n');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  // Asynchronous: the registry answers from this same process.
  await promisify(execFile)('npm', ['install', '--no-audit', '--no-fund', '--registry', registry.url, '--cache', tempDirSync('agentrun-npm-cache-')], {
    cwd: dir,
  });
  execFileSync('rm', ['-rf', join(dir, 'node_modules')]);
}

/** The registry the environment tests install from: a dependency the fixture's test needs, and another. */
export function startFixtureRegistry(): Promise<NpmRegistry> {
  return startNpmRegistry([{ name: 'left-pad-fixture', main: 'module.exports = (s, n) => String(s).padStart(n);\n' }, { name: 'tiny-dep' }]);
}

/** A committed npm project whose test needs a devDependency from `registry`; `more` adds to it before the commit. */
export async function npmFixtureRepo(registry: NpmRegistry, more?: (dir: string) => Promise<void>): Promise<string> {
  const dir = tempDirSync('agentrun-npm-repo-');
  await npmProject(dir, registry, ['left-pad-fixture', 'tiny-dep'], {
    'test.js':
      "const pad = require('left-pad-fixture');\nif (pad('x', 3) !== '  x') { console.error('pad is wrong'); process.exit(1); }\nconsole.log('fixture tests passed');\n",
  });
  await more?.(dir);
  commitTree(dir, 'fixture');
  // A pushed result branch lands here: let the non-bare repository take pushes to other branches.
  execFileSync('git', ['config', 'receive.denyCurrentBranch', 'ignore'], { cwd: dir });
  return dir;
}
