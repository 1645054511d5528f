// The network of commands: real bwrap, the real egress proxy, real HTTP servers
// on loopback. Loopback servers stand for public hosts only through the proxy's test-only
// allowance, and a hostile resolver points allowed names at what must never be reached: another
// loopback service, the cloud metadata address, the Temporal port, the worker's own address.
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { gatherInspection } from '../../src/client/inspection.js';
import { printInspection } from '../../src/cli/inspect.js';
import type { Session } from '../../src/cli/session.js';
import { EgressProxy, setEgressProxy, type ConnectionRecord, type ProxyOptions } from '../../src/sandbox/proxy.js';
import { parseIp, forbiddenRange } from '../../src/sandbox/network.js';
import type { SandboxSettings } from '../../src/sandbox/index.js';
import { runTool } from '../../src/tools/index.js';
import type { ConversationResult } from '../../workflows/api.js';
import { nodeAsUser } from '../helpers/as-user.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';
import { tempDirSync } from '../helpers/temp.js';
import { selfSignedCert } from '../helpers/tls-cert.js';

const temporalPort = Number(inject('temporalAddress').split(':').pop());
/** A non-loopback address of this machine, if it has one. */
const ownAddress = Object.values(os.networkInterfaces())
  .flat()
  .map((a) => a?.address)
  .find((a): a is string => !!a && !!parseIp(a) && !forbiddenRange(parseIp(a)!));

let good: Server;
let other: Server;
let goodPort: number;
let otherPort: number;
const hits = { good: 0, other: 0 };
/** Every request a server got: `host method url`. */
const seen: Record<keyof typeof hits, string[]> = { good: [], other: [] };
let ws: string;
let lookups: string[] = [];
let proxy: EgressProxy;

/** The hostile resolver: every name under example.test resolves where the test says. */
const DNS: Record<string, string[]> = {};

/** 1 MiB of random bytes: /big/N serves it N times, the bytes a download must arrive with. */
const MIB = randomBytes(1 << 20);
const sha256 = (chunks: Buffer[]) => chunks.reduce((h, c) => h.update(c), createHash('sha256')).digest('hex');

async function serve(name: keyof typeof hits): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    hits[name]++;
    seen[name].push(`${req.headers.host} ${req.method} ${req.url}`);
    const big = /^\/big\/(\d+)$/.exec(req.url ?? '');
    if (big) {
      // Written as fast as the proxy takes it, 1 MiB at a time, keep-alive as a server would.
      res.writeHead(200, { 'content-length': Number(big[1]) << 20, connection: 'keep-alive' });
      let left = Number(big[1]);
      const more = () => {
        while (left > 0) if ((left--, !res.write(MIB))) return void res.once('drain', more);
        res.end();
      };
      return more();
    }
    if (req.url === '/upload') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        res.end(`got ${chunks.reduce((n, c) => n + c.length, 0)} bytes, sha256 ${sha256(chunks)}, ${req.headers['transfer-encoding'] ?? 'content-length'}\n`),
      );
      return;
    }
    if (req.url === '/split') {
      // Raw: an interim head, then the final head cut in the middle of a header, a moment apart.
      const raw = req.socket;
      raw.write('HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nX-Kept: yes\r\nConn');
      setTimeout(() => raw.end('ection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 3\r\n\r\nok\n'), 100);
      return;
    }
    res.end(`${name}-server ${req.method} ${req.url}\n`);
  });
  // One port for both: a connection that starts with a TLS handshake is served over TLS.
  const context = tls.createSecureContext(selfSignedCert('good.example.test'));
  const front = net.createServer((socket) => {
    socket.once('readable', () => {
      const first = socket.read(1) as Buffer | null;
      if (!first) return socket.destroy();
      socket.unshift(first);
      server.emit('connection', first[0] === 0x16 ? new tls.TLSSocket(socket, { isServer: true, secureContext: context }) : socket);
    });
  });
  server.on('close', () => front.close());
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  return { server, port: (front.address() as AddressInfo).port };
}

beforeAll(async () => {
  ({ server: good, port: goodPort } = await serve('good'));
  ({ server: other, port: otherPort } = await serve('other'));
  Object.assign(DNS, {
    'good.example.test': ['127.0.0.1'],
    'other.example.test': ['127.0.0.1'],
    'metadata.example.test': ['169.254.169.254'],
    'temporal.example.test': ['127.0.0.1'],
    'private.example.test': ['10.1.2.3', 'fd00::1'],
    ...(ownAddress ? { 'own.example.test': [ownAddress] } : {}),
  });
  setEgressProxy((proxy = testProxy()));
  ws = tempDirSync('agentrun-net-');
  execFileSync('git', ['init', '-q', ws]);
});

