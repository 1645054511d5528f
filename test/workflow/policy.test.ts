// Policy paths of the `session` workflow against stubbed activities (test/workflow/stub-env.ts):
// pause/resume, approval and question timeouts, every budget, plan-mode refusal and rollback in
// every state the conversation can be in while it runs.
import { WorkflowUpdateStage } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerUpdate, cancelSignal, decideApprovalUpdate, pauseSignal, resumeSignal, rollbackUpdate } from '../../workflows/api.js';
import { calls, Deferred, Script, stubEnv, type StubEnv } from './stub-env.js';

let env: StubEnv;
beforeAll(async () => {
  env = await stubEnv();
});
afterAll(async () => {
  await env?.close();
});

const overrides = (s: Script) => s.recorded.map((r) => r.override);

describe('pause and resume', () => {
  it('holds between turns while paused and goes on after resume', async () => {
    const hold = new Deferred();
    const s = new Script([{ calls: [calls.read()], hold }, { calls: [calls.complete()] }]);
    const handle = await env.start(s);
    await s.reached('model:1');
    await handle.signal(pauseSignal);
    hold.resolve();
    await env.waitForState(handle, (st) => st.status === 'paused' && st.paused);
    expect(s.modelTurns).toHaveLength(1);
    // No model step follows while paused: turn 1 is recorded before the pause.
    expect(s.endTurns.map((t) => t.turn)).toEqual([1]);
    await handle.signal(resumeSignal);
    const r = await env.result(handle);
    expect(r).toMatchObject({ status: 'completed', turns: 2, result: 'done' });
    expect(s.endTurns.map((t) => t.turn)).toEqual([1, 2]);
    expect(s.modelTurns[1]!.endTurn).toBeUndefined();
  });

  it('can be cancelled while paused', async () => {
    const s = new Script([{ calls: [calls.read()] }]);
    const handle = await env.start(s);
    await handle.signal(pauseSignal);
    await env.waitForState(handle, (st) => st.status === 'paused');
    await handle.signal(cancelSignal, { reason: 'not needed' });
    expect(await env.result(handle)).toMatchObject({ status: 'cancelled', reason: 'not needed' });
  });
});

describe('turn records', () => {
  it('each turn is recorded once: by the next model step, the last one before the end', async () => {
    const s = new Script([{ calls: [calls.read()], costUsd: 0.5 }, { calls: [calls.read()] }, { calls: [calls.complete()] }]);
    const r = await env.result(await env.start(s));
    expect(r).toMatchObject({ status: 'completed', turns: 3 });
    expect(s.modelTurns.map((m) => m.endTurn?.turn)).toEqual([undefined, 1, 2]);
    expect(s.modelTurns[1]!.endTurn).toMatchObject({ turn: 1, costUsd: 0.5, status: 'running' });
    // Turns 1 and 2 rode on the next model step; turn 3, with none after it, before the end.
    expect(s.endTurns.map((t) => t.turn)).toEqual([1, 2, 3]);
  });
});

describe('approval', () => {
  it('denies a call nobody decides on within the approval timeout (default action deny)', async () => {
    const write = calls.write();
    const s = new Script([{ calls: [write] }, { calls: [calls.complete()] }]);
    const r = await env.result(await env.start(s, { approval: 'always', approvalTimeoutMs: 800 }));
    expect(r.status).toBe('completed');
    expect(s.toolCalls).toHaveLength(0);
    expect(overrides(s)[0]).toMatchObject({ ok: false, status: 'denied' });
    expect(overrides(s)[0]!.output).toMatch(/no decision within/);
    expect(s.events.find((e) => e.type === 'approval_decided')).toMatchObject({ approved: false, timedOut: true });
  });

  it('runs the call on timeout when the timeout action is approve', async () => {
    const write = calls.write();
    const s = new Script([{ calls: [write] }, { calls: [calls.complete()] }]);
    await env.result(await env.start(s, { approval: 'always', approvalTimeoutMs: 800, approvalTimeoutAction: 'approve' }));
    expect(s.toolCalls.map((t) => t.callId)).toEqual([write.id]);
  });

  it('takes one decision and refuses a second', async () => {
    const cmd = calls.dangerous();
    const s = new Script([{ calls: [cmd] }, { calls: [calls.complete()] }]);
    const handle = await env.start(s, { approval: 'dangerous' });
    await env.waitForState(handle, (st) => st.pendingApproval?.callId === cmd.id);
    await handle.executeUpdate(decideApprovalUpdate, { args: [{ callId: cmd.id, approved: false, by: 'ana', reason: 'too risky' }] });
    await expect(handle.executeUpdate(decideApprovalUpdate, { args: [{ callId: cmd.id, approved: true }] })).rejects.toThrow();
    expect((await env.result(handle)).status).toBe('completed');
    expect(s.toolCalls).toHaveLength(0);
    expect(overrides(s)[0]!.output).toMatch(/ana denied .*too risky/);
  });
});

