// The `agentrun` command line. Every command also speaks --json (one JSON object per line).
import { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { SA_MODEL, SA_STATUS, SA_WORKSPACE, SA_SCHEDULE } from '../search-attributes.js';
import { FINAL_STATUSES, type ConversationStatus } from '../types.js';
import {
  answerUpdate,
  cancelSignal,
  decideApprovalUpdate,
  rollbackUpdate,
  sendMessageSignal,
  stateQuery,
  WORKFLOW_TYPE,
  type ConversationInput,
  type ConversationResult,
  type ConversationState,
} from '../../workflows/api.js';
import { log } from '../log.js';
import { CliError, EXIT, exitCodeFor } from './errors.js';
import { follow } from './follow.js';
import { gatherInspection, printInspection } from './inspect.js';
import { RUN_OPTIONS, runRequestFromFlags, type RunFlags, type RunRequest } from './options.js';
import { openSession, type Session } from './session.js';
import { devCommand, workerCommand } from './service.js';
import { replayCommand } from './replay.js';
import { uiCommand } from '../ui/command.js';
import { scheduleCommands } from './schedule.js';

interface GlobalFlags {
  json?: boolean;
}

const out = (s: string) => void process.stdout.write(s);
const emit = (json: boolean | undefined, obj: Record<string, unknown>, text: string) => out(json ? JSON.stringify(obj) + '\n' : text + '\n');

export function newConversationId(): string {
  const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `conv-${stamp}-${randomBytes(3).toString('hex')}`;
}

/** Start a conversation workflow; shared by run, start and the schedule's action. */
export async function startConversation(session: Session, req: RunRequest, flags: { id?: string }) {
  const id = flags.id ?? newConversationId();
  const input: ConversationInput = { ...req, searchAttributes: session.searchAttributes };
  try {
    const handle = await session.client.workflow.start('conversation', {
      workflowId: id,
      taskQueue: session.taskQueue,
      args: [input],
      typedSearchAttributes: session.searchAttributes
        ? [
            { key: SA_STATUS, value: 'running' },
            { key: SA_WORKSPACE, value: req.workspace },
            { key: SA_MODEL, value: req.config.model },
          ]
        : undefined,
    });
    return { id, handle, req };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new CliError(`a conversation with id ${id} already exists; choose another --id or inspect it`);
    throw err;
  }
}

async function withSession<T>(opts: { startIfMissing?: boolean }, fn: (s: Session) => Promise<T>): Promise<T> {
  const session = await openSession(opts);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

function finalLine(json: boolean | undefined, r: ConversationResult): void {
  emit(
    json,
    { type: 'result', conversationId: r.conversationId, status: r.status, reason: r.reason, turns: r.turns, usage: r.usage, costUsd: r.costUsd, result: r.result },
    `\n${r.status} after ${r.turns} turns: ${r.reason}\n  tokens ${r.usage.totalTokens} (prompt ${r.usage.promptTokens}, completion ${r.usage.completionTokens}), cost $${r.costUsd.toFixed(4)}\n  conversation ${r.conversationId}${r.result ? `\n  result: ${r.result}` : ''}`,
  );
}

async function runCommand(flags: RunFlags & GlobalFlags & { id?: string; worker?: boolean; wait?: boolean }): Promise<number> {
  const request = await runRequestFromFlags(flags);
  return withSession({ startIfMissing: true }, async (session) => {
    if (flags.worker !== false) await session.startWorker();
    const { id, handle, req } = await startConversation(session, request, flags);
    emit(flags.json, { type: 'conversation', conversationId: id, workspace: req.workspace, model: req.config.model }, `conversation ${id}`);
    const interrupted = new Promise<'interrupted'>((resolve) => process.once('SIGINT', () => resolve('interrupted')));
    const outcome = await Promise.race([follow(session, id, { json: flags.json, stopWhenWaiting: !flags.wait }), interrupted]);
    if (outcome === 'interrupted') {
      emit(flags.json, { type: 'detached', conversationId: id }, `\ndetached; the conversation is durable: agentrun watch ${id}`);
      return EXIT.failed;
    }
    if (outcome.waiting) {
      const state = (await handle.query(stateQuery)) as ConversationState;
      emit(
        flags.json,
        { type: 'result', conversationId: id, status: 'waiting', pendingApproval: state.pendingApproval, pendingQuestion: state.pendingQuestion, turns: state.turn, usage: state.usage, costUsd: state.costUsd },
        `\nwaiting for a person: ${state.pendingQuestion ? `answer with: agentrun answer ${id} "…"` : `approve with: agentrun approve ${id} (or deny)`}`,
      );
      return EXIT.waiting;
    }
    const result = (await handle.result()) as ConversationResult;
    finalLine(flags.json, result);
    return exitCodeFor(result.status);
  });
}

async function startCommand(flags: RunFlags & GlobalFlags & { id?: string }): Promise<number> {
  const request = await runRequestFromFlags(flags);
  return withSession({}, async (session) => {
    const { id, handle } = await startConversation(session, request, flags);
    emit(flags.json, { type: 'started', conversationId: id, runId: handle.firstExecutionRunId }, id);
    return EXIT.completed;
  });
}

async function watchCommand(id: string, flags: GlobalFlags & { from?: string }): Promise<number> {
  return withSession({}, async (session) => {
    await ensureExists(session, id);
    const from = flags.from === undefined ? 0 : Number(flags.from);
    if (!Number.isInteger(from) || from < 0) throw new CliError(`--from must be a stream offset (a whole number ≥ 0), got "${flags.from}"`);
    const outcome = await follow(session, id, { json: flags.json, from });
    const row = await session.store.getConversation(id);
    const status = (outcome.finished?.status ?? row?.status ?? 'running') as ConversationStatus;
    return FINAL_STATUSES.includes(status) ? exitCodeFor(status) : EXIT.completed;
  });
}

async function ensureExists(session: Session, id: string): Promise<void> {
  if (await session.store.getConversation(id)) return;
  try {
    await session.client.workflow.getHandle(id).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new CliError(`no conversation with id ${id}`);
    throw err;
  }
}

const UPDATE_WAIT_MS = 20_000;

/** An update needs a worker to run it; without one it would wait for ever. */
async function ensureWorkerPolls(session: Session, id: string): Promise<void> {
  const desc = await session.client.workflow.getHandle(id).describe();
  if (desc.status.name !== 'RUNNING') throw new CliError(`conversation ${id} is not running any more (${desc.status.name.toLowerCase()})`);
  const res = await session.client.workflowService.describeTaskQueue({
    namespace: session.endpoints.namespace,
    taskQueue: { name: desc.taskQueue },
    taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
  });
  if (!res.pollers?.length) {
    throw new CliError(`no worker polls task queue ${desc.taskQueue}, so conversation ${id} cannot take this now: start \`agentrun worker\` (or \`agentrun dev\`) and try again`);
  }
}

/** Updates and signals to a running conversation, with clear errors when it is not running. */
async function talk<T>(id: string, fn: (h: ReturnType<Session['client']['workflow']['getHandle']>, s: Session) => Promise<T>, opts: { update?: boolean } = {}): Promise<T> {
  return withSession({}, async (session) => {
    await ensureExists(session, id);
    if (opts.update) await ensureWorkerPolls(session, id);
    const handle = session.client.workflow.getHandle(id);
    try {
      // The server remembers pollers for a while after a worker died: bound the wait for an update.
      return opts.update ? await session.client.withDeadline(Date.now() + UPDATE_WAIT_MS, () => fn(handle, session)) : await fn(handle, session);
    } catch (err) {
      const e = err as Error & { code?: number };
      if (opts.update && (e.code === 4 || /deadline/i.test(e.message))) {
        throw new CliError(`no worker took this within ${UPDATE_WAIT_MS / 1000} s: is \`agentrun worker\` (or \`agentrun dev\`) running for conversation ${id}?`);
      }
      const msg = e.cause instanceof Error ? e.cause.message : e.message;
      if (/workflow execution already completed|not found/i.test(msg)) throw new CliError(`conversation ${id} is not running any more`);
      throw new CliError(msg);
    }
  });
}

async function listCommand(flags: GlobalFlags & { status?: string; limit?: string }): Promise<number> {
  return withSession({}, async (session) => {
    const limit = Number(flags.limit ?? 50);
    const rows: Record<string, unknown>[] = [];
    if (session.searchAttributes) {
      const query = [`WorkflowType = '${WORKFLOW_TYPE}'`, ...(flags.status ? [`AgentrunStatus = '${flags.status.replace(/'/g, '')}'`] : [])].join(' AND ');
      for await (const w of session.client.workflow.list({ query })) {
        const sa = w.typedSearchAttributes;
        rows.push({
          conversationId: w.workflowId,
          status: sa.get(SA_STATUS) ?? w.status.name.toLowerCase(),
          workflowStatus: w.status.name,
          model: sa.get(SA_MODEL),
          workspace: sa.get(SA_WORKSPACE),
          schedule: sa.get(SA_SCHEDULE),
          startTime: w.startTime.toISOString(),
        });
        if (rows.length >= limit) break;
      }
    } else {
      for (const c of await session.store.listConversations({ status: flags.status, limit })) {
        rows.push({ conversationId: c.id, status: c.status, model: c.model, workspace: c.workspace, startTime: c.createdAt.toISOString() });
      }
    }
    const seen = new Set<string>();
    for (const r of rows) {
      if (seen.has(r.conversationId as string)) continue; // one line per conversation, not per run
      seen.add(r.conversationId as string);
      const c = await session.store.getConversation(r.conversationId as string);
      const full = { ...r, turns: c?.turns, costUsd: c?.costUsd, reason: c?.reason };
      emit(flags.json, full, `${String(r.conversationId).padEnd(32)} ${String(r.status).padEnd(16)} turns ${String(c?.turns ?? '?').padStart(3)}  $${(c?.costUsd ?? 0).toFixed(4)}  ${r.workspace ?? ''}`);
    }
    return EXIT.completed;
  });
}

async function pendingCommand(flags: GlobalFlags): Promise<number> {
  return withSession({}, async (session) => {
    // Every running conversation answers the state query; only the waiting ones have something pending.
    const query = `WorkflowType = '${WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND TaskQueue = '${session.taskQueue}'`;
    let unreachable = 0;
    for await (const w of session.client.workflow.list({ query })) {
      // A conversation whose workers are all gone cannot answer; don't let it stall the list.
      const state = (await session.client
        .withDeadline(Date.now() + 5000, () => session.client.workflow.getHandle(w.workflowId).query(stateQuery))
        .catch(() => undefined)) as ConversationState | undefined;
      if (!state) {
        unreachable++;
        continue;
      }
      const id = w.workflowId;
      if (state.pendingQuestion) emit(flags.json, { conversationId: id, kind: 'question', ...state.pendingQuestion }, `${id}  question: ${state.pendingQuestion.question}`);
      if (state.pendingApproval) emit(flags.json, { conversationId: id, kind: 'approval', ...state.pendingApproval }, `${id}  approval: ${state.pendingApproval.preview} (${state.pendingApproval.reasons.join('; ')})`);
    }
    if (unreachable) process.stderr.write(`agentrun: ${unreachable} running conversations did not answer (no worker polls ${session.taskQueue}?)\n`);
    return EXIT.completed;
  });
}

export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('agentrun')
    .description('Durable runner for LLM coding agents on Temporal')
    .option('--json', 'one JSON object per line')
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    .exitOverride();

  // commander calls actions with `this` = the command; keep it for opts().
  const action = <A extends unknown[]>(fn: (this: Command, ...args: A) => Promise<number>) =>
    async function (this: Command, ...args: A) {
      setExit(await fn.apply(this, args));
    };
  const globals = (cmd: Command) => cmd.optsWithGlobals() as GlobalFlags;

  const withRunOptions = (cmd: Command) => {
    for (const [flags, description] of RUN_OPTIONS) cmd.option(flags, description);
    return cmd.option('--id <id>', 'conversation id (default: generated)');
  };

  withRunOptions(program.command('run').description('start a conversation and follow it to the end (exit 0 completed, 1 failed, 2 bad input, 3 budget, 4 waiting)'))
    .option('--no-worker', 'do not run a worker in this process (one is already polling)')
    .option('--wait', 'keep following while the conversation waits for a person')
    .action(action(async function (this: Command) {
      return runCommand({ ...this.opts(), ...globals(this) });
    }));
  withRunOptions(program.command('start').description('start a conversation, print its id and return')).action(
    action(async function (this: Command) {
      return startCommand({ ...this.opts(), ...globals(this) });
    }),
  );
  program
    .command('watch <id>')
    .description('follow the live stream of a conversation')
    .option('--from <offset>', 'resume after this stream offset')
    .action(action(async function (this: Command, id: string) {
      return watchCommand(id, { ...this.opts(), ...globals(this) });
    }));
  program
    .command('inspect <id>')
    .description('transcript, timeline, prune records, checkpoints and usage')
    .option('--max-chars <n>', 'characters of each message to show', '2000')
    .option('--no-diffs', 'leave out the checkpoint diffs')
    .action(action(async function (this: Command, id: string) {
      const o = { ...this.opts(), ...globals(this) } as GlobalFlags & { maxChars: string; diffs: boolean };
      return withSession({}, async (session) => {
        const data = await gatherInspection(session, id, { maxChars: Number(o.maxChars), diffs: o.diffs });
        if (!data) throw new CliError(`no conversation with id ${id}`);
        if (o.json) out(JSON.stringify(data) + '\n');
        else printInspection(data, out);
        return EXIT.completed;
      });
    }));
  program
    .command('list')
    .description('conversations, from Temporal visibility')
    .option('--status <status>', 'running, waiting, completed, failed, cancelled, budget_exhausted, …')
    .option('--limit <n>', 'at most this many', '50')
    .action(action(async function (this: Command) {
      return listCommand({ ...this.opts(), ...globals(this) });
    }));
  program
    .command('pending')
    .description('questions and approvals waiting for a person, across conversations')
    .action(action(async function (this: Command) {
      return pendingCommand(globals(this));
    }));
  program
    .command('send <id> <message>')
    .description('send a message to a running conversation (read at the next turn)')
    .action(action(async function (this: Command, id: string, message: string) {
      await talk(id, (h) => h.signal(sendMessageSignal, { text: message }));
      emit(globals(this).json, { conversationId: id, sent: true }, 'sent');
      return EXIT.completed;
    }));
  program
    .command('answer <id> <text>')
    .description('answer the question a conversation is waiting on')
    .action(action(async function (this: Command, id: string, text: string) {
      const r = await talk(id, (h) => h.executeUpdate(answerUpdate, { args: [{ text }] }), { update: true });
      emit(globals(this).json, { conversationId: id, ...r, answered: true }, `answered ${r.callId}`);
      return EXIT.completed;
    }));
  for (const [name, approved] of [
    ['approve', true],
    ['deny', false],
  ] as const) {
    program
      .command(`${name} <id>`)
      .description(`${name} the tool call a conversation is waiting on`)
      .option('--call <callId>', 'the call id (default: the one waiting)')
      .option('--reason <text>', 'told to the model')
      .action(action(async function (this: Command, id: string) {
        const o = this.opts() as { call?: string; reason?: string };
        const r = await talk(id, (h) => h.executeUpdate(decideApprovalUpdate, { args: [{ callId: o.call, approved, reason: o.reason }] }), { update: true });
        emit(globals(this).json, { conversationId: id, ...r }, `${approved ? 'approved' : 'denied'} ${r.callId}`);
        return EXIT.completed;
      }));
  }
  program
    .command('cancel <id>')
    .description('cancel a conversation: the running step finishes, then it ends as cancelled')
    .option('--reason <text>', 'recorded as the reason')
    .option('--now', 'abort the running step too (the model request is aborted)')
    .action(action(async function (this: Command, id: string) {
      const o = this.opts() as { reason?: string; now?: boolean };
      await talk(id, async (h) => {
        await h.signal(cancelSignal, { reason: o.reason });
        if (o.now) await h.cancel();
      });
      emit(globals(this).json, { conversationId: id, cancelRequested: true }, 'cancel requested');
      return EXIT.completed;
    }));
  program
    .command('rollback <id>')
    .description("restore the workspace files of a turn's checkpoint")
    .requiredOption('--to <turn>', 'the turn whose checkpoint to restore (0 = before the agent started)')
    .action(action(async function (this: Command, id: string) {
      const toTurn = Number((this.opts() as { to: string }).to);
      if (!Number.isInteger(toTurn) || toTurn < 0) throw new CliError('--to must be a turn number (0 or more)');
      return withSession({}, async (session) => {
        await ensureExists(session, id);
        const handle = session.client.workflow.getHandle(id);
        const desc = await handle.describe();
        let r: { restored: string[]; removed: string[] };
        if (desc.status.name === 'RUNNING') {
          try {
            r = await handle.executeUpdate(rollbackUpdate, { args: [{ toTurn }] });
          } catch (err) {
            throw new CliError(((err as Error).cause as Error | undefined)?.message ?? (err as Error).message);
          }
        } else {
          const { rollbackFinished } = await import('./rollback.js');
          r = await rollbackFinished(session, id, toTurn);
        }
        emit(globals(this).json, { conversationId: id, toTurn, ...r }, `rolled back to turn ${toTurn}: ${r.restored.length} files restored, ${r.removed.length} removed`);
        return EXIT.completed;
      });
    }));
  program
    .command('worker')
    .description('run a worker (graceful shutdown on SIGTERM)')
    .option('--task-queue <name>', 'task queue to poll', process.env.AGENTRUN_TASK_QUEUE ?? 'agentrun')
    .option('--metrics-port <port>', 'health and Prometheus metrics port (0 = off)', '9464')
    .option('--max-activities <n>', 'activities running at once on this worker', '100')
    .action(action(async function (this: Command) {
      return workerCommand({ ...this.opts(), ...globals(this) });
    }));
  program
    .command('dev')
    .description('start the embedded Temporal dev server and PostgreSQL (and a worker) and stay up')
    .option('--no-worker', 'do not run a worker')
    .option('--port <port>', 'Temporal frontend port', '7233')
    .option('--ui-port <port>', 'Temporal UI port', '8233')
    .action(action(async function (this: Command) {
      return devCommand({ ...this.opts(), ...globals(this) });
    }));
  program
    .command('ui')
    .description('serve the web page: conversations, live streams, approvals and questions (until Ctrl-C)')
    .option('--port <port>', 'port to listen on (0 = any free port)', '8080')
    .option('--host <host>', 'address to bind (loopback by default; the page has no login)', '127.0.0.1')
    .action(action(async function (this: Command) {
      const o = { ...this.opts(), ...globals(this) } as GlobalFlags & { port: string; host: string };
      return withSession({}, (session) => uiCommand(session, o));
    }));
  program
    .command('replay [files...]')
    .description('replay histories (files, or pulled from the server) against the current workflow code')
    .option('--from-server', 'pull histories of conversations from the server')
    .option('--query <query>', 'visibility query for --from-server', `WorkflowType = '${WORKFLOW_TYPE}'`)
    .option('--limit <n>', 'at most this many histories from the server', '100')
    .action(action(async function (this: Command, files: string[]) {
      return replayCommand(files, { ...this.opts(), ...globals(this) });
    }));
  scheduleCommands(program, action, globals);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  let code = EXIT.completed as number;
  const program = buildProgram((c) => (code = c));
  // Services log their work; interactive commands only warnings (stdout is for output).
  const command = argv.slice(2).find((a) => !a.startsWith('-'));
  log.level = process.env.AGENTRUN_LOG_LEVEL ?? (command === 'worker' || command === 'dev' ? 'info' : 'warn');
  try {
    await program.parseAsync(argv);
    return code;
  } catch (err) {
    const e = err as Error & { exitCode?: number; code?: string };
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return EXIT.completed;
    if (e.code?.startsWith('commander.')) return EXIT.badInput; // commander already printed the problem
    const json = argv.includes('--json');
    const message = e instanceof CliError ? e.message : `${e.message}${process.env.AGENTRUN_DEBUG ? `\n${e.stack}` : ''}`;
    if (json) process.stdout.write(JSON.stringify({ type: 'error', error: message }) + '\n');
    process.stderr.write(`agentrun: ${message}\n`);
    return e instanceof CliError ? e.exitCode : EXIT.failed;
  }
}

