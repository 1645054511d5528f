// Priorities and tenants of model calls. No Node imports: the run config (which the workflow
// imports) names the priorities. Temporal's priority key runs lower first (1–5, default 3).
export const PRIORITIES = ['interactive', 'batch', 'nightly'] as const;
export type PriorityName = (typeof PRIORITIES)[number];

const PRIORITY_KEYS: Record<PriorityName, number> = { interactive: 2, batch: 4, nightly: 5 };
/** The priority key of a run without one: Temporal's default, between interactive and batch. */
const DEFAULT_PRIORITY_KEY = 3;
export const DEFAULT_TENANT = 'default';

export function priorityKey(p: PriorityName | undefined): number {
  return p ? PRIORITY_KEYS[p] : DEFAULT_PRIORITY_KEY;
}

/** Temporal's priority of a run (activities and children inherit it): its priority key, its tenant as the fairness key. */
export function runPriority(config: { priority?: PriorityName; tenant?: string }): { priorityKey: number; fairnessKey: string } {
  return { priorityKey: priorityKey(config.priority), fairnessKey: config.tenant ?? DEFAULT_TENANT };
}
