// The conversation commands of the CLI (run, start, watch, list, pending, send, answer,
// approve/deny, cancel, rollback, inspect). Loaded only when one of them runs (src/cli/main.ts).
import { conversationResult, outcomePhrase } from '../client/outcome.js';
import { resolve as resolvePath } from 'node:path';
import { parseDuration } from '../duration.js';
import { WorkflowNotFoundError } from '@temporalio/client';
import { FINAL_STATUSES, cacheHitRate, formatCached, plural, type ConversationStatus } from '../types.js';
import {
  pauseSignal,
  resumeSignal,
  rollbackUpdate,
  sendMessageSignal,
  stateQuery,
  type ConversationResult,
  type ConversationState,
} from '../../workflows/api.js';
import {
  ConversationError,
  ensureExists as ensureConversationExists,
  newConversationId,
  startConversation as startConversationWith,
  talk as talkTo,
} from '../client/conversations.js';
import { asBadInput, CliError, EXIT, exitCodeFor } from './errors.js';
import { checkId } from '../ids.js';
import { tenantOfRun } from '../runtime/tenant.js';
import { callerScope, callerTenant, ensureOwn, ownConversation, visibleTo } from './tenancy.js';
import { narrowScope } from '../client/tenancy.js';
import { osUser } from '../ui/auth.js';
import { exitCodeForSignal, whenStopped, type StopSignal } from './stop-signals.js';
import type { RunFlags, RunRequest } from './options.js';
import type { ListFilters } from '../client/list.js';

/** The renderer and inspect load the tokenizer and the tool registry: only the commands that print a conversation load them. */
const follow: typeof import('./follow.js').follow = async (...args) => (await import('./follow.js')).follow(...args);

/** Flag parsing needs the model and context modules (openai, the tokenizer): only run and start load it. */
const runRequest = async (flags: RunFlags) => (await import('./options.js')).runRequestFromFlags(flags);
import { openSession, startOwnWorker, type Session } from './session.js';
import { escapeControls } from '../client/pending.js';
import { answerQuestion, decideApproval, requestCancel } from '../client/actions.js';

export interface GlobalFlags {
  json?: boolean;
}

export const out = (s: string) => void process.stdout.write(s);
export const emit = (json: boolean | undefined, obj: Record<string, unknown>, text: string) => out(json ? JSON.stringify(obj) + '\n' : text + '\n');

export { newConversationId };

/** The client library's ConversationError is the CLI's bad-input error (exit 2). */
async function asCliError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ConversationError) throw new CliError(err.message);
    throw err;
  }
}

/**
 * An id names one conversation: a running one is never reused, a finished one only with
 * `--replace`, which deletes its rows first (else its ledger, summary and stream would mix into
 * the new one).
 */
