export { Store, type StoreOptions } from './store.js';
export { MIGRATIONS, migrate } from './migrations.js';
export type * from './types.js';
export type { CaseChecks, EvalCaseRow, FrozenCase } from './evals.js';
export type { TurnState, TurnStateRequest } from './transcript.js';
