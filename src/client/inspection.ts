// A conversation's inspection, shared by `agentrun inspect`, the SDK and the web page: the
// transcript (from the store, one entry per turn) and a timeline (from the Temporal history of every
// run of the conversation: activities with attempts, durations and failures; signals and updates;
// continue-as-new), checkpoints with their diffs, prune records, usage, sub-agents, connections.
import { cacheSummary, usageByTurn } from './usage.js';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { effectiveSandbox, type SandboxSettings } from '../sandbox/policy.js';
import type { Store } from '../store/index.js';
import type { HookRecord } from '../extensions/hooks.js';
import type { StoredMessage, StreamEvent, VerifyRun } from '../types.js';
import { subagentsOf } from './subagents.js';
import { outcomeOf } from './outcome.js';
import { queryStateWithin } from './actions.js';
import { workspaceOf, type Placement } from './workspace-where.js';
import { RESULT_MEMO, type ConversationResult } from '../../workflows/api.js';

/** What an inspection reads: the store, Temporal, and AGENTRUN_HOME (where the checkpoints' private repositories are). */
export interface InspectionSource {
  store: Store;
  client: Client;
  home: string;
}

export interface TimelineActivity {
  run: number;
  activityId: string;
  type: string;
  attempts: number;
  startedAt?: string;
  durationMs?: number;
  outcome: 'completed' | 'failed' | 'timed_out' | 'cancelled' | 'running';
  failure?: string;
  /** Build id of the worker whose workflow task scheduled it (Worker Versioning), when the history says. */
  workerVersion?: string;
  /** The turn its input names (modelTurn, toolCall); absent for steps outside a turn and local activities. */
  turn?: number;
  /** What the step did, as the Temporal UI shows it: `turn 3 · execute_command npm test`, `verify · npm test (run 1)`. */
  summary?: string;
  /** A local activity (store-only steps: endTurnRecord, recordToolResult, finishSession…), read from its marker. */
  local?: true;
  /** A local activity: the event id of the workflow task that ran it (Temporal Cloud bills one action for all of a task's). */
  workflowTask?: string;
}

/** The JSON value of a json/plain payload (activity inputs, local activity markers), else undefined. */
function payloadJson(p: temporal.api.common.v1.IPayload | null | undefined): unknown {
  if (!p?.data) return undefined;
  try {
    return JSON.parse(Buffer.from(p.data).toString('utf8'));
  } catch {
    return undefined; // another encoding (binary/null, an encrypting codec)
  }
}

