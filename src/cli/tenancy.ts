// Which tenant a command is confined to. With AGENTRUN_TENANT set the CLI acts for that tenant: a
// conversation of another reads as absent (src/client/tenancy.ts, the one check the SDK and the
// page make too). Without it the CLI is the administrator's and sees every tenant.
import { tenantRefusal } from '../ids.js';
import { conversationInScope, inScope, noConversation, scopedConversation, scopeOf, type TenantScope } from '../client/tenancy.js';
import { CliError } from './errors.js';
import type { Session } from './session.js';

/** The tenant this command is confined to (AGENTRUN_TENANT, checked: one line, exit 2), or undefined: the administrator's, every tenant. */
export function callerTenant(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const tenant = env.AGENTRUN_TENANT?.trim() || undefined;
  const refused = tenant === undefined ? undefined : tenantRefusal(tenant);
  if (refused) throw new CliError(`AGENTRUN_TENANT: ${refused}`);
  return tenant;
}

/** Whether a conversation with this run config is one `tenant` may see (undefined: every one). */
export function visibleTo(config: unknown, tenant: string | undefined): boolean {
  return inScope(config, scopeOf(tenant));
}

/** The tenants this command may see: AGENTRUN_TENANT's, or undefined (every tenant). */
export function callerScope(env: NodeJS.ProcessEnv = process.env): TenantScope {
  return scopeOf(callerTenant(env));
}

/** Conversation `id` if the scope may see it, else a one-line CliError as for an id that does not exist. */
export async function ownConversation(session: Pick<Session, 'store'>, id: string, scope: TenantScope = callerScope()) {
  const row = await scopedConversation(session.store, id, scope);
  if (!row) throw new CliError(`${noConversation(id, scope)} (see agentrun list)`);
  return row;
}

/** Conversation `id` is the scope's, stored or started and not stored yet (to watch or talk to it), else the same line as for an absent one. */
export async function ensureOwn(session: Pick<Session, 'store' | 'client'>, id: string, scope: TenantScope = callerScope()): Promise<void> {
  if (!(await conversationInScope(session, id, scope))) throw new CliError(`${noConversation(id, scope)} (see agentrun list)`);
}
