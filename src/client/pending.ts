// What a pending approval shows a person: the whole arguments of the call, as the approval binds
// all of them, with every control character escaped (a terminal must not be steered by what the
// model wrote: ESC sequences, carriage returns that overwrite a line, bidirectional overrides);
// and what waits for a person across conversations, within the caller's tenants.
import type { Client } from '@temporalio/client';
import type { Store } from '../store/index.js';
import { CONVERSATION_TYPES_QUERY, type PendingApproval, type PendingQuestion } from '../../workflows/api.js';
import { queryStateWithin } from './actions.js';
import { scopedConversation, type TenantScope } from './tenancy.js';

const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028\u2029\u2060-\u2064\u202a-\u202e\u2066-\u2069\ufeff]/g;
const CONTROLS_AND_BACKSLASH = /[\\\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028\u2029\u2060-\u2064\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * `s` with C0 and C1 controls, DEL, line and paragraph separators and bidirectional formatting
 * characters written as \n, \t, \r or \u{XXXX}; backslashes doubled so the escapes are unambiguous.
 */
export function escapeControls(s: string, opts: { backslashes?: boolean } = {}): string {
  return s.replace(opts.backslashes === false ? CONTROLS : CONTROLS_AND_BACKSLASH, (c) => {
    if (c === '\\') return '\\\\';
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    return `\\u{${c.codePointAt(0)!.toString(16).padStart(4, '0')}}`;
  });
}

/** The whole arguments of a stored call as one line: `name {"key": "value", …}`, controls escaped; undefined when not stored. */
async function pendingCallLine(
  store: Pick<Store, 'getToolCall'>,
  conversationId: string,
  callId: string,
): Promise<{ line: string; args: Record<string, unknown> } | undefined> {
  const call = await store.getToolCall(conversationId, callId);
  if (!call) return undefined;
  // JSON already escapes C0 controls and backslashes; the rest (DEL, C1, bidi) is escaped after.
  return { line: `${call.name} ${escapeControls(JSON.stringify(call.args), { backslashes: false })}`, args: call.args };
}

/** One thing a running conversation waits on a person for: its question, or the call awaiting approval. */
export type PendingItem =
  | { conversationId: string; kind: 'question'; question: PendingQuestion }
  | { conversationId: string; kind: 'approval'; approval: PendingApproval; call?: { line: string; args: Record<string, unknown> } };

/**
 * What waits for a person across the running conversations of a task queue, within the caller's
 * tenant scope (src/client/tenancy.ts): an operator bound to tenants, or a CLI or SDK confined to
 * them, never learns that another tenant's conversation waits, nor its question or call.
 * `unreachable` counts the in-scope conversations that did not answer within `queryMs`.
 */
export async function pendingItems(
  deps: { client: Client; store: Pick<Store, 'getConversation' | 'getToolCall'> },
  taskQueue: string,
  scope: TenantScope,
  queryMs = 5000,
): Promise<{ items: PendingItem[]; unreachable: number }> {
  // Every running conversation answers the state query; only the waiting ones have something pending.
  const query = `${CONVERSATION_TYPES_QUERY} AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue.replace(/'/g, "\\'")}'`;
  const items: PendingItem[] = [];
  let unreachable = 0;
  for await (const w of deps.client.workflow.list({ query })) {
    const id = w.workflowId;
    // Scoped before the conversation is asked anything: another tenant's is skipped unseen.
    if (scope !== undefined && !(await scopedConversation(deps.store, id, scope))) continue;
    // A conversation whose workers are all gone cannot answer; don't let it stall the list.
    const state = await queryStateWithin(deps.client, id, queryMs);
    if (!state) {
      unreachable++;
      continue;
    }
    if (state.pendingQuestion) items.push({ conversationId: id, kind: 'question', question: state.pendingQuestion });
    if (state.pendingApproval) {
      // The approval binds the whole call: its stored arguments, never a clipped preview.
      const call = await pendingCallLine(deps.store, id, state.pendingApproval.callId);
      items.push({ conversationId: id, kind: 'approval', approval: state.pendingApproval, ...(call ? { call } : {}) });
    }
  }
  return { items, unreachable };
}