/** The steps that place a workspace on a host (activities/workspace.ts); each returns where. */
const PLACING_STEPS = new Set(['prepareWorkspace', 'placeLocalWorkspace', 'materializeWorkspace']);

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
export function timelineOf(
  history: temporal.api.history.v1.IHistory,
  run: number,
  opts: { local?: boolean } = {},
): { activities: TimelineActivity[]; events: TimelineEvent[]; placements: Placement[] } {
  const locals: TimelineActivity[] = [];
  const placements: Placement[] = [];
  const byScheduled = new Map<string, TimelineActivity & { scheduledAt?: Date }>();
  const events: TimelineEvent[] = [];
  // The worker version that completed each workflow task (deployment build id, or the older build id field).
  const versionOfTask = new Map<string, string>();
  for (const e of history.events ?? []) {
    const at = ts(e.eventTime as never);
    const id = String(e.eventId);
    const wft = e.workflowTaskCompletedEventAttributes;
    const version = wft?.deploymentVersion?.buildId || wft?.workerVersion?.buildId;
    if (version) versionOfTask.set(id, version);
    if (e.activityTaskScheduledEventAttributes) {
      const a = e.activityTaskScheduledEventAttributes;
      const workerVersion = versionOfTask.get(String(a.workflowTaskCompletedEventId));
      const turn = (payloadJson(a.input?.payloads?.[0]) as { turn?: unknown } | undefined)?.turn;
      const summary = payloadJson(e.userMetadata?.summary);
      byScheduled.set(id, {
        run,
        activityId: a.activityId ?? '',
        type: a.activityType?.name ?? '',
        attempts: 0,
        outcome: 'running',
        scheduledAt: at,
        ...(workerVersion ? { workerVersion } : {}),
        ...(typeof turn === 'number' ? { turn } : {}),
        ...(typeof summary === 'string' && summary ? { summary } : {}),
      });
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
        e.activityTaskCompletedEventAttributes ??
        e.activityTaskFailedEventAttributes ??
        e.activityTaskTimedOutEventAttributes ??
        e.activityTaskCanceledEventAttributes;
      if (done) {
        const act = byScheduled.get(String(done.scheduledEventId));
        if (act) {
          act.outcome = e.activityTaskCompletedEventAttributes
            ? 'completed'
            : e.activityTaskFailedEventAttributes
              ? 'failed'
              : e.activityTaskTimedOutEventAttributes
                ? 'timed_out'
                : 'cancelled';
          if (act.scheduledAt && at) act.durationMs = at.getTime() - act.scheduledAt.getTime();
          const failure = (e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes)?.failure;
          if (failure) act.failure = failure.cause?.message ?? failure.message ?? undefined;
          const placed = PLACING_STEPS.has(act.type)
            ? (payloadJson(e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]) as { hostId?: unknown; workspace?: unknown } | null | undefined)
            : undefined;
          if (typeof placed?.hostId === 'string' && typeof placed.workspace === 'string')
            placements.push({ run, at: at?.toISOString() ?? '', host: placed.hostId, workspace: placed.workspace });
        }
      }
    }
    const marker = e.markerRecordedEventAttributes;
    if (opts.local && marker?.markerName === 'core_local_activity') {
      // The SDK's record of a local activity: its type, attempt, and when it was scheduled and completed.
      const m = payloadJson(marker.details?.data?.payloads?.[0]) as
        { activity_id?: string; activity_type?: string; attempt?: number; original_schedule_time?: object; complete_time?: object } | undefined;
      const from = ts(m?.original_schedule_time as never);
      const to = ts(m?.complete_time as never) ?? at;
      if (m?.activity_type && from)
        locals.push({
          run,
          activityId: `local-${m.activity_id ?? id}`,
          type: m.activity_type,
          attempts: m.attempt ?? 1,
          startedAt: from.toISOString(),
          durationMs: Math.max(0, (to?.getTime() ?? from.getTime()) - from.getTime()),
          outcome: marker.failure ? 'failed' : 'completed',
          ...(marker.failure ? { failure: marker.failure.message ?? undefined } : {}),
          local: true,
          workflowTask: String(marker.workflowTaskCompletedEventId),
        });
    }
    const note = (kind: string, detail: string) => events.push({ run, at: at?.toISOString() ?? '', kind, detail });
    if (e.workflowExecutionSignaledEventAttributes) note('signal', e.workflowExecutionSignaledEventAttributes.signalName ?? '');
    if (e.workflowExecutionUpdateAcceptedEventAttributes) note('update', e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name ?? '');
    if (e.workflowExecutionContinuedAsNewEventAttributes) note('continued_as_new', 'the next run carries the compact state');
    if (e.workflowExecutionCompletedEventAttributes) note('completed', 'workflow completed');
    if (e.workflowExecutionFailedEventAttributes) note('failed', e.workflowExecutionFailedEventAttributes.failure?.message ?? '');
    if (e.workflowExecutionCanceledEventAttributes) note('canceled', 'workflow canceled');
  }
  const activities = [...byScheduled.values()].map(({ scheduledAt: _s, ...a }) => a as TimelineActivity);
  if (locals.length) activities.push(...locals);
  return { activities, events, placements };
}

