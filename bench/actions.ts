// Actions per turn: what Temporal Cloud would bill for a conversation, counted from the real
// histories of runs on child-process workers, started as `agentrun run` starts them (search
// attributes given at the start): a plain conversation (a file written, a short command, the
// completion) and the same with twice the turns, so the cost of one more turn stands apart from the
// conversation's own; an approval (the write waits for a person's update); a command that runs long
// (its heartbeats); a failover (the worker SIGKILLed mid-answer, the model step retried on another).
// Billable, per Temporal Cloud's actions page: the workflow started or continued as new, activities
// scheduled and each retry of one, the local activities of a workflow task (one action for all of
// them), timers, signals, updates, search-attribute upserts (not the SDK's own TemporalChangeVersion,
// which is exempt), child workflows, and activity heartbeats that reach the server: counted by the
// dev server itself (its RecordActivityTaskHeartbeat requests), not estimated. Queries are billed
// too; the product makes none in a turn (this bench's own, waiting for the approval, are left out).
// Activities come from `agentrun inspect`'s reading of a history (timelineOf).
// Run: npx tsx bench/actions.ts
// Measured 2026-11-29 on 2 shared cores: one more plain turn 8.3 actions before (every step sent a
// heartbeat at its start: 28 for six turns; search attributes upserted whole at each publish; load
// average 5.5), 3.0 after, and 6.0 a conversation around its turns (load average 9.7).
import proto, { type temporal } from '@temporalio/proto';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { decideApproval } from '../src/client/actions.js';
import { startConversation } from '../src/client/conversations.js';
import { timelineOf } from '../src/client/inspection.js';
import { runConfigSchema } from '../src/config.js';
import { stateQuery, type ConversationResult } from '../workflows/api.js';
import { childWorkerBench } from './child-workers.js';
import { benchRepo, benchScript } from './harness.js';

process.env.AGENTRUN_LOG_LEVEL ??= 'warn';
const GOAL_PER_TURN = 3;

type Event = temporal.api.history.v1.IHistoryEvent;
const completion = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };
const write = (file: string) => ({ say: `Writing.\n<write_to_file>\n<path>${file}</path>\n<content>\nhello\n</content>\n</write_to_file>` });
const command = (cmd: string) => ({ say: `<execute_command>\n<command>${cmd}</command>\n<requires_approval>false</requires_approval>\n</execute_command>` });
const SCENARIOS = {
  plain: { turns: [write('a.txt'), command('echo hi'), completion] },
  'plain, 6 turns': { turns: [write('a.txt'), command('echo hi'), write('b.txt'), command('echo ho'), write('c.txt'), completion] },
  approval: { turns: [write('a.txt'), completion] },
  'long command': { turns: [command('sleep 40'), completion] },
  failover: { turns: [{ say: `${'A long explanation. '.repeat(200)}\n${write('a.txt').say}`, chunk: 10, delay_ms: 10 }, completion] },
} as const;

/** A free TCP port on this machine, for the dev server's metrics. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });

/** The activity heartbeats the dev server has taken so far (its frontend's request counter). */
async function heartbeatsSoFar(metricsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('service_requests{') && line.includes('operation="RecordActivityTaskHeartbeat"')) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
}

/** Billable actions of a history, by kind (the heartbeats are counted by the server, apart). */
function actions(history: temporal.api.history.v1.IHistory): Record<string, number> {
  const out: Record<string, number> = {};
  const add = (k: string, n = 1) => n && (out[k] = (out[k] ?? 0) + n);
  const { activities } = timelineOf(history, 1, { local: true });
  const scheduled = activities.filter((a) => !a.local);
  add('activities', scheduled.length);
  add(
    'activity retries',
    scheduled.reduce((n, a) => n + Math.max(0, a.attempts - 1), 0),
  );
  add('local activities (per workflow task)', new Set(activities.filter((a) => a.local).map((a) => a.workflowTask)).size);
  for (const e of (history.events ?? []) as Event[]) {
    if (e.workflowExecutionStartedEventAttributes) add('workflow started');
    if (e.workflowExecutionContinuedAsNewEventAttributes) add('continued as new');
    if (e.timerStartedEventAttributes) add('timers');
    if (e.workflowExecutionSignaledEventAttributes) add('signals');
    if (e.workflowExecutionUpdateAcceptedEventAttributes) add('updates');
    const upserted = Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {});
    if (upserted.some((k) => k !== 'TemporalChangeVersion')) add('search-attribute upserts');
    if (e.startChildWorkflowExecutionInitiatedEventAttributes) add('child workflows', 2);
  }
  return out;
}

const metricsPort = await freePort();
const bench = await childWorkerBench({ metricsPort });
const load = loadavg();
const rows: { scenario: string; turns: number; actions: number; perTurn: number; historyBytes: number; byKind: Record<string, number> }[] = [];
try {
  for (const [scenario, script] of Object.entries(SCENARIOS)) {
    const h = bench.queue();
    const worker = await bench.worker(h);
    const workspace = await benchRepo();
    const config = runConfigSchema.parse({ model: await benchScript(script), approval: scenario === 'approval' ? 'always' : 'never' });
    const beatsBefore = await heartbeatsSoFar(metricsPort);
    const id = `bench-actions-${scenario.replace(/\W+/g, '-')}-${Date.now()}`;
    const { handle } = await startConversation(
      { client: bench.client, taskQueue: h.taskQueue, searchAttributes: true },
      { task: `actions: ${scenario}`, workspace, config },
      id,
    );
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
    const byKind = actions(history);
    const beats = (await heartbeatsSoFar(metricsPort)) - beatsBefore;
    if (beats) byKind['heartbeats'] = beats;
    const total = Object.values(byKind).reduce((a, b) => a + b, 0);
    const historyBytes = proto.temporal.api.history.v1.History.encode(history).finish().length;
    rows.push({ scenario, turns: result.turns, actions: total, perTurn: total / result.turns, historyBytes, byKind });
    await rm(workspace, { recursive: true, force: true });
  }
  console.log(
    `Billable actions per conversation (heartbeat timeout ${runConfigSchema.parse({ model: 'x' }).heartbeatTimeoutMs / 1000} s; load average ${load.map((x) => x.toFixed(2)).join(' ')})`,
  );
  for (const r of rows)
    console.log(
      `  ${r.scenario.padEnd(14)} ${String(r.turns).padStart(2)} turns ${String(r.actions).padStart(4)} actions ${r.perTurn.toFixed(1).padStart(5)}/turn ${String(Math.round(r.historyBytes / r.turns)).padStart(6)} history bytes/turn  ${Object.entries(
        r.byKind,
      )
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}`,
    );
  // One more plain turn: what the conversation of 6 turns costs beyond the one of 3, by turn.
  const [plain, longer] = [rows.find((r) => r.scenario === 'plain')!, rows.find((r) => r.scenario === 'plain, 6 turns')!];
  const perTurn = (longer.actions - plain.actions) / (longer.turns - plain.turns);
  const perConversation = plain.actions - perTurn * plain.turns;
  console.log(
    `  a plain turn: ${perTurn.toFixed(1)} actions, and ${perConversation.toFixed(1)} for the conversation around its turns (start, placement, turn 0, the end)`,
  );
  console.log(`  goal: a plain turn costs at most ${GOAL_PER_TURN}: ${perTurn <= GOAL_PER_TURN ? 'met' : 'NOT met'} (${perTurn.toFixed(1)})`);
  console.log(JSON.stringify({ bench: 'actions', plainPerTurn: perTurn, perConversation, rows }));
} finally {
  await bench.close();
}
process.exit(0);
