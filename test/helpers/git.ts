// Committing a test's fixture tree as a repository of its own.
import { execFileSync } from 'node:child_process';

/** `git init` in `dir` (branch main) and commit everything in it as `message`, under a test author. */
export function commitTree(dir: string, message: string): void {
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      stdio: 'pipe',
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', message);
}
