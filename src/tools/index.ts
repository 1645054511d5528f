// The tools' public face: the registry (src/tools/registry.ts), the ledger runner and the types.
export * from './registry.js';
export * from './types.js';
export { checkCommand } from '../command-safety/dangerous.js';
export { callSafety } from './safety.js';
export { runToolOnce, runTool, withKnownEntry, INTERRUPTED_OUTPUT, type LedgerEntry, type LedgerPort, type Recovery } from './ledger-runner.js';
