// Workflow entry point for the worker's bundle.
export { session } from './session.js';
export { batch } from './batch.js';
