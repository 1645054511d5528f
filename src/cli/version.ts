// `agentrun --version` and the build ids: the worker names the same version (src/runtime/version.ts).
export * from '../runtime/version.js';
