// Sandbox policies through the real workflow (scripted model, real worker, real bwrap):
// workspace-write writes, read-only cannot, network off cannot reach a server on the host's
// loopback and --network on can; `off` is recorded and shown by inspect; a worker that cannot
// sandbox refuses to start, unless started with --sandbox off; unsandboxed, a program the
// dangerous-command check does not know waits for a person, as it does not in the sandbox.
import { conversationResult } from '../../src/client/outcome.js';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfigInput } from '../../src/config.js';
import { gatherInspection } from '../../src/client/inspection.js';
import { printInspection } from '../../src/cli/inspect.js';
import type { Session } from '../../src/cli/session.js';
import { EgressProxy, setEgressProxy } from '../../src/sandbox/proxy.js';
import { decideApprovalUpdate } from '../../workflows/api.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';
import { WORKER_MAIN } from '../helpers/dist.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let h: Harness;
let server: Server;
let port: number;
beforeAll(async () => {
  // The worker's --allow-env: the --env tests pass AR_TEST_PASSED and ask for names it does not allow.
  // And its --allow-unsandboxed: `off` runs here (a worker without it refuses: adversarial.test.ts).
  h = await createHarness({ allowEnv: ['AR_TEST_PASSED'], allowUnsandboxed: true });
  server = createServer((_req, res) => res.end('reached-the-host'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await h?.close();
});

/** Run one command through a conversation; the command's tool result and the workspace. */
async function runCommand(command: string, config: Partial<RunConfigInput>, files: Record<string, string> = {}) {
  const workspace = await tempRepo(files);
  const model = await scriptModel({
    turns: [
      { tool_calls: [{ name: 'execute_command', arguments: { command, requires_approval: false, timeout_seconds: 20 } }] },
      { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
    ],
  });
  const handle = await h.start({ task: 'one command', workspace, config: { model, approval: 'never', toolFormat: 'native', ...config } });
  const result = await conversationResult(handle);
  expect(result.status).toBe('completed');
  const output = (await h.store.getMessages(handle.workflowId)).find((m) => m.toolName === 'execute_command')!.content;
  return { output, workspace, id: handle.workflowId };
}

describe('sandbox policies through the workflow', () => {
  it('workspace-write (the default) writes in the workspace; read-only cannot', async () => {
    const rw = await runCommand('echo x > made.txt && echo wrote', {});
    expect(rw.output).toContain('wrote');
    expect(existsSync(join(rw.workspace, 'made.txt'))).toBe(true);
    const ro = await runCommand('echo x > made.txt && echo wrote', { sandbox: 'read-only' });
    expect(ro.output).toMatch(/Read-only file system/);
    expect(existsSync(join(ro.workspace, 'made.txt'))).toBe(false);
  });

  it("network off cannot reach a server on the host; --network on goes through the egress proxy, which never reaches the worker's loopback", async () => {
    const cmd = `curl -sS -m 3 http://127.0.0.1:${port}/`;
    const off = await runCommand(cmd, {});
    expect(off.output).not.toContain('reached-the-host');
    expect(off.output).toMatch(/exited with code [1-9]/);
    const on = await runCommand(cmd, { network: 'on' });
    expect(on.output).not.toContain('reached-the-host');
    expect(on.output).toContain('agentrun egress proxy: 127.0.0.1 is a loopback address');
    // The proxy's test-only allowance makes this loopback server stand for a public host.
    setEgressProxy(new EgressProxy({ allowLoopbackPorts: [port] }));
    try {
      expect((await runCommand(cmd, { network: 'on' })).output).toContain('reached-the-host');
    } finally {
      setEgressProxy(undefined);
    }
  });

  it('--env passes a named variable the worker allows (--allow-env) through; others stay out', async () => {
    process.env.AR_TEST_PASSED = 'passed-value';
    process.env.AR_TEST_KEPT_OUT = 'kept-out-value';
    try {
      const r = await runCommand('env', { env: ['AR_TEST_PASSED'] });
      expect(r.output).toContain('AR_TEST_PASSED=passed-value');
      expect(r.output).not.toContain('kept-out-value');
    } finally {
      delete process.env.AR_TEST_PASSED;
      delete process.env.AR_TEST_KEPT_OUT;
    }
  });

  it('a conversation asking --env for a name the worker does not allow fails at its first step with one line', async () => {
    process.env.AR_TEST_NOT_ALLOWED = 'not-allowed-value';
    try {
      const cases: [string, string][] = [
        [
          'AR_TEST_NOT_ALLOWED',
          '--env AR_TEST_NOT_ALLOWED: this worker does not pass AR_TEST_NOT_ALLOWED to commands; start the worker with --allow-env AR_TEST_NOT_ALLOWED',
        ],
        ['DATABASE_URL', "--env DATABASE_URL: commands never get DATABASE_URL (the worker's database); pass a variable of their own instead"],
      ];
      for (const [name, line] of cases) {
        const workspace = await tempRepo();
        const model = await scriptModel({ turns: [{ tool_calls: [{ name: 'execute_command', arguments: { command: 'env', requires_approval: false } }] }] });
        const t0 = Date.now();
        const handle = await h.start({ task: 'leak', workspace, config: { model, approval: 'never', toolFormat: 'native', env: ['AR_TEST_PASSED', name] } });
        const result = await conversationResult(handle);
        expect({ status: result.status, reason: result.reason }).toEqual({ status: 'failed', reason: line });
        expect(Date.now() - t0).toBeLessThan(15_000); // non-retryable: no retries with backoff
        // Nothing ran: no model turn, no command; the refusal is in the store.
        expect((await h.store.getMessages(handle.workflowId)).filter((m) => m.role !== 'user')).toEqual([]);
        expect((await h.store.getConversation(handle.workflowId))?.reason).toBe(line);
      }
    } finally {
      delete process.env.AR_TEST_NOT_ALLOWED;
    }
  });

  it("a workspace that contains the worker's AGENTRUN_HOME fails at its first step with one line, before git touches it", async () => {
    const model = await scriptModel({ turns: [{ tool_calls: [{ name: 'execute_command', arguments: { command: 'true', requires_approval: false } }] }] });
    const workspace = join(h.home, '..'); // what `--workspace $AGENTRUN_HOME/..` asks of a worker, past the CLI
    const hadGit = existsSync(join(workspace, '.git'));
    const handle = await h.start({ task: 'look around', workspace, config: { model, approval: 'never', toolFormat: 'native' } });
    const result = await conversationResult(handle);
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(
      /^workspace \S+ contains AGENTRUN_HOME \(\S+\): the agent would reach the keys and settings there; give the project's own directory$/,
    );
    expect(existsSync(join(workspace, '.git'))).toBe(hadGit);
    expect(await h.store.getCheckpoints(handle.workflowId)).toEqual([]);
  });

  it('off runs unconfined, and inspect shows it', async () => {
    const r = await runCommand(`test -e /proc/${process.pid} && echo SEES-WORKER`, { sandbox: 'off' });
    expect(r.output).toContain('SEES-WORKER');
    const session = { store: h.store, client: h.client, home: h.home } as unknown as Session;
    const data = (await gatherInspection(session, r.id, { maxChars: 2000, diffs: false }))!;
    let printed = '';
    printInspection(data, (s) => (printed += s));
    expect(printed).toContain('sandbox: off (commands ran unconfined, as asked)  network: off');
    const sandboxed = await runCommand('true', {});
    const data2 = (await gatherInspection(session, sandboxed.id, { maxChars: 2000, diffs: false }))!;
    expect(data2.sandbox).toEqual({ policy: 'workspace-write', network: 'off', env: [] });
  });
});

describe('the dangerous-command check follows the sandbox', () => {
  // A workspace program without a script's extension: one no table of the checker knows (a `.sh`
  // file is judged as the shell running it), which only writes in the workspace.
  const command = 'chmod +x greet && ./greet';
  const files = { greet: '#!/bin/sh\necho greeted > greeted.txt\necho GREETED\n' };
  const unknownReason = 'runs greet, which the checker does not know, outside the sandbox: a person must approve it';

  it('unsandboxed, a program the checker does not know waits for a person under --approval dangerous; in the sandbox it runs', async () => {
    const workspace = await tempRepo(files);
    const model = await scriptModel({
      turns: [
        { tool_calls: [{ name: 'execute_command', arguments: { command, requires_approval: false, timeout_seconds: 20 } }] },
        { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
      ],
    });
    const handle = await h.start({ task: 'greet', workspace, config: { model, approval: 'dangerous', toolFormat: 'native', sandbox: 'off' } });
    const waiting = await h.waitForState(handle.workflowId, (x) => x.pendingApproval !== undefined);
    expect(waiting.status).toBe('waiting');
    expect(waiting.pendingApproval?.reasons).toEqual([expect.stringContaining(unknownReason)]);
    expect(existsSync(join(workspace, 'greeted.txt'))).toBe(false);
    // Approved, it runs on the verdict it was parsed with.
    await handle.executeUpdate(decideApprovalUpdate, { args: [{ approved: true }] });
    expect((await conversationResult(handle)).status).toBe('completed');
    expect(existsSync(join(workspace, 'greeted.txt'))).toBe(true);

    // The same command in the sandbox (the default policy, the same approval policy) runs without asking.
    const sandboxed = await runCommand(command, { approval: 'dangerous', approvalTimeoutMs: 5_000 }, files);
    expect(sandboxed.output).toContain('GREETED');
    expect(existsSync(join(sandboxed.workspace, 'greeted.txt'))).toBe(true);
    expect((await h.store.getConversation(sandboxed.id))?.config).toMatchObject({ sandbox: 'workspace-write', approval: 'dangerous' });
  });
});

describe('a script the command writes and then runs is judged by what it wrote, through the workflow', () => {
  const script = (line: string) => `cat > run.sh <<'EOF'\n${line}\nEOF\nbash run.sh`;

  it('one that force-pushes waits for a person under --approval dangerous and, denied, runs nothing; one that only writes here runs unasked', async () => {
    const workspace = await tempRepo({});
    const model = await scriptModel({
      turns: [
        {
          tool_calls: [
            { name: 'execute_command', arguments: { command: script('git push --force origin main'), requires_approval: false, timeout_seconds: 20 } },
          ],
        },
        { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
      ],
    });
    const handle = await h.start({ task: 'push', workspace, config: { model, approval: 'dangerous', toolFormat: 'native' } });
    const waiting = await h.waitForState(handle.workflowId, (x) => x.pendingApproval !== undefined);
    expect(waiting.pendingApproval?.reasons.join(' ')).toContain('force');
    await handle.executeUpdate(decideApprovalUpdate, { args: [{ approved: false }] });
    expect((await conversationResult(handle)).status).toBe('completed');
    // Denied, the command never ran: not even the here-document's file was written.
    expect(existsSync(join(workspace, 'run.sh'))).toBe(false);

    const safe = await runCommand(script('echo ran > ran.txt && echo RAN'), { approval: 'dangerous', approvalTimeoutMs: 5_000 });
    expect(safe.output).toContain('RAN');
    expect(existsSync(join(safe.workspace, 'ran.txt'))).toBe(true);
  });
});

describe('the worker start check', () => {
  function startWorker(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
    const child = spawn(process.execPath, [WORKER_MAIN], {
      cwd: ROOT,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: h.temporalAddress,
        DATABASE_URL: h.databaseUrl,
        AGENTRUN_DB_SCHEMA: h.schema,
        AGENTRUN_TASK_QUEUE: `${h.taskQueue}-check`,
        AGENTRUN_HOME: h.home,
        AGENTRUN_WORKFLOW_BUNDLE: h.workflowBundlePath,
        ...env,
      },
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('worker ready')) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d) => (out += d));
    return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
  }

  it('refuses to start without bwrap, naming the fixes; starts with --sandbox off', async () => {
    // No bwrap on this PATH (node is started by its absolute path).
    const refused = await startWorker({ PATH: '/nonexistent' });
    expect(refused.code).not.toBe(0);
    expect(refused.out).toMatch(/commands cannot be sandboxed: bwrap is not installed; install bubblewrap \(apt-get install bubblewrap\).*--sandbox off/);
    expect(refused.out).not.toContain('worker ready');
    const off = await startWorker({ PATH: '/nonexistent', AGENTRUN_SANDBOX: 'off' });
    expect(off.out).toContain('worker ready');
  }, 120_000);
});
