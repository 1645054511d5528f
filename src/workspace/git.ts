// git for repository jobs. Runs with the worker's own environment, so its credential helper,
// SSH agent or GIT_ASKPASS apply; nothing about credentials passes through agentrun.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

const ENV = {
  GIT_AUTHOR_NAME: 'agentrun',
  GIT_AUTHOR_EMAIL: 'agentrun@localhost',
  GIT_COMMITTER_NAME: 'agentrun',
  GIT_COMMITTER_EMAIL: 'agentrun@localhost',
  // Never wait for a password on a terminal nobody watches.
  GIT_TERMINAL_PROMPT: '0',
};

export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly stderr: string,
  ) {
    super(gitMessage(stderr) || `git ${args[0]} failed`);
  }
}

/** git's own explanation, without progress noise, on one line. */
function gitMessage(stderr: string): string {
  return stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^(hint:|Cloning into|remote: (Counting|Compressing|Enumerating|Total))/.test(l))
    .join(' ')
    .slice(0, 500);
}

export async function git(cwd: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    const { stdout } = await exec('git', args, { cwd, env: { ...process.env, ...ENV, ...extraEnv }, maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new GitError(args, e.stderr ?? e.message);
  }
}

export async function tryGit(cwd: string, args: string[]): Promise<string | undefined> {
  try {
    return await git(cwd, args);
  } catch {
    return undefined;
  }
}
