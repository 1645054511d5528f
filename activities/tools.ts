// The model step's parsing (parseStoredAnswer: the stored answer's tool calls, stored since
// arguments can be large) and a tool call's answer (answerCall: through the ledger, its result
// message stored), used by activities/session.ts.
import { CancelledFailure } from '@temporalio/common';
import type { RunConfig } from '../src/config.js';
import { applyMessageIdsAction, messageIdFor } from '../src/context/message-ids.js';
import { messageTokens } from '../src/context/tokens.js';
import { callPreview, callTarget, detectLoop, extractCalls, PREVIEW_CHARS, summarizeCall, type ParsedCall } from '../src/parser/calls.js';
import { getTool, runToolOnce } from '../src/tools/index.js';
import type { Store } from '../src/store/index.js';
import type { StoredMessage, ToolCall } from '../src/types.js';
import { extensionHooks } from '../src/extensions/scope.js';
import { refusedTool } from '../src/extensions/agents.js';
import type { HookRecord } from '../src/extensions/hooks.js';
import type { SandboxSettings } from '../src/sandbox/index.js';
import { activityLog, cancellationSignal, heartbeat } from './deps.js';
import { inc } from '../src/metrics.js';
import type { ParseResult, RunToolInput, RunToolResult } from './types.js';

export { extractCalls } from '../src/parser/calls.js';

const PREVIEW = PREVIEW_CHARS;

/** Extract, store and summarise the calls of the assistant message at `seq`, with the loop check. */
export async function parseStoredAnswer(
  store: Store,
  conversationId: string,
  seq: number,
  workspace: string,
  config: Pick<RunConfig, 'loopDetection' | 'loopThreshold' | 'agent'>,
  /** The message as the caller just stored it (else read). */
  stored?: StoredMessage,
): Promise<ParseResult> {
  const message = stored ?? (await store.getMessage(conversationId, seq));
  if (!message) throw new Error(`assistant message ${seq} of ${conversationId} is not in the store`);
  // A sub-agent's calls to tools outside its list are answered with the reason, not run.
  const calls: ParsedCall[] = extractCalls(message).map((c) => {
    const refused = c.invalid ? undefined : refusedTool(config, c.name);
    return refused ? { ...c, invalid: refused } : c;
  });
  await store.putToolCalls(conversationId, seq, calls);
  let loop: string | undefined;
  if (config.loopDetection) {
    // Rebuilt from the store each turn (stateless, survives continue-as-new): the recent answers in order.
    const recent = (await store.getMessages(conversationId, { fromSeq: Math.max(1, seq - 40 * config.loopThreshold), toSeq: seq })).filter(
      (m) => m.role === 'assistant',
    );
    loop = detectLoop(recent, calls, config.loopThreshold);
  }
  return { calls: calls.map((c) => summarizeCall(c, workspace)), loop };
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
  override?: RunToolInput['override'];
  /** The call, when the caller read it already. */
  call?: ToolCall;
}

/** Run one call through the ledger (or record the workflow's own answer) and store its result message. */
export async function answerCall(store: Store, input: AnswerCallInput): Promise<RunToolResult> {
  const { conversationId, callId, resultSeq, turn, workspace } = input;
  const logger = activityLog(conversationId, turn);
  const call = input.call ?? (await store.getToolCall(conversationId, callId));
  if (!call) throw new Error(`tool call ${callId} of ${conversationId} is not in the store`);
  const def = getTool(call.name);
  let ok: boolean;
  let output: string;
  let status: RunToolResult['status'];
  let replayed = false;
  const hookRecords: HookRecord[] = [];
  if (input.override) {
    ({ ok, output } = input.override);
    status = input.override.status ?? (ok ? 'ok' : 'error');
  } else {
    await store.appendStream(conversationId, [{ type: 'tool_started', callId, name: call.name, preview: callPreview(call) }]);
    if (call.name === 'conversation_message_ids_write') {
      ({ ok, output } = await writeMessageIds(store, conversationId, call));
      status = ok ? 'ok' : 'error';
    } else {
      const signal = cancellationSignal();
      // Hooks (src/extensions/hooks.ts) may block the call or rewrite its arguments first.
      const hooks = extensionHooks();
      const event = { conversationId, turn, workspace, callId, tool: call.name, args: call.args };
      const before = hooks ? await hooks.beforeTool(event) : undefined;
      if (before?.action === 'block') {
        ({ ok, output, status } = { ok: false, output: `Blocked by a hook: ${before.reason}`, status: 'error' });
      } else {
        const args = before?.args ?? call.args;
        const r = await runToolOnce(
          { ...call, args },
          {
            workspace,
            signal,
            heartbeat: (d) => heartbeat(d),
            sandbox: input.sandbox,
            // Recorded as each connection ends; a failed write is logged, never the command's failure.
            recordConnection: (c) =>
              void store.putNetworkConnection({ ...c, conversationId, callId }).catch((err) => logger.warn({ err }, 'recording a network connection failed')),
          },
          store.ledger(conversationId),
        );
        // A cancelled command returns a result; the activity must end as cancelled, not completed.
        if (signal?.aborted) throw new CancelledFailure(`${call.name} was cancelled`);
        const after = hooks && !r.replayed ? await hooks.afterTool({ ...event, args }, r) : undefined;
        output = after?.output ?? r.output;
        ok = r.ok && !r.interrupted;
        replayed = r.replayed ?? false;
        status = r.interrupted ? 'interrupted' : ok ? 'ok' : 'error';
        hookRecords.push(...(after?.records ?? []));
      }
      hookRecords.unshift(...(before?.records ?? []));
    }
  }
  const tokens = messageTokens({ role: 'user', content: output }, input.model);
  await store.putMessage({
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
      ...(hookRecords.length ? { hooks: hookRecords } : {}),
      nativeId: call.nativeId,
      path: typeof call.args.path === 'string' ? call.args.path : undefined,
      target: callTarget(call).slice(0, PREVIEW),
    },
  });
  // The workflow's own answers (delegate, denials, …) end in the stream too when their start is there.
  if (!input.override || (await store.hasStreamEvent(conversationId, `tool_started:${callId}`))) {
    const subagent = input.override?.subagent;
    await store.appendStream(conversationId, [
      { type: 'tool_completed', callId, name: call.name, ok, preview: output.slice(0, PREVIEW), ...(subagent ? { subagent } : {}) },
    ]);
  }
  logger.info({ callId, tool: call.name, ok, status, replayed, hooks: hookRecords.length ? hookRecords : undefined }, 'tool call answered');
  inc('agentrun_tool_calls_total', { tool: call.name, status });
  const changed = !input.override && (def?.mutating ?? false);
  return { ok, status, tokens, preview: output.slice(0, PREVIEW), changed, replayed };
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
