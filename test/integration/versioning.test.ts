// Worker Versioning on the dev server: two worker versions of one deployment side by side. A
// conversation started on v1 stays on v1 (PINNED) after v2 becomes current, and finishes there;
// a conversation started after the switch runs on v2. At its next continue-as-new a pinned
// conversation moves to the current version.
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationTimeline, timelineOf } from '../../src/client/inspection.js';
import { runConfigSchema } from '../../src/config.js';
import { adoptAsFirstVersion } from '../../src/runtime/deployment.js';
import { log } from '../../src/log.js';
import { createWorker, installRuntime } from '../../worker/index.js';
import { answerUpdate, WORKFLOW_TYPE, type ConversationInput, type ConversationResult } from '../../workflows/api.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';

let h: Harness;
let nc: NativeConnection;
const workers: { worker: Worker; running: Promise<void> }[] = [];
const deploymentName = uid('agentrun-deploy');

beforeAll(async () => {
  h = await createHarness({ worker: false });
  installRuntime();
  nc = await NativeConnection.connect({ address: h.temporalAddress });
});

afterAll(async () => {
  for (const w of workers) if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
  await Promise.all(workers.map((w) => w.running.catch(() => undefined)));
  await nc?.close();
  await h?.close();
});

/** A worker of `deployment` (own name and task queue per test) as build `buildId`. */
interface Deployment {
  name: string;
  taskQueue: string;
}
const first: Deployment = { name: deploymentName, taskQueue: '' };

async function startVersion(buildId: string, d: Deployment = first): Promise<void> {
  const worker = await createWorker({
    connection: nc,
    taskQueue: d.taskQueue || h.taskQueue,
    store: h.store,
    home: h.home,
    workflowBundlePath: h.workflowBundlePath,
    shutdownGraceTime: '2s',
    deployment: { name: d.name, buildId, behavior: 'PINNED' },
  });
  workers.push({ worker, running: worker.run() });
}

/** Make `buildId` the deployment's current version, once its worker has registered it (polling). */
async function setCurrent(buildId: string, d: Deployment = first): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      await h.client.workflowService.setWorkerDeploymentCurrentVersion({ namespace: 'default', deploymentName: d.name, buildId, identity: 'versioning-test' });
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

/** The build ids of the workers that completed the workflow tasks of a conversation, in order. */
async function buildIdsOf(id: string): Promise<string[]> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const a = e.workflowTaskCompletedEventAttributes;
    return a ? [a.deploymentVersion?.buildId ?? a.workerVersion?.buildId ?? '(none)'] : [];
  });
}

async function versioningOf(id: string) {
  const { raw } = await h.client.workflow.getHandle(id).describe();
  const info = raw.workflowExecutionInfo?.versioningInfo;
  return { behavior: info?.behavior, buildId: info?.deploymentVersion?.buildId ?? undefined };
}

