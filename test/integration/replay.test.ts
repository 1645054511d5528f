// Replay: histories recorded from real runs (test/histories/*.json, as `temporal workflow show
// --output json` writes them) must replay against the current workflow code. A workflow change
// that breaks them needs patched(); this test is the gate.
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { installRuntime } from '../../worker/index.js';
import { changedSince, MANIFEST, readManifest, workflowsHash } from '../histories/manifest.js';

const DIR = join(import.meta.dirname, '../histories');

async function histories(): Promise<{ file: string; workflowId: string; history: any }[]> {
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (f) => {
      const history = JSON.parse(await readFile(join(DIR, f), 'utf8'));
      // A parent's sub-agent ids derive from its own (`<id>.sub-<n>`): replay it under the id it had.
      const child = history.events.find((e: any) => e.startChildWorkflowExecutionInitiatedEventAttributes)?.startChildWorkflowExecutionInitiatedEventAttributes
        .workflowId as string | undefined;
      // A batch's jobs are `<batch id>-<n>`.
      const batch = history.events[0].workflowExecutionStartedEventAttributes.workflowType.name === 'batch';
      return { file: f, workflowId: child?.replace(batch ? /-\d+$/ : /\.sub-\d+$/, '') ?? f, history };
    }),
  );
}

async function replay(items: { workflowId: string; history: any }[]) {
  installRuntime();
  const code = await readFile(inject('workflowBundlePath'), 'utf8');
  const results: { workflowId: string; error?: Error }[] = [];
  const parsed = items.map((i) => ({ workflowId: i.workflowId, history: historyFromJSON(i.history) }));
  for await (const r of Worker.runReplayHistories({ workflowBundle: { code } }, parsed)) results.push(r);
  return results;
}

describe('replay of recorded histories', () => {
  it('replays every recorded history against the current workflow code', async () => {
    const items = await histories();
    // Only the `session` and `batch` types: the retired `conversation` type's histories went with its code (src/retired.ts).
    expect(items.every((i) => ['session', 'batch'].includes(i.history.events[0].workflowExecutionStartedEventAttributes.workflowType.name))).toBe(true);
    // The `session` workflow's paths, recorded by test/histories/record.ts.
    const session = [
      'edit-and-complete',
      'approval',
      'question',
      'rollback',
      'cancel',
      'pause',
      'budget',
      'time-budget',
      'loop',
      'no-tool',
      'plan-mode',
      'context-length',
      'continue-as-new',
      'continue-as-new-run2',
      'delegate',
      'delegate-child-writer',
      'delegate-on-parent-host',
      'stop-hook',
      'continue-as-new-auto-upgrade',
      'continue-as-new-auto-upgrade-run2',
      'turn-record-pause',
      'turn-record-continue-as-new',
      'turn-record-continue-as-new-run2',
      'outcome-failed',
      'outcome-budget',
      'outcome-cancel-request',
      'steps',
      'call-phases',
    ];
    expect(items.map((i) => i.file)).toEqual(expect.arrayContaining(session.map((n) => `session-${n}.json`)));
    // Repository jobs on the `session` workflow, recorded by test/integration/fleet.test.ts (AGENTRUN_RECORD_HISTORIES=1).
    expect(items.map((i) => i.file)).toEqual(
      expect.arrayContaining([
        'fleet-failover.json',
        'fleet-drain.json',
        'fleet-fork.json',
        'fleet-local-failover.json',
        'fleet-rollback-move.json',
        // The turn-0 checkpoint made alongside the first model step; its host lost meanwhile.
        'fleet-turn-zero-alongside.json',
        'fleet-turn-zero-host-lost.json',
        // ... and failing for another reason: the conversation ends at the step that waits for it, the first step's usage counted.
        'fleet-turn-zero-failed.json',
        // The first turn's reads run while the checkpoint is made; a read lost with its host.
        'fleet-turn-zero-reads-first.json',
        'fleet-turn-zero-read-host-lost.json',
        // A write cut off by its host's loss made again on the new host (test/integration/fleet-host-loss.test.ts).
        'fleet-host-loss-pinned-write.json',
        // A budget that pauses, raised after a worker's SIGKILL; a wait that ran out onto a partial branch (test/integration/rollout.test.ts).
        'fleet-budget-pause.json',
        'fleet-budget-partial-branch.json',
        // A batch in waves halted by its brake and resumed with --override.
        'batch-waves-halt-resume.json',
        // A batch whose jobs each bring their own task, workspace and options: an eval run (test/integration/eval.test.ts).
        'batch-eval-jobs.json',
        // A provider's refusal waited for on a durable timer, the step scheduled again (test/integration/pools.test.ts).
        'pools-provider-wait.json',
        // A frozen host probed after its step's first attempt timed out, declared lost; a host that answered the probe, the step run there again (test/integration/fence.test.ts).
        'fence-frozen-host.json',
        'fence-probe-answered.json',
        // A host frozen during setup and during verify, probed after the step's first attempt timed out (test/integration/fence.test.ts).
        'fence-frozen-setup.json',
        'fence-frozen-verify.json',
        // The same recorded before probe-setup-before-retry: the host found lost after the server's retries (its unpatched branch).
        'fence-frozen-setup-unpatched.json',
        'fence-frozen-verify-unpatched.json',
      ]),
    );
    const results = await replay(items);
    expect(results.map((r) => [r.workflowId, r.error?.message])).toEqual(items.map((i) => [i.workflowId, undefined]));
  });

  it('has a history recorded against the current workflow code (patched() discipline)', () => {
    // A change to workflow code must come with a recorded history of the changed path (and
    // patched() where it changes commands); the recorders write test/histories/workflows.manifest.
    const m = readManifest();
    const how =
      'record a history of the changed path against the current code: `npx tsx test/histories/record.ts <scenario>` (dev server and PostgreSQL, see its header) ' +
      'or `AGENTRUN_RECORD_HISTORIES=1 npx vitest run test/integration/fleet.test.ts -t <test>`; either rewrites test/histories/workflows.manifest. ' +
      'Put changes to the commands a workflow issues behind patched().';
    expect(m, `${MANIFEST} is missing: ${how}`).toBeDefined();
    expect(existsSync(join(DIR, m!.history)), `${m!.history} named by ${MANIFEST} is missing: ${how}`).toBe(true);
    expect(
      m!.workflows,
      `workflow code (${changedSince(m!).join(', ')}) changed after the newest recorded history (${m!.history}, ${m!.recordedAt}): ${how}`,
    ).toBe(workflowsHash());
  });

  it('detects a session history the code would not produce (the gate can fail)', async () => {
    const [edit] = (await histories()).filter((i) => i.file === 'session-edit-and-complete.json');
    const tampered = structuredClone(edit!.history);
    const target = tampered.events.find((e: any) => e.activityTaskScheduledEventAttributes?.activityType.name === 'modelTurn');
    target.activityTaskScheduledEventAttributes.activityType.name = 'toolCall';
    const [result] = await replay([{ workflowId: 'tampered-session', history: tampered }]);
    expect(result!.error?.name).toMatch(/DeterminismViolation/);
  });
});
