// The renderer's lookups against the store: a tool call's arguments, its whole result, the
// conversation's safe zone. Read only; each answer is small.
import { contextWindowFor } from '../../model/tokens.js';
import { parseSafeZone } from '../../context/safe-zone.js';
import type { Store } from '../../store/index.js';
import type { RenderLookup } from './terminal.js';

/** Tool results follow their assistant message within this many seqs. */
const RESULT_WINDOW = 256;

/** A lookup that fails (a lost connection) shows less, never stops the rendering. */
export function storeLookup(store: Store, conversationId: string): RenderLookup {
  let zone: Promise<number | undefined> | undefined;
  const lookup: RenderLookup = {
    async toolCall(callId) {
      const call = await store.getToolCall(conversationId, callId);
      return call ? { name: call.name, args: call.args } : undefined;
    },
    async toolResult(callId) {
      // Call ids are `${seq}.${index}` of the assistant message; results come right after it.
      const seq = Number(callId.split('.')[0]);
      if (!Number.isInteger(seq)) return undefined;
      const messages = await store.getMessages(conversationId, { fromSeq: seq + 1, toSeq: seq + RESULT_WINDOW });
      return messages.find((m) => m.toolCallId === callId)?.content;
    },
    safeZone() {
      zone ??= (async () => {
        const row = await store.getConversation(conversationId);
        if (!row) return undefined;
        const config = (row.config ?? {}) as { safeZone?: string | number; contextWindow?: number };
        return parseSafeZone(config.safeZone, config.contextWindow ?? contextWindowFor(row.model));
      })().catch(() => undefined);
      return zone;
    },
  };
  return {
    toolCall: (id) => lookup.toolCall(id).catch(() => undefined),
    toolResult: (id) => lookup.toolResult(id).catch(() => undefined),
    safeZone: () => lookup.safeZone(),
  };
}
