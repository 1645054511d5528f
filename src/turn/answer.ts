// A turn's calls, from the stored answer to their results. parseStoredAnswer (in the model step):
// the answer's calls extracted and validated, PreToolUse hooks run, each call classified once
// (src/turn/calls.ts) and stored, their summaries for the workflow. answerCall (in the tool step):
// the stored call run as it is, on the classification it came with, through the ledger; its result
// message stored; toolStep adds the turn's checkpoint when the call changed files. activities/session.ts
// registers the steps that run them.
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { createCheckpoint } from '../workspace/checkpoint.js';
import { recordWorkspaceUsage } from '../workspace/host.js';
import { saveCheckpointOffHost } from '../workspace/offhost.js';
import type { RunConfig } from '../config.js';
import { applyMessageIdsAction, messageIdFor } from '../context/message-ids.js';
import { messageTokens } from '../model/tokens.js';
import {
  callTarget,
  classifyCall,
  detectLoop,
  extractCalls,
  previewOf,
  PREVIEW_CHARS,
  summarizeCall,
  type CallSummary,
  type Classification,
  type ParsedCall,
} from './calls.js';
import {
  answeredByWorkflow,
  getTool,
  mutates,
  runToolOnce,
  validateToolArgs,
  withKnownEntry,
  type LedgerEntry,
  type LedgerPort,
  type Recovery,
} from '../tools/index.js';
import { epochOf } from '../store/fence.js';
import { text as storedText } from '../store/rows.js';
import type { Store } from '../store/index.js';
import type { IndexEntry, StoredMessage, StreamEvent, SubagentOutcome, ToolCall } from '../types.js';
import { extensionHooks } from '../extensions/scope.js';
import { refusedTool } from '../extensions/agents.js';
import type { HookRecord } from '../extensions/hooks.js';
import type { XmlParseResult } from '../parser/xml-stream.js';
import { effectiveSandbox, type SandboxSettings } from '../sandbox/index.js';
import { activityLog, cancellationSignal, heartbeat, withHeartbeat } from './step.js';
import { inc } from '../metrics.js';

export interface ParseResult {
  calls: CallSummary[];
  /** The same call with the same arguments repeated, or the same output chunk: a loop. */
  loop?: string;
}

/** Set when the workflow answers the call itself (denied, invalid, interrupted…). */
export interface CallOverride {
  ok: boolean;
  output: string;
  status?: IndexEntry['status'];
  subagent?: SubagentOutcome;
}

export interface RunToolResult {
  ok: boolean;
  status: NonNullable<IndexEntry['status']>;
  tokens: number;
  preview: string;
  changed: boolean;
  replayed?: boolean;
  /** Run again after its workspace was restored on another host (`afterMove`): what became of it. */
  recovery?: Recovery;
}

const PREVIEW = PREVIEW_CHARS;

/** Extract, store and summarise the calls of the assistant message at `seq`, with the loop check. */
export async function parseStoredAnswer(
  store: Store,
  conversationId: string,
  seq: number,
  workspace: string,
  config: Pick<RunConfig, 'loopDetection' | 'loopThreshold' | 'agent' | 'sandbox'>,
  /**
   * The message as the caller just stored it (else read), with its text's parse when it was streamed
   * whole, and the transcript before it as the caller read it this step (else the loop check reads it).
   */
  stored?: { message: StoredMessage; xml?: XmlParseResult; history?: StoredMessage[] },
): Promise<ParseResult> {
  const message = stored?.message ?? (await store.getMessage(conversationId, seq));
  if (!message) throw new Error(`assistant message ${seq} of ${conversationId} is not in the store`);
  // A sub-agent's calls to tools outside its list are answered with the reason, not run.
  // A cut answer (too large, too slow: src/model/stream.ts) runs no call, even one whole in its text; its note says so.
  const cut = (message.meta as { cut?: string } | undefined)?.cut !== undefined;
  const extracted: ParsedCall[] = (cut ? [] : extractCalls(message, stored?.xml)).map((c) => {
    const refused = c.invalid ? undefined : refusedTool(config, c.name);
    return refused ? { ...c, invalid: refused } : c;
  });
  const calls = await hookedCalls(extracted, { conversationId, turn: message.turn, workspace });
  // The loop check's recent answers: the calls their turns stored come back with this write.
  const fromSeq = Math.max(1, seq - 40 * config.loopThreshold);
  const earlier = await store.putToolCalls(conversationId, seq, calls, config.loopDetection ? { earlierFrom: fromSeq } : {});
  // Each call classified here, once: the summary carries it to the workflow and on to the tool step.
  // The conversation's sandbox policy is fixed when it starts, so the tool step runs under the one judged here.
  const unsandboxed = effectiveSandbox(config).policy === 'off';
  const summaries = calls.map((c) => summarizeCall(c, workspace, unsandboxed));
  // A call a hook blocked starts in the stream like every call; the workflow's answer ends it there.
  const blocked = summaries.filter((s, i) => s.invalid !== undefined && calls[i]!.hooks?.length);
  if (blocked.length)
    await store.appendStream(
      conversationId,
      blocked.map((s) => ({ type: 'tool_started', callId: s.id, name: s.name, preview: s.preview })),
    );
  let loop: string | undefined;
  if (config.loopDetection) {
    // Rebuilt from the store each turn (stateless, survives continue-as-new): the recent answers in
    // order, with the calls their turns parsed and stored. The transcript this step read holds them
    // up to the message before this one; this one's text as the store keeps it (storedText).
    const messages = stored?.history
      ? [...stored.history.filter((m) => m.seq >= fromSeq && m.seq < seq), { ...message, content: storedText(message.content) }]
      : await store.getMessages(conversationId, { fromSeq, toSeq: seq });
    loop = detectLoop(
      messages.filter((m) => m.role === 'assistant'),
      earlier,
      calls,
      config.loopThreshold,
    );
  }
  return { calls: summaries, loop };
}