describe('questions', () => {
  it('fails the conversation when a question is not answered in time', async () => {
    const s = new Script([{ calls: [calls.ask()] }]);
    const r = await env.result(await env.start(s, { questionTimeoutMs: 800 }));
    expect(r).toMatchObject({ status: 'failed', reason: 'the question to the user was not answered in time' });
    expect(overrides(s)[0]).toMatchObject({ ok: false, output: 'No answer arrived in time.' });
  });

  it('passes the answer on to the model', async () => {
    const ask = calls.ask();
    const s = new Script([{ calls: [ask] }, { calls: [calls.complete()] }]);
    const handle = await env.start(s);
    await env.waitForState(handle, (st) => st.status === 'waiting' && st.pendingQuestion?.callId === ask.id);
    await handle.executeUpdate(answerUpdate, { args: [{ text: 'b.txt' }] });
    expect((await env.result(handle)).status).toBe('completed');
    expect(overrides(s)[0]).toMatchObject({ ok: true, output: '<answer>\nb.txt\n</answer>' });
  });
});

describe('budgets', () => {
  it('stops at the turn limit', async () => {
    const s = new Script([]);
    const r = await env.result(await env.start(s, { maxTurns: 3 }));
    expect(r).toMatchObject({ status: 'budget_exhausted', turns: 3 });
    expect(r.reason).toMatch(/turn limit/);
  });

  it('stops when the token budget is spent', async () => {
    const s = new Script([
      { calls: [calls.read()], tokens: 100 },
      { calls: [calls.read()], tokens: 100 },
      { calls: [calls.read()], tokens: 100 },
    ]);
    const r = await env.result(await env.start(s, { maxTokens: 150 }));
    expect(r).toMatchObject({ status: 'budget_exhausted', turns: 2 });
    expect(r.usage.totalTokens).toBe(200);
    expect(r.reason).toMatch(/token budget/);
  });

  it('stops when the cost budget is spent', async () => {
    const s = new Script([
      { calls: [calls.read()], costUsd: 0.3 },
      { calls: [calls.read()], costUsd: 0.3 },
      { calls: [calls.read()], costUsd: 0.3 },
    ]);
    const r = await env.result(await env.start(s, { maxCostUsd: 0.5 }));
    expect(r).toMatchObject({ status: 'budget_exhausted', turns: 2 });
    expect(r.reason).toMatch(/cost budget/);
  });

  it('ends a turn that outlasts the time budget', async () => {
    const never = new Deferred();
    const s = new Script([{ calls: [calls.read()], hold: never }]);
    const r = await env.result(await env.start(s, { maxTimeMs: 1500 }));
    expect(r).toMatchObject({ status: 'budget_exhausted', turns: 1 });
    expect(r.reason).toMatch(/time budget/);
    expect(s.finished?.status).toBe('budget_exhausted');
  });
});

describe('plan mode', () => {
  it('refuses a mutating call and runs read-only ones', async () => {
    const write = calls.write();
    const read = calls.read();
    const s = new Script([{ calls: [write] }, { calls: [read] }, { calls: [calls.complete()] }]);
    const r = await env.result(await env.start(s, { planMode: true }));
    expect(r.status).toBe('completed');
    expect(s.toolCalls.map((t) => t.callId)).toEqual([read.id]);
    expect(s.recorded[0]).toMatchObject({ callId: write.id, override: { ok: false, status: 'error' } });
    expect(s.recorded[0]!.override!.output).toMatch(/not allowed in plan mode/);
  });
});

