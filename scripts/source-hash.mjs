// The hash of what `npm run build` compiles into dist/: the sources (src, workflows, activities,
// worker), the files it copies, and its own configuration. build.mjs records it in
// dist/build-info.json; the tests (test/helpers/dist.ts) compare it before running dist/, so they
// never run a build of other sources.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const DIRS = ['src', 'workflows', 'activities', 'worker'];
const FILES = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'examples/quickstart.yaml', 'scripts/build.mjs', 'scripts/source-hash.mjs'];

/** sha256 over the paths and contents of the build's inputs under `root`, in a fixed order. */
export function sourceHash(root) {
  const files = [...FILES];
  const walk = (dir) => {
    for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.isFile()) files.push(rel);
    }
  };
  for (const d of DIRS) walk(d);
  const hash = createHash('sha256');
  for (const rel of files.sort())
    hash
      .update(`${rel}\0`)
      .update(readFileSync(path.join(root, rel)))
      .update('\0');
  return hash.digest('hex');
}
