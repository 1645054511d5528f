// The file tools against a workspace that changes under them, through the real workflow: while a
// process beside the tools swaps a directory for a symlink to a canary directory outside and to
// /proc/self in a loop, a scripted model calls every file tool again and again. The worker is a
// child process with a canary in its environment. Nothing outside is read (no canary in the
// transcript or the stream) or written, and FIFOs as the repository's settings and rules files
// stall nothing: the conversation finishes. As root and as an unprivileged worker.
import { conversationResult } from '../../src/client/outcome.js';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';
import { tempDirSync } from '../helpers/temp.js';
import { arun, handTo, startWorkerAs, type User, type WorkerAs } from '../helpers/worker-as.js';

const tag = randomBytes(6).toString('hex');
const SECRET = `canary-outside-file-${tag}`;
const ENV_CANARY = `canary-worker-env-${tag}`;

function race(user?: User) {
  let h: Harness;
  let w: WorkerAs;
  let swapper: ChildProcess | undefined;

  beforeAll(async () => {
    h = await createHarness({ worker: false });
    w = await startWorkerAs(h, { AGENTRUN_TEST_CANARY: ENV_CANARY }, user);
  }, 120_000);

  afterAll(async () => {
    swapper?.kill('SIGKILL');
    await w?.worker.kill();
    await h?.close();
    w?.cleanup();
  });

  it('never read or write outside the workspace, and FIFO settings and rules stall nothing', async () => {
    const ws = await tempRepo({ 'real/secret': 'harmless\n', 'real/code.ts': 'export function inside() {}\n', 'README.md': 'hi\n' });
    const outside = tempDirSync('agentrun-canary-dir-', '/var/tmp');
    // Readable by the worker whoever it is: only the tools' confinement keeps it out.
    chmodSync(outside, 0o755);
    writeFileSync(path.join(outside, 'secret'), `${SECRET}\n`);
    writeFileSync(path.join(outside, 'code.ts'), `export function ${SECRET.replace(/-/g, '_')}() {}\n`);
    // Read every turn (rules) or at every step (settings): a blocking open would hang the worker's file I/O.
    mkdirSync(path.join(ws, '.agentrun'));
    execFileSync('mkfifo', [path.join(ws, '.agentrun/settings.json'), path.join(ws, 'AGENTS.md')]);
    // `d` is in turn the real directory, a link to the canary directory and a link to /proc/self
    // (and whatever a write made of it while it was missing, removed).
    const script =
      'cd "$1"; while :; do rm -rf d; mv -T real d; mv -T d real; ln -sfn "$2" d.tmp; mv -T d.tmp d; rm -f d; ln -sfn /proc/self d.tmp; mv -T d.tmp d; rm -f d; done';
    symlinkSync('/proc/self/environ', path.join(ws, 'env-link'));
    // Handed over before the swapping starts: a recursive chown meeting `real` mid-rename fails.
    handTo(user, ws);
    swapper = spawn('sh', ['-c', script, 'sh', ws, outside], { stdio: 'ignore' });

    const turns = Array.from({ length: 12 }, (_, i) => ({
      tool_calls: [
        { name: 'read_file', arguments: { path: 'd/secret' } },
        { name: 'read_file', arguments: { path: 'd/environ' } },
        { name: 'list_files', arguments: { path: 'd', recursive: true } },
        { name: 'search_files', arguments: { path: 'd', regex: 'canar[y]|AGENTRUN_TEST|harmless' } },
        { name: 'list_code_definition_names', arguments: { path: 'd' } },
        { name: 'write_to_file', arguments: { path: `d/w${i}.txt`, content: 'written by the agent\n' } },
        { name: 'replace_in_file', arguments: { path: 'd/secret', diff: '<<<<<<< SEARCH\nharmless\n=======\nharmless\n>>>>>>> REPLACE' } },
        ...(i === 0 ? [{ name: 'read_file', arguments: { path: 'env-link' } }] : []),
      ],
    }));
    const model = await scriptModel({ turns: [...turns, { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] }] });
    if (user) chmodSync(path.dirname(model.slice('scripted:'.length)), 0o755);
    const handle = await h.start({
      task: 'race the file tools',
      workspace: ws,
      config: { model, approval: 'never', toolFormat: 'native', loopDetection: false },
    });
    const result = await conversationResult(handle);
    swapper.kill('SIGKILL');
    expect(result.status, result.reason).toBe('completed');

    const messages = await h.store.getMessages(handle.workflowId);
    const outputs = messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(outputs.length).toBeGreaterThanOrEqual(12 * 7);
    const transcript = JSON.stringify(messages);
    const stream = JSON.stringify(await h.store.readStream(handle.workflowId, 0, 100_000));
    for (const [name, text] of Object.entries({ transcript, stream })) {
      expect(text.includes(SECRET), `the outside file in the ${name}`).toBe(false);
      expect(text.includes(SECRET.replace(/-/g, '_')), `the outside code in the ${name}`).toBe(false);
      expect(text.includes(ENV_CANARY), `the worker's environment in the ${name}`).toBe(false);
    }
    // Nothing was written outside; the race was live (calls met the real directory and the links).
    expect(readdirSync(outside).sort()).toEqual(['code.ts', 'secret']);
    expect(readFileSync(path.join(outside, 'secret'), 'utf8')).toBe(`${SECRET}\n`);
    expect(transcript).toContain('harmless');
    expect(transcript).toMatch(/symbolic link \(d\) that leads outside the workspace/);
    expect(transcript).toMatch(/env-link goes through a symbolic link \(env-link\) that leads outside the workspace/);
  }, 300_000);
}

describe('file tools while the workspace changes under them, worker as root', () => {
  race();
});

describe('file tools while the workspace changes under them, worker as an unprivileged user', () => {
  race(arun());
});
