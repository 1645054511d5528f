// parseResponse turns the stored answer into tool calls (stored, since arguments can be
// large); runTool runs one call through the ledger and stores its result message.
import { CancelledFailure } from '@temporalio/common';
import { LoopDetector } from '../src/context/loop.js';
import { messageIdFor } from '../src/context/message-ids.js';
import { messageTokens } from '../src/context/tokens.js';
import { parseNativeArguments } from '../src/parser/native.js';
import { parseXmlToolCalls } from '../src/parser/xml-stream.js';
import { checkCommand } from '../src/tools/dangerous.js';
import { getTool, runToolOnce, TOOL_NAMES, validateToolArgs } from '../src/tools/index.js';
import type { StoredMessage, ToolCall } from '../src/types.js';
import { activityLog, cancellationSignal, heartbeat, type ActivityDeps } from './deps.js';
import { inc } from '../src/metrics.js';
import type { CallSummary, ParseInput, ParseResult, RunToolInput, RunToolResult } from './types.js';

const PREVIEW = 300;
/** Control tools whose main argument the workflow needs (question, result, plan, todos). */
const CONTROL_TEXT: Record<string, string> = {
  ask_followup_question: 'question',
  attempt_completion: 'result',
  plan_mode_respond: 'response',
  todo_write: 'todos',
};

interface ParsedCall extends ToolCall {
  invalid?: string;
}

/** Tool calls of one stored assistant message: XML blocks in the text and native tool_calls. */
export function extractCalls(message: StoredMessage): ParsedCall[] {
  const calls: ParsedCall[] = [];
  const parsed = parseXmlToolCalls(message.content, TOOL_NAMES);
  for (const c of parsed.calls) calls.push({ id: '', name: c.name, args: c.params });
  for (const p of parsed.problems) {
    calls.push({ id: '', name: p.name ?? 'unknown', args: {}, invalid: `Your ${p.name ?? ''} tool call could not be read: ${p.error}. Send the complete call again.` });
  }
  for (const n of message.toolCalls ?? []) {
    const args = parseNativeArguments(n.arguments);
    if (!args.ok) calls.push({ id: '', nativeId: n.id, name: n.name, args: {}, invalid: `The arguments of your ${n.name} call are not valid JSON: ${args.error}` });
    else calls.push({ id: '', nativeId: n.id, name: n.name, args: args.value });
  }
  return calls.map((c, i) => {
    const id = `${message.seq}.${i}`;
    if (c.invalid) return { ...c, id };
    if (!getTool(c.name)) return { ...c, id, invalid: `There is no tool named ${c.name}. Use one of: ${TOOL_NAMES.join(', ')}.` };
    const v = validateToolArgs(c.name, c.args);
    return v.ok ? { ...c, id, args: v.args } : { ...c, id, invalid: v.error };
  });
}

/** What a call is about: its path, command, pattern, question… */
function target(call: ToolCall): string {
  const main = call.args.path ?? call.args.command ?? call.args.regex ?? call.args.question ?? call.args.result;
  return typeof main === 'string' ? main : JSON.stringify(call.args);
}

function preview(call: ToolCall): string {
  return `${call.name} ${target(call)}`.slice(0, PREVIEW);
}

