// `agentrun inspect`: the transcript (from the store, one entry per turn) and a timeline
// (from the Temporal history of every run of the conversation: activities with attempts,
// durations and failures; signals and updates; continue-as-new).
import type { temporal } from '@temporalio/proto';
import type { Session } from './session.js';
import type { StoredMessage } from '../types.js';

export interface TimelineActivity {
  run: number;
  activityId: string;
  type: string;
  attempts: number;
  startedAt?: string;
  durationMs?: number;
  outcome: 'completed' | 'failed' | 'timed_out' | 'cancelled' | 'running';
  failure?: string;
}

export interface TimelineEvent {
  run: number;
  at: string;
  kind: string;
  detail: string;
}

function ts(t: temporal.api.common.v1.IPayload | null | undefined | { seconds?: unknown; nanos?: number | null }): Date | undefined {
  const time = t as { seconds?: { toNumber?: () => number } | number | null; nanos?: number | null } | null | undefined;
  if (!time || time.seconds == null) return undefined;
  const secs = typeof time.seconds === 'number' ? time.seconds : time.seconds.toNumber!();
  return new Date(secs * 1000 + Math.floor((time.nanos ?? 0) / 1e6));
}

/** Activities and notable events of one run's history. */
export function timelineOf(history: temporal.api.history.v1.IHistory, run: number): { activities: TimelineActivity[]; events: TimelineEvent[] } {
  const byScheduled = new Map<string, TimelineActivity & { scheduledAt?: Date }>();
  const events: TimelineEvent[] = [];
  for (const e of history.events ?? []) {
    const at = ts(e.eventTime as never);
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes) {
      const a = e.activityTaskScheduledEventAttributes;
      byScheduled.set(id, { run, activityId: a.activityId ?? '', type: a.activityType?.name ?? '', attempts: 0, outcome: 'running', scheduledAt: at });
    } else if (e.activityTaskStartedEventAttributes) {
      const a = e.activityTaskStartedEventAttributes;
      const act = byScheduled.get(String(a.scheduledEventId));
      if (act) {
        act.attempts = a.attempt ?? 1;
        act.startedAt = at?.toISOString();
        act.scheduledAt = at;
      }
    } else {
      const done =
        e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes ?? e.activityTaskCanceledEventAttributes;
      if (done) {
        const act = byScheduled.get(String(done.scheduledEventId));
        if (act) {
          act.outcome = e.activityTaskCompletedEventAttributes ? 'completed' : e.activityTaskFailedEventAttributes ? 'failed' : e.activityTaskTimedOutEventAttributes ? 'timed_out' : 'cancelled';
          if (act.scheduledAt && at) act.durationMs = at.getTime() - act.scheduledAt.getTime();
          const failure = (e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes)?.failure;
          if (failure) act.failure = failure.cause?.message ?? failure.message ?? undefined;
        }
      }
    }
    const note = (kind: string, detail: string) => events.push({ run, at: at?.toISOString() ?? '', kind, detail });
    if (e.workflowExecutionSignaledEventAttributes) note('signal', e.workflowExecutionSignaledEventAttributes.signalName ?? '');
    if (e.workflowExecutionUpdateAcceptedEventAttributes) note('update', e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name ?? '');
    if (e.workflowExecutionContinuedAsNewEventAttributes) note('continued_as_new', 'the next run carries the compact state');
    if (e.workflowExecutionCompletedEventAttributes) note('completed', 'workflow completed');
    if (e.workflowExecutionFailedEventAttributes) note('failed', e.workflowExecutionFailedEventAttributes.failure?.message ?? '');
  }
  const activities = [...byScheduled.values()].map(({ scheduledAt: _s, ...a }) => a);
  return { activities, events };
}

export interface TurnEntry {
  turn: number;
  messages: { seq: number; role: string; kind: string; tokens: number; toolName?: string; status?: string; content: string }[];
}

export function transcriptByTurn(messages: StoredMessage[], maxChars: number): TurnEntry[] {
  const turns = new Map<number, TurnEntry>();
  for (const m of messages) {
    const entry = turns.get(m.turn) ?? { turn: m.turn, messages: [] };
    turns.set(m.turn, entry);
    entry.messages.push({
      seq: m.seq,
      role: m.role,
      kind: m.kind,
      tokens: m.tokens,
      toolName: m.toolName,
      status: (m.meta?.status as string | undefined) ?? undefined,
      content: m.content.length > maxChars ? m.content.slice(0, maxChars) + `… (${m.content.length - maxChars} more chars)` : m.content,
    });
  }
  return [...turns.values()].sort((a, b) => a.turn - b.turn);
}

