// Which tenant a command is confined to, and the conversations it may name. With AGENTRUN_TENANT
// set the CLI acts for that tenant: a conversation of another reads as absent (its id, task and
// answers are not this caller's). Without it the CLI is the administrator's and sees every tenant.
import { tenantOfRun } from '../runtime/tenant.js';
import { CliError } from './errors.js';
import type { Session } from './session.js';

/** The tenant this command is confined to (AGENTRUN_TENANT), or undefined: the administrator's, every tenant. */
export function callerTenant(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.AGENTRUN_TENANT?.trim() || undefined;
}

/** Whether a conversation with this run config is one `tenant` may see (undefined: every one). */
export function visibleTo(config: unknown, tenant: string | undefined): boolean {
  return tenant === undefined || tenantOfRun(config) === tenant;
}

/** Conversation `id` if `tenant` may see it, else a one-line CliError as for an id that does not exist. */
export async function ownConversation(session: Pick<Session, 'store'>, id: string, tenant: string | undefined = callerTenant()) {
  const row = await session.store.getConversation(id);
  if (!row || !visibleTo(row.config, tenant)) throw new CliError(`no conversation with id ${id}${tenant ? ` of tenant ${tenant}` : ''} (see agentrun list)`);
  return row;
}
