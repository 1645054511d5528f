// The conversation routes of the web page (src/ui/server.ts routes to them): the list, one
// conversation's detail, its live stream as Server-Sent Events, and the actions on it. Every route
// that names a conversation asks `visibleConversation` first, with the caller's tenants.
import type { Client } from '@temporalio/client';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { environmentOf } from '../client/inspection.js';
import { finishedOutcomes, outcomePhrase, type Outcome } from '../client/outcome.js';
import { subagentsOf } from '../client/subagents.js';
import { conversationInScope, noConversation, type TenantScope } from '../client/tenancy.js';
import { cacheSummary, usageByTurn } from '../client/usage.js';
import { followStream } from '../client/watch.js';
import { storedWhere } from '../client/workspace-where.js';
import type { Store } from '../store/index.js';
import type { ConversationRow } from '../store/types.js';
import { FINAL_STATUSES, type ConversationStatus } from '../types.js';
import type { ConversationState } from '../../workflows/api.js';
import {
  answerQuestion,
  decideApproval,
  notRunning,
  queryStateWithin,
  requestCancel,
  temporalMessage,
  UpdateDeadlineError,
  withinDeadline,
} from '../client/actions.js';
import type { Identity } from './auth.js';

const QUERY_TIMEOUT_MS = 2500;
const KEEPALIVE_MS = 15_000;
/** An update needs a worker to run it: without one it would wait for ever, so bound it. */
const UPDATE_TIMEOUT_MS = 30_000;

/** A refusal with its HTTP status; the server answers it as JSON `{ error }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const isFinal = (s: string | undefined) => s !== undefined && FINAL_STATUSES.includes(s as ConversationStatus);

/** The open event streams, which the server ends when it closes. */
export interface LiveStreams {
  streams: Set<ServerResponse>;
  closing(): boolean;
}

