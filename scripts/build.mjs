// `npm run build`: compile to dist/ (JavaScript and .d.ts), copy the files the code reads at run
// time, record the version and commit, and bundle the workflows once (the worker loads the bundle).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceHash } from './source-hash.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const require = createRequire(import.meta.url);

// Of the sources as they are now, before compiling them: the tests run dist/ only when it matches.
const sources = sourceHash(root);
rmSync(dist, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')],
  {
    stdio: 'inherit',
  },
);

// Non-TypeScript files the modules read relative to themselves.
for (const file of ['src/ui/page.html', 'examples/quickstart.yaml']) {
  mkdirSync(path.dirname(path.join(dist, file)), { recursive: true });
  cpSync(path.join(root, file), path.join(dist, file));
}

const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
writeFileSync(
  path.join(dist, 'build-info.json'),
  JSON.stringify({ version: pkg.version, commit: gitCommit(), builtAt: new Date().toISOString(), sourceHash: sources }, null, 2) + '\n',
);

const { bundleWorkflows } = await import(path.join(dist, 'worker', 'index.js'));
writeFileSync(path.join(dist, 'workflow-bundle.js'), await bundleWorkflows());
console.log(`built ${pkg.name} ${pkg.version} (${gitCommit() ?? 'no git'}) into dist/`);

/** The commit of the checkout, with `-dirty` when files differ from it; undefined outside git. */
function gitCommit() {
  if (process.env.AGENTRUN_COMMIT) return process.env.AGENTRUN_COMMIT;
  try {
    const sha = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return dirty ? `${sha}-dirty` : sha;
  } catch {
    return undefined;
  }
}
