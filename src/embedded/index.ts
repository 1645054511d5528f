export { agentrunHome } from '../runtime/home.js';
export { startEmbeddedPostgres, EMBEDDED_DATABASE, type EmbeddedPostgres } from './postgres.js';
export { findTemporalCli, startTemporalDevServer, ensureSearchAttributes, type EmbeddedTemporal, type TemporalDevOptions } from './temporal.js';
export { EMBEDDED_FILE, readDevState, writeDevState, resolveEndpoints, checkReachable, type Endpoints, type DevState } from './endpoints.js';
