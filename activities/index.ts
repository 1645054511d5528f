// All activities, wired to their dependencies. Each module is a thin adapter over src/.
import { contextActivities } from './context.js';
import { delegateActivities, type DelegateActivities } from './delegate.js';
import { conversationActivities } from './conversation.js';
import type { ActivityDeps } from './deps.js';
import { modelActivities } from './model.js';
import { toolActivities } from './tools.js';
import { turnActivities } from './turn.js';
import { sessionActivities, type SessionActivities } from './session.js';
import { HOST_KEEPALIVE_ACTIVITIES, keepAlive, workspaceActivities } from './workspace.js';
import type { Activities } from './types.js';

export function createActivities(deps: ActivityDeps): Activities & SessionActivities & DelegateActivities {
  const all: Activities & SessionActivities & DelegateActivities = {
    ...conversationActivities(deps),
    ...contextActivities(deps),
    ...modelActivities(deps),
    ...toolActivities(deps),
    ...turnActivities(deps),
    ...sessionActivities(deps),
    ...workspaceActivities(deps),
    ...delegateActivities(deps),
  };
  for (const name of HOST_KEEPALIVE_ACTIVITIES)
    (all as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name] = keepAlive(all[name] as (...a: unknown[]) => Promise<unknown>);
  return all;
}

export type { ActivityDeps } from './deps.js';
export type * from './types.js';
export type * from './session.js';
export type * from './delegate.js';