/**
 * PreToolUse hooks (the shell hooks of the settings and the code hook beforeTool) run as the calls
 * are parsed, before the workflow's policy sees them: a rewrite replaces the stored arguments, so
 * what is classified, approved and run is the call as the hooks left it; a block is the call's answer.
 */
async function hookedCalls(calls: ParsedCall[], at: { conversationId: string; turn: number; workspace: string }): Promise<ParsedCall[]> {
  const hooks = extensionHooks();
  if (!hooks) return calls;
  const out: ParsedCall[] = [];
  for (const c of calls) {
    const def = getTool(c.name);
    // Control tools are the workflow's own answers, never run by a tool step.
    if (c.invalid !== undefined || !def || answeredByWorkflow(def) || c.name === 'conversation_message_ids_write') {
      out.push(c);
      continue;
    }
    const before = await hooks.beforeTool({ ...at, callId: c.id, tool: c.name, args: c.args });
    const records = before.records as unknown as Array<Record<string, unknown>>;
    if (before.action === 'block') {
      out.push({ ...c, invalid: `Blocked by a hook: ${before.reason}`, hooks: records });
      continue;
    }
    if (before.args === c.args) {
      out.push(records.length ? { ...c, hooks: records } : c);
      continue;
    }
    const v = validateToolArgs(c.name, before.args);
    out.push(
      v.ok
        ? { ...c, args: v.args, hooks: records }
        : { ...c, invalid: `A PreToolUse hook rewrote the ${c.name} call into one that is not valid: ${v.error}`, hooks: records },
    );
  }
  return out;
}

export interface AnswerCallInput {
  conversationId: string;
  workspace: string;
  model: string;
  turn: number;
  callId: string;
  resultSeq: number;
  /** The command sandbox for this conversation (src/sandbox/policy.ts effectiveSandbox). */
  sandbox: SandboxSettings;
  override?: CallOverride;
  /** The call as it was classified when parsed; absent (a call summarised before calls carried it): classified here. */
  classified?: Classification;
  /** The call, when the caller read it already, with its ledger entry when read with it (null: none yet). */
  call?: ToolCall;
  entry?: LedgerEntry | null;
  /**
   * The call runs again because its host was lost and the workspace was restored from an older
   * checkpoint: a change it made there is made again here where it is missing (src/tools/ledger-runner.ts).
   */
  afterMove?: boolean;
  /** The conversation's tenant: its commands' egress connections count toward its cap. */
  tenant?: string;
}

