// People in the loop, budgets, schedules and rollback through the real workflow.
import { conversationResult } from '../../src/client/outcome.js';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../src/config.js';
import { startConversation } from '../../src/client/conversations.js';
import { SA_COST, SA_SCHEDULE, SA_STATUS, SA_TURNS } from '../../src/search-attributes.js';
import { recordHistory } from '../histories/manifest.js';
import { decideApprovalUpdate, rollbackUpdate, WORKFLOW_TYPE, type ConversationInput, type ConversationResult } from '../../workflows/api.js';
import { createHarness, scriptModel, tempRepo, priceScriptedModel, uid, type Harness } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  // These tests add up costs: the scripted model gets a price here.
  priceScriptedModel();
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const dangerous = (cmd: string) => ({ say: `<execute_command>\n<command>${cmd}</command>\n<requires_approval>false</requires_approval>\n</execute_command>` });
const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };
const write = (path: string, content: string) => ({ say: `<write_to_file>\n<path>${path}</path>\n<content>\n${content}\n</content>\n</write_to_file>` });

describe('approvals', () => {
  it('runs a dangerous command only after approval', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [dangerous('curl -s http://127.0.0.1:1/x | sh; echo ran > ran.txt'), complete] });
    const handle = await h.start({ task: 't', workspace, config: { model } });
    const s = await h.waitForState(handle.workflowId, (x) => x.pendingApproval !== undefined);
    expect(s.status).toBe('waiting');
    expect(s.pendingApproval?.reasons.join(' ')).toMatch(/pipe|shell|download/i);
    expect(existsSync(join(workspace, 'ran.txt'))).toBe(false);
    await expect(handle.executeUpdate(decideApprovalUpdate, { args: [{ callId: 'nope', approved: true }] })).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/not the one waiting/) },
    });
    await handle.executeUpdate(decideApprovalUpdate, { args: [{ approved: true }] });
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');
    expect(await readFile(join(workspace, 'ran.txt'), 'utf8')).toBe('ran\n');
  });

  it('tells the model when a call is denied', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [dangerous('sudo rm -rf /var/tmp/x'), complete] });
    const handle = await h.start({ task: 't', workspace, config: { model } });
    await h.waitForState(handle.workflowId, (x) => x.pendingApproval !== undefined);
    await handle.executeUpdate(decideApprovalUpdate, { args: [{ approved: false, reason: 'not on this host' }] });
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');
    const denied = (await h.store.getMessages(handle.workflowId)).find((m) => m.toolName === 'execute_command')!;
    expect(denied.meta?.status).toBe('denied');
    expect(denied.content).toContain('not on this host');
  });

  it('denies by default when nobody decides in time', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [dangerous('sudo reboot'), complete] });
    const result = await h.run({ task: 't', workspace, config: { model, approvalTimeoutMs: 1500 } });
    expect(result.status).toBe('completed');
    const denied = (await h.store.getMessages(result.conversationId)).find((m) => m.toolName === 'execute_command')!;
    expect(denied.meta?.status).toBe('denied');
    expect(denied.content).toMatch(/no decision within 2 s/);
  });

  it('asks for every mutating call under approval=always, never under never', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [write('a.txt', 'a'), complete] });
    const handle = await h.start({ task: 't', workspace, config: { model, approval: 'always' } });
    const s = await h.waitForState(handle.workflowId, (x) => x.pendingApproval !== undefined);
    expect(s.pendingApproval?.name).toBe('write_to_file');
    await handle.executeUpdate(decideApprovalUpdate, { args: [{ approved: true }] });
    expect(((await handle.result()) as ConversationResult).status).toBe('completed');
    const ws2 = await tempRepo();
    const r2 = await h.run({
      task: 't',
      workspace: ws2,
      config: { model: await scriptModel({ turns: [dangerous('echo hi > hi.txt && sudo true || true'), complete] }), approval: 'never' },
    });
    expect(r2.status).toBe('completed');
    expect(existsSync(join(ws2, 'hi.txt'))).toBe(true);
  });
});

describe('budgets', () => {
  it('ends with budget_exhausted when the token budget is spent', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [{ say: write('x.txt', 'x').say, usage: { prompt_tokens: 800, completion_tokens: 300 } }], repeat_last: true });
    const result = await h.run({ task: 't', workspace, config: { model, maxTokens: 2000, loopDetection: false } });
    expect(result.status).toBe('budget_exhausted');
    expect(result.turns).toBe(2);
    expect(result.reason).toMatch(/token budget spent \(2200 of 2000/);
    // A final summary of what the run left behind.
    expect(result.result).toMatch(/^Stopped after 2 turns: token budget spent.*Files changed: x\.txt\. Tool calls: 2 \(0 failed\)\./);
  });

  it('ends with budget_exhausted when the cost budget is spent', async () => {
    const workspace = await tempRepo();
    // The scripted model costs $1 per million prompt tokens and $2 per million completion tokens.
    const model = await scriptModel({ turns: [{ say: write('x.txt', 'x').say, usage: { prompt_tokens: 500_000, completion_tokens: 0 } }], repeat_last: true });
    const result = await h.run({ task: 't', workspace, config: { model, maxCostUsd: 1.2, loopDetection: false } });
    expect(result.status).toBe('budget_exhausted');
    expect(result.turns).toBe(3);
    expect(result.costUsd).toBeCloseTo(1.5);
  });
});

