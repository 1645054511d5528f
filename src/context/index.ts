// Context management: prompt building, token accounting, pruning, summarisation, loop detection.
export * from '../model/tokens.js';
export * from './safe-zone.js';
export * from './message-ids.js';
export * from './rules.js';
export * from './prompt.js';
export * from './render.js';
export * from './prune.js';
export * from './summary.js';
export * from './loop.js';