describe('rollback in every state', () => {
  const rollbackNotice = (s: Script) => s.modelTurns.flatMap((m) => m.appends).find((a) => a.content.includes('rolled the workspace back'));

  it('between turns: the notice reaches the next model step', async () => {
    const hold = new Deferred();
    const s = new Script([{ calls: [calls.read()], hold }, { calls: [calls.complete()] }]);
    const handle = await env.start(s);
    await s.reached('model:1');
    const update = handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 0 }] });
    hold.resolve();
    expect(await update).toMatchObject({ commit: 'c0', restored: ['a.txt'], saved: 'saved1' });
    expect((await env.result(handle)).status).toBe('completed');
    expect(rollbackNotice(s)).toBeDefined();
  });

  it('while a tool call runs: after the call, never during it', async () => {
    const write = calls.write();
    const s = new Script([{ calls: [write] }, { calls: [calls.complete()] }]);
    const toolHold = new Deferred();
    s.holdTool.set(write.id, toolHold);
    const handle = await env.start(s, { approval: 'never' });
    await s.reached(`tool:${write.id}`);
    const update = await handle.startUpdate(rollbackUpdate, { args: [{ toTurn: 0 }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    toolHold.resolve();
    await update.result();
    expect(s.order).toEqual([`tool-end:${write.id}`, 'rollback']);
    expect((await env.result(handle)).status).toBe('completed');
  });

  it('while waiting for an approval, and while paused', async () => {
    const cmd = calls.dangerous();
    const s = new Script([{ calls: [cmd] }, { calls: [calls.complete()] }]);
    const handle = await env.start(s, { approval: 'dangerous' });
    await env.waitForState(handle, (st) => st.pendingApproval !== undefined);
    expect(await handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 0 }] })).toMatchObject({ commit: 'c0' });
    await handle.signal(pauseSignal);
    await handle.executeUpdate(decideApprovalUpdate, { args: [{ callId: cmd.id, approved: true }] });
    await env.waitForState(handle, (st) => st.status === 'paused');
    expect(await handle.executeUpdate(rollbackUpdate, { args: [{ commit: 'saved1' }] })).toMatchObject({ saved: 'saved2' });
    await handle.signal(resumeSignal);
    expect((await env.result(handle)).status).toBe('completed');
    expect(s.rollbacks.map((r) => r.commit ?? r.toTurn)).toEqual([0, 'saved1']);
  });

  it('two at once: run one after the other, both answered', async () => {
    const hold = new Deferred();
    const write = calls.write();
    const s = new Script([{ calls: [write] }, { calls: [calls.read()], hold }, { calls: [calls.complete()] }]);
    const handle = await env.start(s, { approval: 'never' });
    await s.reached('model:2');
    const [a, b] = [handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 1 }] }), handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 0 }] })];
    hold.resolve();
    const results = await Promise.all([a, b]);
    expect(results.map((r) => r.saved).sort()).toEqual(['saved1', 'saved2']);
    expect(s.rollbacks).toHaveLength(2);
    expect((await env.result(handle)).status).toBe('completed');
  });

  it('during the last turn and while the end is recorded: answered before the run returns', async () => {
    const s = new Script([{ calls: [calls.complete()] }]);
    s.holdFinish = new Deferred();
    const handle = await env.start(s);
    await s.reached('finish');
    // Accepted while the end is being recorded (delivered with the next workflow task); the
    // run then does not return before the rollback has run and been answered.
    const update = await handle.startUpdate(rollbackUpdate, { args: [{ toTurn: 0 }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    s.holdFinish.resolve();
    expect(await update.result()).toMatchObject({ commit: 'c0' });
    expect((await env.result(handle)).status).toBe('completed');
    // Its notice is kept in the transcript although no turn follows.
    expect(s.appended.some((m) => m.content.includes('rolled the workspace back'))).toBe(true);
  });

  it('after a cancel, while the end is recorded', async () => {
    const hold = new Deferred();
    const s = new Script([{ calls: [calls.read()], hold }]);
    s.holdFinish = new Deferred();
    const handle = await env.start(s);
    await s.reached('model:1');
    await handle.signal(cancelSignal, { reason: 'stop' });
    hold.resolve();
    await s.reached('finish');
    const update = await handle.startUpdate(rollbackUpdate, { args: [{ toTurn: 0 }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    s.holdFinish.resolve();
    expect(await update.result()).toMatchObject({ commit: 'c0' });
    expect(await env.result(handle)).toMatchObject({ status: 'cancelled', reason: 'stop' });
  });

  it('refuses a turn without a checkpoint', async () => {
    const hold = new Deferred();
    const s = new Script([{ calls: [calls.read()], hold }, { calls: [calls.complete()] }]);
    const handle = await env.start(s);
    await s.reached('model:1');
    const refused = await handle.executeUpdate(rollbackUpdate, { args: [{ toTurn: 7 }] }).catch((e: Error) => e);
    expect(((refused as Error).cause as Error | undefined)?.message).toMatch(/no checkpoint for turn 7; checkpoints exist for turns 0/);
    hold.resolve();
    expect((await env.result(handle)).status).toBe('completed');
    expect(s.rollbacks).toHaveLength(0);
  });
});
