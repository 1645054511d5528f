// One Temporal dev server (the `temporal` CLI) and one PostgreSQL for the whole test run, and
// the workflow bundle built once. Test files isolate themselves by task queue and DB schema.
import type { TestProject } from 'vitest/node';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startTemporalDevServer } from '../src/infra/temporal.js';
import { startEmbeddedPostgres } from '../src/infra/postgres.js';
import { bundleWorkflows } from '../worker/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    databaseUrl: string;
    workflowBundlePath: string;
  }
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export default async function setup(project: TestProject) {
  const home = await mkdtemp(join(tmpdir(), 'agentrun-test-'));
  const stops: (() => Promise<void>)[] = [];
  const temporal = await startTemporalDevServer(home, { headless: true });
  stops.push(() => temporal.stop());
  let databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  if (!(await reachable(databaseUrl))) {
    const embedded = await startEmbeddedPostgres(home);
    stops.push(() => embedded.stop());
    databaseUrl = embedded.databaseUrl;
  }
  const workflowBundlePath = join(home, 'workflow-bundle.js');
  await writeFile(workflowBundlePath, await bundleWorkflows());
  project.provide('temporalAddress', temporal.address);
  project.provide('databaseUrl', databaseUrl);
  project.provide('workflowBundlePath', workflowBundlePath);
  return async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await rm(home, { recursive: true, force: true });
  };
}
