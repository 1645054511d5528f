// Workflow entry point for the worker's bundle.
export { conversation } from './conversation.js';
