// A worker killed with SIGKILL in the middle of an MCP call with effects: the next worker reads
// the operator's settings.json, reconnects, and tells the model the call was interrupted instead
// of making it again. The worker is a child process (worker/main.ts), like a crashed host.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERRUPTED_OUTPUT } from '../../src/tools/index.js';
import type { ConversationResult } from '../../workflows/api.js';
import { startChildWorker } from '../helpers/child-worker.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';
import { startHttpMcpServer } from '../helpers/mcp.js';

let h: Harness;
let http: Awaited<ReturnType<typeof startHttpMcpServer>>;

beforeAll(async () => {
  h = await createHarness({ worker: false });
  http = await startHttpMcpServer();
  await writeFile(join(h.home, 'settings.json'), JSON.stringify({ mcpServers: { web: { url: http.url, trust: true } } }));
});
afterAll(async () => {
  http?.release();
  await http?.close();
  await h?.close();
});

describe('MCP calls and crashes', () => {
  it('an MCP call with effects cut by SIGKILL is reported as interrupted, not made twice', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        { say: '<mcp__web__slow_note>\n<text>once</text>\n</mcp__web__slow_note>' },
        { say: '<mcp__web__add>\n<a>1</a>\n<b>2</b>\n</mcp__web__add>' },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    const doomed = await startChildWorker(h);
    const handle = await h.start({ task: 'Note it', workspace, config: { model, heartbeatTimeoutMs: 2000 } });
    await expect.poll(() => http.started.length, { timeout: 60_000 }).toBe(1);
    await doomed.kill('SIGKILL');
    const survivor = await startChildWorker(h);
    const result = (await handle.result()) as ConversationResult;
    await survivor.kill('SIGTERM');
    expect(result.status).toBe('completed');
    const results = (await h.store.getMessages(handle.workflowId)).filter((m) => m.kind === 'tool_result');
    expect(results[0]).toMatchObject({ toolName: 'mcp__web__slow_note', content: INTERRUPTED_OUTPUT, meta: { status: 'interrupted' } });
    // The new worker connected again and its read-only call went through.
    expect(results[1]).toMatchObject({ toolName: 'mcp__web__add', content: 'sum=3' });
    expect(http.started).toEqual(['once']);
  });
});
