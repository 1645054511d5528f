// Actions per turn: what Temporal Cloud would bill for a conversation, counted from the real
// histories of four runs on child-process workers: a plain conversation (a file written, a short
// command, the completion), an approval (the write waits for a person's update), a command that
// runs long (its heartbeats), and a failover (the worker SIGKILLed mid-answer, the model step
// retried on another). Billable, per Temporal Cloud's pricing page: the workflow started or
// continued as new, activities scheduled and each retry of one, the local activities of a workflow
// task (one action for all of them), timers, signals, updates, search-attribute upserts, child workflows, and activity
// heartbeats that reach the server. Heartbeats are not in a history: the SDK throttles them to at
// most one per 80% of the heartbeat timeout, so a run of d ms sends at most ceil(d / (0.8 × timeout)),
// counted from each activity's start and end as an upper bound.
// Run: npx tsx bench/actions.ts
import proto, { type temporal } from '@temporalio/proto';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { decideApproval } from '../src/client/actions.js';
import { runConfigSchema } from '../src/config.js';
import { stateQuery, WORKFLOW_TYPE, type ConversationInput, type ConversationResult } from '../workflows/api.js';
import { childWorkerBench } from './child-workers.js';
import { benchRepo, benchScript } from './harness.js';

process.env.AGENTRUN_LOG_LEVEL ??= 'warn';
const GOAL_PER_TURN = 3;
const HEARTBEAT_TIMEOUT_MS = runConfigSchema.parse({ model: 'x' }).heartbeatTimeoutMs;

type Event = temporal.api.history.v1.IHistoryEvent;
const completion = '<attempt_completion>\n<result>done</result>\n</attempt_completion>';
const write = 'Writing.\n<write_to_file>\n<path>a.txt</path>\n<content>\nhello\n</content>\n</write_to_file>';
const SCENARIOS = {
  plain: {
    turns: [
      { say: write },
      { say: '<execute_command>\n<command>echo hi</command>\n<requires_approval>false</requires_approval>\n</execute_command>' },
      { say: completion },
    ],
  },
  approval: { turns: [{ say: write }, { say: completion }] },
  'long command': {
    turns: [{ say: '<execute_command>\n<command>sleep 40</command>\n<requires_approval>false</requires_approval>\n</execute_command>' }, { say: completion }],
  },
  failover: { turns: [{ say: `${'A long explanation. '.repeat(200)}\n${write}`, chunk: 10, delay_ms: 10 }, { say: completion }] },
} as const;

const ms = (t: Event['eventTime']) => Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

/** Billable actions of a history, by kind. */
function actions(events: Event[]): Record<string, number> {
  const out: Record<string, number> = {};
  const add = (k: string, n = 1) => (out[k] = (out[k] ?? 0) + n);
  const scheduledAt = new Map<string, number>();
  const localTasks = new Set<string>();
  for (const e of events) {
    if (e.workflowExecutionStartedEventAttributes) add('workflow started');
    if (e.workflowExecutionContinuedAsNewEventAttributes) add('continued as new');
    if (e.activityTaskScheduledEventAttributes) add('activities');
    if (e.activityTaskStartedEventAttributes) {
      const a = e.activityTaskStartedEventAttributes;
      if ((a.attempt ?? 1) > 1) add('activity retries', (a.attempt ?? 1) - 1);
      scheduledAt.set(String(a.scheduledEventId), ms(e.eventTime));
    }
    const ended =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    if (ended) {
      const started = scheduledAt.get(String(ended.scheduledEventId));
      if (started !== undefined) add('heartbeats (at most)', Math.max(0, Math.ceil((ms(e.eventTime) - started) / (0.8 * HEARTBEAT_TIMEOUT_MS)) - 1));
    }
    // All local activities a workflow task completes count as one action; patch markers are free.
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') localTasks.add(String(marker.workflowTaskCompletedEventId));
    if (e.timerStartedEventAttributes) add('timers');
    if (e.workflowExecutionSignaledEventAttributes) add('signals');
    if (e.workflowExecutionUpdateAcceptedEventAttributes) add('updates');
    if (e.upsertWorkflowSearchAttributesEventAttributes) add('search-attribute upserts');
    if (e.startChildWorkflowExecutionInitiatedEventAttributes) add('child workflows', 2);
  }
  if (localTasks.size) add('local activities (per workflow task)', localTasks.size);
  return out;
}

const bench = await childWorkerBench();
const load = loadavg();
const rows: { scenario: string; turns: number; actions: number; perTurn: number; historyBytes: number; byKind: Record<string, number> }[] = [];
try {
  for (const [scenario, script] of Object.entries(SCENARIOS)) {
    const h = bench.queue();
    const worker = await bench.worker(h);
    const workspace = await benchRepo();
    const config = runConfigSchema.parse({ model: await benchScript(script), approval: scenario === 'approval' ? 'always' : 'never' });
    const handle = await bench.client.workflow.start(WORKFLOW_TYPE, {
      workflowId: `bench-actions-${scenario.replace(' ', '-')}-${Date.now()}`,
      taskQueue: h.taskQueue,
      args: [{ task: `actions: ${scenario}`, workspace, config } satisfies ConversationInput],
    });
    if (scenario === 'approval') {
      while ((await handle.query(stateQuery)).status !== 'waiting') await new Promise((r) => setTimeout(r, 100));
      await decideApproval(handle, { approved: true, by: 'bench' });
    }
    if (scenario === 'failover') {
      while ((await bench.store.readStream(handle.workflowId, 0, 1000)).filter((r) => r.event.type === 'delta').length < 5)
        await new Promise((r) => setTimeout(r, 50));
      await worker.kill('SIGKILL');
      await bench.worker(h);
    }
    const result = (await handle.result()) as ConversationResult;
    if (result.status !== 'completed') throw new Error(`${scenario}: the conversation ended ${result.status}: ${result.reason}`);
    const history = await handle.fetchHistory();
    const byKind = actions(history.events ?? []);
    const total = Object.values(byKind).reduce((a, b) => a + b, 0);
    const historyBytes = proto.temporal.api.history.v1.History.encode(history).finish().length;
    rows.push({ scenario, turns: result.turns, actions: total, perTurn: total / result.turns, historyBytes, byKind });
    await rm(workspace, { recursive: true, force: true });
  }
  console.log(
    `Billable actions per conversation (heartbeat timeout ${HEARTBEAT_TIMEOUT_MS / 1000} s; load average ${load.map((x) => x.toFixed(2)).join(' ')})`,
  );
  for (const r of rows)
    console.log(
      `  ${r.scenario.padEnd(14)} ${String(r.turns).padStart(2)} turns ${String(r.actions).padStart(4)} actions ${r.perTurn.toFixed(1).padStart(5)}/turn ${String(Math.round(r.historyBytes / r.turns)).padStart(6)} history bytes/turn  ${Object.entries(
        r.byKind,
      )
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}`,
    );
  const plain = rows.find((r) => r.scenario === 'plain')!;
  console.log(`  goal: a plain turn costs at most ${GOAL_PER_TURN}: ${plain.perTurn <= GOAL_PER_TURN ? 'met' : 'NOT met'} (${plain.perTurn.toFixed(1)})`);
  console.log(JSON.stringify({ bench: 'actions', plainPerTurn: plain.perTurn, rows }));
} finally {
  await bench.close();
}
process.exit(0);
