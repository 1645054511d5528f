// Who a worker's work belongs to: AGENTRUN_TENANT (an operator or customer name), else `default`.
// Whatever one tenant's jobs leave on a host (the dependency cache) is keyed by it, so another
// tenant's job with the same repository never finds it.

/** The tenant a run belongs to: its config's, else `default` (runs started before tenants were named). */
export function tenantOfRun(config: unknown): string {
  const t = (config as { tenant?: unknown } | null | undefined)?.tenant;
  return typeof t === 'string' && t ? t : 'default';
}

/** The tenant of this process's work. */
export function tenantOf(env: NodeJS.ProcessEnv = process.env): string {
  return env.AGENTRUN_TENANT?.trim() || 'default';
}
