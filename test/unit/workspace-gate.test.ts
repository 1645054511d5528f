// The workspace gate of the session workflow (workflows/session/workspace-gate.ts): readers overlap,
// writers run alone and in the order they asked.
import { describe, expect, it } from 'vitest';
import { WorkspaceGate } from '../../workflows/session/workspace-gate.js';

/** A step that runs until the test lets it finish, logging its start and end. */
function steps(log: string[]) {
  const open = new Map<string, () => void>();
  const step = (name: string) => () =>
    new Promise<string>((resolve) => {
      log.push(`+${name}`);
      open.set(name, () => {
        log.push(`-${name}`);
        resolve(name);
      });
    });
  const finish = async (name: string) => {
    for (let i = 0; i < 20 && !open.has(name); i++) await Promise.resolve();
    open.get(name)!();
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  return { step, finish };
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('WorkspaceGate', () => {
  it('runs readers queued together side by side', async () => {
    const log: string[] = [];
    const { step, finish } = steps(log);
    const gate = new WorkspaceGate();
    const all = Promise.all([gate.shared(step('r1')), gate.shared(step('r2')), gate.shared(step('r3'))]);
    await settle();
    expect(log).toEqual(['+r1', '+r2', '+r3']);
    await finish('r2');
    await finish('r1');
    await finish('r3');
    expect(await all).toEqual(['r1', 'r2', 'r3']);
  });

  it('keeps writers alone and in order: readers after a writer wait for it, a writer after readers waits for all of them', async () => {
    const log: string[] = [];
    const { step, finish } = steps(log);
    const gate = new WorkspaceGate();
    const w1 = gate.exclusive(step('w1'));
    const r1 = gate.shared(step('r1'));
    const r2 = gate.shared(step('r2'));
    const w2 = gate.exclusive(step('w2'));
    const r3 = gate.shared(step('r3'));
    await settle();
    expect(log).toEqual(['+w1']);
    await finish('w1');
    expect(log).toEqual(['+w1', '-w1', '+r1', '+r2']);
    await finish('r1');
    expect(log.at(-1)).toBe('-r1');
    await finish('r2');
    expect(log.slice(-2)).toEqual(['-r2', '+w2']);
    await finish('w2');
    expect(log.slice(-2)).toEqual(['-w2', '+r3']);
    await finish('r3');
    await Promise.all([w1, r1, r2, w2, r3]);
  });

  it('releases the gate when a step fails', async () => {
    const gate = new WorkspaceGate();
    await expect(gate.shared(() => Promise.reject(new Error('read failed')))).rejects.toThrow('read failed');
    await expect(gate.exclusive(() => Promise.reject(new Error('write failed')))).rejects.toThrow('write failed');
    expect(await gate.exclusive(async () => 'next')).toBe('next');
    expect(await gate.shared(async () => 'read')).toBe('read');
  });

  it("holds turn 0's checkpoint: a rollback waits for it, it clears once made and stays when it failed", async () => {
    const log: string[] = [];
    const { step, finish } = steps(log);
    const gate = new WorkspaceGate();
    expect(gate.turnZero).toBeUndefined();
    gate.makingTurnZero(step('checkpoint')().then(() => undefined));
    expect(gate.turnZero).toBeDefined();
    const rollback = gate.exclusiveAfterTurnZero(step('rollback'));
    await settle();
    expect(log).toEqual(['+checkpoint']);
    await finish('checkpoint');
    expect(log).toEqual(['+checkpoint', '-checkpoint', '+rollback']);
    expect(gate.turnZero).toBeUndefined();
    await finish('rollback');
    expect(await rollback).toBe('rollback');

    const failing = new WorkspaceGate();
    failing.makingTurnZero(Promise.reject(new Error('checkpoint failed')));
    await settle();
    await expect(failing.turnZero).rejects.toThrow('checkpoint failed');
    await expect(failing.exclusiveAfterTurnZero(async () => 'rolled back')).rejects.toThrow('checkpoint failed');
  });
});
