// Temporal over mTLS: a TLS-terminating proxy (Node tls, ALPN h2, client certificate required)
// in front of the dev server; client and worker connect through it with TEMPORAL_TLS_* only.
import { conversationResult } from '../../src/client/outcome.js';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runConfigSchema } from '../../src/config.js';
import { tlsConnectionOptions } from '../../src/runtime/tls.js';
import { Store } from '../../src/store/index.js';
import { createWorker, installRuntime } from '../../worker/index.js';
import { WORKFLOW_TYPE } from '../../workflows/api.js';
import { scriptModel, tempRepo, uid } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';

let dir: string;
let proxy: Server;
let proxyAddress: string;
let handshakes = 0;
const env = () => ({
  TEMPORAL_TLS_CERT: join(dir, 'client.pem'),
  TEMPORAL_TLS_KEY: join(dir, 'client.key'),
  TEMPORAL_TLS_CA: join(dir, 'ca.pem'),
  TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
});

function openssl(...args: string[]) {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

beforeAll(async () => {
  dir = await tempDir('agentrun-tls-');
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=agentrun test CA');
  for (const [name, cn, ext] of [
    ['server', 'temporal.test', 'subjectAltName=DNS:temporal.test'],
    ['client', 'agentrun-worker', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    execFileSync('sh', ['-c', `printf '%s\\n' '${ext}' > ${name}.ext`], { cwd: dir });
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    );
  }
  const [host, port] = inject('temporalAddress').split(':') as [string, string];
  proxy = createServer(
    {
      key: await readFile(join(dir, 'server.key')),
      cert: await readFile(join(dir, 'server.pem')),
      ca: await readFile(join(dir, 'ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (socket) => {
      handshakes++;
      const upstream = netConnect(Number(port), host);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    },
  );
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyAddress = `127.0.0.1:${(proxy.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((r) => proxy?.close(r));
});

describe('Temporal over mTLS', () => {
  it('runs a conversation with client and worker connected through the TLS proxy', async () => {
    installRuntime();
    const tls = tlsConnectionOptions(env());
    const connection = await Connection.connect({ address: proxyAddress, ...tls });
    const nc = await NativeConnection.connect({ address: proxyAddress, ...tls });
    const schema = uid('tls').replace('-', '_');
    const store = await Store.connect(inject('databaseUrl'), { schema });
    const home = await tempDir('agentrun-tls-home-');
    const taskQueue = uid('tls-tq');
    const worker = await createWorker({ connection: nc, taskQueue, store, home, workflowBundlePath: inject('workflowBundlePath'), shutdownGraceTime: '1s' });
    const running = worker.run();
    try {
      const client = new Client({ connection });
      const model = await scriptModel({
        turns: [
          { say: '<write_to_file>\n<path>t.txt</path>\n<content>\nover tls\n</content>\n</write_to_file>' },
          { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
        ],
      });
      const workspace = await tempRepo();
      const handle = await client.workflow.start(WORKFLOW_TYPE, {
        workflowId: uid('tls'),
        taskQueue,
        args: [{ task: 't', workspace, config: runConfigSchema.parse({ model, approval: 'never' }) }],
      });
      const result = await conversationResult(handle);
      expect(result.status).toBe('completed');
      expect((await readFile(join(workspace, 't.txt'), 'utf8')).trim()).toBe('over tls');
      expect(handshakes).toBeGreaterThanOrEqual(2);
    } finally {
      worker.shutdown();
      await running;
      await nc.close();
      await connection.close();
      await store.pool.query(`drop schema if exists ${schema} cascade`).catch(() => {});
      await store.close();
    }
  });

  it('is refused without a client certificate', async () => {
    const { TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME } = env();
    const noCert = tlsConnectionOptions({ TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME });
    await expect(Connection.connect({ address: proxyAddress, connectTimeout: 5000, ...noCert })).rejects.toThrow();
  });
});
