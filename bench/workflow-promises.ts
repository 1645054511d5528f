// Promises the workflow code makes a turn, counted while recorded histories replay against the
// current bundle. Every promise workflow code makes costs worker CPU (the SDK's promise hook
// captures a stack for each, for the stack-trace query), so this is the figure that changes when
// workflow code makes fewer; it needs no Temporal server and no database.
//
//   npx tsx bench/workflow-promises.ts [history.json …]   (default: three recorded fleet and session runs)
//
// Last line: {"bench":"workflow-promises","histories":[{"file","promises","modelSteps","perModelStep"}],"perModelStep":…}
// With one drain watcher for every host step instead of one a step (2026-11-30): fleet-drain-loses-nothing
// 795 → 693 (72.3 → 63.0 a model step), fleet-failover 365 → 325; session-approval (no host) 279 both.
import { readFile } from 'node:fs/promises';
import v8 from 'node:v8';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { bundleWorkflows } from '../worker/index.js';

const here = (f: string) => new URL(`../test/histories/${f}`, import.meta.url).pathname;
const files =
  process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['fleet-drain-loses-nothing.json', 'fleet-failover.json', 'session-approval.json'].map(here);

const code = await bundleWorkflows();
let count = 0;
let counting = false;
// Workflow code runs in its own V8 context: its promises are not this context's Promise.
v8.promiseHooks.createHook({
  init: (p) => {
    if (counting && p.constructor !== Promise) count++;
  },
});

const histories: { file: string; promises: number; modelSteps: number; perModelStep: number }[] = [];
for (const file of files) {
  const json = JSON.parse(await readFile(file, 'utf8'));
  const modelSteps = json.events.filter((e: any) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn').length;
  count = 0;
  counting = true;
  for await (const r of Worker.runReplayHistories({ workflowBundle: { code }, reuseV8Context: true }, [
    { workflowId: 'replay', history: historyFromJSON(json) },
  ])) {
    if (r.error) throw new Error(`${file} did not replay: ${r.error.message}`);
  }
  counting = false;
  if (count === 0 || modelSteps === 0) throw new Error(`${file}: counted ${count} promises over ${modelSteps} model steps; nothing was measured`);
  histories.push({ file: file.split('/').pop()!, promises: count, modelSteps, perModelStep: Number((count / modelSteps).toFixed(1)) });
  console.log(`${file.split('/').pop()}: ${count} promises over ${modelSteps} model steps (${(count / modelSteps).toFixed(1)} each)`);
}
const total = histories.reduce((a, h) => a + h.promises, 0);
const steps = histories.reduce((a, h) => a + h.modelSteps, 0);
console.log(JSON.stringify({ bench: 'workflow-promises', histories, perModelStep: Number((total / steps).toFixed(1)) }));