export interface TurnEntry {
  turn: number;
  messages: { seq: number; role: string; kind: string; tokens: number; toolName?: string; status?: string; hooks?: HookRecord[]; content: string }[];
}

function transcriptByTurn(messages: StoredMessage[], maxChars: number): TurnEntry[] {
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
      // What hooks decided about this tool call (src/extensions/hooks.ts).
      ...(Array.isArray(m.meta?.hooks) ? { hooks: m.meta.hooks as HookRecord[] } : {}),
      content: m.content.length > maxChars ? m.content.slice(0, maxChars) + `… (${m.content.length - maxChars} more chars)` : m.content,
    });
  }
  return [...turns.values()].sort((a, b) => a.turn - b.turn);
}

/** The command sandbox the conversation asked for, from its start input (recorded in the history). */
function sandboxOf(history: temporal.api.history.v1.IHistory): SandboxSettings | undefined {
  const data = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    return effectiveSandbox((JSON.parse(Buffer.from(data).toString('utf8')) as { config?: Parameters<typeof effectiveSandbox>[0] }).config ?? {});
  } catch {
    return undefined;
  }
}

/** Event attributes that close a run: after one of them the run is not running any more. */
const CLOSE_EVENTS = [
  'workflowExecutionCompletedEventAttributes',
  'workflowExecutionFailedEventAttributes',
  'workflowExecutionTimedOutEventAttributes',
  'workflowExecutionCanceledEventAttributes',
  'workflowExecutionTerminatedEventAttributes',
  'workflowExecutionContinuedAsNewEventAttributes',
] as const;

/** Runs kept at most: a longer chain of continue-as-new is cut at its oldest runs. */
const MAX_RUNS = 1000;

/**
 * Activities and events of every run of a conversation (continue-as-new makes several), oldest
 * first; `running` tells whether the newest run is still open, `workflowType` what it runs.
 * The newest run's history comes first and names the run it continued (its started event), so a
 * conversation of one run costs one history fetch and no visibility query (which may lag behind,
 * and would also list the runs of an earlier conversation under the same id, `--replace`). A
 * chain of k runs costs k fetches in a row; runs are few, as they end only every
 * `--continue-as-new-every` turns or when the history grows large.
 */
export async function conversationTimeline(client: Client, id: string, opts: { local?: boolean } = {}) {
  const histories: temporal.api.history.v1.IHistory[] = [];
  for (let runId: string | undefined; histories.length < MAX_RUNS;) {
    let history: temporal.api.history.v1.IHistory;
    try {
      history = await client.workflow.getHandle(id, runId).fetchHistory();
    } catch {
      break; // no such workflow, or history retention removed the older runs: the store still has the transcript
    }
    histories.unshift(history);
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    if (!runId) break;
  }
  const timelines = histories.map((h, i) => timelineOf(h, i + 1, opts));
  const newest = histories.at(-1)?.events;
  const last = newest?.at(-1);
  return {
    result: newest ? resultOfHistory(newest) : undefined,
    activities: timelines.flatMap((t) => t.activities),
    events: timelines.flatMap((t) => t.events),
    placements: timelines.flatMap((t) => t.placements),
    sandbox: histories[0] ? sandboxOf(histories[0]) : undefined,
    running: !!last && !CLOSE_EVENTS.some((k) => last[k]),
    workflowType: newest?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? undefined,
  };
}

