// Run as another user (the unprivileged-worker test): one command with `--network allow:` through
// a real egress proxy and real bwrap, as a worker running as that user would. Prints the tool
// result and the recorded connections as JSON. Args: allowedPort refusedPort.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EgressProxy, setEgressProxy, type ConnectionRecord } from '../../src/sandbox/proxy.js';
import { runTool } from '../../src/tools/index.js';

const [allowed, refused] = process.argv.slice(2).map(Number);
setEgressProxy(new EgressProxy({ allowLoopbackPorts: [allowed!], resolve: async () => ['127.0.0.1'] }));
const ws = mkdtempSync(path.join(os.tmpdir(), 'agentrun-probe-'));
const records: ConnectionRecord[] = [];
const r = await runTool(
  'execute_command',
  {
    requires_approval: 'false',
    timeout_seconds: '30',
    command: `id -u; curl -sS -m 5 http://good.example.test:${allowed}/probe; curl -sS -m 5 http://good.example.test:${refused}/probe`,
  },
  { workspace: ws, sandbox: { policy: 'workspace-write', network: 'allow:good.example.test', env: [] }, recordConnection: (c) => records.push(c) },
);
rmSync(ws, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ uid: process.getuid?.(), output: r.output, records }) + '\n');
process.exit(0);
