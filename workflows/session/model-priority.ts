// Temporal's priority and fairness keys on the model step's activity: where the step waits in a
// task queue's backlog, Temporal serves it by the run's priority (interactive 2, batch 4, nightly 5),
// then fairly across tenants (the fairness key), in proportion to the tenant's weight. The pool's
// PostgreSQL gate (src/model/pool.ts) stays the fleet-wide concurrency limit and orders what waits
// inside the model call; these keys order what waits before it.
import { workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { Priority } from '@temporalio/common';
import { DEFAULT_TENANT, priorityKey, type PriorityName } from '../../src/model/pool-names.js';

export class ModelStepPriority {
  /** The tenant's weight as the last model step read it (`agentrun tenant weight set`). */
  private weight?: number;

  constructor(private readonly config: { priority?: PriorityName; tenant?: string }) {}

  /** The step's options with its priority. */
  options<T extends ActivityOptions>(options: T): T {
    return { ...options, priority: this.priority() };
  }

  priority(): Priority {
    // Before the first step said otherwise: the weight the run was started with, if any.
    const weight = this.weight ?? workflowInfo().priority?.fairnessWeight;
    return {
      priorityKey: priorityKey(this.config.priority),
      fairnessKey: this.config.tenant ?? DEFAULT_TENANT,
      ...(weight ? { fairnessWeight: weight } : {}),
    };
  }

  /** A step's result names the tenant's current weight: the next step carries it. */
  learn(result: { tenantWeight?: number } | undefined): void {
    if (typeof result?.tenantWeight === 'number' && result.tenantWeight > 0) this.weight = result.tenantWeight;
  }
}
