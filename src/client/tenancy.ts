// Whose conversations a caller may see and act on. A caller is confined to tenants (the CLI with
// AGENTRUN_TENANT, an SDK client made with `tenants`, a page operator bound to tenants in the
// operators file, a page server started with AGENTRUN_TENANT) or is an administrator, who sees
// every tenant. The CLI, the SDK and the page all ask `scopedConversation` before naming a
// conversation to anyone: one of another tenant reads exactly as one that does not exist, so its
// id, task, transcript and stream tell the caller nothing.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { checkTenant } from '../ids.js';
import { SA_TENANT } from '../search-attributes.js';
import { tenantOfRun } from '../runtime/tenant.js';
import type { Store } from '../store/index.js';
import type { ConversationRow } from '../store/types.js';

/** The tenants a caller is confined to; undefined: an administrator's, every tenant. Never empty. */
export type TenantScope = readonly string[] | undefined;

/** A scope from tenant names (each checked: one line, IdentifierError); none given: every tenant. */
export function scopeOf(tenants: string | readonly string[] | undefined): TenantScope {
  if (tenants === undefined) return undefined;
  const list = typeof tenants === 'string' ? [tenants] : [...tenants];
  if (!list.length) throw new Error('a tenant scope names at least one tenant (leave it out for every tenant)');
  return [...new Set(list.map(checkTenant))];
}

/** What both allow: a server confined to tenants serves an operator bound to others none of theirs. */
export function narrowScope(a: TenantScope, b: TenantScope): TenantScope {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a.filter((t) => b.includes(t));
}

/** Whether a conversation with this run config is within the scope. */
export function inScope(config: unknown, scope: TenantScope): boolean {
  return scope === undefined || scope.includes(tenantOfRun(config));
}

/** "" for an administrator, else " of tenant a" / " of tenants a, b": the end of a "no conversation" line. */
function ofScope(scope: TenantScope): string {
  if (scope === undefined) return '';
  return scope.length === 1 ? ` of tenant ${scope[0]}` : ` of tenants ${scope.join(', ')}`;
}

/** The line for a conversation that is absent or another tenant's: the same for both. */
export function noConversation(id: string, scope: TenantScope): string {
  return `no conversation with id ${id}${ofScope(scope)}`;
}

/** Conversation `id`'s row when it exists and is within the scope, else null (absent and another tenant's alike). */
export async function scopedConversation(store: Pick<Store, 'getConversation'>, id: string, scope: TenantScope): Promise<ConversationRow | null> {
  const row = await store.getConversation(id);
  return row && inScope(row.config, scope) ? row : null;
}

/**
 * Conversation `id` if it is within the scope: `{ row }`, with `row` null while a started
 * conversation is not in the store yet (its first step writes it; the tenant it was started for is
 * read from Temporal meanwhile), else null: absent and another tenant's alike.
 */
export async function conversationInScope(
  deps: { store: Pick<Store, 'getConversation'>; client: Client },
  id: string,
  scope: TenantScope,
): Promise<{ row: ConversationRow | null } | null> {
  const row = await deps.store.getConversation(id);
  if (row) return inScope(row.config, scope) ? { row } : null;
  const tenant = await startedTenant(deps.client, id);
  return tenant !== undefined && (scope === undefined || scope.includes(tenant)) ? { row: null } : null;
}

const TEMPORAL_READ_MS = 10_000;

/** The tenant a conversation's workflow was started for (its search attribute, else its start input), or undefined when there is no such workflow. */
async function startedTenant(client: Client, id: string): Promise<string | undefined> {
  const handle = client.workflow.getHandle(id);
  try {
    // Bounded: a Temporal that does not answer must not hold a page request or a CLI for ever.
    const within = <T>(fn: () => Promise<T>) => client.withDeadline(Date.now() + TEMPORAL_READ_MS, fn);
    const sa = (await within(() => handle.describe())).typedSearchAttributes.get(SA_TENANT);
    if (sa) return sa;
    const started = (await within(() => handle.fetchHistory())).events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const input = started ? (defaultPayloadConverter.fromPayload(started) as { config?: unknown }) : undefined;
    return tenantOfRun(input?.config);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}
