// `npm run build`: compile to dist/ (JavaScript and .d.ts), copy the files the code reads at run
// time, record the version and commit, and bundle the workflows once (the worker loads the bundle).
// Everything is written to a directory of its own beside dist/ and then swapped in by rename, so a
// process reading dist/ meanwhile (a test's worker, a second build) sees the old build or the new
// one whole, never a half-written or removed one.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceHash } from './source-hash.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const building = path.join(root, `dist.building-${process.pid}`);
const replaced = path.join(root, `dist.replaced-${process.pid}`);
const require = createRequire(import.meta.url);

// Of the sources as they are now, before compiling them: the tests run dist/ only when it matches.
const sources = sourceHash(root);
rmSync(building, { recursive: true, force: true });
try {
  await buildInto(building);
  rmSync(replaced, { recursive: true, force: true });
  try {
    renameSync(dist, replaced);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  renameSync(building, dist);
} finally {
  rmSync(building, { recursive: true, force: true });
  rmSync(replaced, { recursive: true, force: true });
}
console.log(`built ${pkg().name} ${pkg().version} (${gitCommit() ?? 'no git'}) into dist/`);

async function buildInto(out) {
  execFileSync(
    process.execPath,
    [path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json'), '--outDir', out],
    { stdio: 'inherit' },
  );

  // Non-TypeScript files the modules read relative to themselves.
  for (const file of ['src/ui/page.html', 'examples/quickstart.yaml']) {
    mkdirSync(path.dirname(path.join(out, file)), { recursive: true });
    cpSync(path.join(root, file), path.join(out, file));
  }
  const { bundleWorkflows } = await import(path.join(out, 'worker', 'index.js'));
  // The bundle names its modules by their path: name them as they will be, under dist/.
  const bundle = (await bundleWorkflows()).replaceAll(`./${path.basename(out)}/`, './dist/');
  writeFileSync(path.join(out, 'workflow-bundle.js'), bundle);
  // Last: the tests take dist/ as built from these sources once this file says so.
  writeFileSync(
    path.join(out, 'build-info.json'),
    JSON.stringify({ version: pkg().version, commit: gitCommit(), builtAt: new Date().toISOString(), sourceHash: sources }, null, 2) + '\n',
  );
}

function pkg() {
  return JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
}

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
