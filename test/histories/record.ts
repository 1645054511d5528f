// Records `session` workflow histories from real runs into test/histories/session-*.json for the
// replay test. Needs a Temporal dev server and PostgreSQL:
//   temporal server start-dev --port 17933 --headless &
//   TEMPORAL_ADDRESS=127.0.0.1:17933 DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx test/histories/record.ts
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { NativeConnection } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { runConfigSchema, type RunConfigInput } from '../../src/config.js';
import { Store } from '../../src/store/index.js';
import { createWorker, installRuntime } from '../../worker/index.js';
import { answerUpdate, cancelSignal, decideApprovalUpdate, pauseSignal, resumeSignal, rollbackUpdate, stateQuery, WORKFLOW_TYPE, type ConversationState } from '../../workflows/api.js';

const DIR = import.meta.dirname;
const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:17933';
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const taskQueue = `record-${Date.now()}`;

const write = (path: string, content: string) => ({ say: `<write_to_file>\n<path>${path}</path>\n<content>\n${content}\n</content>\n</write_to_file>` });
const ask = (q: string) => ({ say: `<ask_followup_question>\n<question>${q}</question>\n</ask_followup_question>` });
const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };
const command = (c: string) => ({ say: `<execute_command>\n<command>${c}</command>\n<requires_approval>true</requires_approval>\n</execute_command>` });

async function repo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrun-record-'));
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
  await writeFile(join(dir, 'README.md'), '# demo\n');
  for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['commit', '-q', '-m', 'initial']]) execFileSync('git', args, { cwd: dir, env });
  return dir;
}

async function script(s: unknown): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'agentrun-script-')), 's.yaml');
  await writeFile(file, YAML.stringify(s));
  return `scripted:${file}`;
}

