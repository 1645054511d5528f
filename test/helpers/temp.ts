// Temporary directories a test file makes, removed when the file ends (test/setup.ts), so the
// run leaves nothing behind (the global teardown checks: test/global-setup.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A new directory `<parent>/<prefix>XXXXXX` (parent: the run's TMPDIR), removed after the test file. */
export async function tempDir(prefix: string, parent = tmpdir()): Promise<string> {
  const dir = await mkdtemp(join(parent, prefix));
  made.push(dir);
  return dir;
}

export function tempDirSync(prefix: string, parent = tmpdir()): string {
  const dir = mkdtempSync(join(parent, prefix));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}
