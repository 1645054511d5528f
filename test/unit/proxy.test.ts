// The egress proxy's name checks and limits, against real sockets and a real TLS server on
// loopback: the proxy gets its listening socket the way the sandbox hands it over (a raw handle
// in an IPC message), and clients speak to it as curl would.
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_HELLO_BYTES, peekClientHello } from '../../src/sandbox/client-hello.js';
import { PROXY_LISTENER_MESSAGE } from '../../src/sandbox/forwarder.js';
import { networkPolicy } from '../../src/sandbox/network.js';
import { EgressProxy, type ConnectionRecord, type EgressBridge, type ProxyOptions } from '../../src/sandbox/proxy.js';
import { selfSignedCert } from '../helpers/tls-cert.js';

let httpServer: Server;
let tlsServer: tls.Server;
let httpPort: number;
/** Every request the target server got (Host and path): what reached it past the proxy. */
const seen: string[] = [];
let tlsPort: number;
const open: EgressBridge[] = [];

beforeAll(async () => {
  const { key, cert } = selfSignedCert('good.example.test');
  httpServer = createServer((req, res) => {
    seen.push(`${req.headers.host} ${req.url}`);
    res.end(`http ${req.headers.host} ${req.url}\n`);
  });
  // Echoes what it gets, and never closes first (the idle timeout is the proxy's to enforce).
  tlsServer = tls.createServer({ key, cert }, (s) => {
    s.on('error', () => undefined);
    s.on('data', (d: Buffer) => s.write(`tls ${s.servername ?? '-'} ${d.toString()}`));
  });
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', r));
  httpPort = (httpServer.address() as AddressInfo).port;
  tlsPort = (tlsServer.address() as AddressInfo).port;
});
afterAll(() => {
  for (const b of open) b.close();
  httpServer.closeAllConnections();
  httpServer.close();
  tlsServer.close();
});

/** A proxy for one command under `network`, listening on a loopback port; its records. */
async function bridge(network: string, opts: ProxyOptions = {}, proxy?: EgressProxy, tenant?: string) {
  proxy ??= new EgressProxy({ allowLoopbackPorts: [httpPort, tlsPort], resolve: async () => ['127.0.0.1'], ...opts });
  const records: ConnectionRecord[] = [];
  const b = proxy.open(networkPolicy(network), (r) => records.push(r), tenant);
  open.push(b);
  // The raw listening handle, as the sandbox's forwarder sends it over the IPC channel.
  const listener = net.createServer();
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const port = (listener.address() as AddressInfo).port;
  const child = new EventEmitter();
  b.listenFrom(child);
  child.emit('message', PROXY_LISTENER_MESSAGE, (listener as unknown as { _handle: object })._handle);
  return { port, records, proxy, bridge: b };
}

/** Send raw bytes to the proxy; everything it answers until it closes. */
function exchange(port: number, data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(data));
    let out = '';
    s.on('data', (d: Buffer) => (out += d.toString()));
    s.on('error', reject);
    s.on('close', () => resolve(out));
  });
}

