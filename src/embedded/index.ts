export { agentrunHome } from '../runtime/home.js';
export { startEmbeddedPostgres } from './postgres.js';
export { findTemporalCli, startTemporalDevServer, ensureSearchAttributes, type EmbeddedTemporal } from './temporal.js';
export { EMBEDDED_FILE, readDevState, writeDevState, resolveEndpoints, checkReachable, type Endpoints } from './endpoints.js';
