// The tools' public face: the registry (src/tools/registry.ts), the ledger runner and the types.
export * from './registry.js';
export * from './types.js';
export { resolveInWorkspace } from './confine.js';
export { checkCommand, type CommandCheck } from '../command-safety/dangerous.js';
export { callSafety } from './safety.js';
export { runToolOnce, runTool, withKnownEntry, INTERRUPTED_OUTPUT, type LedgerEntry, type LedgerPort, type RunOnceResult } from './ledger-runner.js';
export type { TodoItem, TodoStatus } from './todo.js';
