// All activities, wired to their dependencies: each module registers its steps as thin adapters over
// src/ (the turn's logic is in src/turn/), wrapped by what they are (fencing, stall, limits). What
// each takes and returns is in one contract, activities/types.ts, which the workflow code names.
import { batchActivities } from './batch.js';
import { budgetActivities } from './budget.js';
import { delegateActivities } from './delegate.js';
import { environmentActivities } from './environment.js';
import type { ActivityDeps } from './deps.js';
import { sessionActivities } from './session.js';
import { workspaceActivities } from './workspace.js';
import type { Activities } from './types.js';

export function createActivities(deps: ActivityDeps): Activities {
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
