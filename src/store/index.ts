export { Store, STREAM_CHANNEL, postgresError, redactUrl, streamEventKey, type StoreOptions } from './store.js';
export { MIGRATIONS, migrate, type Migration } from './migrations.js';
export type * from './types.js';
