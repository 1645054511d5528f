// A repository's MCP server stops with its conversation on a fleet, also when the conversation's
// last step runs on another host than the one that holds its workspace and started the server.
// Two worker processes act as two hosts; host A is paused (SIGSTOP) while an approval is given, so
// the workflow (and the finish step, a local activity of it) moves to host B; A, resumed, learns
// the end from the store and stops the server. Real Temporal, PostgreSQL, git, bubblewrap.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideApprovalUpdate, type ConversationResult } from '../../workflows/api.js';
import { startChildWorker, type ChildWorker } from '../helpers/child-worker.js';
import { LOST_WORKER_TASK_TIMEOUT } from '../helpers/fleet.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';
import { probeServers, SERVER_JS } from '../helpers/mcp-probe.js';
import { tempDirSync } from '../helpers/temp.js';

let h: Harness;
const workers: ChildWorker[] = [];

beforeAll(async () => {
  h = await createHarness({ worker: false });
}, 120_000);

afterAll(async () => {
  for (const w of workers) {
    w.process.kill('SIGCONT');
    await w.kill();
  }
  await h?.close();
});

async function host(id: string): Promise<ChildWorker> {
  const workspaces = tempDirSync(`agentrun-ws-${id}-`);
  const w = await startChildWorker(h, {
    AGENTRUN_HOST_ID: `${id}-${h.taskQueue}`,
    AGENTRUN_WORKSPACES: workspaces,
    AGENTRUN_REPOSITORY_EXTENSIONS: 'on',
    AGENTRUN_LOG_LEVEL: 'info',
  });
  workers.push(w);
  return w;
}

describe('MCP servers on a fleet', () => {
  it('stop with their conversation when its last step runs on another host', async () => {
    const tag = `fleet-${randomBytes(4).toString('hex')}`;
    const ws = await tempRepo({ 'README.md': 'hello\n', 'server.js': SERVER_JS });
    mkdirSync(path.join(ws, '.agentrun'), { recursive: true });
    writeFileSync(
      path.join(ws, '.agentrun', 'settings.json'),
      JSON.stringify({ mcpServers: { probe: { command: 'node', args: ['server.js'], env: { FOO: tag } } } }),
    );
    const a = await host('a');
    const model = await scriptModel({
      turns: [
        { tool_calls: [{ name: 'mcp__probe__probe', arguments: {} }] },
        { tool_calls: [{ name: 'write_to_file', arguments: { path: 'after.txt', content: 'x\n' } }] },
        { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
      ],
    });
    // A, stopped, still takes workflow tasks through the polls it had open: each then blocks the job
    // for the workflow task timeout before B gets it.
    const handle = await h.start({
      task: 'probe',
      workspace: ws,
      config: { model, approval: 'always', toolFormat: 'native' },
      workflowTaskTimeout: LOST_WORKER_TASK_TIMEOUT,
    });
    await h.waitForState(handle.workflowId, (s) => s.pendingApproval !== undefined, 120_000);
    // The server runs on A, which holds the workspace.
    expect(probeServers(tag)).toHaveLength(1);
    const b = await host('b');
    // A paused past its sticky queue's timeout: the workflow's next task, and every one after it, goes to B.
    a.process.kill('SIGSTOP');
    await handle.executeUpdate(decideApprovalUpdate, { args: [{ approved: true }] });
    await new Promise((r) => setTimeout(r, 4000));
    a.process.kill('SIGCONT');
    const result = (await handle.result()) as ConversationResult;
    expect(result.status, result.reason).toBe('completed');
    // B finished the conversation; A never did.
    const finished = (out: string) => out.split('\n').some((l) => l.includes(handle.workflowId) && l.includes('conversation finished'));
    expect(finished(b.output())).toBe(true);
    expect(finished(a.output())).toBe(false);
    // A stops the server once it sees the conversation ended (before, it stayed until its 10-minute idle limit).
    for (let i = 0; i < 300 && probeServers(tag).length; i++) await new Promise((r) => setTimeout(r, 100));
    expect(probeServers(tag)).toEqual([]);
  }, 300_000);
});
