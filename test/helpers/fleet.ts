// What the fleet tests share: waiting for a condition, a bare remote, and the tool markup the scripted model answers with.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tempRepo } from './harness.js';
import { tempDir } from './temp.js';

/**
 * A workflow task timeout for jobs whose worker is lost while it holds a workflow task (SIGKILLed
 * inside a store write, which runs as a local activity in the task, or SIGSTOPped with its long
 * polls still open, so Temporal goes on handing it tasks): each such task blocks the job this long
 * (Temporal's default: 10 s) before another worker gets it. A timed-out task is offered again, never
 * failed, so short is safe. A workflow task that runs a local activity reports progress at 80% of it.
 */
export const LOST_WORKER_TASK_TIMEOUT = '3s';

/** Poll `fn` every `everyMs` until it gives a value; an error naming `what` after `timeoutMs`. */
export async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 90_000, everyMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A bare repository (the job's remote) with `files` on its default branch `main`. */
export async function bareRemote(files: Record<string, string>): Promise<string> {
  const src = await tempRepo(files);
  const bare = join(await tempDir('agentrun-remote-'), 'repo.git');
  execFileSync('git', ['clone', '-q', '--bare', src, bare]);
  return bare;
}

export const write = (path: string, content: string) => `<write_to_file>\n<path>${path}</path>\n<content>\n${content}\n</content>\n</write_to_file>`;
export const command = (cmd: string) => `<execute_command>\n<command>${cmd}</command>\n<requires_approval>false</requires_approval>\n</execute_command>`;
export const complete = '<attempt_completion>\n<result>done</result>\n</attempt_completion>';
