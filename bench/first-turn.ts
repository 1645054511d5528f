// The first conversation on a large local directory, end to end: how long until
// its first model step starts, until its first tool call (a read) starts, until its first write
// starts, and until it ends, with the built `agentrun worker` (bench/harness.ts) and a scripted
// model (turn 1 lists the directory, turn 2 writes a file, turn 3 completes). The turn-0
// checkpoint (git add of every file) and the directory's bundle base (stored in PostgreSQL) are
// most of the first turn's work; since patch turn-zero-alongside-first-step they are made while
// the first model step runs, and since reads-before-turn-zero only what may change the workspace
// (the write) waits for them. (Before that patch turn 1 was the write: "first tool call" below.)
// Run: npm run build && DATABASE_URL=postgres://… BENCH_FIRST_TURN_DIR=/path/to/tree npx tsx bench/first-turn.ts
//   BENCH_FIRST_TURN_DIR: the directory (e.g. the 1 GB tree bench/bundle.ts keeps with
//   BENCH_BUNDLE_TREE=/tmp/x BENCH_BUNDLE_FILES=50000 BENCH_BUNDLE_MB=1000: /tmp/x/tree-50000-1000).
//   BENCH_AGENTRUN_CLI=/other/checkout/bin/agentrun.js: the worker of another built checkout (before/after).
//   BENCH_FIRST_TURN_MODEL_MS=5000: each model step takes that long (default 0).
//   A new AGENTRUN_HOME per run: every run is the directory's first conversation.
//
// 1 GB / 50k files (bench/bundle.ts's tree), 2 cores, 2026-11-25; "before" is the worker before bounded bundles:
//   load 1.4, model steps of 0 ms: before, first model step at 37.4 s (initConversation with the
//     checkpoint 29.1 s, the base stored 7.8 s), first tool call 37.7 s, end 38.4 s; after (turn 0
//     beside the first step, two check-in halves), first model step at 0.68 s, checkpoint 22.2 s
//     and base 6.4 s beside it, first tool call 29.4 s, end 29.8 s.
//   load 3.2-3.9, before the two halves: first model step 40.4 s -> 0.85 s, first tool call
//     40.9 s -> 42.9 s.
//   load 0.3-0.9, BENCH_FIRST_TURN_MODEL_MS=5000 (the scripted step then took 15.2 s): before,
//     first tool call at 55.8 s, end 66.3 s; after (before the two halves), 36.1 s and 46.8 s.
//
// reads-before-turn-zero, the same 1 GB tree (generated as bench/bundle.ts does), model steps of
// 0 ms, 2026-11-26, load 2.6-3.1 (two other sessions' tests running), A/B against the code before that change (the
// commit before) through BENCH_AGENTRUN_CLI, back to back:
//   first tool call (a read): 1.78 s / 1.06 s, against 33.7 s / 25.4 s before;
//   first write (waits for the checkpoint and the base): 43.2 s / 26.2 s, against 33.9 s / 25.5 s
//   (the checkpoint's own time varies with the load: 32.4 s in the first run after, 25.3 s before).
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { runConfigSchema } from '../src/config.js';
import { WORKFLOW_TYPE, type ConversationResult } from '../workflows/api.js';
import type { SessionInput } from '../workflows/session/types.js';
import { benchEnv, benchScript } from './harness.js';

const dir = process.env.BENCH_FIRST_TURN_DIR;
if (!dir) {
  console.error('bench/first-turn: set BENCH_FIRST_TURN_DIR to the directory to start on (see the header)');
  process.exit(2);
}

/** How long each model step takes (a real model: seconds). */
const MODEL_MS = Number(process.env.BENCH_FIRST_TURN_MODEL_MS ?? 0);
const env = await benchEnv({ worker: true });
try {
  const model = await benchScript({
    turns: [
      { say: '<list_files>\n<path>.</path>\n</list_files>', delay_ms: MODEL_MS },
      { say: '<write_to_file>\n<path>bench-first-turn.txt</path>\n<content>\nx\n</content>\n</write_to_file>', delay_ms: MODEL_MS },
      { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>', delay_ms: MODEL_MS },
    ],
  });
  const input: SessionInput = { task: 'first turn', workspace: dir, config: runConfigSchema.parse({ model, approval: 'never' }) };
  const id = `bench-first-turn-${Date.now()}`;
  const load = loadavg()[0]!.toFixed(2);
  const handle = await env.client.workflow.start(WORKFLOW_TYPE, { workflowId: id, taskQueue: env.taskQueue, args: [input] });
  const result = (await handle.result()) as ConversationResult;
  const events = (await handle.fetchHistory()).events ?? [];
  const ms = (e: (typeof events)[number]) => Number(e.eventTime!.seconds) * 1000 + Math.round((e.eventTime!.nanos ?? 0) / 1e6);
  const t0 = ms(events[0]!);
  const scheduled = new Map<string, string>();
  const firsts = new Map<string, { started?: number; done?: number }>();
  const toolStarts: number[] = [];
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(String(e.eventId), s.activityType!.name!);
    const started = e.activityTaskStartedEventAttributes;
    const done = e.activityTaskCompletedEventAttributes;
    const name = scheduled.get(String(started?.scheduledEventId ?? done?.scheduledEventId ?? ''));
    if (!name) continue;
    const f = firsts.get(name) ?? {};
    if (started && f.started === undefined) f.started = ms(e) - t0;
    if (started && name === 'toolCall') toolStarts.push(ms(e) - t0);
    if (done && f.done === undefined) f.done = ms(e) - t0;
    firsts.set(name, f);
  }
  const at = (name: string, what: 'started' | 'done') => firsts.get(name)?.[what] ?? NaN;
  console.log(`${dir}: ${result.status}, model steps of ${MODEL_MS} ms, load ${load} at start, ${loadavg()[0]!.toFixed(2)} at the end`);
  for (const name of ['initConversation', 'checkpointTurnZero', 'saveCheckpointOffHost', 'modelTurn', 'toolCall'])
    if (firsts.has(name))
      console.log(`  ${name.padEnd(22)} first started ${String(at(name, 'started')).padStart(6)} ms, done ${String(at(name, 'done')).padStart(6)} ms`);
  console.log(
    `  first model step starts at ${at('modelTurn', 'started')} ms; first tool call (a read) at ${toolStarts[0]} ms; first write at ${toolStarts.at(-1)} ms; the end at ${ms(events.at(-1)!) - t0} ms`,
  );
} finally {
  await rm(join(dir, 'bench-first-turn.txt'), { force: true });
  await env.close();
}