describe('checkpoints and rollback', () => {
  it('rolls a running conversation back to an earlier turn', async () => {
    const workspace = await tempRepo({ 'keep.txt': 'original\n' });
    const model = await scriptModel({
      turns: [
        write('keep.txt', 'changed'),
        write('new.txt', 'new'),
        { say: '<ask_followup_question>\n<question>rollback?</question>\n</ask_followup_question>' },
        complete,
      ],
    });
    const handle = await h.start({ task: 't', workspace, config: { model } });
    const s = await h.waitForState(handle.workflowId, (x) => x.pendingQuestion !== undefined);
    expect(s.checkpoints.map((c) => c.turn)).toEqual([0, 1, 2]);
    await expect(handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 7 }] })).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/no checkpoint for turn 7/) },
    });
    // The rollback runs at the next turn boundary, so answer the question too.
    const rolled = handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 0 }] });
    await handle.executeUpdate('answer', { args: [{ text: 'yes' }] });
    const r = await rolled;
    expect(r.removed).toEqual(['new.txt']);
    expect(r.restored).toEqual(['keep.txt']);
    expect(((await handle.result()) as ConversationResult).status).toBe('completed');
    expect(await readFile(join(workspace, 'keep.txt'), 'utf8')).toBe('original\n');
    expect(existsSync(join(workspace, 'new.txt'))).toBe(false);
    const notice = (await h.store.getMessages(handle.workflowId)).find((m) => m.kind === 'notice');
    expect(notice?.content).toMatch(/rolled the workspace back to its state after turn 0/);
  });
});

describe('schedules', () => {
  it('a schedule triggered now starts a tagged run that completes', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [write('nightly.txt', 'refactored'), complete] });
    const scheduleId = uid('nightly');
    const input: ConversationInput = { task: 'nightly refactor', workspace, config: runConfigSchema.parse({ model, scheduleId }), searchAttributes: true };
    const schedule = await h.client.schedule.create({
      scheduleId,
      spec: { cronExpressions: ['0 2 * * *'] },
      action: {
        type: 'startWorkflow',
        workflowType: WORKFLOW_TYPE,
        workflowId: scheduleId,
        taskQueue: h.taskQueue,
        args: [input],
        typedSearchAttributes: [{ key: SA_SCHEDULE, value: scheduleId }],
      },
    });
    try {
      await schedule.trigger(ScheduleOverlapPolicy.ALLOW_ALL);
      let workflowId: string | undefined;
      for (let i = 0; i < 100 && !workflowId; i++) {
        workflowId = (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId;
        if (!workflowId) await new Promise((r) => setTimeout(r, 100));
      }
      expect(workflowId).toMatch(new RegExp(`^${scheduleId}-`));
      const result = await conversationResult(h.client.workflow.getHandle(workflowId!));
      expect(result.status).toBe('completed');
      expect(await readFile(join(workspace, 'nightly.txt'), 'utf8')).toBe('refactored');
      const desc = await h.client.workflow.getHandle(workflowId!).describe();
      expect(desc.typedSearchAttributes.get(SA_SCHEDULE)).toBe(scheduleId);
      expect((await h.store.getConversation(workflowId!))?.scheduleId).toBe(scheduleId);
    } finally {
      await schedule.delete();
    }
  });
});

describe('search attributes', () => {
  it('are upserted only with the values that changed: a turn its count and cost, the end its status', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [write('a.txt', 'a'), write('b.txt', 'b'), complete] });
    const config = runConfigSchema.parse({ model });
    const { handle } = await startConversation(
      { client: h.client, taskQueue: h.taskQueue, searchAttributes: true },
      { task: 't', workspace, config },
      uid('sa'),
    );
    expect(((await handle.result()) as ConversationResult).status).toBe('completed');
    const upserts = ((await handle.fetchHistory()).events ?? [])
      .map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields)
      .filter((f) => f !== undefined && f !== null)
      .map((f) => Object.fromEntries(Object.entries(f).map(([k, v]) => [k, JSON.parse(Buffer.from(v.data!).toString()) as unknown])))
      // The SDK's own upsert of the patch ids (free on Temporal Cloud) is not the workflow's.
      .filter((f) => !('TemporalChangeVersion' in f));
    // Given at the start: status, workspace, model, tenant, no turns, no cost. Each turn then moves
    // the count and the cost (the scripted model has a price), and the end the status alone.
    expect(upserts.map((u) => Object.keys(u).sort())).toEqual([
      ['AgentrunCostUsd', 'AgentrunTurns'],
      ['AgentrunCostUsd', 'AgentrunTurns'],
      ['AgentrunCostUsd', 'AgentrunTurns'],
      ['AgentrunStatus'],
    ]);
    expect(upserts.map((u) => u.AgentrunTurns).slice(0, 3)).toEqual([1, 2, 3]);
    const sa = (await handle.describe()).typedSearchAttributes;
    expect([sa.get(SA_STATUS), sa.get(SA_TURNS), sa.get(SA_COST)! > 0]).toEqual(['completed', 3, true]);
    await recordHistory(h.client, handle.workflowId, 'session-search-attributes-on-change.json');
  });
});
