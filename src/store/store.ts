// PostgreSQL store: transcript, live stream, tool-call ledger and the per-turn records.
// Every write is an upsert keyed by ids the workflow assigned, because activities run twice
// (principle 3, docs/architecture.md). This is the facade: one `Store` with the methods of every
// table group, each group's SQL in its own file (conversations, transcript, stream, checkpoints,
// approvals, network, usage; the fence in tables.ts).
import pg from 'pg';
import { log } from '../log.js';
import { timedWait, waited } from '../metrics.js';
import { ApprovalTables } from './approvals.js';
import { CheckpointTables } from './checkpoints.js';
import { ConversationTables } from './conversations.js';
import { postgresError } from './errors.js';
import { EvalTables } from './evals.js';
import { migrate } from './migrations.js';
import { NetworkTables } from './network.js';
import { StreamTables } from './stream.js';
import { Tables } from './tables.js';
import { TranscriptTables } from './transcript.js';
import { UsageTables } from './usage.js';

export { postgresError, redactUrl } from './errors.js';
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface StoreOptions {
  /** Postgres schema for all tables (created if missing); default `public`. Tests use one each. */
  schema?: string;
  /** Pool size (default 10). */
  max?: number;
}

const GROUPS = [ConversationTables, TranscriptTables, StreamTables, CheckpointTables, ApprovalTables, NetworkTables, UsageTables, EvalTables];

export interface Store extends ConversationTables, TranscriptTables, StreamTables, CheckpointTables, ApprovalTables, NetworkTables, UsageTables, EvalTables {}

export class Store extends Tables {
  private constructor(pool: pg.Pool, schema: string, clientConfig: pg.ClientConfig) {
    super(pool, schema, clientConfig);
  }

  /** Open a pool and bring the schema up to date. Throws a one-line error if Postgres is unreachable. */
  static async connect(databaseUrl: string, opts: StoreOptions = {}): Promise<Store> {
    const schema = opts.schema ?? 'public';
    if (!SCHEMA_NAME.test(schema)) {
      throw new Error(`invalid schema name "${schema}": use lower-case letters, digits and _`);
    }
    // search_path as a startup option: set before the first query on every pooled connection
    // (a SET in pool.on('connect') would race the caller's first query).
    const clientConfig: pg.ClientConfig = {
      connectionString: databaseUrl,
      options: `-c search_path=${schema}`,
      connectionTimeoutMillis: 10_000,
    };
    const pool = new pg.Pool({ ...clientConfig, max: opts.max ?? 10 });
    // An idle client losing its connection must not crash the process; the pool replaces it.
    // 57P01 (admin shutdown) is expected when an embedded server stops under an idle client.
    timeConnections(pool);
    pool.on('error', (err) =>
      ((err as { code?: string }).code === '57P01' ? log.debug : log.warn).call(log, { err: err.message }, 'postgres idle client error'),
    );
    try {
      const client = await pool.connect();
      try {
        const applied = await migrate(client, schema);
        if (applied.length > 0) log.debug({ schema, applied }, 'store migrated');
      } finally {
        client.release();
      }
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw postgresError(err, databaseUrl);
    }
    return new Store(pool, schema, clientConfig);
  }

  async close(): Promise<void> {
    await this.streamFlusher.close().catch((err) => log.warn({ err: (err as Error).message }, 'the last stream flush failed'));
    await this.listener.close();
    await this.pool.end();
  }
}

// Each group's methods on the facade's prototype, as if written in it; a name defined twice is a mistake.
for (const group of GROUPS) {
  for (const name of Object.getOwnPropertyNames(group.prototype)) {
    if (name === 'constructor') continue;
    if (Object.hasOwn(Store.prototype, name)) throw new Error(`store method ${name} is defined by two table groups`);
    Object.defineProperty(Store.prototype, name, Object.getOwnPropertyDescriptor(group.prototype, name)!);
  }
}

/** Every checkout of a pooled connection (each query's too) timed as a wait: a pool too small for the worker's steps shows there. */
function timeConnections(pool: pg.Pool): void {
  const connect = pool.connect.bind(pool) as (
    cb?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ) => unknown;
  pool.connect = ((cb?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void) => {
    const t0 = performance.now();
    if (!cb) return timedWait('database connection', connect() as Promise<pg.PoolClient>);
    return connect((err, client, done) => {
      waited('database connection', performance.now() - t0);
      cb(err, client, done);
    });
  }) as typeof pool.connect;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) =>
    typeof args[args.length - 1] === 'function'
      ? query(...args)
      : timedWait('database queries, their connection included', query(...args) as Promise<unknown>)) as typeof pool.query;
}