export async function gatherInspection(session: Session, id: string, opts: { maxChars: number; diffs: boolean }) {
  const conversation = await session.store.getConversation(id);
  const messages = await session.store.getMessages(id);
  if (!conversation && messages.length === 0) return undefined;
  const runs: string[] = [];
  try {
    for await (const w of session.client.workflow.list({ query: `WorkflowId = '${id.replace(/'/g, "\\'")}'` })) runs.push(w.runId);
  } catch {
    // visibility may lag or be unavailable: fall back to the latest run
  }
  const activities: TimelineActivity[] = [];
  const events: TimelineEvent[] = [];
  const ordered = runs.length ? runs.reverse() : [undefined];
  for (const [i, runId] of ordered.entries()) {
    try {
      const history = await session.client.workflow.getHandle(id, runId).fetchHistory();
      const t = timelineOf(history, i + 1);
      activities.push(...t.activities);
      events.push(...t.events);
    } catch {
      // history retention may have removed old runs; the store still has the transcript
    }
  }
  const checkpoints = await session.store.getCheckpoints(id);
  let diffs: Record<number, string> = {};
  if (opts.diffs && conversation) {
    const { checkpointDiff } = await import('../workspace/checkpoint.js');
    for (const c of checkpoints) if (c.turn > 0) diffs[c.turn] = await checkpointDiff(conversation.workspace, c.commit, session.home).catch((e: Error) => `(diff unavailable: ${e.message})`);
  }
  let state: unknown;
  try {
    state = await session.client.workflow.getHandle(id).query('state');
  } catch {
    state = undefined;
  }
  return {
    conversation,
    state,
    transcript: transcriptByTurn(messages, opts.maxChars),
    timeline: { activities, events, continuations: activities.filter((a) => a.type === 'callModel').length - new Set(messages.filter((m) => m.role === 'assistant').map((m) => m.seq)).size },
    pruneRecords: await session.store.getPruneRecords(id),
    checkpoints: checkpoints.map((c) => ({ ...c, diff: diffs[c.turn] })),
    usage: await session.store.getUsage(id),
  };
}

export function printInspection(data: NonNullable<Awaited<ReturnType<typeof gatherInspection>>>, write: (s: string) => void): void {
  const c = data.conversation;
  if (c) {
    write(`conversation ${c.id}\n  status: ${c.status}${c.reason ? ` (${c.reason})` : ''}\n  model: ${c.model}\n  workspace: ${c.workspace}\n`);
    write(`  turns: ${c.turns}  tokens: ${c.usage.totalTokens} (prompt ${c.usage.promptTokens}, completion ${c.usage.completionTokens})  cost: $${c.costUsd.toFixed(4)}\n`);
  }
  const todos = (data.state as { todos?: string } | undefined)?.todos;
  if (todos) write(`\ntodos\n${indent(todos)}\n`);
  write('\ntranscript\n');
  for (const t of data.transcript) {
    write(`── turn ${t.turn} ──\n`);
    for (const m of t.messages) {
      const label = m.kind === 'tool_result' ? `tool ${m.toolName}${m.status ? ` [${m.status}]` : ''}` : m.kind;
      write(`[${m.seq}] ${label} (${m.tokens} tokens)\n${indent(m.content)}\n`);
    }
  }
  write('\ntimeline\n');
  for (const a of data.timeline.activities) {
    write(`  run ${a.run} ${a.type.padEnd(18)} attempts ${a.attempts}  ${a.durationMs ?? '?'} ms  ${a.outcome}${a.failure ? `: ${a.failure}` : ''}\n`);
  }
  for (const e of data.timeline.events) write(`  run ${e.run} ${e.at} ${e.kind} ${e.detail}\n`);
  if (data.pruneRecords.length) {
    write('\nprune records\n');
    for (const p of data.pruneRecords) write(`  turn ${p.turn}: ${p.tokensBefore} → ${p.tokensAfter} tokens; ${p.actions.join('; ')}\n`);
  }
  if (data.checkpoints.length) {
    write('\ncheckpoints\n');
    for (const cp of data.checkpoints) {
      write(`  turn ${cp.turn}: ${cp.commit.slice(0, 12)} ${cp.files.join(', ')}\n`);
      if (cp.diff) write(indent(cp.diff, '    ') + '\n');
    }
  }
}

function indent(text: string, pad = '    '): string {
  return text
    .split('\n')
    .map((l) => pad + l)
    .join('\n');
}