/** Run one call through the ledger (or record the workflow's own answer) and store its result message. */
export async function answerCall(store: Store, input: AnswerCallInput): Promise<RunToolResult> {
  const { conversationId, callId, resultSeq, turn, workspace } = input;
  const logger = activityLog(conversationId, turn);
  const call = input.call ?? (await store.getToolCall(conversationId, callId));
  if (!call) throw new Error(`tool call ${callId} of ${conversationId} is not in the store`);
  const target = input.classified?.target ?? callTarget(call).slice(0, PREVIEW);
  const def = getTool(call.name);
  let ok: boolean;
  let output: string;
  let status: RunToolResult['status'];
  let replayed = false;
  let recovery: Recovery | undefined;
  // The PreToolUse decisions were made as the call was parsed (hookedCalls); they are kept with its answer.
  const hookRecords: HookRecord[] = [...((call.hooks ?? []) as unknown as HookRecord[])];
  if (input.override) {
    ({ ok, output } = input.override);
    status = input.override.status ?? (ok ? 'ok' : 'error');
  } else {
    const started: StreamEvent = { type: 'tool_started', callId, name: call.name, preview: previewOf(call.name, target) };
    // A call the tool step found no ledger entry for is claimed before it runs anything: its start is
    // announced in the claim's statement (one round trip), the same event before the same work.
    const withClaim = input.entry === null && call.name !== 'conversation_message_ids_write';
    if (!withClaim) await store.appendStream(conversationId, [started]);
    if (call.name === 'conversation_message_ids_write') {
      ({ ok, output } = await writeMessageIds(store, conversationId, call));
      status = ok ? 'ok' : 'error';
    } else {
      const signal = cancellationSignal();
      // The stored call runs as it is: its PreToolUse hooks ran when it was parsed, before its approval.
      const hooks = extensionHooks();
      const { args } = call;
      const epoch = epochOf(conversationId);
      const event = { conversationId, turn, workspace, callId, tool: call.name, args };
      const port = store.ledger(conversationId, withClaim ? [started] : []);
      let claimed = false;
      const ledger: LedgerPort = withClaim
        ? {
            ...port,
            start: (e) => {
              claimed = true;
              return port.start(e);
            },
          }
        : port;
      // The call runs as it was parsed and classified: the ledger neither validates nor checks it again.
      const r = await runToolOnce(
        {
          id: call.id,
          name: call.name,
          args,
          safety: (input.classified ?? classifyCall(call, workspace, input.sandbox.policy === 'off')).safety,
          ...(input.afterMove ? { afterMove: true } : {}),
        },
        {
          workspace,
          signal,
          heartbeat: (d) => heartbeat(d),
          sandbox: input.sandbox,
          ...(input.tenant ? { tenant: input.tenant } : {}),
          // Recorded as each connection ends; a failed write is logged, never the command's failure.
          recordConnection: (c) =>
            void store
              .putNetworkConnection({ ...c, conversationId, callId }, epoch)
              .catch((err) => logger.warn({ err }, 'recording a network connection failed')),
        },
        input.entry === undefined ? ledger : withKnownEntry(ledger, call.id, input.entry),
      );
      // A call that ran nothing (its arguments refused) made no claim: its start is announced on its own.
      if (withClaim && !claimed) await store.appendStream(conversationId, [started]);
      // A cancelled command returns a result; the activity must end as cancelled, not completed.
      if (signal?.aborted) throw new CancelledFailure(`${call.name} was cancelled`);
      if (input.afterMove) recovery = r.recovery ?? (r.replayed ? 'recorded' : 'not-started');
      // After a move, a change made again (or found kept) is the call the hooks saw already.
      const after = hooks && !r.replayed && recovery !== 'reapplied' && recovery !== 'kept' ? await hooks.afterTool(event, r) : undefined;
      output = after?.output ?? r.output;
      ok = r.ok && !r.interrupted;
      replayed = r.replayed ?? false;
      status = r.interrupted ? 'interrupted' : ok ? 'ok' : 'error';
      hookRecords.push(...(after?.records ?? []));
    }
  }
  const tokens = messageTokens({ role: 'user', content: output }, input.model);
  // The workflow's own answers (delegate, denials, …) end in the stream too when their start is there.
  const subagent = input.override?.subagent;
  const completed = !input.override || (await store.hasStreamEvent(conversationId, `tool_started:${callId}`));
  await store.putMessage(
    {
      conversationId,
      seq: resultSeq,
      turn,
      role: 'tool',
      kind: 'tool_result',
      content: output,
      toolName: call.name,
      toolCallId: callId,
      tokens,
      meta: {
        ok,
        status,
        ...(recovery ? { recovery } : {}),
        ...(hookRecords.length ? { hooks: hookRecords } : {}),
        nativeId: call.nativeId,
        path: typeof call.args.path === 'string' ? call.args.path : undefined,
        target,
      },
    },
    // In the message's statement: one round trip.
    completed ? [{ type: 'tool_completed', callId, name: call.name, ok, preview: output.slice(0, PREVIEW), ...(subagent ? { subagent } : {}) }] : [],
  );
  logger.info({ callId, tool: call.name, ok, status, replayed, recovery, hooks: hookRecords.length ? hookRecords : undefined }, 'tool call answered');
  inc('agentrun_tool_calls_total', { tool: call.name, status });
  const changed = !input.override && def !== undefined && mutates(def);
  return { ok, status, tokens, preview: output.slice(0, PREVIEW), changed, replayed, ...(recovery ? { recovery } : {}) };
}