/** The proxy of these tests (caps as given, else the defaults). */
function testProxy(caps: Pick<ProxyOptions, 'maxConnectionsPerCommand' | 'maxConnectionsPerWorker' | 'maxConnectionsPerTenant'> = {}): EgressProxy {
  return new EgressProxy({
    ...caps,
    // Test only: the good server's port stands for a public host; the other server and Temporal do not.
    allowLoopbackPorts: [goodPort],
    resolve: async (host) => {
      lookups.push(host);
      // Rebinding: a public (here: the good server's) address for a name's first lookup, another service for any later one.
      if (host.startsWith('rebind')) return lookups.filter((h) => h === host).length === 1 ? ['127.0.0.1'] : ['127.0.0.8'];
      const a = DNS[host];
      if (!a) throw Object.assign(new Error('no such host'), { code: 'ENOTFOUND' });
      return a;
    },
  });
}
afterAll(() => {
  setEgressProxy(undefined);
  for (const s of [good, other]) {
    s?.closeAllConnections();
    s?.close();
  }
  rmSync(ws, { recursive: true, force: true });
});

const sandbox = (network: string): SandboxSettings => ({ policy: 'workspace-write', network: network as SandboxSettings['network'], env: [] });

async function run(command: string, network: string, timeout = 30, tenant?: string) {
  const records: ConnectionRecord[] = [];
  const started = Date.now();
  const r = await runTool(
    'execute_command',
    { requires_approval: 'false', command, timeout_seconds: String(timeout) },
    { workspace: ws, sandbox: sandbox(network), recordConnection: (c) => records.push(c), ...(tenant ? { tenant } : {}) },
  );
  // Records are written as each connection closes: give the last one a moment.
  await new Promise((r) => setTimeout(r, 50));
  return { ...r, records, ms: Date.now() - started };
}