/** CONNECT to `target`, then TLS through the tunnel with `servername` (undefined: no SNI); what comes back for "ping", or the error. */
function tlsThrough(port: number, target: string, servername: string | undefined): Promise<{ reply?: string; closed?: string }> {
  return new Promise((resolve) => {
    const raw = net.connect(port, '127.0.0.1', () => raw.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    raw.once('data', (d: Buffer) => {
      if (!d.toString().startsWith('HTTP/1.1 200')) return resolve({ closed: d.toString() });
      const t = tls.connect({ socket: raw, rejectUnauthorized: false, ...(servername === undefined ? {} : { servername }) }, () => t.write('ping'));
      t.on('data', (r: Buffer) => {
        resolve({ reply: r.toString() });
        t.destroy();
      });
      t.on('error', (e) => resolve({ closed: e.message }));
      t.on('close', () => resolve({ closed: 'closed' }));
    });
    raw.on('error', (e) => resolve({ closed: e.message }));
  });
}

/** Records are written as connections close: wait until there are `n`. */
async function recorded(records: ConnectionRecord[], n: number): Promise<ConnectionRecord[]> {
  while (records.length < n) await new Promise((r) => setTimeout(r, 10));
  return records;
}

describe('plain HTTP: the Host header is the checked target', () => {
  it('passes a request whose Host is its target; refuses one whose Host names another site', async () => {
    const { port, records } = await bridge('allow:good.example.test');
    const ok = await exchange(port, `GET http://good.example.test:${httpPort}/a HTTP/1.1\r\nHost: good.example.test:${httpPort}\r\n\r\n`);
    expect(ok).toContain(`http good.example.test:${httpPort} /a`);
    const bad = await exchange(port, `GET http://good.example.test:${httpPort}/b HTTP/1.1\r\nHost: evil.example.test\r\n\r\n`);
    expect(bad).toMatch(/^HTTP\/1\.1 403/);
    expect(bad).toContain(`the Host header (evil.example.test) differs from the request's target good.example.test:${httpPort}`);
    const two = await exchange(
      port,
      `GET http://good.example.test:${httpPort}/c HTTP/1.1\r\nHost: good.example.test:${httpPort}\r\nHost: evil.example.test\r\n\r\n`,
    );
    expect(two).toMatch(/^HTTP\/1\.1 (400|403)/);
    expect((await recorded(records, 2)).map((r) => [r.allowed, r.reason ?? ''])).toEqual([
      [true, ''],
      [false, expect.stringMatching(/Host header/)],
      ...(records.length > 2 ? [[false, expect.stringMatching(/Host header/)]] : []),
    ]);
  });
});

describe('CONNECT under allow:: the TLS server name is the CONNECT target', () => {
  it('a ClientHello naming the target passes; another name, no name, or no TLS at all is refused before any connection', async () => {
    const { port, records } = await bridge('allow:good.example.test');
    const target = `good.example.test:${tlsPort}`;
    expect(await tlsThrough(port, target, 'good.example.test')).toEqual({ reply: 'tls good.example.test ping' });
    expect((await tlsThrough(port, target, 'evil.example.test')).reply).toBeUndefined();
    expect((await tlsThrough(port, target, undefined)).reply).toBeUndefined();
    const plain = await exchange(port, `CONNECT ${target} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: evil.example.test\r\n\r\n`);
    expect(plain).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    // Each record is written as its connection closes, so their order is the order of the closes.
    const rs = await recorded(records, 4);
    expect(rs.map((r) => [r.allowed, r.reason ?? ''])).toEqual(
      expect.arrayContaining([
        [true, ''],
        [false, 'the TLS server name evil.example.test differs from the CONNECT target good.example.test'],
        [false, 'the TLS ClientHello names no server (SNI); under --network allow: a tunnel must name good.example.test'],
        [false, expect.stringMatching(/^the tunnel does not start with a TLS ClientHello/)],
      ]),
    );
    expect(rs).toHaveLength(4);
    expect(rs.filter((r) => !r.allowed).every((r) => r.bytesUp === 0 && r.bytesDown === 0)).toBe(true);
  });

  it('--network on lets any tunnel through unchanged', async () => {
    const { port } = await bridge('on');
    expect(await tlsThrough(port, `good.example.test:${tlsPort}`, 'anything.example.test')).toEqual({ reply: 'tls anything.example.test ping' });
  });
});

describe('connection caps and timeouts', () => {
  it('a command over its cap is refused with 503; the cap frees as connections close', async () => {
    const { port, records } = await bridge('allow:good.example.test', { maxConnectionsPerCommand: 2 });
    const held = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<net.Socket>((r) => {
            const s = net.connect(port, '127.0.0.1', () => r(s));
          }),
      ),
    );
    // Let the proxy see both before the third.
    await new Promise((r) => setTimeout(r, 50));
    const over = await exchange(port, `GET http://good.example.test:${httpPort}/x HTTP/1.1\r\nHost: good.example.test:${httpPort}\r\n\r\n`);
    expect(over).toMatch(/^HTTP\/1\.1 503/);
    expect(over).toContain('the command has 2 connections open, the most one command may have (2)');
    for (const s of held) s.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(await exchange(port, `GET http://good.example.test:${httpPort}/y HTTP/1.1\r\nHost: good.example.test:${httpPort}\r\n\r\n`)).toContain('http good');
    expect((await recorded(records, 2)).map((r) => r.allowed)).toEqual([false, true]);
  });

  it('the worker-wide cap holds across commands, of different tenants too', async () => {
    const proxy = new EgressProxy({
      allowLoopbackPorts: [httpPort],
      resolve: async () => ['127.0.0.1'],
      maxConnectionsPerWorker: 1,
      maxConnectionsPerTenant: 1,
    });
    const a = await bridge('allow:good.example.test', {}, proxy, 'acme');
    const b = await bridge('allow:good.example.test', {}, proxy, 'globex');
    const held = await new Promise<net.Socket>((r) => {
      const s = net.connect(a.port, '127.0.0.1', () => r(s));
    });
    await new Promise((r) => setTimeout(r, 50));
    const over = await exchange(b.port, `GET http://good.example.test:${httpPort}/x HTTP/1.1\r\nHost: good.example.test:${httpPort}\r\n\r\n`);
    expect(over).toContain("the worker's commands have 1 connections open, the most the worker allows (1)");
    held.destroy();
  });

  it("a tenant's commands hold at most its share of the worker; another tenant's command still connects", async () => {
    const proxy = new EgressProxy({
      allowLoopbackPorts: [httpPort],
      resolve: async () => ['127.0.0.1'],
      maxConnectionsPerWorker: 4,
      maxConnectionsPerTenant: 1,
    });
    const first = await bridge('allow:good.example.test', {}, proxy, 'acme');
    const second = await bridge('allow:good.example.test', {}, proxy, 'acme');
    const other = await bridge('allow:good.example.test', {}, proxy, 'globex');
    const held = await new Promise<net.Socket>((r) => {
      const s = net.connect(first.port, '127.0.0.1', () => r(s));
    });
    await new Promise((r) => setTimeout(r, 50));
    const request = `GET http://good.example.test:${httpPort}/x HTTP/1.1\r\nHost: good.example.test:${httpPort}\r\nConnection: close\r\n\r\n`;
    expect(await exchange(second.port, request)).toContain(
      'the commands of tenant acme have 1 connections open, the most one tenant may have on this worker (1)',
    );
    expect(await exchange(other.port, request)).toMatch(/^HTTP\/1\.1 200/);
    held.destroy();
  });

  it('an idle tunnel is closed and recorded with the reason; a tunnel that never says hello is refused', async () => {
    const { port, records } = await bridge('allow:good.example.test', { idleTimeoutMs: 300, helloTimeoutMs: 300 });
    const closed = await new Promise<string>((resolve) => {
      const raw = net.connect(port, '127.0.0.1', () => raw.write(`CONNECT good.example.test:${tlsPort} HTTP/1.1\r\n\r\n`));
      raw.once('data', () => {
        const t = tls.connect({ socket: raw, rejectUnauthorized: false, servername: 'good.example.test' });
        t.on('error', () => undefined);
        t.on('close', () => resolve('closed'));
      });
    });
    expect(closed).toBe('closed');
    const silent = await exchange(port, `CONNECT good.example.test:${tlsPort} HTTP/1.1\r\n\r\n`);
    expect(silent).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    expect((await recorded(records, 2)).map((r) => [r.allowed, r.reason])).toEqual([
      [true, 'closed after 0.3 s without traffic'],
      [false, 'no TLS ClientHello came through the tunnel in time'],
    ]);
  });
});