async function waitState(h: WorkflowHandle, pred: (s: ConversationState) => boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const s = (await h.query(stateQuery).catch(() => undefined)) as ConversationState | undefined;
    if (s && pred(s)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('state never matched');
}

type Scenario = { name: string; turns: unknown[]; config?: Partial<RunConfigInput>; drive?: (h: WorkflowHandle) => Promise<void>; repeatLast?: boolean };

const SCENARIOS: Scenario[] = [
  { name: 'edit-and-complete', turns: [write('a.txt', 'one'), { say: '<read_file>\n<path>a.txt</path>\n</read_file>' }, complete] },
  {
    name: 'approval',
    turns: [command('echo approved > a.txt'), command('echo denied > b.txt'), complete],
    drive: async (h) => {
      await waitState(h, (s) => s.pendingApproval !== undefined);
      await h.executeUpdate(decideApprovalUpdate, { args: [{ approved: true, by: 'alice' }] });
      await waitState(h, (s) => s.pendingApproval !== undefined && s.turn === 2);
      await h.executeUpdate(decideApprovalUpdate, { args: [{ approved: false, reason: 'no', by: 'bob' }] });
    },
  },
  {
    name: 'question',
    turns: [ask('Which name?'), write('n.txt', 'x'), complete],
    drive: async (h) => {
      await waitState(h, (s) => s.pendingQuestion !== undefined);
      await h.executeUpdate(answerUpdate, { args: [{ text: 'n.txt' }] });
    },
  },
  {
    name: 'rollback',
    turns: [write('a.txt', 'one'), write('b.txt', 'two'), ask('roll back?'), complete],
    drive: async (h) => {
      await waitState(h, (s) => s.pendingQuestion !== undefined);
      const r = await h.executeUpdate(rollbackUpdate, { args: [{ toTurn: 1 }] });
      await h.executeUpdate(rollbackUpdate, { args: [{ commit: r.saved! }] });
      await h.executeUpdate(answerUpdate, { args: [{ text: 'yes' }] });
    },
  },
  {
    name: 'cancel',
    turns: [ask('go on?')],
    drive: async (h) => {
      await waitState(h, (s) => s.pendingQuestion !== undefined);
      await h.signal(cancelSignal, { reason: 'operator changed plans' });
    },
  },
  {
    name: 'pause',
    turns: [ask('pause me'), write('p.txt', 'p'), complete],
    drive: async (h) => {
      await waitState(h, (s) => s.pendingQuestion !== undefined);
      await h.signal(pauseSignal);
      await h.executeUpdate(answerUpdate, { args: [{ text: 'ok' }] });
      await waitState(h, (s) => s.status === 'paused');
      await h.signal(resumeSignal);
    },
  },
  { name: 'budget', turns: [write('a.txt', '1'), write('b.txt', '2'), write('c.txt', '3'), complete], config: { maxTurns: 2 } },
  {
    name: 'time-budget',
    turns: [{ say: '<execute_command>\n<command>sleep 30</command>\n<requires_approval>false</requires_approval>\n</execute_command>' }, complete],
    config: { maxTimeMs: 3000, approval: 'never' },
  },
  { name: 'loop', turns: [{ say: '<read_file>\n<path>README.md</path>\n</read_file>' }], config: { loopThreshold: 2 }, repeatLast: true },
  { name: 'no-tool', turns: [{ say: 'Just chatting.' }], config: { maxNoToolReplies: 2 }, repeatLast: true },
  {
    name: 'plan-mode',
    turns: [write('x.txt', 'no'), { say: '<plan_mode_respond>\n<response>The plan.</response>\n</plan_mode_respond>' }, complete],
    config: { planMode: true },
    drive: async (h) => {
      await waitState(h, (s) => s.pendingQuestion !== undefined);
      await h.executeUpdate(answerUpdate, { args: [{ text: 'approved' }] });
    },
  },
  { name: 'context-length', turns: [{ ...write('a.txt', 'x'), faults: [{ attempt: 1, context_length_exceeded: true }] }, complete] },
  { name: 'continue-as-new', turns: [write('a.txt', '1'), write('b.txt', '2'), write('c.txt', '3'), complete], config: { continueAsNewEveryTurns: 2 } },
  // The same after the `continue-as-new-auto-upgrade` patch (the next run starts on the current version).
  { name: 'continue-as-new-auto-upgrade', turns: [write('a.txt', '1'), write('b.txt', '2'), write('c.txt', '3'), complete], config: { continueAsNewEveryTurns: 2 } },
];

installRuntime();
const schema = `record_${Date.now().toString(36)}`;
const store = await Store.connect(databaseUrl, { schema });
const home = await mkdtemp(join(tmpdir(), 'agentrun-record-home-'));
const worker = await createWorker({ connection: await NativeConnection.connect({ address }), taskQueue, store, home });
const running = worker.run();
const connection = await Connection.connect({ address });
const client = new Client({ connection });
const only = process.argv.slice(2);
for (const s of SCENARIOS.filter((x) => !only.length || only.includes(x.name))) {
  const model = await script({ turns: s.turns, ...(s.repeatLast ? { repeat_last: true } : {}) });
  const config = runConfigSchema.parse({ model, approval: 'dangerous', heartbeatTimeoutMs: 5000, ...s.config });
  const handle = await client.workflow.start(WORKFLOW_TYPE, { workflowId: `record-${s.name}-${Date.now()}`, taskQueue, args: [{ task: `scenario ${s.name}`, workspace: await repo(), config }] });
  await s.drive?.(handle);
  const result = await handle.result();
  let runId: string | undefined = handle.firstExecutionRunId;
  let part = 0;
  // Every run of the chain (continue-as-new): the first, and the last.
  for (;;) {
    const history = await client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
    const file = part === 0 ? `session-${s.name}.json` : `session-${s.name}-run${part + 1}.json`;
    await writeFile(join(DIR, file), JSON.stringify(JSON.parse(historyToJSON(history)), null, 1));
    const next: string | null | undefined = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) break;
    runId = next;
    part++;
  }
  console.log(s.name, (result as { status: string }).status, `${part + 1} run(s)`);
}
worker.shutdown();
await running;
await store.pool.query(`DROP SCHEMA ${schema} CASCADE`);
await store.close();
await connection.close();