export async function claimId(session: Session, id: string, replace: boolean | undefined, tenant: string | undefined = callerTenant()): Promise<void> {
  asBadInput(() => checkId('conversation id', id));
  let status: string | undefined;
  try {
    status = (await session.client.workflow.getHandle(id).describe()).status.name;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  if (status === 'RUNNING') throw new CliError(`conversation ${id} is running: choose another --id, or cancel it first (agentrun cancel ${id})`);
  const row = await session.store.getConversation(id);
  if (!status && !row) return;
  if (!replace) {
    throw new CliError(
      `conversation ${id} already exists (${row?.status ?? status!.toLowerCase()}): choose another --id, or add --replace to delete it and start over`,
    );
  }
  // A tenant replaces only its own: another's records, and an id a schedule or an outside system refers to, stay.
  if (row && !visibleTo(row.config, tenant))
    throw new CliError(`conversation ${id} is another tenant's: --replace acts only on conversations of tenant ${tenant}; choose another --id`);
  await session.store.recordReplacement({
    id,
    tenant: tenantOfRun(row?.config),
    oldStatus: row?.status ?? status?.toLowerCase(),
    oldTask: row?.task,
    by: osUser(),
  });
  await session.store.deleteConversation(id);
}

/** `--model recorded:<id>` names a conversation of this store with answers (else exit 2 now, not a failed run later). */
export async function ensureRecording(session: Session, model: string, tenant: string | undefined = callerTenant()): Promise<void> {
  const { isRecorded, recordingProblem } = await import('../model/scripted/recorded.js');
  const problem = isRecorded(model) ? await recordingProblem(session.store, model, tenant) : undefined;
  if (problem) throw new CliError(problem);
}

/** Start a conversation workflow; shared by run and start. */
export async function startConversation(session: Session, req: RunRequest, flags: { id?: string; replace?: boolean }) {
  // Confined to the run's tenant where one is given (--tenant, AGENTRUN_TENANT); else the administrator's.
  const tenant = req.config.tenant ?? callerTenant();
  await ensureRecording(session, req.config.model, tenant);
  const id = flags.id ?? newConversationId();
  if (flags.id) await claimId(session, id, flags.replace, tenant);
  return asCliError(() => startConversationWith(session, req, id));
}

export async function withSession<T>(opts: { startIfMissing?: boolean }, fn: (s: Session) => Promise<T>): Promise<T> {
  const session = await openSession(opts);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

/** Setup and verify under the result: how long, cached or not; a failed setup's log tail. */
function environmentLines(r: ConversationResult): string {
  const out: string[] = [];
  if (r.setup)
    out.push(
      r.setup.ok
        ? `  setup: ${r.setup.cached ? 'restored from the cache' : 'ran'} in ${(r.setup.ms / 1000).toFixed(1)} s`
        : // Its log was followed above; the result says where to read it again, not the tail a third time.
          `  ${r.setup.reason ?? 'setup failed'}; its log is above and in: agentrun inspect ${r.conversationId}`,
    );
  if (r.verify)
    out.push(
      `  verify: ${r.verify.command}: ${r.verify.passed === null ? 'did not run' : r.verify.passed ? 'passed' : `failed (exit ${r.verify.exitCode ?? 'none'})`} after ${r.verify.attempts} run${r.verify.attempts === 1 ? '' : 's'}${r.verify.baseline ? `; before the agent it ${r.verify.baseline.passed ? 'passed' : 'failed'}` : ''}${r.branch && r.verify.passed === false ? `\n  the branch ${r.branch.branch} is UNVERIFIED` : ''}`,
    );
  return out.length ? `\n${out.join('\n')}` : '';
}

/** `branch: B at C (pushed), 2 files +3 -1`, or that the job changed nothing and nothing was pushed. */
export function branchLine(b: NonNullable<ConversationResult['branch']>): string {
  if (b.empty) return 'branch: none: the job changed nothing, so nothing was committed or pushed (--push-empty to push anyway)';
  const d = b.diffstat;
  return `branch: ${b.branch} at ${b.commit.slice(0, 12)}${b.pushed ? ' (pushed)' : ''}, ${plural(d.files, 'file')} +${d.insertions} -${d.deletions}`;
}

function finalLine(json: boolean | undefined, r: ConversationResult): void {
  emit(
    json,
    {
      type: 'result',
      conversationId: r.conversationId,
      status: r.status,
      reason: r.reason,
      turns: r.turns,
      usage: r.usage,
      cacheHitRate: cacheHitRate(r.usage) ?? null,
      costUsd: r.costUsd,
      result: r.result,
      ...(r.branch ? { branch: r.branch } : {}),
      ...(r.setup ? { setup: r.setup } : {}),
      ...(r.verify ? { verify: r.verify } : {}),
    },
    `\n${r.status} after ${plural(r.turns, 'turn')}: ${r.reason}${environmentLines(r)}\n  tokens ${r.usage.totalTokens} (prompt ${r.usage.promptTokens}${r.usage.cachedTokens ? `, ${formatCached(r.usage)}` : ''}, completion ${r.usage.completionTokens}), cost $${r.costUsd.toFixed(4)}\n  conversation ${r.conversationId}${r.branch ? `\n  ${branchLine(r.branch)}` : ''}`,
  );
}

export async function runCommand(flags: RunFlags & GlobalFlags & { id?: string; replace?: boolean; worker?: boolean; wait?: boolean }): Promise<number> {
  const request = await runRequest(flags);
  // This process's own worker runs the conversation: whether it may run `--sandbox off` is known now.
  if (flags.worker !== false) {
    const [{ unsandboxedRefusal }, { unsandboxedAllowed }] = await Promise.all([import('../sandbox/policy.js'), import('../sandbox/preflight.js')]);
    const refused = unsandboxedRefusal(request.config.sandbox, unsandboxedAllowed());
    if (refused) throw new CliError(refused);
  }
  return withSession({ startIfMissing: true }, async (session) => {
    if (flags.worker !== false) await startOwnWorker(session);
    const { id, handle, req } = await startConversation(session, request, flags);
    emit(flags.json, { type: 'conversation', conversationId: id, workspace: req.workspace, model: req.config.model }, `conversation ${id}`);
    return followToEnd(session, id, handle, flags);
  });
}

/** A signal ended the following, not the conversation: say how to follow it again; 128 + the signal. */
function detached(json: boolean | undefined, id: string, signal: StopSignal): number {
  emit(json, { type: 'detached', conversationId: id, signal }, `\n${signal}: detached; the conversation is durable: agentrun watch ${id}`);
  return exitCodeForSignal(signal);
}

/** Follow a started conversation to its end (or until it waits for a person); the exit code. Shared by run and rerun. */
export async function followToEnd(
  session: Session,
  id: string,
  handle: Pick<ReturnType<Session['client']['workflow']['getHandle']>, 'query' | 'result' | 'describe'>,
  flags: GlobalFlags & { wait?: boolean },
): Promise<number> {
  const stop = whenStopped();
  const outcome = await Promise.race([follow(session, id, { json: flags.json, stopWhenWaiting: !flags.wait }), stop.signal]).finally(stop.release);
  if (typeof outcome === 'string') return detached(flags.json, id, outcome);
  if (outcome.waiting) {
    const state = (await handle.query(stateQuery)) as ConversationState;
    emit(
      flags.json,
      {
        type: 'result',
        conversationId: id,
        status: state.status === 'awaiting_budget' ? 'awaiting_budget' : 'waiting',
        pendingApproval: state.pendingApproval,
        pendingQuestion: state.pendingQuestion,
        turns: state.turn,
        usage: state.usage,
        costUsd: state.costUsd,
      },
      state.status === 'awaiting_budget'
        ? `\nawaiting budget (${state.costUsd.toFixed(4)} USD, ${state.usage.totalTokens} tokens, ${state.turn} turns spent): raise with: agentrun budget raise ${id} --add-cost USD (or --max-tokens, --max-turns, --max-time)`
        : `\nwaiting for a person: ${state.pendingQuestion ? `answer with: agentrun answer ${id} "…"` : `approve with: agentrun approve ${id} (or deny)`}`,
    );
    return EXIT.waiting;
  }
  const result = await conversationResult(handle);
  finalLine(flags.json, result);
  return exitCodeFor(result.status);
}

export async function startCommand(flags: RunFlags & GlobalFlags & { id?: string; replace?: boolean }): Promise<number> {
  const request = await runRequest(flags);
  return withSession({}, async (session) => {
    const { id, handle } = await startConversation(session, request, flags);
    emit(flags.json, { type: 'started', conversationId: id, runId: handle.firstExecutionRunId }, id);
    return EXIT.completed;
  });
}

/**
 * Reading commands start the embedded servers for their own duration when none is running (after
 * `run` has returned, its servers are gone): a newcomer can look at what just ran.
 */
const READ_ON_DEMAND = { startIfMissing: true } as const;

export async function watchCommand(id: string, flags: GlobalFlags & { from?: string }): Promise<number> {
  return withSession(READ_ON_DEMAND, async (session) => {
    await ensureExists(session, id);
    const from = flags.from === undefined ? 0 : Number(flags.from);
    if (!Number.isInteger(from) || from < 0) throw new CliError(`--from must be a stream offset (a whole number ≥ 0), got "${flags.from}"`);
    await sayWhenNoWorker(session, id, flags.json);
    const stop = whenStopped();
    const outcome = await Promise.race([follow(session, id, { json: flags.json, from }), stop.signal]).finally(stop.release);
    if (typeof outcome === 'string') return detached(flags.json, id, outcome);
    const row = await session.store.getConversation(id);
    const status = (outcome.finished?.status ?? row?.status ?? 'running') as ConversationStatus;
    return FINAL_STATUSES.includes(status) ? exitCodeFor(status) : EXIT.completed;
  });
}

/** A running conversation that no worker polls for waits silently: `watch` says so, and what starts one. */
async function sayWhenNoWorker(session: Session, id: string, json: boolean | undefined): Promise<void> {
  const desc = await session.client.workflow
    .getHandle(id)
    .describe()
    .catch(() => undefined);
  if (desc?.status.name !== 'RUNNING') return;
  const { liveWorkers } = await import('../client/pollers.js');
  const workers = await liveWorkers(session.client.workflowService, session.endpoints.namespace, desc.taskQueue).catch(() => undefined);
  if (workers?.length !== 0) return;
  emit(
    json,
    { type: 'no-worker', conversationId: id, taskQueue: desc.taskQueue },
    `no worker polls task queue ${desc.taskQueue}: the conversation waits until one runs (agentrun worker, or agentrun dev)`,
  );
}

/** Conversation `id` exists and, for a CLI confined to a tenant (AGENTRUN_TENANT), is that tenant's. */
export async function ensureExists(session: Session, id: string): Promise<void> {
  if (callerTenant() !== undefined) await ensureOwn(session, id);
  return asCliError(() => ensureConversationExists(session, id));
}

/** Updates and signals to a running conversation, with clear errors when it is not running. */
export async function talk<T>(
  id: string,
  fn: (h: ReturnType<Session['client']['workflow']['getHandle']>, s: Session) => Promise<T>,
  opts: { update?: boolean } = {},
): Promise<T> {
  return withSession({}, async (session) => {
    if (callerTenant() !== undefined) await ensureOwn(session, id);
    return asCliError(() => talkTo({ client: session.client, store: session.store, namespace: session.endpoints.namespace }, id, (h) => fn(h, session), opts));
  });
}

export interface ListFlags extends GlobalFlags {
  status?: string;
  limit?: string;
  model?: string;
  workspace?: string;
  minCost?: string;
  since?: string;
  until?: string;
}

/** `--since 2h` (that long ago) or a date (`2026-11-01`, ISO time). */
function pointInTime(flag: string, v: string): Date {
  if (/^\d+(\.\d+)?\s*(ms|s|m|h|d)$/.test(v.trim())) {
    return new Date(Date.now() - parseDuration(v));
  }
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw new CliError(`${flag} must be a duration ago (2h, 7d) or a date (2026-11-01, ISO time), got "${v}"`);
  return d;
}

/** The list flags as checked filters (src/client/list.ts applies them). */
function listFilters(flags: ListFlags): ListFilters {
  const minCost = flags.minCost === undefined ? undefined : Number(flags.minCost);
  if (minCost !== undefined && (!Number.isFinite(minCost) || minCost < 0)) throw new CliError(`--min-cost must be a number of USD ≥ 0, got "${flags.minCost}"`);
  const limit = Number(flags.limit ?? 50);
  if (!Number.isInteger(limit) || limit <= 0) throw new CliError(`--limit must be a whole number ≥ 1, got "${flags.limit}"`);
  return {
    status: flags.status,
    model: flags.model,
    // Workspaces are stored as absolute paths.
    workspace: flags.workspace === undefined ? undefined : resolvePath(flags.workspace),
    minCost,
    since: flags.since === undefined ? undefined : pointInTime('--since', flags.since),
    until: flags.until === undefined ? undefined : pointInTime('--until', flags.until),
    limit,
    tenants: callerScope(),
  };
}

export async function listCommand(flags: ListFlags): Promise<number> {
  const filters = listFilters(flags);
  return withSession(READ_ON_DEMAND, async (session) => {
    const { listConversations } = await import('../client/list.js');
    const { summaryWhere } = await import('../client/workspace-where.js');
    for (const r of await listConversations(session, filters)) {
      emit(
        flags.json,
        { ...r },
        `${String(r.conversationId).padEnd(32)} ${String(r.status).padEnd(16)} turns ${String(r.turns ?? '?').padStart(3)}  $${(r.costUsd ?? 0).toFixed(4)}  ${summaryWhere(r)}${r.diskBytes !== undefined ? `  ${(r.diskBytes / 1e6).toFixed(1)} MB` : ''}${outcomePhrase(r.outcome).replace(/^(?=.)/, '  ')}`,
      );
    }
    return EXIT.completed;
  });
}

export async function pendingCommand(flags: GlobalFlags & { tokenFile?: string; operators?: string }): Promise<number> {
  // With an operators file, what waits for a decision is shown only to an operator's token, as
  // approve/deny are taken only from one; a token bound to tenants sees only their conversations.
  // Checked before reaching Temporal or the store: a missing or wrong token is one line, exit 2.
  const who = (await import('./operator.js')).decider(flags);
  const scope = narrowScope(callerScope(), who.tenants);
  return withSession({}, async (session) => {
    const { pendingItems } = await import('../client/pending.js');
    const { items, unreachable } = await pendingItems(session, session.taskQueue, scope);
    const seen: Record<string, { callId: string; argsHash?: string }> = {};
    for (const item of items) {
      const id = item.conversationId;
      if (item.kind === 'question') {
        emit(flags.json, { conversationId: id, kind: 'question', ...item.question }, `${id}  question: ${escapeControls(item.question.question)}`);
        continue;
      }
      const a = item.approval;
      seen[id] = { callId: a.callId, argsHash: a.argsHash };
      emit(
        flags.json,
        { conversationId: id, kind: 'approval', ...a, ...(item.call ? { arguments: item.call.args } : {}) },
        `${id}  approval --call ${a.callId}${a.argsHash ? ` --args-hash ${a.argsHash}` : ''}: ${item.call?.line ?? escapeControls(a.preview)} (${escapeControls(a.reasons.join('; '))})`,
      );
    }
    await (await import('./seen-approvals.js')).recordSeenApprovals(seen);
    if (unreachable) process.stderr.write(`agentrun: ${unreachable} running conversations did not answer (no worker polls ${session.taskQueue}?)\n`);
    return EXIT.completed;
  });
}

export async function inspectCommand(id: string, o: GlobalFlags & { maxChars: string; diffs: boolean }): Promise<number> {
  return withSession(READ_ON_DEMAND, async (session) => {
    if (callerTenant() !== undefined) await ownConversation(session, id);
    return (await import('./inspect.js')).inspectCommand(session, id, o);
  });
}

export async function sendCommand(id: string, message: string, o: GlobalFlags): Promise<number> {
  await talk(id, (h) => h.signal(sendMessageSignal, { text: message }));
  emit(o.json, { conversationId: id, sent: true }, 'sent');
  return EXIT.completed;
}

export async function answerCommand(id: string, text: string, o: GlobalFlags): Promise<number> {
  const r = await talk(id, (h) => answerQuestion(h, text), { update: true });
  emit(o.json, { conversationId: id, ...r, answered: true }, `answered ${r.callId}`);
  return EXIT.completed;
}

export async function decideCommand(
  id: string,
  approved: boolean,
  o: GlobalFlags & { call?: string; argsHash?: string; reason?: string; as?: string; tokenFile?: string; operators?: string },
): Promise<number> {
  // `by`: who decided (the workflow records it with the decision): the operator token's name when
  // an operators file is configured, else --as or the OS user. Checked before reaching Temporal.
  const who = (await import('./operator.js')).decider(o);
  const by = who.name;
  // An operator token bound to tenants decides only their conversations (another's reads as absent).
  if (who.tenants !== undefined) await withSession(READ_ON_DEMAND, (session) => ownConversation(session, id, narrowScope(callerScope(), who.tenants)));
  // Without --call: the call `pending` showed last, with the hash of the arguments it showed; the
  // workflow refuses it if another call, or other arguments, wait now.
  const { seenApproval } = await import('./seen-approvals.js');
  const seen = await seenApproval(id);
  const callId = o.call ?? seen?.callId;
  let argsHash = o.argsHash ?? (seen && seen.callId === callId ? seen.argsHash : undefined);
  if (approved && argsHash === undefined) {
    // Nothing seen for this call: fetch what waits now and say what is being approved.
    const state = (await talk(id, (h) => h.query(stateQuery))) as ConversationState;
    const waiting = state.pendingApproval;
    if (waiting && (callId === undefined || callId === waiting.callId) && waiting.argsHash) {
      argsHash = waiting.argsHash;
      if (!o.json) process.stderr.write(`approving ${waiting.callId} (args ${argsHash}): ${waiting.preview}\n`);
    }
  }
  let r: { callId: string; approved: boolean };
  try {
    r = await talk(id, (h) => decideApproval(h, { callId, argsHash, approved, reason: o.reason, by }), { update: true });
  } catch (err) {
    if (!o.call && seen && err instanceof CliError && /is not the one waiting/.test(err.message)) {
      throw new CliError(
        `the call waiting in ${id} changed since you last looked (you saw ${seen.callId}): run \`agentrun pending\` to see it, or give --call`,
      );
    }
    throw err;
  }
  emit(o.json, { conversationId: id, ...r, by }, `${approved ? 'approved' : 'denied'} ${r.callId}`);
  return EXIT.completed;
}

export async function pauseCommand(id: string, paused: boolean, o: GlobalFlags): Promise<number> {
  await talk(id, (h) => (paused ? h.signal(pauseSignal) : h.signal(resumeSignal)));
  emit(
    o.json,
    { conversationId: id, [paused ? 'pauseRequested' : 'resumeRequested']: true },
    paused ? 'pause requested: the running step finishes, then it waits for resume' : 'resume requested',
  );
  return EXIT.completed;
}

export async function cancelCommand(id: string, o: GlobalFlags & { reason?: string; now?: boolean }): Promise<number> {
  await talk(id, (h) => requestCancel(h, o.reason, o.now));
  emit(o.json, { conversationId: id, cancelRequested: true }, 'cancel requested');
  return EXIT.completed;
}

export async function rollbackCommand(id: string, o: GlobalFlags & { to: string }): Promise<number> {
  const to = o.to.trim();
  const commit = /^[0-9a-f]{7,40}$/i.test(to) && !/^\d+$/.test(to) ? to : undefined;
  const toTurn = commit ? undefined : Number(to);
  if (!commit && (!Number.isInteger(toTurn) || toTurn! < 0))
    throw new CliError('--to must be a turn number (0 or more) or the saved commit of an earlier rollback');
  return withSession(READ_ON_DEMAND, async (session) => {
    await ensureExists(session, id);
    const handle = session.client.workflow.getHandle(id);
    const desc = await handle.describe();
    let r: { restored: string[]; removed: string[]; saved?: string; notRestored?: string[] };
    if (desc.status.name === 'RUNNING') {
      try {
        r = await handle.executeUpdate(rollbackUpdate, { args: [commit ? { commit } : { toTurn }] });
      } catch (err) {
        throw new CliError(((err as Error).cause as Error | undefined)?.message ?? (err as Error).message);
      }
    } else {
      const { rollbackFinished } = await import('../client/rollback.js');
      r = await asCliError(() => rollbackFinished(session, id, commit ? { commit } : { toTurn: toTurn! }));
    }
    emit(
      o.json,
      { conversationId: id, toTurn, commit, ...r },
      `rolled back to ${commit ? `saved state ${commit.slice(0, 12)}` : `turn ${toTurn}`}: ${plural(r.restored.length, 'file')} restored, ${r.removed.length} removed${r.notRestored?.length ? `, ${r.notRestored.length} ignored files left as they are` : ''}${r.saved ? `; undo with: agentrun rollback ${id} --to ${r.saved}` : ''}`,
    );
    return EXIT.completed;
  });
}