describe('Worker Versioning (PINNED conversations)', () => {
  it('keeps a running conversation on its version while new ones start on the current one', async () => {
    const question = await scriptModel({
      turns: [
        { say: '<ask_followup_question>\n<question>Which file?</question>\n</ask_followup_question>' },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    await startVersion('v1');
    await setCurrent('v1');
    const first = await h.start({ task: 'ask first', workspace: await tempRepo(), config: { model: question } });
    await h.waitForState(first.workflowId, (s) => !!s.pendingQuestion);

    // Deploy v2 beside v1 and make it current.
    await startVersion('v2');
    await setCurrent('v2');
    const second = await h.start({ task: 'ask second', workspace: await tempRepo(), config: { model: question } });
    await h.waitForState(second.workflowId, (s) => !!s.pendingQuestion);

    // The running one is still pinned to v1 and is answered there; the new one runs on v2.
    await first.executeUpdate(answerUpdate, { args: [{ text: 'a.ts' }] });
    await second.executeUpdate(answerUpdate, { args: [{ text: 'b.ts' }] });
    expect(((await first.result()) as ConversationResult).status).toBe('completed');
    expect(((await second.result()) as ConversationResult).status).toBe('completed');

    expect(new Set(await buildIdsOf(first.workflowId))).toEqual(new Set(['v1']));
    expect(new Set(await buildIdsOf(second.workflowId))).toEqual(new Set(['v2']));
    const [v1, v2] = [await versioningOf(first.workflowId), await versioningOf(second.workflowId)];
    expect(v1.buildId).toBe('v1');
    expect(v2.buildId).toBe('v2');
    // inspect's timeline names the worker version that scheduled each step.
    const timeline = timelineOf(await first.fetchHistory(), 1);
    expect(timeline.activities.length).toBeGreaterThan(0);
    expect(new Set(timeline.activities.map((a) => a.workerVersion))).toEqual(new Set(['v1']));
  });

  it('moves a pinned conversation to the current version at its next continue-as-new', async () => {
    const d: Deployment = { name: uid('agentrun-deploy-can'), taskQueue: uid('tq-can') };
    // Turn 1 asks and waits (on v1); every turn ends its run, so turns 2 and 3 each start a new run.
    const model = await scriptModel({
      turns: [
        { say: '<ask_followup_question>\n<question>Which file?</question>\n</ask_followup_question>' },
        { say: '<write_to_file>\n<path>a.txt</path>\n<content>a</content>\n</write_to_file>' },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    await startVersion('can-v1', d);
    await setCurrent('can-v1', d);
    const input: ConversationInput = {
      task: 'ask, then write',
      workspace: await tempRepo(),
      config: runConfigSchema.parse({ model, continueAsNewEveryTurns: 1 }),
      searchAttributes: true,
    };
    const conv = await h.client.workflow.start(WORKFLOW_TYPE, { workflowId: uid('conv-can'), taskQueue: d.taskQueue, args: [input] });
    await h.waitForState(conv.workflowId, (s) => !!s.pendingQuestion);

    await startVersion('can-v2', d);
    await setCurrent('can-v2', d);
    await conv.executeUpdate(answerUpdate, { args: [{ text: 'a.txt' }] });
    expect(((await conv.result()) as ConversationResult).status).toBe('completed');

    // What `inspect` shows: run 1 (started before the switch) on v1 throughout, the runs after
    // its continue-as-new on v2.
    const timeline = await conversationTimeline(h.client, conv.workflowId);
    const runs = [...new Set(timeline.activities.map((a) => a.run))];
    expect(runs.length).toBeGreaterThanOrEqual(3);
    expect(timeline.events.filter((e) => e.kind === 'continued_as_new').length).toBe(runs.length - 1);
    const versionsOf = (run: number) => new Set(timeline.activities.filter((a) => a.run === run).map((a) => a.workerVersion));
    expect(versionsOf(1)).toEqual(new Set(['can-v1']));
    for (const run of runs.slice(1)) expect(versionsOf(run)).toEqual(new Set(['can-v2']));
    expect((await versioningOf(conv.workflowId)).buildId).toBe('can-v2');
  });
  it('makes the first build of a new deployment current by itself, and leaves later builds to the rollout', async () => {
    const d: Deployment = { name: uid('agentrun-deploy-first'), taskQueue: uid('tq-first') };
    const done = await scriptModel({ turns: [{ say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' }] });
    await startVersion('first-1', d);
    // Nobody runs set-current-version: the worker adopts its own build as the deployment's first version.
    expect(await adoptAsFirstVersion(h.client, { name: d.name, buildId: 'first-1' }, log)).toBe('adopted');
    const run = await h.start({ task: 'finish', workspace: await tempRepo(), config: { model: done }, taskQueue: d.taskQueue });
    expect(((await run.result()) as ConversationResult).status).toBe('completed');
    expect(new Set(await buildIdsOf(run.workflowId))).toEqual(new Set(['first-1']));

    // A later build of the same deployment does not take over: the current version stays until promoted.
    await startVersion('first-2', d);
    expect(await adoptAsFirstVersion(h.client, { name: d.name, buildId: 'first-2' }, log)).toBe('has-current');
    const again = await h.start({ task: 'finish again', workspace: await tempRepo(), config: { model: done }, taskQueue: d.taskQueue });
    expect(((await again.result()) as ConversationResult).status).toBe('completed');
    expect(new Set(await buildIdsOf(again.workflowId))).toEqual(new Set(['first-1']));
  });
});