/** A JSON payload of the default data converter, or undefined. */
function jsonPayload(p: temporal.api.common.v1.IPayload | null | undefined): unknown {
  if (!p?.data) return undefined;
  try {
    return JSON.parse(Buffer.from(p.data).toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * How a finished conversation ended, from its newest run's history: the completed workflow's result,
 * the failure's details, or the memo a cancelled one left (workflows/session/outcome.ts). The branch,
 * commit, pushed and verified state live there, whatever the store or gc removed since.
 */
function resultOfHistory(events: temporal.api.history.v1.IHistoryEvent[]): ConversationResult | undefined {
  const last = events.at(-1);
  const asResult = (v: unknown) => (v && typeof v === 'object' && typeof (v as ConversationResult).status === 'string' ? (v as ConversationResult) : undefined);
  if (last?.workflowExecutionCompletedEventAttributes) return asResult(jsonPayload(last.workflowExecutionCompletedEventAttributes.result?.payloads?.[0]));
  if (last?.workflowExecutionFailedEventAttributes)
    return asResult(jsonPayload(last.workflowExecutionFailedEventAttributes.failure?.applicationFailureInfo?.details?.payloads?.[0]));
  if (last?.workflowExecutionCanceledEventAttributes) {
    for (const e of [...events].reverse()) {
      const memo = e.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields?.[RESULT_MEMO];
      if (memo) return asResult(jsonPayload(memo));
    }
  }
  return undefined;
}

export async function gatherInspection(session: InspectionSource, id: string, opts: { maxChars: number; diffs: boolean }) {
  // The store's rows and the Temporal side are independent: ask both at once.
  const [conversation, messages, checkpoints, pruneRecords, usage, timeline, subagents, network, environment, bundles, placed, approvals] = await Promise.all([
    session.store.getConversation(id),
    session.store.getMessages(id),
    session.store.getCheckpoints(id),
    session.store.getPruneRecords(id),
    session.store.getUsage(id),
    conversationTimeline(session.client, id),
    subagentsOf(session.store, id),
    session.store.getNetworkConnections(id),
    environmentOf(session.store, id),
    session.store.getBundledCommits(id),
    session.store.getWorkspaceUsage([id]).then((u) => u.get(id)),
    session.store.getApprovals(id),
  ]);
  if (!conversation && messages.length === 0) return undefined;
  const { activities, events, sandbox } = timeline;
  const config = (conversation?.config ?? {}) as { repo?: string; agent?: { parentId?: string } };
  const workspace = conversation ? workspaceOf(conversation.workspace, config.repo, placed, timeline.placements) : undefined;
  let diffs: Record<number, string> = {};
  if (opts.diffs && conversation) {
    const { checkpointDiffs } = await import('../workspace/stored-diffs.js');
    const turns = checkpoints.filter((c) => c.turn > 0);
    const texts = await checkpointDiffs(
      session.store,
      {
        conversationId: id,
        home: session.home,
        // Every directory it was placed in: this machine may have held it before or after a move.
        dirs: [conversation.workspace, ...timeline.placements.map((p) => p.workspace), ...(placed ? [placed.workspace] : [])],
        // A sub-agent's turns are checkpointed in its parent's workspace, never off the host.
        ...(config.agent?.parentId !== undefined ? { subagent: true } : config.repo !== undefined ? { repo: config.repo } : {}),
        ...(workspace?.host ? { host: workspace.host } : {}),
        bundled: bundles,
      },
      turns,
    );
    diffs = Object.fromEntries(turns.map((c, i) => [c.turn, texts[i]!]));
  }
  // Only a running conversation has live state worth a query: a query to a closed one needs a
  // worker to replay it and waits for one (tens of seconds) when none polls. Bounded either way.
  const byTurn = usageByTurn(usage);
  let state: unknown;
  if (timeline.running) {
    state = await queryStateWithin(session.client, id, 3_000);
  }
  return {
    conversation,
    outcome: outcomeOf(timeline.result),
    approvals,
    ...(conversation?.collected ? { collected: conversation.collected } : {}),
    workspace,
    sandbox,
    state,
    subagents,
    transcript: transcriptByTurn(messages, opts.maxChars),
    // Segments after the first of each answer (the model step records how many it merged).
    timeline: {
      activities,
      events,
      continuations: messages.filter((m) => m.role === 'assistant').reduce((n, m) => n + Math.max(0, Number(m.meta?.segments ?? 1) - 1), 0),
    },
    pruneRecords,
    checkpoints: checkpoints.map((c) => ({ ...c, diff: diffs[c.turn] })),
    usage,
    // Per turn, with the provider's cached prompt tokens; the conversation's cache hit rate.
    usageByTurn: byTurn,
    cache: cacheSummary(byTurn),
    network,
    environment,
    offHost: offHostOf(bundles),
  };
}

/** A local workspace's off-host checkpoints (bundles in the store): how many and their size, or why there are none. */
function offHostOf(
  bundles: { turn: number; bytes: number; skipped?: true; base?: string }[],
): { bundles: number; bytes: number; skippedAtTurn?: number; skippedBytes?: number; skippedBase?: true } | undefined {
  if (bundles.length === 0) return undefined;
  const skipped = bundles.find((b) => b.skipped);
  const kept = bundles.filter((b) => !b.skipped);
  return {
    bundles: kept.length,
    bytes: kept.reduce((n, b) => n + b.bytes, 0),
    ...(skipped ? { skippedAtTurn: skipped.turn, skippedBytes: skipped.bytes, ...(skipped.base ? { skippedBase: true as const } : {}) } : {}),
  };
}

/** A setup run's end as `inspect` shows it (its stream event). */
type SetupFinished = Omit<Extract<StreamEvent, { type: 'setup_finished' }>, 'type' | 'afterMove'>;

/** Setup and verify, from the stream: the commands, each attempt's outcome, setup's log (bounded) and each verify run. */
export async function environmentOf(store: Pick<Store, 'readStream'>, id: string) {
  const setup: {
    commands?: string[];
    network?: string;
    attempts: number;
    /** The hosts it started on, in order (more than one: the first was lost while it ran). */
    hosts: string[];
    log: string;
    finished?: SetupFinished;
    /** Setup again on the host each move restored the workspace on (what setup made does not move). */
    afterMoves: { move: number; host?: string; attempts: number; finished?: SetupFinished }[];
  } = { attempts: 0, hosts: [], log: '', afterMoves: [] };
  const verify: VerifyRun[] = [];
  /** What the repository's .agentrun/ defines and whether the run uses it (the one notice of its start). */
  let repositoryExtensions: { enabled: boolean; found: string[]; notice: string } | undefined;
  const afterMove = (move: number) => {
    let m = setup.afterMoves.find((x) => x.move === move);
    if (!m) setup.afterMoves.push((m = { move, attempts: 0 }));
    return m;
  };
  for (let from = 0; ;) {
    const rows = await store.readStream(id, from, 1000);
    for (const r of rows) {
      const e = r.event;
      if (e.type === 'setup_started' && e.afterMove) {
        const m = afterMove(e.afterMove);
        m.host = e.host;
        // Each start is one attempt (their numbers skip those a probed round could have used).
        m.attempts += 1;
      } else if (e.type === 'setup_started') {
        setup.commands = e.commands;
        if (e.network) setup.network = e.network;
        // Each start is one attempt: a retry on the same host, or the run again on the host a lost one's job moved to.
        setup.attempts += 1;
        if (e.host && setup.hosts.at(-1) !== e.host) setup.hosts.push(e.host);
      } else if (e.type === 'setup_output') setup.log = (setup.log + e.text).slice(-64 * 1024);
      else if (e.type === 'setup_finished') {
        const { type: _t, afterMove: move, ...rest } = e;
        if (move) afterMove(move).finished = rest;
        else setup.finished = rest;
      } else if (e.type === 'verify') {
        const { type: _t, ...rest } = e;
        verify.push(rest);
      } else if (e.type === 'repository_extensions') {
        const { type: _t, ...rest } = e;
        repositoryExtensions = rest;
      }
    }
    if (rows.length < 1000) break;
    from = rows[rows.length - 1]!.offset + 1;
  }
  return { setup: setup.commands ? setup : undefined, verify, ...(repositoryExtensions ? { repositoryExtensions } : {}) };
}