describe('the egress proxy with real bwrap (worker as root: commands run as the sandbox user)', () => {
  it('an allowed host is reached through the proxy, by plain HTTP and by CONNECT; each connection is recorded', async () => {
    hits.good = 0;
    const r = await run(
      `curl -sS -m 5 http://good.example.test:${goodPort}/plain && curl -sS -m 5 -k https://good.example.test:${goodPort}/tunnel && echo "proxy=$HTTPS_PROXY"`,
      'allow:good.example.test',
    );
    expect(r.output).toContain('good-server GET /plain');
    expect(r.output).toContain('good-server GET /tunnel');
    expect(r.output).toContain('proxy=http://127.0.0.1:3128');
    expect(r.ok).toBe(true);
    expect(hits.good).toBe(2);
    expect(r.records.map((c) => [c.method, c.host, c.port, c.address, c.allowed])).toEqual([
      ['HTTP', 'good.example.test', goodPort, '127.0.0.1', true],
      ['CONNECT', 'good.example.test', goodPort, '127.0.0.1', true],
    ]);
    for (const c of r.records) {
      expect(c.bytesUp).toBeGreaterThan(0);
      expect(c.bytesDown).toBeGreaterThan(0);
      expect(c.durationMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('allowed names that resolve to another loopback service, 169.254.169.254, the Temporal port, a private or the worker’s own address are refused', async () => {
    hits.other = 0;
    const targets = [
      `other.example.test:${otherPort}`,
      'metadata.example.test:80',
      `temporal.example.test:${temporalPort}`,
      'private.example.test:80',
      ...(ownAddress ? ['own.example.test:80'] : []),
    ];
    const cmd = targets.map((t) => `curl -sS -m 5 http://${t}/ ; curl -sS -m 5 --proxytunnel http://${t}/`).join(' ; ');
    const r = await run(cmd, 'allow:*.example.test');
    expect(hits.other).toBe(0);
    expect(r.output).not.toContain('other-server');
    expect(r.records).toHaveLength(targets.length * 2);
    expect(r.records.every((c) => !c.allowed)).toBe(true);
    const reason = (host: string) => r.records.find((c) => c.host === host)!.reason;
    expect(reason('other.example.test')).toMatch(/resolves to 127\.0\.0\.1, a loopback address/);
    expect(reason('metadata.example.test')).toMatch(/169\.254\.169\.254, a link-local \(cloud metadata\) address/);
    expect(reason('temporal.example.test')).toMatch(/loopback/);
    expect(reason('private.example.test')).toMatch(/10\.1\.2\.3, a private \(RFC 1918\) address/);
    if (ownAddress) expect(reason('own.example.test')).toMatch(/the worker's own address/);
    expect(r.output).toContain('agentrun egress proxy: other.example.test resolves to 127.0.0.1');
    expect(r.output).toMatch(/\[agentrun: the egress proxy refused \d+ connections \(--network allow:\*\.example\.test\)/);
  });

  it('the address checked is the address connected: IPv6, IPv4-mapped and numeric forms, a form a resolver reads as octal, and a name that rebinds never reach what the check refused', async () => {
    // Another service at 127.0.0.8 on the good server's port: what `127.0.0.010` means to the system's resolver (octal), not to a decimal reading.
    let evilHits = 0;
    const evil = net.createServer((s) => {
      evilHits++;
      s.end('HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\nevil-server\n');
    });
    await new Promise<void>((r) => evil.listen(goodPort, '127.0.0.8', r));
    try {
      hits.other = 0;
      lookups = [];
      const forms = [
        `[::ffff:127.0.0.1]:${otherPort}`,
        `[::ffff:7f00:1]:${otherPort}`,
        `[0:0:0:0:0:ffff:127.0.0.1]:${otherPort}`,
        `[::127.0.0.1]:${otherPort}`,
        `[64:ff9b::7f00:1]:${otherPort}`,
        `[::ffff:0:127.0.0.1]:${otherPort}`,
        `[::1]:${otherPort}`,
        `[::]:${otherPort}`,
        `0.0.0.0:${otherPort}`,
        `2130706433:${otherPort}`,
        `0x7f000001:${otherPort}`,
        `0177.0.0.1:${otherPort}`,
        `127.1:${otherPort}`,
        `127.0.0.010:${goodPort}`,
        `012.0.0.1:80`,
      ];
      // Sent as written (curl would normalise a numeric host itself): a plain request's target, and a CONNECT over bash's /dev/tcp.
      const proxyPort = 'p=${HTTP_PROXY##*:}; p=${p%/}';
      const cmd = [
        proxyPort,
        ...forms.map((f) => `curl -sS -m 5 -H 'Host: ${f}' --request-target 'http://${f}/plain' http://127.0.0.1:${goodPort}/`),
        ...forms.map(
          (f) =>
            `(exec 3<>/dev/tcp/127.0.0.1/$p; printf 'CONNECT ${f} HTTP/1.1\\r\\nHost: ${f}\\r\\n\\r\\nGET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' >&3; timeout 2 head -c 300 <&3; echo)`,
        ),
        `curl -sS -m 5 http://rebind-plain.example.test:${goodPort}/rebound`,
        `curl -sS -m 5 --proxytunnel http://rebind-tunnel.example.test:${goodPort}/rebound`,
      ].join(' ; ');
      const r = await run(cmd, 'on', 200);
      expect(evilHits, r.output).toBe(0);
      expect(hits.other, r.output).toBe(0);
      expect(r.output).not.toContain('evil-server');
      expect(r.output).not.toContain('other-server');
      const refusedForms = r.records.filter((c) => !c.allowed);
      expect(refusedForms, JSON.stringify(r.records)).toHaveLength(forms.length * 2);
      // The rebinding name: looked up once per connection, and connected where that one answer said.
      expect(r.output.split('good-server GET /rebound').length - 1, r.output).toBe(2);
      expect(lookups.filter((h) => h.startsWith('rebind'))).toEqual(['rebind-plain.example.test', 'rebind-tunnel.example.test']);
      const rebound = r.records.filter((c) => c.host.startsWith('rebind'));
      expect(rebound.map((c) => [c.allowed, c.address])).toEqual([
        [true, '127.0.0.1'],
        [true, '127.0.0.1'],
      ]);
    } finally {
      await new Promise<void>((r) => evil.close(() => r()));
    }
  }, 300_000);

  it('--network on: any public name, never a literal private address; a name outside allow: is refused before any lookup', async () => {
    hits.other = 0;
    const on = await run(
      `curl -sS -m 5 http://good.example.test:${goodPort}/on; curl -sS -m 5 http://127.0.0.1:${otherPort}/; curl -sS -m 5 http://[::1]:${temporalPort}/; curl -sS -m 5 --proxytunnel http://169.254.169.254/`,
      'on',
    );
    expect(on.output).toContain('good-server GET /on');
    expect(hits.other).toBe(0);
    expect(on.records.map((c) => c.allowed)).toEqual([true, false, false, false]);
    lookups = [];
    const allow = await run(`curl -sS -m 5 http://elsewhere.example.org:${goodPort}/`, 'allow:good.example.test');
    expect(allow.records[0]).toMatchObject({ allowed: false, reason: 'elsewhere.example.org is not in the allow list (good.example.test)' });
    expect(lookups).toEqual([]);
  });

  it('large transfers arrive byte for byte, by plain HTTP and by CONNECT, both ways; each connection is recorded with its bytes', async () => {
    const mb = 24;
    const url = `http://good.example.test:${goodPort}`;
    const tlsUrl = `https://good.example.test:${goodPort}`;
    const r = await run(
      [
        `curl -sS -m 20 ${url}/big/${mb} | sha256sum`,
        `curl -sS -m 20 -k ${tlsUrl}/big/${mb} | sha256sum`,
        `curl -sS -m 20 -D /tmp/head -o /dev/null ${url}/big/1 && tr -d '\\r' < /tmp/head | grep -i '^connection:'`,
        `head -c ${mb << 20} /dev/urandom > /tmp/up && echo "up=$(sha256sum < /tmp/up)"`,
        `curl -sS -m 20 -T /tmp/up ${url}/upload`,
        `curl -sS -m 20 -H 'Transfer-Encoding: chunked' -T - ${url}/upload < /tmp/up`,
        `curl -sS -m 20 -k -T /tmp/up ${tlsUrl}/upload`,
      ].join('; '),
      'allow:good.example.test',
      60,
    );
    const want = sha256(Array.from({ length: mb }, () => MIB));
    const lines = r.output.split('\n');
    expect(lines.filter((l) => l.startsWith(want))).toHaveLength(2);
    // The proxy closes the client's connection after a plain-HTTP response, and says so.
    expect(lines.filter((l) => /^connection:/i.test(l))).toEqual(['Connection: close']);
    const up = /^up=([0-9a-f]{64}) {2}-$/m.exec(r.output)![1];
    expect(r.output).toContain(`got ${mb << 20} bytes, sha256 ${up}, content-length`);
    expect(r.output).toContain(`got ${mb << 20} bytes, sha256 ${up}, chunked`);
    expect(r.output.split(`got ${mb << 20} bytes, sha256 ${up}`).length).toBe(4);
    expect(r.records.map((c) => [c.method, c.allowed, c.reason])).toEqual([
      ['HTTP', true, undefined],
      ['CONNECT', true, undefined],
      ['HTTP', true, undefined],
      ['HTTP', true, undefined],
      ['HTTP', true, undefined],
      ['CONNECT', true, undefined],
    ]);
    const [plain, tunnel, , upPlain, upChunked, upTunnel] = r.records;
    for (const c of [plain!, tunnel!]) expect(c.bytesDown).toBeGreaterThan(mb << 20);
    for (const c of [upPlain!, upChunked!, upTunnel!]) expect(c.bytesUp).toBeGreaterThan(mb << 20);
  }, 90_000);

  it('under allow: a Host header naming another site, a TLS server name (SNI) naming another site and a tunnel without TLS are refused; none reaches the server', async () => {
    hits.good = 0;
    const r = await run(
      [
        `curl -sS -m 5 -H 'Host: other.example.test' http://good.example.test:${goodPort}/fronted`,
        // A tunnel to the allowed name whose ClientHello asks the server behind it for another site (domain fronting).
        `echo | timeout 5 openssl s_client -brief -proxy "\${HTTPS_PROXY#http://}" -connect good.example.test:${goodPort} -servername other.example.test 2>&1 | tail -1`,
        `curl -sS -m 5 --proxytunnel http://good.example.test:${goodPort}/tunnelled-plain`,
      ].join('; '),
      'allow:good.example.test',
    );
    expect(hits.good).toBe(0);
    expect(r.output).toContain(`agentrun egress proxy: the Host header (other.example.test) differs from the request's target good.example.test:${goodPort}`);
    expect(r.records.map((c) => [c.method, c.allowed, c.reason?.slice(0, 40)])).toEqual([
      ['HTTP', false, 'the Host header (other.example.test) dif'],
      ['CONNECT', false, 'the TLS server name other.example.test d'],
      ['CONNECT', false, 'the tunnel does not start with a TLS Cli'],
    ]);
    expect(r.output).toMatch(/\[agentrun: the egress proxy refused 3 connections/);
  });

  it('plain HTTP: interim heads pass, the final head (even cut across reads) says Connection: close instead of keep-alive', async () => {
    const r = await run(`curl -sS -m 5 -i http://good.example.test:${goodPort}/split | tr -d '\\r'`, 'allow:good.example.test');
    expect(r.output).toContain(
      ['HTTP/1.1 103 Early Hints', 'Link: </a.css>', '', 'HTTP/1.1 200 OK', 'X-Kept: yes', 'Content-Length: 3', 'Connection: close', '', 'ok'].join('\n'),
    );
    expect(r.output).not.toMatch(/keep-alive/i);
  });

  it('the command gets no channel to the worker: fd 3 is closed and node finds no IPC channel', async () => {
    const r = await run(
      `test -e /proc/$$/fd/3 && echo fd3=open || echo fd3=closed; echo "channel=\${NODE_CHANNEL_FD-unset}"; node -e 'console.log("send=" + typeof process.send)'; curl -sS -m 5 http://good.example.test:${goodPort}/after`,
      'allow:good.example.test',
    );
    expect(r.output).toContain('fd3=closed');
    expect(r.output).toContain('channel=unset');
    expect(r.output).toContain('send=undefined');
    expect(r.output).toContain('good-server GET /after');
  });

  it('the worker’s PostgreSQL and Temporal on loopback are out of reach directly too: the sandbox has its own loopback', async () => {
    const r = await run(`curl -sS -m 3 http://127.0.0.1:${temporalPort}/ --noproxy '*'; curl -sS -m 3 http://127.0.0.1:5432/ --noproxy '*'; echo done`, 'on');
    expect(r.output).toMatch(/Failed to connect to 127\.0\.0\.1 port \d+/);
    expect(r.records).toEqual([]);
  });
});

/** A node program run in the sandbox: raw bytes to the proxy, one connection per case, each case's first response line (or how it ended) printed. */
const RAW_CLIENT = `
const net = require('node:net');
const cases = JSON.parse(require('node:fs').readFileSync(process.argv[2], 'utf8'));
(async () => {
  for (const [name, bytes] of cases) {
    const got = await new Promise((resolve) => {
      let data = '';
      const s = net.connect(3128, '127.0.0.1', () => s.write(bytes));
      s.setTimeout(5000, () => s.destroy());
      s.on('data', (d) => (data += d.toString('latin1')));
      s.on('error', () => undefined);
      s.on('close', () => resolve(data ? data.split('\\r\\n').filter((l) => /^HTTP|egress proxy|-server/.test(l)).join(' | ') : 'closed'));
    });
    console.log(name + ': ' + got);
  }
})();
`;

/** A node program run in the sandbox: N connections to the proxy at once, held idle until the file .go appears, then a request on each; counts what came back. */
const FLOOD_CLIENT = `
const net = require('node:net');
const fs = require('node:fs');
const [n, target] = [Number(process.argv[2]), process.argv[3]];
const socks = [];
let connected = 0, ended = 0;
const counts = { served: 0, refused: 0, closed: 0 };
for (let i = 0; i < n; i++) {
  const s = net.connect(3128, '127.0.0.1');
  let data = '';
  s.on('connect', () => connected++);
  s.on('error', () => undefined);
  s.on('data', (d) => (data += d));
  s.on('close', () => {
    counts[/good-server/.test(data) ? 'served' : /^HTTP\\/1\\.1 503/.test(data) ? 'refused' : 'closed']++;
    if (++ended === n) console.log(JSON.stringify(counts));
  });
  socks.push(s);
}
const until = Date.now() + 90000;
const wait = setInterval(() => {
  if (!fs.existsSync('.go') && Date.now() < until) return;
  clearInterval(wait);
  console.log('connected ' + connected + ', closed before a request ' + ended);
  for (const [i, s] of socks.entries()) {
    if (s.destroyed) continue;
    s.write('GET http://' + target + '/flood-' + i + ' HTTP/1.1\\r\\nHost: ' + target + '\\r\\n\\r\\n', () => undefined);
    s.setTimeout(20000, () => s.destroy());
  }
}, 100);
`;

describe('the egress proxy against request smuggling and floods (real bwrap, the real proxy)', () => {
  it('conflicting Content-Length/Transfer-Encoding, two Hosts, a target other than Host, a request pipelined behind another, bytes after a CONNECT, oversized heads and URLs: only the one checked request reaches a server', async () => {
    const G = `good.example.test:${goodPort}`;
    const O = `other.example.test:${otherPort}`;
    seen.good = [];
    seen.other = [];
    const smuggled = (path: string, host = G) => `GET http://${host}/${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
    const cases: [string, string][] = [
      [
        'cl-te',
        `POST http://${G}/cl-te HTTP/1.1\r\nHost: ${G}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled('smuggled-cl-te')}`,
      ],
      [
        'te-cl',
        `POST http://${G}/te-cl HTTP/1.1\r\nHost: ${G}\r\nTransfer-Encoding: xchunked\r\nContent-Length: 4\r\n\r\n5c\r\n${smuggled('smuggled-te-cl')}0\r\n\r\n`,
      ],
      [
        'te-twice',
        `POST http://${G}/te-twice HTTP/1.1\r\nHost: ${G}\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n${smuggled('smuggled-te-twice')}`,
      ],
      ['cl-twice', `POST http://${G}/cl-twice HTTP/1.1\r\nHost: ${G}\r\nContent-Length: 0\r\nContent-Length: 44\r\n\r\n${smuggled('smuggled-cl-twice')}`],
      ['two-hosts', `GET http://${G}/two-hosts HTTP/1.1\r\nHost: ${G}\r\nHost: ${O}\r\n\r\n`],
      ['target-not-host', `GET http://${G}/target-not-host HTTP/1.1\r\nHost: ${O}\r\n\r\n`],
      ['pipelined', `${smuggled('first')}${smuggled('second-same-host')}${smuggled('second-other-host', O)}`],
      ['connect-then-http', `CONNECT ${G} HTTP/1.1\r\nHost: ${G}\r\n\r\n${smuggled('after-connect', O)}`],
      ['big-header', `GET http://${G}/big-header HTTP/1.1\r\nHost: ${G}\r\nX-Pad: ${'a'.repeat(100_000)}\r\n\r\n`],
      ['big-url', smuggled(`big-url-${'u'.repeat(100_000)}`)],
    ];
    writeFileSync(join(ws, 'raw.js'), RAW_CLIENT);
    writeFileSync(join(ws, 'cases.json'), JSON.stringify(cases));
    chmodSync(ws, 0o755);
    const r = await run('node raw.js cases.json', 'allow:good.example.test', 60);
    const got = Object.fromEntries(
      r.output
        .split('\n')
        .filter((l) => cases.some(([n]) => l.startsWith(`${n}: `)))
        .map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]),
    );
    expect(Object.keys(got), r.output).toEqual(cases.map(([n]) => n));
    // Nothing behind or beside a checked request reaches a server: a connection that carries a
    // second request is closed, the first with it if its answer has not gone yet.
    expect(
      seen.good.filter((l) => l !== `${G} GET /first`),
      r.output,
    ).toEqual([]);
    expect(seen.other).toEqual([]);
    expect(got.pipelined).toMatch(/^closed$|^HTTP\/1\.1 200 OK \| good-server GET \/first$/);
    expect(got['two-hosts']).toContain('agentrun egress proxy: the request has more than one Host header');
    expect(got['target-not-host']).toContain(`agentrun egress proxy: the Host header (${O}) differs from the request's target ${G}`);
    expect(got['connect-then-http']).toMatch(/^HTTP\/1\.1 200 Connection Established$|^HTTP\/1\.1 200 Connection Established \| /);
    // Framing the parser cannot trust, and heads over its limit, are refused or closed unforwarded.
    for (const n of ['cl-te', 'te-cl', 'te-twice', 'cl-twice', 'big-header', 'big-url']) expect(got[n], n).toMatch(/^(closed|HTTP\/1\.1 4\d\d .*)$/);
    expect(r.records.filter((c) => c.allowed).map((c) => c.host)).toEqual(['good.example.test']);
  }, 90_000);

  it('2,000 connections at once from one command: the proxy holds it to its cap, counts the rest toward no cap, and another conversation’s command reaches its host meanwhile', async () => {
    seen.good = [];
    rmSync(join(ws, '.go'), { force: true });
    writeFileSync(join(ws, 'flood.js'), FLOOD_CLIENT);
    chmodSync(ws, 0o777);
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, proxy.openConnections)), 10);
    const flood = run(`node flood.js 2000 good.example.test:${goodPort}`, 'allow:good.example.test', 120);
    // The flood is open when its command holds as many as one command may (64); over-cap ones count toward no cap.
    for (const end = Date.now() + 60_000; proxy.openConnections < 64; await new Promise((r) => setTimeout(r, 100)))
      if (Date.now() > end) throw new Error(`the flood never filled its cap: ${proxy.openConnections} open`);
    expect(proxy.openConnections).toBe(64);
    // Another conversation's command, meanwhile: its own proxy bridge, its host reached.
    const other = await run(`curl -sS -m 10 http://good.example.test:${goodPort}/meanwhile`, 'allow:good.example.test');
    expect(other.output).toContain('good-server GET /meanwhile');
    expect(other.records.map((c) => c.allowed)).toEqual([true]);
    expect(proxy.openConnections).toBeLessThanOrEqual(65);
    writeFileSync(join(ws, '.go'), '');
    const f = await flood;
    clearInterval(sampler);
    const counts = JSON.parse(f.output.split('\n').find((l) => l.startsWith('{'))!) as { served: number; refused: number; closed: number };
    expect(counts.served + counts.refused + counts.closed, f.output).toBe(2000);
    // Never more than one cap's worth open at once (and the other command's one); those that
    // came in while it was full were told why or closed, later ones served as others closed.
    expect(peak, f.output).toBeLessThanOrEqual(65);
    expect(counts.served).toBeGreaterThanOrEqual(64);
    expect(counts.refused + counts.closed).toBeGreaterThan(0);
    expect(seen.good.filter((l) => l.includes('/flood-')).length).toBe(counts.served);
    expect(f.records.filter((c) => c.allowed).length).toBe(counts.served);
    // All of it let go when the command ended.
    for (const end = Date.now() + 30_000; proxy.openConnections > 0; await new Promise((r) => setTimeout(r, 100)))
      if (Date.now() > end) throw new Error(`${proxy.openConnections} connections still open after the command`);
    rmSync(join(ws, '.go'), { force: true });
  }, 180_000);

  it('one tenant’s commands holding their connections fill only that tenant’s share of the worker’s cap: another tenant’s command reaches its host meanwhile', async () => {
    // Small caps, the defaults' shape: a command 8, the worker 16, a tenant half of it (8).
    // Three commands of tenant A at 8 each would fill the worker's 16 without the tenant's share.
    const small = testProxy({ maxConnectionsPerCommand: 8, maxConnectionsPerWorker: 16 });
    setEgressProxy(small);
    try {
      seen.good = [];
      rmSync(join(ws, '.go'), { force: true });
      writeFileSync(join(ws, 'flood.js'), FLOOD_CLIENT);
      chmodSync(ws, 0o777);
      const floods = [0, 1, 2].map(() => run(`node flood.js 20 good.example.test:${goodPort}`, 'allow:good.example.test', 120, 'tenant-a'));
      // Tenant A holds its share once its commands connected.
      for (const end = Date.now() + 60_000; small.openConnectionsOf('tenant-a') < 8; await new Promise((r) => setTimeout(r, 100)))
        if (Date.now() > end) throw new Error(`tenant A never filled its share: ${small.openConnectionsOf('tenant-a')} open`);
      // Its commands keep trying (60 connections asked for): still only its share is held.
      await new Promise((r) => setTimeout(r, 1000));
      expect(small.openConnectionsOf('tenant-a')).toBe(8);
      expect(small.openConnections).toBe(8);
      // Tenant B's command, meanwhile: its host reached.
      const b = await run(`curl -sS -m 10 http://good.example.test:${goodPort}/tenant-b`, 'allow:good.example.test', 30, 'tenant-b');
      expect(b.output).toContain('good-server GET /tenant-b');
      expect(b.records.map((c) => c.allowed)).toEqual([true]);
      writeFileSync(join(ws, '.go'), '');
      const done = await Promise.all(floods);
      // What tenant A was refused says why: its tenant's share.
      const refused = done.flatMap((f) => f.records.filter((c) => !c.allowed).map((c) => c.reason ?? ''));
      expect(refused.some((r) => /the commands of tenant tenant-a have 8 connections open, the most one tenant may have on this worker \(8\)/.test(r))).toBe(
        true,
      );
      for (const end = Date.now() + 30_000; small.openConnections > 0; await new Promise((r) => setTimeout(r, 100)))
        if (Date.now() > end) throw new Error(`${small.openConnections} connections still open after the commands`);
      expect(small.openConnectionsOf('tenant-a')).toBe(0);
    } finally {
      setEgressProxy(proxy);
      rmSync(join(ws, '.go'), { force: true });
    }
  }, 180_000);
});

