// All activities, wired to their dependencies. Each module is a thin adapter over src/.
import { contextActivities } from './context.js';
import { conversationActivities } from './conversation.js';
import type { ActivityDeps } from './deps.js';
import { modelActivities } from './model.js';
import { toolActivities } from './tools.js';
import { turnActivities } from './turn.js';
import type { Activities } from './types.js';

export function createActivities(deps: ActivityDeps): Activities {
  return {
    ...conversationActivities(deps),
    ...contextActivities(deps),
    ...modelActivities(deps),
    ...toolActivities(deps),
    ...turnActivities(deps),
  };
}

export type { ActivityDeps } from './deps.js';
export type * from './types.js';
