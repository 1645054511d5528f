// A Store on the real PostgreSQL in a fresh schema for one test file, dropped after it.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { Store } from '../../src/store/index.js';

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A schema name no other test file uses. */
export function freshSchemaName(prefix: string): string {
  return `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

/** Drop a test file's schema with everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: DATABASE_URL });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await c.end();
  }
}

/** Registers the hooks; `store()` is valid inside tests. */
export function storeInFreshSchema(prefix: string): () => Store {
  const schema = freshSchemaName(prefix);
  let store: Store | undefined;
  beforeAll(async () => {
    store = await Store.connect(DATABASE_URL, { schema });
  });
  afterAll(async () => {
    await store?.close();
    await dropSchema(schema);
  });
  return () => store!;
}
