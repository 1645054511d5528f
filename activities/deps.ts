// What every activity needs: the store, AGENTRUN_HOME, the turn port and a logger with the activity's context.
import { turnPort, type TurnObserver, type TurnPort } from '../src/extensions/observer.js';
import type { Store } from '../src/store/index.js';

export interface ActivityDeps {
  store: Store;
  /** AGENTRUN_HOME: private checkpoint repositories and the pricing file live here. */
  home: string;
  /** The names `--env` may pass to this worker's commands (`agentrun worker --allow-env`); absent: none. */
  allowEnv?: readonly string[];
  /** Whether this worker runs a repository's own extensions (AGENTRUN_REPOSITORY_EXTENSIONS, `--repository-extensions`); absent: off. */
  repositoryExtensions?: boolean;
  /** This worker runs a conversation's `sandbox: off` (`agentrun worker --sandbox off` or `--allow-unsandboxed`); absent: it refuses it. */
  allowUnsandboxed?: boolean;
  /** The worker's extensions and tracing at a turn's named points (src/extensions/observer.ts); none: nothing observes. */
  observer?: TurnObserver;
}

/** The port the activities call: the worker's observer, or one that does nothing. */
export function portOf(deps: ActivityDeps): TurnPort {
  return turnPort(deps.observer);
}

export { activityKey, activityLog, cancellationSignal, currentAttempt, heartbeat, keepAlive, withHeartbeat } from '../src/turn/step.js';
