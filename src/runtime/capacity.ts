// How much one worker process takes on, by default. Light on purpose: the CLI's option defaults
// read it without loading the worker.
//
// Activities here mostly wait: a model step holds its slot for the model's whole latency, so the
// slots, not the CPU, cap how many conversations a worker carries (one activity each at a time).
// 400 lets one worker carry 200 conversations at 5 s model latency (bench/concurrency.ts); the
// Temporal default of 100 halved that. Commands are bounded the same way: one call per
// conversation at a time (read-only groups aside).
export const DEFAULT_ACTIVITY_SLOTS = 400;

// Store work is short queries, so a worker needs far fewer connections than slots, and workers ×
// pool must fit PostgreSQL's max_connections (100 by default) with room for the CLI and web page.
export const DEFAULT_WORKER_DB_POOL = 20;
