// Workflow entry point for the worker's bundle.
export { session } from './session/workflow.js';
export { batch } from './batch/workflow.js';
