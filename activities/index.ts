// All activities, wired to their dependencies. Each module is a thin adapter over src/.
import { batchActivities, type BatchActivities } from './batch.js';
import { budgetActivities, type BudgetActivities } from './budget.js';
import { delegateActivities, type DelegateActivities } from './delegate.js';
import { environmentActivities, type EnvironmentActivities } from './environment.js';
import type { ActivityDeps } from './deps.js';
import { sessionActivities, type SessionActivities } from './session.js';
import { workspaceActivities } from './workspace.js';
import type { Activities } from './types.js';

export function createActivities(
  deps: ActivityDeps,
): Activities & SessionActivities & DelegateActivities & EnvironmentActivities & BudgetActivities & BatchActivities {
  return {
    ...sessionActivities(deps),
    ...workspaceActivities(deps),
    ...delegateActivities(deps),
    ...environmentActivities(deps),
    ...budgetActivities(deps),
    ...batchActivities(),
  };
}

export type { ActivityDeps } from './deps.js';
export type * from './types.js';
export type * from './session.js';
export type * from './delegate.js';
export type * from './environment.js';
export type * from './budget.js';
export type * from './batch.js';