export interface ToolStepInput extends AnswerCallInput {
  /** Checkpoint the workspace after the call when it changed files (mutating tools). */
  checkpoint?: boolean;
  /** Push that checkpoint off the host (repository jobs) or store it as a bundle (local workspaces) before answering, so a move can restore it. */
  offHost?: boolean;
  /** The commit the workflow knows at this turn's ref on the remote ('' none): the push's --force-with-lease. */
  lease?: string;
  /** A repository job's remote (the run configuration's `repo`). */
  repo?: string;
}

export interface ToolStepResult extends RunToolResult {
  checkpoint?: { turn: number; commit: string; files: number };
}

/** The tool step: the call answered, then, when it changed files, the turn's checkpoint (off the host first, when asked). */
export async function toolStep(store: Store, home: string, input: ToolStepInput): Promise<ToolStepResult> {
  const r = await answerCall(store, input);
  if (!input.checkpoint || !r.changed) return r;
  const checkpoint = await checkpointTurn(store, home, input);
  return checkpoint ? { ...r, checkpoint } : r;
}

/** What a turn's checkpoint is made from: the workspace, its turn, and whether (and how) it leaves the host. */
export type TurnCheckpointInput = Pick<ToolStepInput, 'conversationId' | 'workspace' | 'turn' | 'offHost' | 'lease' | 'repo'>;

/**
 * The turn's checkpoint of the workspace as it is now (after a call that changed files, or a
 * sub-agent that may have), off the host first when asked, then recorded: undefined when nothing
 * changed since the last one. Safe to run twice: a checkpoint already made for the turn is kept
 * while the files are the same, and one already stored off the host is found there.
 */
export async function checkpointTurn(store: Store, home: string, input: TurnCheckpointInput): Promise<ToolStepResult['checkpoint']> {
  const { conversationId, workspace, turn } = input;
  // Repository jobs: a cancelled attempt (host drained, or heartbeats lost) must not push: the
  // workflow may already have moved the workspace and go on writing this turn's ref elsewhere.
  if (input.offHost && cancellationSignal()?.aborted) throw ApplicationFailure.retryable('the tool call was cancelled before its checkpoint', 'Cancelled');
  const cp = await withHeartbeat(() => createCheckpoint(workspace, conversationId, turn, home));
  if (!cp) return undefined;
  if (input.offHost)
    await withHeartbeat(() => saveCheckpointOffHost(store, home, { repo: input.repo, workspace, conversationId, turn, commit: cp.commit, lease: input.lease }));
  await store.putCheckpoint(conversationId, turn, cp.commit, cp.files, [{ type: 'checkpoint', turn, commit: cp.commit, files: cp.files }]);
  recordWorkspaceUsage(store, conversationId, workspace);
  return { turn, commit: cp.commit, files: cp.files.length };
}

async function writeMessageIds(store: Store, conversationId: string, c: ToolCall): Promise<{ ok: boolean; output: string }> {
  const ids = c.args.message_ids as string[]; // validated: lower-case, de-duplicated
  const known = new Set((await store.getMessages(conversationId)).map((m) => messageIdFor(conversationId, m.seq)));
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length) return { ok: false, output: `Unknown message ids: ${unknown.join(', ')}. Use the ids shown as [message_id: …].` };
  const action = (c.args.action ?? 'create') as 'create' | 'append' | 'delete'; // validated by the tool's schema
  const next = applyMessageIdsAction(await store.getMarkedIds(conversationId), action, ids);
  await store.setMarkedIds(conversationId, next);
  return { ok: true, output: `${next.length} messages are marked for removal from the context (${action}).` };
}
