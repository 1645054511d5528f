// Time to resume after a worker crash, per kind of step, with default settings (heartbeat
// timeout, workflow task timeout). A child-process worker is stopped inside the step (a store
// write of that step waits on a crash gate, test/helpers/crash-gate.ts; a command is killed
// while it runs), a standby worker is already polling, the doomed worker gets SIGKILL, and the
// bench prints the time from SIGKILL until the step runs again on the standby (its first store
// write there, by the database's clock on the same machine).
// Run: npx tsx bench/crash-resume.ts   (BENCH_KINDS=modelTurn,finishSession for a subset)
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runConfigSchema } from '../src/config.js';
import { crashGates, type GateSpec } from '../test/helpers/crash-gate.js';
import { WORKFLOW_TYPE, type ConversationInput, type ConversationResult } from '../workflows/api.js';
import { childWorkerBench } from './child-workers.js';
import { benchRepo, benchScript } from './harness.js';

process.env.AGENTRUN_LOG_LEVEL ??= 'warn';

const steps = {
  turns: [
    {
      say: `${'Writing the file now. '.repeat(40)}\n<write_to_file>\n<path>a.txt</path>\n<content>\nfrom turn 1\n</content>\n</write_to_file>`,
      chunk: 16,
      delay_ms: 5,
    },
    { say: '<todo_write>\n<todos>\n- [x] write a.txt\n- [ ] finish\n</todos>\n</todo_write>' },
    { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
  ],
};
const command = {
  turns: [
    { say: '<execute_command>\n<command>echo ran >> side.txt; sleep 300</command>\n<requires_approval>false</requires_approval>\n</execute_command>' },
    { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
  ],
};

interface Kind {
  script: 'steps' | 'command';
  gate: Omit<GateSpec, 'name'>;
  /** The gate blocks the step (armed); otherwise the crash comes when `crashWhen` holds. */
  armed: boolean;
  crashWhen?: (workspace: string) => boolean;
}

const KINDS: Record<string, Kind> = {
  initConversation: { script: 'steps', armed: true, gate: { table: 'checkpoints', event: 'INSERT', when: 'NEW.turn = 0' } },
  modelTurn: { script: 'steps', armed: true, gate: { table: 'stream', event: 'INSERT', when: "NEW.event->>'type' = 'delta'" } },
  'toolCall (command)': {
    script: 'command',
    armed: false,
    crashWhen: (ws) => existsSync(join(ws, 'side.txt')),
    gate: { table: 'messages', event: 'INSERT', when: "NEW.kind = 'tool_result' AND NEW.tool_name = 'execute_command'" },
  },
  'toolCall (edit + checkpoint)': { script: 'steps', armed: true, gate: { table: 'checkpoints', event: 'INSERT', when: 'NEW.turn = 1' } },
  recordToolResult: {
    script: 'steps',
    armed: true,
    gate: { table: 'messages', event: 'INSERT', when: "NEW.kind = 'tool_result' AND NEW.tool_name = 'todo_write'" },
  },
  'turn record (in the next modelTurn)': {
    script: 'steps',
    armed: true,
    gate: { table: 'conversations', event: 'UPDATE', when: "NEW.turns = 1 AND NEW.status = 'running'" },
  },
  finishSession: { script: 'steps', armed: true, gate: { table: 'conversations', event: 'UPDATE', when: "NEW.status = 'completed'" } },
};

const only = process.env.BENCH_KINDS?.split(',').map((k) => k.trim());
const bench = await childWorkerBench();
const { client } = bench;
const gates = await crashGates(bench.databaseUrl, bench.schema);
const defaults = runConfigSchema.parse({ model: 'scripted:x' });
const rows: { kind: string; resumeMs: number; status: string }[] = [];
try {
  const models = { steps: await benchScript(steps), command: await benchScript(command) };
  for (const [kind, k] of Object.entries(KINDS)) {
    if (only && !only.includes(kind)) continue;
    const h = bench.queue();
    // Default settings here: Temporal's sticky queue timeout, not the tests' 1 s (test/helpers/child-worker.ts).
    const defaultSticky = { AGENTRUN_STICKY_QUEUE_TIMEOUT: '' };
    const name = `g${rows.length}_${randomBytes(3).toString('hex')}`;
    await gates.add({ name, ...k.gate }, k.armed);
    const workspace = await benchRepo();
    const doomed = await bench.worker(h, defaultSticky);
    const config = runConfigSchema.parse({ model: models[k.script], approval: 'never' });
    const handle = await client.workflow.start(WORKFLOW_TYPE, {
      workflowId: `bench-crash-${randomBytes(4).toString('hex')}`,
      taskQueue: h.taskQueue,
      args: [{ task: 'crash me', workspace, config } satisfies ConversationInput],
    });
    const blocked = k.armed ? await gates.waitBlocked(name) : undefined;
    while (k.crashWhen && !k.crashWhen(workspace)) await new Promise((r) => setTimeout(r, 25));
    const standby = await bench.worker(h, defaultSticky);
    const killedAt = Date.now();
    await doomed.kill('SIGKILL');
    if (k.armed) await gates.open(name, blocked);
    const result = (await handle.result()) as ConversationResult;
    const [resumedAt] = await gates.hits(name, killedAt);
    rows.push({ kind, resumeMs: resumedAt === undefined ? NaN : resumedAt - killedAt, status: result.status });
    console.error(`${kind}: ${((resumedAt! - killedAt) / 1000).toFixed(1)} s (${result.status})`);
    await standby.kill('SIGTERM');
    await rm(workspace, { recursive: true, force: true });
  }
  console.log(
    `time from SIGKILL to the step running again on a standby worker (heartbeat timeout ${defaults.heartbeatTimeoutMs / 1000} s, default workflow task timeout)`,
  );
  console.log('step                            resume s   conversation');
  for (const r of rows) console.log(`${r.kind.padEnd(30)}  ${(r.resumeMs / 1000).toFixed(1).padStart(8)}   ${r.status}`);
  console.log(JSON.stringify({ bench: 'crash-resume', heartbeatTimeoutMs: defaults.heartbeatTimeoutMs, rows }));
} finally {
  await gates.close();
  await bench.close();
}
process.exit(0);
