// Values to and from rows: text PostgreSQL can hold, JSON columns, and rows as the store's types.
import type { ConversationStatus, StoredMessage, ToolCall } from '../types.js';
import type { ConversationRow, LedgerEntry, SegmentRow } from './types.js';

// PostgreSQL text and jsonb cannot hold U+0000 (a tool reading a binary file can produce it). Rather
// than fail the activity on every retry, store U+FFFD in its place.
export function text(s: string): string {
  return s.includes('\u0000') ? s.replace(/\u0000/g, '\uFFFD') : s;
}

export function optText(s: string | undefined): string | null {
  return s === undefined ? null : text(s);
}

export function json(v: unknown): string {
  const s = JSON.stringify(v);
  // Only an escape preceded by an even number of backslashes is a real \u0000 (not an escaped "\\u0000").
  return s.includes('\\u0000') ? s.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd') : s;
}

export function optJson(v: unknown): string | null {
  return v === undefined ? null : json(v);
}

export function toConversation(r: any): ConversationRow {
  return {
    id: r.id,
    task: r.task,
    workspace: r.workspace,
    model: r.model,
    config: r.config,
    ...(r.schedule_id != null && { scheduleId: r.schedule_id }),
    status: r.status as ConversationStatus,
    ...(r.reason != null && { reason: r.reason }),
    turns: r.turns,
    usage: r.usage,
    costUsd: r.cost_usd,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    ...(r.finished_at != null && { finishedAt: r.finished_at }),
    ...(r.collected != null && { collected: r.collected }),
  };
}

export function toMessage(r: any): StoredMessage {
  return {
    conversationId: r.conversation_id,
    seq: r.seq,
    turn: r.turn,
    role: r.role,
    kind: r.kind,
    content: r.content,
    ...(r.reasoning != null && { reasoning: r.reasoning }),
    ...(r.tool_calls != null && { toolCalls: r.tool_calls }),
    ...(r.tool_call_id != null && { toolCallId: r.tool_call_id }),
    ...(r.tool_name != null && { toolName: r.tool_name }),
    tokens: r.tokens,
    ...(r.meta != null && { meta: r.meta }),
  };
}

/** A segments row, as pg returns it or as json_agg does (the same column names). */
export function toSegment(r: any): SegmentRow {
  return {
    conversationId: r.conversation_id,
    seq: r.seq,
    segment: r.segment,
    content: r.content,
    ...(r.reasoning != null && { reasoning: r.reasoning }),
    ...(r.tool_calls != null && { toolCalls: r.tool_calls }),
    finishReason: r.finish_reason,
    usage: r.usage,
  };
}

export function toLedgerEntry(r: any): LedgerEntry {
  return {
    callId: r.call_id,
    tool: r.tool,
    argsHash: r.args_hash,
    state: r.state,
    ...(r.intent != null && { intent: r.intent }),
    ...(r.result != null && { result: r.result }),
  };
}

export function toToolCall(r: any): ToolCall {
  return { id: r.call_id, ...(r.native_id != null && { nativeId: r.native_id }), name: r.name, args: r.args, ...(r.hooks != null && { hooks: r.hooks }) };
}
