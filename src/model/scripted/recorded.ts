// `--model recorded:<id>`: the answers conversation <id> got, served again by the scripted model
// server, so a conversation replays offline with its tools; and the check that the new run still
// sees what <id> saw, which stops it at the first turn whose tool results differ.
import { ApplicationFailure } from '@temporalio/common';
import type { Store } from '../../store/index.js';
import type { StoredMessage } from '../../types.js';
import type { Script, ScriptTurn } from './script.js';
import { startScriptedServer, type ScriptedServer } from './server.js';
import { tenantOfRun } from '../../runtime/tenant.js';

const PREFIX = 'recorded:';

/** Failure type of a replay that no longer matches its recording (not retried). */
const RECORDED_DIVERGENCE = 'RecordedDivergence';

export function isRecorded(model: string): boolean {
  return model.startsWith(PREFIX);
}

export function recordedId(model: string): string {
  return model.slice(PREFIX.length);
}

/**
 * A problem with `recorded:<id>` a person can act on, or undefined when the recording can be served.
 * Only a recording of `tenant` (undefined: the administrator, any) is one: another tenant's reads as
 * absent (its answers, and whether it exists, are not this caller's to learn).
 */
export async function recordingProblem(store: Store, model: string, tenant: string | undefined): Promise<string | undefined> {
  const id = recordedId(model);
  if (!id) return `model ${model}: give the conversation to replay, e.g. recorded:conv-abc123`;
  const recording = await recordingOf(store, id);
  if (!recording || (tenant !== undefined && recording.tenant !== tenant)) {
    const ofTenant = tenant ? ` of tenant ${tenant}` : '';
    return isEvalCase(id)
      ? `model ${model}: no eval case ${id.slice(EVAL_PREFIX.length)}${ofTenant} in the store to replay (see agentrun eval list)`
      : `model ${model}: no conversation with id ${id}${ofTenant} in the store to replay (see agentrun list)`;
  }
  if (!recording.messages.some((m) => m.kind === 'assistant')) return `model ${model}: conversation ${id} has no model answers to replay`;
  return undefined;
}

/** `eval:<set>/<case>`: the recording a frozen eval case keeps (src/store/evals.ts), which outlives its source conversation. */
const EVAL_PREFIX = 'eval:';

export function evalRecordingId(set: string, caseId: string): string {
  return `${EVAL_PREFIX}${set}/${caseId}`;
}

function isEvalCase(id: string): boolean {
  return id.startsWith(EVAL_PREFIX);
}

interface Recording {
  messages: StoredMessage[];
  /** The workspace it ran in (its paths read the same as this run's). */
  workspace?: string;
  /** Changes when the recording does (a conversation still running). */
  version: string;
  /** The tenant whose run it recorded: it is served to that tenant's conversations only. */
  tenant: string;
}

/** A conversation's recording, or a frozen eval case's; null when there is none. */
async function recordingOf(store: Store, id: string): Promise<Recording | null> {
  if (isEvalCase(id)) {
    const rest = id.slice(EVAL_PREFIX.length);
    const slash = rest.indexOf('/');
    const c = slash > 0 ? await store.getEvalRecording(rest.slice(0, slash), rest.slice(slash + 1)) : null;
    if (!c) return null;
    return { messages: c.messages, workspace: c.workspace, version: `case:${c.createdAt.getTime()}`, tenant: tenantOfRun(c.config) };
  }
  const row = await store.getConversation(id);
  if (!row) return null;
  return {
    messages: await store.getMessages(id),
    workspace: row.workspace,
    version: `${row.turns}:${row.status}:${row.updatedAt.getTime()}`,
    tenant: tenantOfRun(row.config),
  };
}

/** The recording as a script: turn t answers with what <id>'s model said at turn t (text with any tool XML, native calls, reasoning). */
function recordedScript(id: string, messages: StoredMessage[]): Script {
  const answers = new Map<number, StoredMessage>();
  // The last answer of a turn is the one the turn went on with (an earlier one was replaced).
  for (const m of messages) if (m.kind === 'assistant') answers.set(m.turn, m);
  const last = Math.max(0, ...answers.keys());
  const turns: ScriptTurn[] = [];
  for (let t = 1; t <= last; t++) {
    const m = answers.get(t);
    turns.push(m ? scriptTurn(m) : { say: `[recorded model] conversation ${id} has no answer at turn ${t}` });
  }
  // Big chunks: a replay is about what was said, not about how it streamed.
  return { model: `recorded:${id}`, default_chunk: 4096, turns };
}

function scriptTurn(m: StoredMessage): ScriptTurn {
  const calls = m.toolCalls ?? [];
  return {
    ...(m.content || !calls.length ? { say: m.content } : {}),
    ...(m.reasoning ? { reasoning: m.reasoning } : {}),
    ...(calls.length ? { tool_calls: calls.map((c) => ({ name: c.name, arguments: c.arguments, id: c.id })) } : {}),
  };
}

