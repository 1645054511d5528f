// A conversation's sub-agents as `inspect` and the web page show them: read from the store, so a
// finished parent lists them too. Kept apart from the agents parser, which `inspect` must not load.
import type { RunConfig } from '../config.js';
import type { Store } from '../store/index.js';

/** A conversation's sub-agents as `inspect` and the web page show them (from the store: finished parents too). */
export interface SubagentSummary {
  id: string;
  agent: string;
  status: string;
  turns: number;
  costUsd: number;
  reason?: string;
}

export async function subagentsOf(store: Pick<Store, 'getChildConversations'>, parentId: string): Promise<SubagentSummary[]> {
  // In the order of the parent's delegate calls (`<parent>.sub-<n>`), not the order they started in.
  const n = (id: string) => Number(id.slice(id.lastIndexOf('.sub-') + 5));
  const rows = (await store.getChildConversations(parentId)).sort((a, b) => n(a.id) - n(b.id));
  return rows.map((c) => ({
    id: c.id,
    agent: (c.config as Partial<RunConfig>).agent?.name ?? '?',
    status: c.status,
    turns: c.turns,
    costUsd: c.costUsd,
    ...(c.reason ? { reason: c.reason } : {}),
  }));
}
