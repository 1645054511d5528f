// The Temporal UI as an operator's window: a session's activities carry summaries, the workflow a
// summary at start and current details. Read as the UI reads them (its own HTTP API, on a dev
// server that serves the UI), and seen in the UI itself in Chromium (a screenshot).
import { conversationResult } from '../../src/client/outcome.js';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { defaultPayloadConverter } from '@temporalio/common';
import { workflowMetadataQuery } from '@temporalio/workflow';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../src/config.js';
import { startTemporalDevServer } from '../../src/embedded/temporal.js';
import { createWorker, installRuntime } from '../../worker/index.js';
import { WORKFLOW_TYPE, type ConversationInput } from '../../workflows/api.js';
import { sessionStartMetadata } from '../../workflows/summaries.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';

const SHOTS = join(import.meta.dirname, '__screenshots__');

let h: Harness;
let server: Awaited<ReturnType<typeof startTemporalDevServer>>;
let client: Client;
let connection: Connection;
let nc: NativeConnection;
let stopWorker: () => Promise<void>;
const taskQueue = uid('tq-meta');

beforeAll(async () => {
  h = await createHarness({ worker: false });
  // A dev server of its own, with the UI (the run's shared one is headless).
  server = await startTemporalDevServer(await tempDir('agentrun-ui-home-'), { headless: false });
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
  installRuntime();
  nc = await NativeConnection.connect({ address: server.address });
  const worker = await createWorker({
    connection: nc,
    taskQueue,
    store: h.store,
    home: h.home,
    workflowBundlePath: h.workflowBundlePath,
    shutdownGraceTime: '2s',
  });
  const running = worker.run();
  stopWorker = async () => {
    worker.shutdown();
    await running;
  };
});

afterAll(async () => {
  await stopWorker?.();
  await nc?.close();
  await connection?.close();
  await server?.stop();
  await h?.close();
});

interface HistoryEvent {
  eventType: string;
  userMetadata?: { summary?: { metadata: Record<string, string>; data: string }; details?: { metadata: Record<string, string>; data: string } };
  activityTaskScheduledEventAttributes?: { activityType: { name: string } };
}

/** A payload as the UI's JSON API returns it (base64 fields), decoded. */
function decode(p: { metadata: Record<string, string>; data: string } | undefined): unknown {
  if (!p) return undefined;
  const b = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
  return defaultPayloadConverter.fromPayload({ metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, b(v)])), data: b(p.data) });
}

describe('the Temporal UI', () => {
  it('shows a summary per activity, the workflow summary and its current details', async () => {
    const workspace = await tempRepo({ 'README.md': '# demo\n' });
    const model = await scriptModel({
      turns: [
        { say: '<execute_command>\n<command>echo hello from the operator view</command>\n<requires_approval>false</requires_approval>\n</execute_command>' },
        { say: '<read_file>\n<path>README.md</path>\n</read_file>' },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    const input: ConversationInput = {
      task: 'Say hello in the workspace\nand then read the README',
      workspace,
      config: runConfigSchema.parse({ model, approval: 'never' }),
    };
    const id = uid('conv-meta');
    const handle = await client.workflow.start(WORKFLOW_TYPE, { workflowId: id, taskQueue, args: [input], ...sessionStartMetadata(input) });
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');

    // The history as the UI fetches it.
    const res = await fetch(new URL(`/api/v1/namespaces/default/workflows/${id}/history?maximumPageSize=1000`, server.uiUrl));
    expect(res.status).toBe(200);
    const { history } = (await res.json()) as { history: { events: HistoryEvent[] } };
    const scheduled = history.events.filter((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED');
    const rows = scheduled.map((e) => [e.activityTaskScheduledEventAttributes!.activityType.name, decode(e.userMetadata?.summary)]);
    expect(rows).toEqual([
      ['placeLocalWorkspace', `setup · place ${workspace}`],
      ['initConversation', 'setup · workspace, checkpoint and first messages'],
      ['modelTurn', 'turn 1 · model scripted:script.yaml'],
      ['toolCall', 'turn 1 · execute_command echo hello from the operator view'],
      ['modelTurn', 'turn 2 · model scripted:script.yaml'],
      ['toolCall', 'turn 2 · read_file README.md'],
      ['modelTurn', 'turn 3 · model scripted:script.yaml'],
    ]);
    const started = history.events.find((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED')!;
    expect(decode(started.userMetadata?.summary)).toBe(`Say hello in the workspace · ${workspace}`);
    expect(decode(started.userMetadata?.details)).toMatch(/^\*\*model\*\* scripted:.*\n\nSay hello in the workspace\nand then read the README$/s);

    // Current details, through the query the UI sends.
    const meta = await handle.query(workflowMetadataQuery);
    expect(meta.currentDetails).toBe(`**turn** 3 · **status** completed · **cost** $0.0000 · **tokens** ${result.usage.totalTokens}`);
    expect(result.usage.totalTokens).toBeGreaterThan(0);

    // And in the UI itself.
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1700 } });
      await page.goto(new URL(`/namespaces/default/workflows/${id}/${handle.firstExecutionRunId}/history`, server.uiUrl).href);
      await page.getByText('Compact', { exact: true }).click();
      await page.getByText('turn 1 · execute_command echo hello from the operator view').first().waitFor({ timeout: 30_000 });
      // The README's pictures: rewritten in the checkout only when missing or asked for (a real
      // run's ids and times differ each time); otherwise taken all the same, into a directory of their own.
      const shots =
        existsSync(join(SHOTS, 'temporal-ui-history.png')) && process.env.UPDATE_SCREENSHOTS !== '1' ? await tempDir('agentrun-metadata-shots-') : SHOTS;
      mkdirSync(shots, { recursive: true });
      await page.screenshot({ path: join(shots, 'temporal-ui-history.png'), fullPage: true });
      await page.getByText('User Metadata', { exact: true }).click();
      await page.waitForTimeout(1500);
      await page.screenshot({ path: join(shots, 'temporal-ui-metadata.png'), fullPage: true });
      await page.getByText('Timeline', { exact: true }).first().click();
      await page.waitForTimeout(1500);
      await page.screenshot({ path: join(shots, 'temporal-ui-timeline.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