export function toolActivities({ store }: ActivityDeps) {
  return {
    async parseResponse(input: ParseInput): Promise<ParseResult> {
      const { conversationId, seq, config, workspace } = input;
      const message = await store.getMessage(conversationId, seq);
      if (!message) throw new Error(`assistant message ${seq} of ${conversationId} is not in the store`);
      const calls = extractCalls(message);
      await store.putToolCalls(conversationId, seq, calls);

      let loop: string | undefined;
      if (config.loopDetection) {
        // Rebuilt from the store each turn (stateless, survives continue-as-new): the recent answers in order.
        const recent = (await store.getMessages(conversationId, { fromSeq: Math.max(1, seq - 40 * config.loopThreshold), toSeq: seq })).filter((m) => m.role === 'assistant');
        const detector = new LoopDetector({ toolCallThreshold: config.loopThreshold });
        for (const m of recent) {
          const mine = m.seq === seq ? calls : extractCalls(m);
          let hit = false;
          for (const c of mine) hit = detector.observeToolCall(c.name, c.args) || hit;
          const repeated = detector.observeContent(m.content);
          if (m.seq === seq && hit) loop = `the same ${mine[mine.length - 1]?.name} call with the same arguments came ${config.loopThreshold} times in a row`;
          else if (m.seq === seq && repeated) loop = 'the same output is being repeated over and over';
        }
      }

      const summaries: CallSummary[] = calls.map((c) => {
        const def = getTool(c.name);
        const check = c.name === 'execute_command' && typeof c.args.command === 'string' ? checkCommand(c.args.command, workspace) : undefined;
        const textArg = CONTROL_TEXT[c.name];
        const text = textArg !== undefined ? c.args[textArg] : undefined;
        return {
          id: c.id,
          name: c.name,
          readOnly: def?.readOnly ?? false,
          mutating: def?.mutating ?? false,
          control: def?.control ?? false,
          dangerous: (check?.dangerous ?? false) || c.args.requires_approval === true,
          reasons: [...(check?.reasons ?? []), ...(c.args.requires_approval === true ? ['the model asked for approval (requires_approval=true)'] : [])],
          invalid: c.invalid,
          preview: preview(c),
          text: text === undefined ? undefined : (typeof text === 'string' ? text : JSON.stringify(text)).slice(0, 8000),
        };
      });
      activityLog(conversationId, input.turn).info({ seq, calls: summaries.map((c) => c.name), loop }, 'response parsed');
      return { calls: summaries, loop };
    },

    async runTool(input: RunToolInput): Promise<RunToolResult> {
      const { conversationId, callId, resultSeq, turn, config, workspace } = input;
      const logger = activityLog(conversationId, turn);
      const call = await store.getToolCall(conversationId, callId);
      if (!call) throw new Error(`tool call ${callId} of ${conversationId} is not in the store`);
      const def = getTool(call.name);
      let ok: boolean;
      let output: string;
      let status: RunToolResult['status'];
      let replayed = false;
      if (input.override) {
        ({ ok, output } = input.override);
        status = input.override.status ?? (ok ? 'ok' : 'error');
      } else {
        await store.appendStream(conversationId, [{ type: 'tool_started', callId, name: call.name, preview: preview(call) }]);
        if (call.name === 'conversation_message_ids_write') {
          ({ ok, output } = await writeMessageIds(call));
          status = ok ? 'ok' : 'error';
        } else {
          const signal = cancellationSignal();
          const r = await runToolOnce(call, { workspace, signal, heartbeat: (d) => heartbeat(d) }, store.ledger(conversationId));
          // A cancelled command returns a result; the activity must end as cancelled, not completed.
          if (signal?.aborted) throw new CancelledFailure(`${call.name} was cancelled`);
          output = r.output;
          ok = r.ok && !r.interrupted;
          replayed = r.replayed ?? false;
          status = r.interrupted ? 'interrupted' : ok ? 'ok' : 'error';
        }
      }
      const tokens = messageTokens({ role: 'user', content: output }, config.model);
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
        meta: { ok, status, nativeId: call.nativeId, path: typeof call.args.path === 'string' ? call.args.path : undefined, target: target(call).slice(0, PREVIEW) },
      });
      if (!input.override) await store.appendStream(conversationId, [{ type: 'tool_completed', callId, name: call.name, ok, preview: output.slice(0, PREVIEW) }]);
      logger.info({ callId, tool: call.name, ok, status, replayed }, 'tool call answered');
      inc('agentrun_tool_calls_total', { tool: call.name, status });
      const changed = !input.override && (def?.mutating ?? false);
      return { ok, status, tokens, preview: output.slice(0, PREVIEW), changed, replayed };

      async function writeMessageIds(c: ToolCall): Promise<{ ok: boolean; output: string }> {
        const ids = c.args.message_ids as string[]; // validated: lower-case, de-duplicated
        const known = new Set((await store.getMessages(conversationId)).map((m) => messageIdFor(conversationId, m.seq)));
        const unknown = ids.filter((id) => !known.has(id));
        if (unknown.length) return { ok: false, output: `Unknown message ids: ${unknown.join(', ')}. Use the ids shown as [message_id: …].` };
        const current = new Set(await store.getMarkedIds(conversationId));
        const action = String(c.args.action ?? 'create');
        const next = action === 'delete' ? [...current].filter((id) => !ids.includes(id)) : action === 'append' ? [...new Set([...current, ...ids])] : ids;
        await store.setMarkedIds(conversationId, next);
        return { ok: true, output: `${next.length} messages are marked for removal from the context (${action}).` };
      }
    },
  };
}
