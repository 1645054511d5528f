// Sandbox policies through the real workflow (scripted model, real worker, real bwrap):
// workspace-write writes, read-only cannot, network off cannot reach a server on the host's
// loopback and --network on can; `off` is recorded and shown by inspect; a worker that cannot
// sandbox refuses to start, unless started with --sandbox off.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfigInput } from '../../src/config.js';
import { gatherInspection, printInspection } from '../../src/cli/inspect.js';
import type { Session } from '../../src/cli/session.js';
import type { ConversationResult } from '../../workflows/api.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let h: Harness;
let server: Server;
let port: number;
beforeAll(async () => {
  h = await createHarness();
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
async function runCommand(command: string, config: Partial<RunConfigInput>) {
  const workspace = await tempRepo();
  const model = await scriptModel({
    turns: [
      { tool_calls: [{ name: 'execute_command', arguments: { command, requires_approval: false, timeout_seconds: 20 } }] },
      { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
    ],
  });
  const handle = await h.start({ task: 'one command', workspace, config: { model, approval: 'never', toolFormat: 'native', ...config } });
  const result = (await handle.result()) as ConversationResult;
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

  it('network off cannot reach a server on the host; --network on reaches it', async () => {
    const cmd = `curl -sS -m 3 http://127.0.0.1:${port}/`;
    const off = await runCommand(cmd, {});
    expect(off.output).not.toContain('reached-the-host');
    expect(off.output).toMatch(/exited with code [1-9]/);
    const on = await runCommand(cmd, { network: 'on' });
    expect(on.output).toContain('reached-the-host');
  });

  it('--env passes a named variable through; others stay out', async () => {
    process.env.AGENTRUN_TEST_PASSED = 'passed-value';
    process.env.AGENTRUN_TEST_KEPT_OUT = 'kept-out-value';
    try {
      const r = await runCommand('env', { env: ['AGENTRUN_TEST_PASSED'] });
      expect(r.output).toContain('AGENTRUN_TEST_PASSED=passed-value');
      expect(r.output).not.toContain('kept-out-value');
    } finally {
      delete process.env.AGENTRUN_TEST_PASSED;
      delete process.env.AGENTRUN_TEST_KEPT_OUT;
    }
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

describe('the worker start check', () => {
  function startWorker(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
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
