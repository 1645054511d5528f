// A local workspace that does not exist, started straight through Temporal (a client, a schedule
// or another version of the CLI that checks nothing first): the worker's first step ends the
// conversation with one line naming the directory, not a failure of the whole workflow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationResult } from '../../src/client/outcome.js';
import { startChildWorker } from '../helpers/child-worker.js';
import { createHarness, scriptModel, type Harness } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('a local workspace that does not exist', () => {
  it('started directly through Temporal, ends failed with a reason naming the missing directory and what to do', async () => {
    const m = await scriptModel([{ tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] }]);
    const workspace = `/nonexistent/agentrun-${Date.now()}`;
    const handle = await h.start({ task: 'anything', workspace, config: { model: m, approval: 'never', toolFormat: 'native' } });
    const result = await conversationResult(handle);
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(
      new RegExp(`^workspace ${workspace} does not exist on host \\S+, the worker that took the conversation: start it again naming an existing directory`),
    );
    expect((await h.store.getConversation(handle.workflowId))?.status).toBe('failed');
  }, 120_000);

  it('on a worker that holds workspaces (a host queue): declined while another host may have it, then ends failed with the same reason', async () => {
    // The compiled `agentrun worker`, which polls its host queue: placement is offered to any host
    // first (declined here), then the conversation is recorded and refused.
    const hh = await createHarness({ worker: false });
    const child = await startChildWorker(hh);
    try {
      const m = await scriptModel([{ tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] }]);
      const workspace = `/nonexistent/agentrun-host-${Date.now()}`;
      const handle = await hh.start({ task: 'anything', workspace, config: { model: m, approval: 'never', toolFormat: 'native' } });
      const result = await conversationResult(handle);
      expect(result.status, child.output().slice(-3000)).toBe('failed');
      expect(result.reason).toMatch(
        new RegExp(`^workspace ${workspace} does not exist on host \\S+, the worker that took the conversation: start it again naming an existing directory`),
      );
      expect((await hh.store.getConversation(handle.workflowId))?.status).toBe('failed');
    } finally {
      await child.kill();
      await hh.close();
    }
  }, 180_000);
});
