// Short message ids the model sees (`[message_id: 1a2b3c4d]`) and can name in
// conversation_message_ids_write. Derived from (conversation, seq), so they need no storage and
// are identical after continue-as-new or on another worker. Pure JS, no Node APIs: the workflow
// may compute them too.

const ID = /^[0-9a-f]{8}$/;

/** 32-bit FNV-1a with murmur3's finaliser, so neighbouring seqs get unrelated-looking ids. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Stable 8-hex id of message `seq` in `conversationId`. */
export function messageIdFor(conversationId: string, seq: number): string {
  return hash32(`${conversationId}\u0000${seq}`).toString(16).padStart(8, '0');
}

/** The hint put in front of a message's content. */
export function messageIdHint(id: string): string {
  return `[message_id: ${id}]`;
}

/**
 * Ids named by the model: comma/space separated, case-insensitive, optionally still wrapped in the
 * hint syntax (`[message_id: 1a2b3c4d]`). Returns the valid ids (deduplicated, in order) and the
 * tokens that are not ids.
 */
export function parseMessageIds(text: string): { ids: string[]; invalid: string[] } {
  const ids: string[] = [];
  const invalid: string[] = [];
  const seen = new Set<string>();
  const cleaned = text.replace(/\[+\s*(?:hint:\s*)?message_id:\s*([0-9a-fA-F]{8})\s*\]+/g, ' $1 ');
  for (const raw of cleaned.split(/[\s,;]+/)) {
    const tok = raw.trim().toLowerCase();
    if (!tok) continue;
    if (!ID.test(tok)) invalid.push(raw.trim());
    else if (!seen.has(tok)) {
      seen.add(tok);
      ids.push(tok);
    }
  }
  return { ids, invalid };
}

/** The tool's actions on the marked list: create replaces it, append adds, delete removes. */
export function applyMessageIdsAction(current: readonly string[], action: 'create' | 'append' | 'delete', ids: readonly string[]): string[] {
  if (action === 'create') return [...new Set(ids)];
  if (action === 'append') return [...new Set([...current, ...ids])];
  const drop = new Set(ids);
  return current.filter((id) => !drop.has(id));
}

/** id → seq for the given seqs (the conversation's messages). */
export function messageIdIndex(conversationId: string, seqs: Iterable<number>): Map<string, number> {
  const index = new Map<string, number>();
  for (const seq of seqs) index.set(messageIdFor(conversationId, seq), seq);
  return index;
}
