// `agentrun --version` and the build ids: the worker names the same version (src/infra/version.ts).
export * from '../infra/version.js';
