// Rollback is answered in every state of a session (running, waiting, paused, during the last
// turn), concurrent rollbacks run in order, and every rollback first saves the workspace so it
// can be undone. Also: the wall-time budget ends a long turn; approvals record who decided.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerUpdate, decideApprovalUpdate, pauseSignal, resumeSignal, rollbackUpdate, type ConversationResult } from '../../workflows/api.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const write = (path: string, content: string) => ({ say: `<write_to_file>\n<path>${path}</path>\n<content>\n${content}\n</content>\n</write_to_file>` });
const ask = (q: string) => ({ say: `<ask_followup_question>\n<question>${q}</question>\n</ask_followup_question>` });
const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };

describe('rollback in every state', () => {
  it('answers a rollback sent during the last turn before the conversation ends', async () => {
    const workspace = await tempRepo({ 'keep.txt': 'original\n' });
    const model = await scriptModel({
      turns: [
        write('keep.txt', 'changed'),
        {
          say: '<execute_command>\n<command>sleep 3</command>\n<requires_approval>false</requires_approval>\n</execute_command>\n<attempt_completion>\n<result>done</result>\n</attempt_completion>',
        },
      ],
    });
    const handle = await h.start({ task: 't', workspace, config: { model, approval: 'never' } });
    await h.waitForState(handle.workflowId, (s) => s.turn === 2);
    const rolled = handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 0 }] });
    const [r, result] = await Promise.all([rolled, handle.result() as Promise<ConversationResult>]);
    expect(result.status).toBe('completed');
    expect(r.restored).toEqual(['keep.txt']);
    expect(await readFile(join(workspace, 'keep.txt'), 'utf8')).toBe('original\n');
    const notice = (await h.store.getMessages(handle.workflowId)).find((m) => m.kind === 'notice');
    expect(notice?.content).toMatch(/rolled the workspace back to its state after turn 0/);
  });

  it('orders concurrent rollbacks, works while paused, and every rollback can be undone', async () => {
    const workspace = await tempRepo({ 'keep.txt': 'original\n', '.gitignore': '*.log\n' });
    const model = await scriptModel({ turns: [write('keep.txt', 'turn 1'), write('keep.txt', 'turn 2'), ask('done?'), complete] });
    const handle = await h.start({ task: 't', workspace, config: { model } });
    await h.waitForState(handle.workflowId, (s) => s.pendingQuestion !== undefined);
    // The user's own work, outside the agent: an edit, a new file, an ignored file.
    await writeFile(join(workspace, 'keep.txt'), 'edited by the user\n');
    await writeFile(join(workspace, 'mine.txt'), 'user file\n');
    await writeFile(join(workspace, 'debug.log'), 'ignored\n');

    const [first, second] = await Promise.all([
      handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 1 }] }),
      handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 0 }] }),
    ]);
    expect(first.saved).toBeTruthy();
    expect(second.saved).toBeTruthy();
    expect(first.saved).not.toBe(second.saved);
    // They ran one after the other, in the order the server delivered them: the first saw the user's file.
    const [early, late] = first.removed.includes('mine.txt') ? [first, second] : [second, first];
    expect(early.removed).toContain('mine.txt');
    expect(late.removed).not.toContain('mine.txt');
    expect(await readFile(join(workspace, 'keep.txt'), 'utf8')).toBe(late === first ? 'turn 1' : 'original\n');
    expect(existsSync(join(workspace, 'mine.txt'))).toBe(false);
    expect(late.notRestored).toContain('debug.log');
    expect(existsSync(join(workspace, 'debug.log'))).toBe(true);

    // Paused: the rollback still runs. Undo the first rollback: the user's work comes back.
    await handle.signal(pauseSignal);
    await handle.executeUpdate(answerUpdate, { args: [{ text: 'yes' }] });
    await h.waitForState(handle.workflowId, (s) => s.status === 'paused');
    const undo = await handle.executeUpdate(rollbackUpdate, { args: [{ commit: early.saved! }] });
    expect(undo.saved).toBeTruthy();
    expect(await readFile(join(workspace, 'keep.txt'), 'utf8')).toBe('edited by the user\n');
    expect(await readFile(join(workspace, 'mine.txt'), 'utf8')).toBe('user file\n');
    await expect(handle.executeUpdate(rollbackUpdate, { args: [{ commit: 'deadbeef' }] })).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/not a state saved/) },
    });
    await handle.signal(resumeSignal);
    expect(((await handle.result()) as ConversationResult).status).toBe('completed');
    const notices = (await h.store.getMessages(handle.workflowId)).filter((m) => m.kind === 'notice');
    expect(notices).toHaveLength(3);
  });
});

describe('time budget and approvals', () => {
  it('ends a turn that outlasts the wall-time budget', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [{ say: '<execute_command>\n<command>sleep 60</command>\n<requires_approval>false</requires_approval>\n</execute_command>' }, complete],
    });
    const t0 = Date.now();
    const result = await h.run({ task: 't', workspace, config: { model, approval: 'never', maxTimeMs: 3000, heartbeatTimeoutMs: 2000 } });
    expect(result.status).toBe('budget_exhausted');
    expect(result.reason).toMatch(/time budget spent/);
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it('records who decided an approval and when', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [{ say: '<execute_command>\n<command>echo hi > a.txt</command>\n<requires_approval>true</requires_approval>\n</execute_command>' }, complete],
    });
    const handle = await h.start({ task: 't', workspace, config: { model } });
    const s = await h.waitForState(handle.workflowId, (x) => x.pendingApproval !== undefined);
    await expect(handle.executeUpdate(decideApprovalUpdate, { args: [{ callId: 'stale', approved: true }] })).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/not the one waiting/) },
    });
    const before = Date.now();
    const r = await handle.executeUpdate(decideApprovalUpdate, {
      args: [{ callId: s.pendingApproval!.callId, approved: false, reason: 'not today', by: 'alice' }],
    });
    expect(r).toMatchObject({ approved: false, by: 'alice' });
    expect(((await handle.result()) as ConversationResult).status).toBe('completed');
    const denied = (await h.store.getMessages(handle.workflowId)).find((m) => m.kind === 'tool_result' && m.toolName === 'execute_command');
    expect(denied?.content).toMatch(/operator alice denied this execute_command call: not today/);
    const events = (await h.store.readStream(handle.workflowId, 0, 1000)).map((e) => e.event);
    const decided = events.find((e) => e.type === 'approval_decided') as { by?: string; atMs: number } | undefined;
    expect(decided?.by).toBe('alice');
    expect(decided!.atMs).toBeGreaterThanOrEqual(before - 1000);
    expect(existsSync(join(workspace, 'a.txt'))).toBe(false);
  });
});
