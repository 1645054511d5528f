// Conversations, from visibility (search attributes) when the namespace has them, else the store;
// one row per conversation with its turns and cost. Shared by `agentrun list` and the SDK.
import type { Client } from '@temporalio/client';
import { SA_MODEL, SA_SCHEDULE, SA_STATUS, SA_WORKSPACE } from '../search-attributes.js';
import { inScope, type TenantScope } from './tenancy.js';
import type { Store } from '../store/index.js';
import { CONVERSATION_TYPES_QUERY } from '../../workflows/api.js';
import { repoOf } from './workspace-where.js';
import { finishedOutcomes, type Outcome } from './outcome.js';
import { FINAL_STATUSES, type ConversationStatus } from '../types.js';

export interface ConversationSummary {
  conversationId: string;
  status: string;
  workflowStatus?: string;
  model?: string;
  workspace?: string;
  schedule?: string;
  startTime: string;
  turns?: number;
  costUsd?: number;
  reason?: string;
  /** The worker host holding the workspace, the directory there, and its size on disk when last measured. */
  host?: string;
  hostWorkspace?: string;
  diskBytes?: number;
  /** A repository job: the repository (`workspace` is the repository too; `hostWorkspace` its clone). */
  repo?: string;
  /** A finished conversation: its result branch, commit, pushed and verified state (as `inspect` shows). */
  outcome?: Outcome;
}

/** Which conversations: every filter optional; `limit` (default 50) counts conversations. */
export interface ListFilters {
  status?: string;
  model?: string;
  /** An absolute path, as stored. */
  workspace?: string;
  minCost?: number;
  since?: Date;
  until?: Date;
  limit?: number;
  /** Only these tenants' conversations (a caller confined to them, src/client/tenancy.ts); absent: every tenant's. */
  tenants?: TenantScope;
}

const quote = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export async function listConversations(
  deps: { client: Client; store: Store; searchAttributes: boolean },
  f: ListFilters = {},
): Promise<ConversationSummary[]> {
  const limit = f.limit ?? 50;
  const rows: Omit<ConversationSummary, 'turns' | 'costUsd' | 'reason'>[] = [];
  if (deps.searchAttributes) {
    const query = [
      CONVERSATION_TYPES_QUERY,
      ...(f.status ? [`AgentrunStatus = ${quote(f.status)}`] : []),
      ...(f.model ? [`AgentrunModel = ${quote(f.model)}`] : []),
      ...(f.tenants ? [`AgentrunTenant IN (${f.tenants.map(quote).join(', ') || "''"})`] : []),
      ...(f.workspace ? [`AgentrunWorkspace = ${quote(f.workspace)}`] : []),
      ...(f.minCost !== undefined ? [`AgentrunCostUsd >= ${f.minCost}`] : []),
      ...(f.since ? [`StartTime >= '${f.since.toISOString()}'`] : []),
      ...(f.until ? [`StartTime <= '${f.until.toISOString()}'`] : []),
    ].join(' AND ');
    for await (const w of deps.client.workflow.list({ query })) {
      const sa = w.typedSearchAttributes;
      rows.push({
        conversationId: w.workflowId,
        status: sa.get(SA_STATUS) ?? w.status.name.toLowerCase(),
        workflowStatus: w.status.name,
        model: sa.get(SA_MODEL),
        workspace: sa.get(SA_WORKSPACE),
        schedule: sa.get(SA_SCHEDULE),
        startTime: w.startTime.toISOString(),
      });
      if (rows.length >= limit) break;
    }
  } else {
    // No search attributes on this namespace: filter the store's rows instead.
    const matches = (c: { status: string; model: string; workspace: string; costUsd: number; createdAt: Date; config: unknown }) =>
      (!f.status || c.status === f.status) &&
      (!f.model || c.model === f.model) &&
      inScope(c.config, f.tenants) &&
      (!f.workspace || c.workspace === f.workspace) &&
      (f.minCost === undefined || c.costUsd >= f.minCost) &&
      (!f.since || c.createdAt >= f.since) &&
      (!f.until || c.createdAt <= f.until);
    for (const c of await deps.store.listConversations({ status: f.status, limit: 10_000, tenants: f.tenants })) {
      if (!matches(c)) continue;
      rows.push({ conversationId: c.id, status: c.status, model: c.model, workspace: c.workspace, startTime: c.createdAt.toISOString() });
      if (rows.length >= limit) break;
    }
  }
  const seen = new Set<string>();
  const once = rows.filter((r) => !seen.has(r.conversationId) && seen.add(r.conversationId)); // one line per conversation, not per run
  const found = await Promise.all(once.map((r) => deps.store.getConversation(r.conversationId)));
  // The stored run config says whose it is too (a run started before the tenant attribute existed).
  // One not yet in the store came from the search attribute's tenant filter above.
  const mine = once.map((_, i) => !found[i] || inScope(found[i].config, f.tenants));
  const unique = once.filter((_, i) => mine[i]);
  const stored = found.filter((_, i) => mine[i]);
  // Only a closed workflow has an outcome to read back; asking a running one would wait for it.
  const finished = unique.filter((r) =>
    r.workflowStatus !== undefined ? !['RUNNING', 'CONTINUED_AS_NEW'].includes(r.workflowStatus) : FINAL_STATUSES.includes(r.status as ConversationStatus),
  );
  const [usage, outcomes] = await Promise.all([
    deps.store.getWorkspaceUsage(unique.map((r) => r.conversationId)),
    finishedOutcomes(
      deps.client,
      finished.map((r) => r.conversationId),
    ),
  ]);
  return unique.map((r, i) => {
    const u = usage.get(r.conversationId);
    const repo = repoOf(stored[i]?.config);
    return {
      ...r,
      turns: stored[i]?.turns,
      costUsd: stored[i]?.costUsd,
      reason: stored[i]?.reason,
      host: u?.host,
      hostWorkspace: u?.workspace,
      diskBytes: u?.diskBytes,
      ...(repo !== undefined ? { repo } : {}),
      ...(outcomes.has(r.conversationId) ? { outcome: outcomes.get(r.conversationId) } : {}),
    };
  });
}