export function conversationRoutes({ store, client }: { store: Store; client: Client }, live: LiveStreams) {
  const { streams } = live;
  /** The workflow's state query, bounded in time (a conversation with no worker would hang it). */
  function queryState(id: string): Promise<ConversationState | undefined> {
    return queryStateWithin(client, id, QUERY_TIMEOUT_MS);
  }

  type HostUsage = { host: string; workspace: string; diskBytes?: number };
  /**
   * `placed`: the host holding the workspace, the directory there and its size (workspace_usage).
   * `where` is the workspace's line as `list` shows it: that host and directory, and the path it
   * started with if it moved (`workspace` stays that starting path).
   */
  function summary(row: ConversationRow, state: ConversationState | undefined, placed: HostUsage | undefined, outcome?: Outcome) {
    return {
      id: row.id,
      status: state?.status ?? row.status,
      // While the model step waits for a refusing provider, what it said.
      reason: (state?.status === 'waiting_for_provider' ? state.providerWait : undefined) ?? row.reason ?? null,
      turns: state?.turn ?? row.turns,
      costUsd: state?.costUsd ?? row.costUsd,
      usage: state?.usage ?? row.usage,
      model: row.model,
      workspace: row.workspace,
      where: storedWhere(row, placed),
      host: placed?.host ?? null,
      hostWorkspace: placed?.workspace ?? null,
      diskBytes: placed?.diskBytes ?? null,
      scheduleId: row.scheduleId ?? null,
      task: row.task.slice(0, 300),
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
      finishedAt: row.finishedAt?.toISOString() ?? null,
      outcome: outcome ?? null,
      // The same short phrase `agentrun list` prints: "branch@commit pushed verified".
      outcomeText: outcomePhrase(outcome),
    };
  }

  // A finished conversation's outcome does not change until it is continued (a new finish time), and
  // the list is polled every few seconds: read each from Temporal once per finish. One Temporal no
  // longer has (or could not answer) is asked again after a minute, not on every poll.
  const outcomeCache = new Map<string, { finishedAt: string; outcome?: Outcome; readAt: number }>();
  async function outcomesOf(rows: ConversationRow[]): Promise<Map<string, Outcome>> {
    const done = rows.filter((r) => isFinal(r.status));
    const key = (r: ConversationRow) => r.finishedAt?.toISOString() ?? r.updatedAt.toISOString();
    const now = Date.now();
    const missing = done.filter((r) => {
      const c = outcomeCache.get(r.id);
      return c?.finishedAt !== key(r) || (!c.outcome && now - c.readAt > 60_000);
    });
    const read = await finishedOutcomes(
      client,
      missing.map((r) => r.id),
    );
    for (const r of missing) outcomeCache.set(r.id, { finishedAt: key(r), outcome: read.get(r.id), readAt: now });
    const out = new Map<string, Outcome>();
    for (const r of done) {
      const o = outcomeCache.get(r.id)?.outcome;
      if (o) out.set(r.id, o);
    }
    return out;
  }

  async function listConversations(url: URL, scope: TenantScope) {
    const status = url.searchParams.get('status') || undefined;
    const limit = Math.min(Math.max(Number(url.searchParams.get('limit') ?? 100) || 100, 1), 500);
    // The store's status is written at turn ends; the workflow knows "waiting" and "paused" now.
    // Ask the running ones (a bounded number, in parallel, each with a deadline).
    const rows = await store.listConversations({
      status: status === 'waiting' || status === 'paused' || status === 'awaiting_budget' || status === 'waiting_for_provider' ? undefined : status,
      limit,
      tenants: scope,
    });
    let live = 0;
    const [states, usage, outcomes] = await Promise.all([
      Promise.all(rows.map(async (r) => (!isFinal(r.status) && live++ < 50 ? await queryState(r.id) : undefined))),
      // Which worker host holds each workspace, where, and its size on disk when last measured.
      store.getWorkspaceUsage(rows.map((r) => r.id)),
      outcomesOf(rows),
    ]);
    const out = rows.map((r, i) => summary(r, states[i], usage.get(r.id), outcomes.get(r.id)));
    return { conversations: status ? out.filter((c) => c.status === status) : out };
  }

  /** The whole of a pending call (the state holds a short preview): the command, or the path and its new content or diff. */
  async function fullCall(id: string, callId: string): Promise<string | null> {
    const call = await store.getToolCall(id, callId);
    if (!call) return null;
    const a = call.args;
    if (typeof a.command === 'string') return a.command;
    const body = typeof a.diff === 'string' ? a.diff : typeof a.content === 'string' ? a.content : undefined;
    if (typeof a.path === 'string' && body !== undefined) return `${a.path}\n${body}`;
    return JSON.stringify(a, null, 2);
  }

  /**
   * Conversation `id`'s row, if the caller's scope may see it: every route that names a conversation
   * asks this first, so another tenant's reads as absent (404, the same words). Null while a
   * started conversation is not in the store yet (its tenant read from Temporal).
   */
  async function visibleConversation(id: string, scope: TenantScope): Promise<ConversationRow | null> {
    const found = await conversationInScope({ store, client }, id, scope);
    if (!found) throw new HttpError(404, noConversation(id, scope));
    return found.row;
  }

  async function conversationDetail(id: string, scope: TenantScope) {
    const row = await visibleConversation(id, scope);
    if (!row) throw new HttpError(409, `conversation ${id} has not been recorded in the store yet`);
    const state = isFinal(row.status) ? undefined : await queryState(id);
    const [checkpoints, usageRows, subagents, environment, placed, outcomes] = await Promise.all([
      store.getCheckpoints(id),
      store.getUsage(id),
      subagentsOf(store, id),
      environmentOf(store, id),
      store.getWorkspaceUsage([id]).then((u) => u.get(id)),
      outcomesOf([row]),
    ]);
    const byTurn = usageByTurn(usageRows);
    return {
      conversation: { ...summary(row, state, placed, outcomes.get(id)), task: row.task },
      state: state
        ? {
            status: state.status,
            turn: state.turn,
            paused: state.paused,
            usage: state.usage,
            costUsd: state.costUsd,
            pendingApproval: state.pendingApproval ? { ...state.pendingApproval, full: await fullCall(id, state.pendingApproval.callId) } : null,
            pendingQuestion: state.pendingQuestion ?? null,
          }
        : null,
      checkpoints: checkpoints.map((c) => ({ turn: c.turn, commit: c.commit, files: c.files, at: c.at.toISOString() })),
      usageByTurn: byTurn,
      cache: cacheSummary(byTurn),
      subagents,
      environment,
    };
  }

  /** The live stream as SSE: everything after the offset, then new events as they are appended. */
  async function streamEvents(id: string, url: URL, req: IncomingMessage, res: ServerResponse, scope: TenantScope): Promise<void> {
    const lastId = req.headers['last-event-id'];
    const fromRaw = typeof lastId === 'string' && lastId !== '' ? lastId : (url.searchParams.get('from') ?? '0');
    let offset = Number(fromRaw);
    if (!Number.isInteger(offset) || offset < 0) throw new HttpError(400, `from must be a stream offset (a whole number ≥ 0), got "${fromRaw}"`);
    await visibleConversation(id, scope);

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    streams.add(res);
    // The client went away, or the server is closing (it ends every response): stop following.
    const stop = new AbortController();
    const onClose = () => stop.abort();
    if (live.closing()) stop.abort();
    req.on('close', onClose);
    res.on('close', onClose);
    let lastWrite = Date.now();
    const write = (text: string) => {
      res.write(text);
      lastWrite = Date.now();
    };
    const keepAlive = setInterval(() => {
      if (Date.now() - lastWrite >= KEEPALIVE_MS) write(': keep-alive\n\n');
    }, KEEPALIVE_MS / 3);
    const rows = followStream({ client, store }, id, { from: offset, signal: stop.signal, runningCheckMs: 5000 });
    try {
      for (;;) {
        const next = await rows.next();
        if (next.done) {
          if (stop.signal.aborted) return;
          const why = next.value.finished ? 'finished' : next.value.status ? `conversation ${next.value.status}` : 'conversation not running';
          write(`event: end\ndata: ${JSON.stringify({ reason: why })}\n\n`);
          return;
        }
        const r = next.value;
        write(`id: ${r.offset}\ndata: ${JSON.stringify({ offset: r.offset, at: r.at.toISOString(), ...r.event })}\n\n`);
      }
    } finally {
      clearInterval(keepAlive);
      streams.delete(res);
      req.off('close', onClose);
      res.off('close', onClose);
      await rows.return({ offset: 0 });
      if (!res.writableEnded) res.end();
    }
  }

  async function bounded<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await withinDeadline(client, UPDATE_TIMEOUT_MS, fn);
    } catch (err) {
      if (err instanceof UpdateDeadlineError) {
        throw new HttpError(504, `no worker took this within ${UPDATE_TIMEOUT_MS / 1000} s; is a worker polling the conversation's task queue?`);
      }
      throw err;
    }
  }

  async function act(id: string, action: string, body: Record<string, unknown>, who: Identity): Promise<unknown> {
    const handle = client.workflow.getHandle(id);
    const str = (k: string, required = false): string | undefined => {
      const v = body[k];
      if (v === undefined || v === null || v === '') {
        if (required) throw new HttpError(400, `"${k}" is required`);
        return undefined;
      }
      if (typeof v !== 'string') throw new HttpError(400, `"${k}" must be a string`);
      return v;
    };
    try {
      switch (action) {
        case 'approve':
        case 'deny': {
          const approved = action === 'approve';
          const callId = str('callId');
          let argsHash = str('argsHash');
          if (approved && argsHash === undefined) {
            // Approving is for what the operator saw: the call and the hash of its arguments.
            const waiting = (await queryState(id))?.pendingApproval;
            if (waiting?.argsHash !== undefined)
              throw new HttpError(400, `"argsHash" is required to approve: send the pendingApproval.argsHash (${waiting.callId}) you were shown`);
            argsHash = undefined;
          }
          // The recorded approver is the operator the token or session belongs to, never a name sent in the body.
          const r = await bounded(() => decideApproval(handle, { callId, argsHash, approved, reason: str('reason'), by: who.name }));
          return { conversationId: id, ...r };
        }
        case 'answer': {
          const text = str('text', true)!;
          if (!text.trim()) throw new HttpError(400, 'the answer is empty');
          const r = await bounded(() => answerQuestion(handle, text));
          return { conversationId: id, answered: true, ...r };
        }
        case 'cancel': {
          await requestCancel(handle, str('reason') ?? 'cancelled from the agentrun UI', body.now === true);
          return { conversationId: id, cancelRequested: true };
        }
      }
    } catch (err) {
      if (err instanceof HttpError) throw err;
      if (notRunning(err)) {
        // Temporal says "not found" for a finished workflow too: the store tells the two apart.
        if (await store.getConversation(id).catch(() => null)) throw new HttpError(409, `conversation ${id} is not running any more`);
        throw new HttpError(404, `no conversation with id ${id}`);
      }
      // Validator rejections (nothing waiting, wrong call id, empty answer) are the caller's to fix.
      throw new HttpError(409, temporalMessage(err));
    }
    throw new HttpError(404, `unknown action ${action}`);
  }

  return { list: listConversations, detail: conversationDetail, visible: visibleConversation, events: streamEvents, act };
}
