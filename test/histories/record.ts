// Records `session` workflow histories from real runs into test/histories/session-*.json for the
// replay test. Needs a Temporal dev server and PostgreSQL:
//   temporal server start-dev --port 17933 --headless &
//   TEMPORAL_ADDRESS=127.0.0.1:17933 DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx test/histories/record.ts
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { NativeConnection } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import { runConfigSchema, type RunConfigInput } from '../../src/config.js';
import { Store } from '../../src/store/index.js';
import { createWorker, installRuntime } from '../../worker/index.js';
import { allowTestModels } from '../../src/model/scripted/allowed.js';
import { WorkerExtensions } from '../../src/extensions/worker.js';
import { recordManifest } from './manifest.js';
import {
  answerUpdate,
  cancelSignal,
  decideApprovalUpdate,
  pauseSignal,
  resumeSignal,
  resultFromFailure,
  rollbackUpdate,
  stateQuery,
  WORKFLOW_TYPE,
  type ConversationState,
} from '../../workflows/api.js';

const DIR = import.meta.dirname;
/** Temporary repositories, scripts and the home this run made: removed when it ends. */
const made: string[] = [];
const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:17933';
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const taskQueue = `record-${Date.now()}`;

const write = (path: string, content: string) => ({ say: `<write_to_file>\n<path>${path}</path>\n<content>\n${content}\n</content>\n</write_to_file>` });
const ask = (q: string) => ({ say: `<ask_followup_question>\n<question>${q}</question>\n</ask_followup_question>` });
const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };
const command = (c: string) => ({ say: `<execute_command>\n<command>${c}</command>\n<requires_approval>true</requires_approval>\n</execute_command>` });

/** A repository with `files`, and whatever `setup` adds, in its first commit (agents are read from the starting tree). */
async function repo(files: Record<string, string> = {}, setup?: (dir: string) => Promise<void>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrun-record-'));
  made.push(dir);
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
  await writeFile(join(dir, 'README.md'), '# demo\n');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  await setup?.(dir);
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'initial'],
  ])
    execFileSync('git', args, { cwd: dir, env });
  return dir;
}

async function script(s: unknown): Promise<string> {
  const scriptDir = await mkdtemp(join(tmpdir(), 'agentrun-script-'));
  made.push(scriptDir);
  const file = join(scriptDir, 's.yaml');
  await writeFile(file, YAML.stringify(s));
  return `scripted:${file}`;
}