describe('network off tells commands at once', () => {
  const note = 'the network is off for this conversation (--network off)';
  it.each([
    ['npm view', 'npm view left-pad version'],
    ['npm install', 'npm init -y >/dev/null && npm install left-pad'],
    ['pip download', 'pip download --no-deps -d /tmp/dl requests'],
  ])('%s fails without waiting out a retry and says the network is off', async (_name, command) => {
    const r = await run(command, 'off');
    expect(r.ok).toBe(false);
    // Not a speed goal (bench/ holds those): a client that met a silent network would retry after
    // 10 s (npm's fetch-retry-mintimeout, pip's backoff) or wait out its connect timeout.
    expect(r.ms).toBeLessThan(10_000);
    expect(r.output).toContain(note);
  });

  it('name lookups fail immediately', async () => {
    const r = await run('time getent hosts registry.npmjs.org; echo "exit=$?"', 'off');
    expect(r.output).toContain('exit=2');
    expect(r.ms).toBeLessThan(2_000);
  });
});

describe('the egress proxy for a worker running as an unprivileged user', () => {
  it('the sandbox user reaches the allowed host through the proxy; other ports are refused', async () => {
    const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim());
    const home = mkdtempSync('/var/tmp/agentrun-nobody-home-');
    execFileSync('chown', [`${uid}:${gid}`, home]);
    try {
      // Asynchronous: the servers answering the probe live in this process.
      const mount = tempDirSync('agentrun-src-');
      chmodSync(mount, 0o755);
      const [file, args] = nodeAsUser({ uid, gid, mount }, 'test/helpers/egress-probe.ts', [String(goodPort), String(otherPort)]);
      const r = await promisify(execFile)(file, args, {
        cwd: '/',
        env: { PATH: process.env.PATH, HOME: home, TMPDIR: os.tmpdir() },
        encoding: 'utf8',
        timeout: 60_000,
      });
      const line = r.stdout.trim().split('\n').pop()!;
      const out = JSON.parse(line) as { uid: number; output: string; records: ConnectionRecord[] };
      expect(out.uid).toBe(uid);
      expect(out.output).toMatch(new RegExp(`^${uid}$`, 'm'));
      expect(out.output).toContain('good-server GET /probe');
      expect(out.records.map((c) => [c.port, c.allowed])).toEqual([
        [goodPort, true],
        [otherPort, false],
      ]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('connections through the workflow are in the store and in inspect', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a conversation with --network allow: records each connection with its call; inspect shows a Network section', async () => {
    const workspace = await tempRepo();
    const command = `curl -sS -m 5 http://good.example.test:${goodPort}/wf; curl -sS -m 5 --proxytunnel http://metadata.example.test/latest/meta-data/`;
    const model = await scriptModel({
      turns: [
        { tool_calls: [{ name: 'execute_command', arguments: { command, requires_approval: false, timeout_seconds: 20 } }] },
        { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'done' } }] },
      ],
    });
    const handle = await h.start({
      task: 'fetch',
      workspace,
      config: { model, approval: 'never', toolFormat: 'native', network: 'allow:good.example.test,metadata.example.test' },
    });
    expect(((await handle.result()) as ConversationResult).status).toBe('completed');
    const id = handle.workflowId;
    const rows = await h.store.getNetworkConnections(id);
    expect(rows.map((c) => [c.host, c.allowed])).toEqual([
      ['good.example.test', true],
      ['metadata.example.test', false],
    ]);
    expect(rows.every((c) => typeof c.callId === 'string')).toBe(true);
    const data = await gatherInspection({ store: h.store, client: h.client, home: h.home } as unknown as Session, id, { maxChars: 10_000, diffs: false });
    let text = '';
    printInspection(data!, (s) => void (text += s));
    expect(text).toContain('network: allow:good.example.test,metadata.example.test');
    expect(text).toContain('Network (2 connections through the egress proxy, 1 refused)');
    expect(text).toMatch(new RegExp(`HTTP +good\\.example\\.test:${goodPort} \\(127\\.0\\.0\\.1\\) +allowed +↑\\d`));
    expect(text).toMatch(/CONNECT metadata\.example\.test:80 \(169\.254\.169\.254\) +REFUSED +metadata\.example\.test resolves to 169\.254\.169\.254/);
    const toolResult = (await h.store.getMessages(id)).find((m) => m.toolName === 'execute_command')!.content;
    expect(toolResult).toContain('good-server GET /wf');
    expect(toolResult).toContain('the egress proxy refused 1 connection');
  }, 120_000);
});
