// Run as another user (the unprivileged-worker test of test/unit/beneath.test.ts): reads and
// writes beneath a workspace through /proc/self/fd as that user. Prints a JSON line. Arg: workspace.
import { readBeneathOrNull, writeBeneath } from '../../src/workspace/beneath.js';

const ws = process.argv[2]!;
const read = (await readBeneathOrNull(ws, 'a/b/c/f.txt'))?.toString('utf8');
const out = await readBeneathOrNull(ws, 'a/out/secret').then(
  (b) => b?.toString('utf8'),
  () => 'refused',
);
await writeBeneath(ws, 'a/b/c/new.txt', 'written');
const wrote = (await readBeneathOrNull(ws, 'a/b/c/new.txt'))?.toString('utf8');
process.stdout.write(JSON.stringify({ uid: String(process.getuid?.()), read, out, wrote }) + '\n');