async function waitState(h: WorkflowHandle, pred: (s: ConversationState) => boolean): Promise<ConversationState> {
  for (let i = 0; i < 600; i++) {
    const s = (await h.query(stateQuery).catch(() => undefined)) as ConversationState | undefined;
    if (s && pred(s)) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('state never matched');
}

type Scenario = {
  name: string;
  turns: unknown[];
  config?: Partial<RunConfigInput>;
  drive?: (h: WorkflowHandle) => Promise<void>;
  repeatLast?: boolean;
  /** Prepare the workspace (agent files, …) before the run. */
  setup?: (dir: string) => Promise<void>;
  /** Child workflows whose histories are recorded too, as session-<name>-<suffix>.json. */
  children?: Record<string, (parentId: string) => string>;
  /** Files the workspace starts with. */
  files?: Record<string, string>;
};

/** An agent file whose model is its own script (the scripted model picks answers per conversation that way). */
async function agent(dir: string, name: string, tools: string, turns: unknown[]): Promise<void> {
  await mkdir(join(dir, '.agentrun/agents'), { recursive: true });
  await writeFile(
    join(dir, '.agentrun/agents', `${name}.md`),
    `---\ndescription: The ${name} agent.\ntools: ${tools}\nmodel: ${await script({ turns })}\n---\nYou are the ${name} agent.\n`,
  );
}
/** Pause while a question waits, answer it, resume once paused. */
async function pauseWhileAsking(h: WorkflowHandle): Promise<void> {
  await waitState(h, (s) => s.pendingQuestion !== undefined);
  await h.signal(pauseSignal);
  await h.executeUpdate(answerUpdate, { args: [{ text: 'ok' }] });
  await waitState(h, (s) => s.status === 'paused');
  await h.signal(resumeSignal);
}

const delegate = (name: string, task: string) => `<delegate>\n<agent>${name}</agent>\n<task>${task}</task>\n</delegate>`;

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
    // A command classified once as it was parsed, approved, and run on that classification; then a read.
    name: 'classified-command',
    turns: [command('echo classified > a.txt'), { say: '<read_file>\n<path>a.txt</path>\n</read_file>' }, complete],
    drive: async (h) => {
      await waitState(h, (s) => s.pendingApproval !== undefined);
      await h.executeUpdate(decideApprovalUpdate, { args: [{ approved: true, by: 'alice' }] });
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
    drive: pauseWhileAsking,
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
  {
    // Two read-only agents side by side, a writer under the workspace lock, an unknown agent.
    name: 'delegate',
    turns: [
      {
        say: `${delegate('reader', 'Read README.md.')}\n${delegate('reader', 'Read it again.')}\n${delegate('writer', 'Write w.txt.')}\n${delegate('nobody', 'x')}`,
      },
      complete,
    ],
    config: { approval: 'never', maxCostUsd: 5 },
    setup: async (dir) => {
      await agent(dir, 'reader', 'read_file', [{ say: '<read_file>\n<path>README.md</path>\n</read_file>' }, complete]);
      await agent(dir, 'writer', 'write_to_file', [write('w.txt', 'from the writer'), complete]);
    },
    children: { 'child-writer': (id) => `${id}.sub-3` },
  },
  // The same after the `delegate-on-parent-host` patch (only repository jobs refuse delegate).
  {
    name: 'delegate-on-parent-host',
    turns: [{ say: `${delegate('reader', 'Read README.md.')}\n${delegate('writer', 'Write w.txt.')}` }, complete],
    config: { approval: 'never', maxCostUsd: 5 },
    setup: async (dir) => {
      await agent(dir, 'reader', 'read_file', [{ say: '<read_file>\n<path>README.md</path>\n</read_file>' }, complete]);
      await agent(dir, 'writer', 'write_to_file', [write('w.txt', 'from the writer'), complete]);
    },
  },
  { name: 'continue-as-new', turns: [write('a.txt', '1'), write('b.txt', '2'), write('c.txt', '3'), complete], config: { continueAsNewEveryTurns: 2 } },
  {
    // The workspace's Stop hook blocks the first attempt_completion; the second ends the conversation.
    name: 'stop-hook',
    turns: [complete, write('done.txt', 'yes'), complete],
    files: {
      '.agentrun/settings.json': JSON.stringify({
        hooks: { Stop: [{ hooks: [{ type: 'command', command: 'test -f done.txt || { echo "write done.txt first" >&2; exit 2; }' }] }] },
      }),
    },
  },
  // The same after the `continue-as-new-auto-upgrade` patch (the next run starts on the current version).
  {
    name: 'continue-as-new-auto-upgrade',
    turns: [write('a.txt', '1'), write('b.txt', '2'), write('c.txt', '3'), complete],
    config: { continueAsNewEveryTurns: 2 },
  },
  // After the `environment-setup` and `verify-step` patches: setup before turn 1 (and the baseline
  // verify), then a verify that fails once (its output goes back to the model) and passes.
  {
    name: 'environment',
    turns: [complete, write('done.txt', 'yes'), complete],
    config: { setup: ['echo installed > setup.log'], verify: 'test -f done.txt', verifyAttempts: 3, verifyBaseline: true },
  },
  // A turn's record rides on the next model step; a
  // pause and the end record it themselves; continue-as-new carries it to the next run.
  {
    name: 'turn-record-pause',
    turns: [ask('pause me'), write('p.txt', 'p'), complete],
    drive: pauseWhileAsking,
  },
  {
    name: 'turn-record-continue-as-new',
    turns: [write('a.txt', '1'), write('b.txt', '2'), write('c.txt', '3'), complete],
    config: { continueAsNewEveryTurns: 2 },
  },
  // The session's steps in their own files (start.ts, environment.ts, people.ts, the workspace
  // gate): setup before turn 1, an approval, a rollback and an answer while a question waits, a
  // verify that fails once and then passes.
  {
    name: 'steps',
    turns: [command('echo approved > a.txt'), ask('roll back?'), complete, write('done.txt', 'yes'), complete],
    config: { setup: ['echo installed > setup.log'], verify: 'test -f done.txt', verifyAttempts: 3 },
    drive: async (h) => {
      await waitState(h, (s) => s.pendingApproval !== undefined);
      await h.executeUpdate(decideApprovalUpdate, { args: [{ approved: true, by: 'alice' }] });
      await waitState(h, (s) => s.pendingQuestion !== undefined);
      await h.executeUpdate(rollbackUpdate, { args: [{ toTurn: 1 }] });
      await h.executeUpdate(answerUpdate, { args: [{ text: 'yes' }] });
    },
  },
  // Every step through one runner (workflows/session/steps.ts) and a call's life in the state query
  // (calls.ts): two reads of one answer side by side, a command that waits for approval (shown as
  // `awaiting_approval`) and is denied, then the completion.
  {
    name: 'call-phases',
    turns: [
      { say: '<read_file>\n<path>README.md</path>\n</read_file>\n<read_file>\n<path>a.txt</path>\n</read_file>' },
      command('echo denied > b.txt'),
      complete,
    ],
    files: { 'a.txt': 'a\n' },
    drive: async (h) => {
      const st = await waitState(h, (s) => s.pendingApproval !== undefined);
      const phases = st.calls?.map((c) => `${c.name}:${c.phase}`);
      if (phases?.join(' ') !== 'execute_command:awaiting_approval') throw new Error(`the state query shows the calls as ${JSON.stringify(phases)}`);
      await h.executeUpdate(decideApprovalUpdate, { args: [{ approved: false, reason: 'no', by: 'bob' }] });
    },
  },
  // A failed conversation fails its workflow, one out
  // of budget too, and one Temporal was asked to cancel ends CANCELED (its result in the memo).
  { name: 'outcome-failed', turns: [{ say: 'Just chatting.' }], config: { maxNoToolReplies: 1 }, repeatLast: true },
  { name: 'outcome-budget', turns: [write('a.txt', '1'), write('b.txt', '2'), complete], config: { maxTurns: 1 } },
  {
    name: 'outcome-cancel-request',
    turns: [ask('go on?')],
    drive: async (h) => {
      await waitState(h, (s) => s.pendingQuestion !== undefined);
      await h.cancel();
    },
  },
];

installRuntime();
const schema = `record_${Date.now().toString(36)}`;
const store = await Store.connect(databaseUrl, { schema });
const home = await mkdtemp(join(tmpdir(), 'agentrun-record-home-'));
// With extensions (workspace settings trusted: the scenarios' repositories are this script's own), as `agentrun worker` runs.
const extensions = new WorkerExtensions({ home, trustWorkspaceCommands: true });
// Repository extensions on (agents, hooks and settings of the scenarios' repositories), as a worker started with them.
// A recorder's worker serves the scripted models its scenarios write below the temporary directory.
allowTestModels({ scriptsDirs: [tmpdir()], recorded: true });
const workerConnection = await NativeConnection.connect({ address });
const worker = await createWorker({
  connection: workerConnection,
  taskQueue,
  store,
  home,
  extensions,
  repositoryExtensions: true,
});
const running = worker.run();
const connection = await Connection.connect({ address });
const client = new Client({ connection });
const only = process.argv.slice(2);
for (const s of SCENARIOS.filter((x) => !only.length || only.includes(x.name))) {
  const model = await script({ turns: s.turns, ...(s.repeatLast ? { repeat_last: true } : {}) });
  const config = runConfigSchema.parse({ model, approval: 'dangerous', heartbeatTimeoutMs: 5000, ...s.config });
  const workspace = await repo(s.files, s.setup);
  const handle = await client.workflow.start(WORKFLOW_TYPE, {
    workflowId: `record-${s.name}-${Date.now()}`,
    taskQueue,
    args: [{ task: `scenario ${s.name}`, workspace, config }],
  });
  await s.drive?.(handle);
  // Conversations that did not complete end their workflow failed or canceled (workflows/session/outcome.ts).
  const result = await handle.result().catch((err: unknown) => resultFromFailure(err) ?? { status: `workflow ${(err as Error).cause?.constructor.name}` });
  let runId: string | undefined = handle.firstExecutionRunId;
  let part = 0;
  // Every run of the chain (continue-as-new): the first, and the last.
  for (;;) {
    const history = await client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
    const file = part === 0 ? `session-${s.name}.json` : `session-${s.name}-run${part + 1}.json`;
    await writeFile(join(DIR, file), JSON.stringify(JSON.parse(historyToJSON(history)), null, 1));
    recordManifest(file);
    const next: string | null | undefined = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) break;
    runId = next;
    part++;
  }
  for (const [suffix, childId] of Object.entries(s.children ?? {})) {
    const history = await client.workflow.getHandle(childId(handle.workflowId)).fetchHistory();
    await writeFile(join(DIR, `session-${s.name}-${suffix}.json`), JSON.stringify(JSON.parse(historyToJSON(history)), null, 1));
  }
  console.log(s.name, (result as { status: string }).status, `${part + 1} run(s)`);
}
worker.shutdown();
await running;
// The worker's native connection holds the process open until it is closed.
await workerConnection.close();
await extensions.close();
await store.pool.query(`DROP SCHEMA ${schema} CASCADE`);
await store.close();
await connection.close();
for (const dir of [...made, home]) await rm(dir, { recursive: true, force: true });