describe('reading a ClientHello', () => {
  it('waits for more, tells TLS from not-TLS, and refuses malformed or oversized hellos', () => {
    expect(peekClientHello(Buffer.alloc(0))).toEqual({ kind: 'more' });
    expect(peekClientHello(Buffer.from('GET / HTTP/1.1\r\n'))).toEqual({ kind: 'not-tls' });
    expect(peekClientHello(Buffer.from([0x16, 0x03, 0x01, 0x00]))).toEqual({ kind: 'more' });
    expect(peekClientHello(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 0x02, 0, 0, 0]))).toMatchObject({ kind: 'bad' });
    expect(peekClientHello(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x06, 0x01, 0, 0, 2, 3, 3]))).toMatchObject({ kind: 'bad', reason: 'truncated ClientHello' });
    const huge = Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0xff, 0xff, 0xff]);
    expect(peekClientHello(huge)).toEqual({ kind: 'bad', reason: 'ClientHello too large' });
    expect(MAX_HELLO_BYTES).toBeGreaterThan(16 * 1024);
  });
});

describe('plain HTTP: one checked request per connection, however the bytes are arranged', () => {
  it('a second request pipelined behind an allowed one, or smuggled in its body by Content-Length and Transfer-Encoding, never reaches the target', async () => {
    const { port } = await bridge('allow:good.example.test');
    const good = `good.example.test:${httpPort}`;
    const attempts = [
      // Alone: it passes.
      `GET http://${good}/first HTTP/1.1\r\nHost: ${good}\r\n\r\n`,
      // Pipelined: the second names another site.
      `GET http://${good}/first HTTP/1.1\r\nHost: ${good}\r\n\r\nGET http://evil.example.test:${httpPort}/smuggled-pipelined HTTP/1.1\r\nHost: evil.example.test\r\n\r\n`,
      // CL.TE: a length that ends the first request early for one reader and late for another.
      `POST http://${good}/cl-te HTTP/1.1\r\nHost: ${good}\r\nContent-Length: 74\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled-clte HTTP/1.1\r\nHost: evil.example.test\r\nX: y\r\n\r\n`,
      // TE.CL, with an obfuscated Transfer-Encoding.
      `POST http://${good}/te-cl HTTP/1.1\r\nHost: ${good}\r\nContent-Length: 4\r\nTransfer-Encoding : chunked\r\n\r\n5e\r\nGET /smuggled-tecl HTTP/1.1\r\nHost: evil.example.test\r\nContent-Length: 15\r\n\r\nx=1\r\n0\r\n\r\n`,
    ];
    const answers: string[] = [];
    for (const a of attempts) answers.push(await exchange(port, a));
    // Only the lone request is answered; the arranged ones are refused outright.
    expect(answers[0]).toMatch(/^HTTP\/1\.1 200/);
    for (const a of answers.slice(1)) expect(a).not.toMatch(/^HTTP\/1\.1 200/);
    // The allowed request went through (the check looks at a server that was reached) …
    expect(seen).toContain(`${good} /first`);
    // … and nothing behind it did.
    expect(seen.filter((r) => r.includes('smuggled') || r.startsWith('evil'))).toEqual([]);
  });
});
