// What the turn's steps need from the worker that runs them: the store, the agents a conversation
// may delegate to (its repository's as kept at its start, and the operator's), and the limit on
// model calls streaming at once. activities/ builds it from its own dependencies.
import type { LoadedAgents } from '../extensions/agents.js';
import type { Store } from '../store/index.js';

export interface TurnDeps {
  store: Store;
  agentsOf(conversationId: string, workspace: string): Promise<LoadedAgents>;
  /** Taken around each model call (AGENTRUN_MAX_MODEL_CALLS); `onWait` beats while it waits. */
  modelCallSlots: { acquire(onWait?: () => void): Promise<() => void> };
}
