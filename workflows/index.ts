// Workflow entry point for the worker's bundle.
export { conversation } from './conversation.js';
export { session } from './session.js';
export { batch } from './batch.js';