// One server per recording per process, as for script files (src/model/scripted/cli.ts); it is made
// again when the recorded conversation changed (it was still running when first served).
const servers = new Map<string, { version: string; server: Promise<ScriptedServer> }>();

export async function serveRecorded(store: Store, id: string): Promise<ScriptedServer> {
  const recording = await recordingOf(store, id);
  if (!recording) throw ApplicationFailure.nonRetryable(`model recorded:${id}: no conversation with id ${id} in the store to replay`, RECORDED_DIVERGENCE);
  const hit = servers.get(id);
  if (hit?.version === recording.version) return hit.server;
  if (hit) void hit.server.then((s) => s.close()).catch(() => {});
  const server = startScriptedServer(recordedScript(id, recording.messages), { name: `the recording of ${id}`, keepsProcessAlive: false });
  const version = recording.version;
  servers.set(id, { version, server });
  server.catch(() => servers.delete(id));
  return server;
}

/**
 * Before turn `turn` of `conversationId` asks the recording: every earlier turn's tool results
 * must equal the recorded ones (paths of either workspace and either conversation id read the
 * same), else the recorded answers no longer apply and the run stops, naming the first turn that
 * differs. A turn past the recording stops it too. Reads the store only, so a retry decides the same.
 */
export async function checkRecorded(store: Store, id: string, conversationId: string, turn: number, seq: number): Promise<void> {
  await refuseForeignRecording(store, id, conversationId);
  const [recording, mine, myRow] = await Promise.all([
    recordingOf(store, id),
    store.getMessages(conversationId, { toSeq: seq - 1 }),
    store.getConversation(conversationId),
  ]);
  const recorded = recording?.messages ?? [];
  const diverged = (t: number, why: string) => ApplicationFailure.nonRetryable(`diverged from ${id} at turn ${t}: ${why}`, RECORDED_DIVERGENCE);
  const sourceId = recorded[0]?.conversationId;
  const neutral = neutralizer([recording?.workspace, myRow?.workspace], [id, conversationId, ...(sourceId ? [sourceId] : [])]);
  const results = (messages: StoredMessage[], t: number) => messages.filter((m) => m.kind === 'tool_result' && m.turn === t);
  for (let t = 1; t < turn; t++) {
    const was = results(recorded, t);
    const now = results(mine, t);
    for (let i = 0; i < Math.max(was.length, now.length); i++) {
      const a = was[i];
      const b = now[i];
      if (!a || !b) throw diverged(t, `${a?.toolName ?? b?.toolName} was ${a ? 'recorded but not called now' : 'called now but not in the recording'}`);
      if (a.toolName !== b.toolName) throw diverged(t, `the recording called ${a.toolName}, this run ${b.toolName}`);
      const x = neutral(a.content);
      const y = neutral(b.content);
      if (x !== y) throw diverged(t, `${a.toolName} result differs (${firstDifference(x, y)})`);
    }
  }
  const answered = recorded.some((m) => m.kind === 'assistant' && m.turn === turn);
  if (!answered) {
    const lastTurn = Math.max(0, ...recorded.filter((m) => m.kind === 'assistant').map((m) => m.turn));
    throw diverged(turn, `the recording has no answer for turn ${turn} (its last answer is at turn ${lastTurn})`);
  }
}

/** Replaces each workspace path and conversation id by a placeholder, longest first. */
function neutralizer(paths: (string | undefined)[], ids: string[]): (text: string) => string {
  const pairs = [
    ...paths.filter((p): p is string => !!p && p.length > 1).map((p) => [p, '<workspace>'] as const),
    ...ids.map((i) => [i, '<conversation>'] as const),
  ];
  pairs.sort((a, b) => b[0].length - a[0].length);
  return (text) => pairs.reduce((s, [from, to]) => s.split(from).join(to), text);
}

/**
 * A recording is served only to a conversation of its own tenant, whoever started the replay and
 * whatever the CLI checked: another tenant's reads as absent. Not retried.
 */
export async function refuseForeignRecording(store: Store, id: string, conversationId: string): Promise<void> {
  const [recording, myRow] = await Promise.all([recordingOf(store, id), store.getConversation(conversationId)]);
  const tenant = tenantOfRun(myRow?.config);
  if (!recording || recording.tenant !== tenant)
    throw ApplicationFailure.nonRetryable(
      `model recorded:${id}: no ${isEvalCase(id) ? 'eval case' : 'conversation with id'} ${id} of tenant ${tenant} in the store to replay`,
      RECORDED_DIVERGENCE,
    );
}

/** Where the results part, with this run's own text only: the recording's content never reaches an error (it may be another run's secrets). */
function firstDifference(was: string, now: string): string {
  let i = 0;
  while (i < was.length && i < now.length && was[i] === now[i]) i++;
  return `at character ${i} of ${was.length} recorded; this run has ${JSON.stringify(now.slice(i, i + 40))}`;
}
