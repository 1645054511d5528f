// Priorities and tenants of model calls as Temporal's priority and fairness keys. No Node imports:
// the workflow imports it. The run config names the priorities; the key runs lower first (1–5, default 3).
import type { PriorityName } from '../config.js';

export type { PriorityName } from '../config.js';

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
