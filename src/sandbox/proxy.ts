// The egress proxy: how a sandboxed command reaches the network when its conversation allows it
// (`--network allow:HOST,…` or `on`). It runs in the worker process, outside the sandbox, and
// accepts each command's connections on a listening socket of the sandbox's own loopback, which
// the sandbox hands over when the command starts (src/sandbox/forwarder.ts). It speaks
// HTTP CONNECT and plain HTTP with absolute URIs, lets through only the hosts the policy names, and
// never connects to a loopback, private, link-local, multicast or worker-own address: the name is
// resolved once, every address is checked, and the connection goes to that checked address (no
// second lookup that DNS rebinding could answer differently). Every connection is recorded.
// Under `allow:` the names are held to what the client really asks for: a plain request's `Host`
// must be its checked target, and a tunnel must start with a TLS ClientHello whose server name
// (SNI) is the CONNECT target (one allowed name on a shared CDN must not reach every site behind
// it). Connections are capped per command, per tenant and per worker; tunnels end when idle or
// too old.
import { lookup } from 'node:dns/promises';
import type { EventEmitter } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { log } from '../log.js';
import { peekClientHello, type HelloPeek } from './client-hello.js';
import { PROXY_LISTENER_MESSAGE } from './forwarder.js';
import { canonicalIp, forbiddenRange, hostAllowed, parseIp, type NetworkPolicy } from './network.js';

/** One connection a command asked the proxy for, allowed or refused. */
export interface ConnectionRecord {
  host: string;
  port: number;
  /** The address it connected to (or that was refused); absent when the name was refused before any lookup. */
  address?: string;
  allowed: boolean;
  /** Why it was refused, or why an allowed connection failed. */
  reason?: string;
  method: 'CONNECT' | 'HTTP';
  bytesUp: number;
  bytesDown: number;
  durationMs: number;
}

export interface ProxyOptions {
  /** Name lookup (default: the system resolver, all addresses). Tests pass a hostile one. */
  resolve?: (host: string) => Promise<string[]>;
  /**
   * TEST ONLY: loopback ports treated as public hosts, so tests can serve "the internet" from
   * 127.0.0.1. Never set in production (AGENTRUN_PROXY_ALLOW_LOOPBACK_PORTS).
   */
  allowLoopbackPorts?: readonly number[];
  /** The worker's own addresses, never connected to (default: its interfaces' addresses). */
  ownAddresses?: () => string[];
  connectTimeoutMs?: number;
  /** Open connections one command may have at once (default 64). */
  maxConnectionsPerCommand?: number;
  /** Open connections all commands of the worker may have at once (default 512). */
  maxConnectionsPerWorker?: number;
  /**
   * Open connections all commands of one tenant may have at once (default half the worker's cap):
   * one tenant's commands holding idle connections never fill the worker's cap, so another
   * tenant's command still reaches its host.
   */
  maxConnectionsPerTenant?: number;
  /** A connection with no byte either way for this long is closed (default 5 min). */
  idleTimeoutMs?: number;
  /** No connection stays open longer than this (default 1 h). */
  maxConnectionMs?: number;
  /** How long a tunnel under `allow:` may take to send its TLS ClientHello (default 10 s). */
  helloTimeoutMs?: number;
}

export type Decision = { allowed: true; address: string } | { allowed: false; reason: string; address?: string };

/** Addresses of this machine's interfaces, canonical. */
function interfaceAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) {
      const ip = parseIp(a.address);
      if (ip) out.push(canonicalIp(ip));
    }
  return out;
}

async function systemResolve(host: string): Promise<string[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((a) => a.address);
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]);
}

/** Bytes read at once per relayed connection; malloc'd, so only what reads fill becomes resident. */
const RELAY_BUFFER_BYTES = 1024 * 1024;

/**
 * Reading options for a socket whose bytes go on to `to()`: every read lands in one static buffer
 * and is written on at once; while that write is pending (libuv holds the buffer) reading stops.
 * A new buffer per 64 KiB read and its GC cost a hop more CPU than the copies (bench/environment.ts).
 * `rewrite` may replace a chunk (with a copy, or an empty buffer to wait for more).
 */
function relayTo(to: () => net.Socket, from: () => net.Socket, rewrite?: (chunk: Buffer) => Buffer): net.OnReadOpts {
  let paused = false;
  const written = () => {
    if (!paused) return;
    paused = false;
    from().resume();
  };
  const buffer = Buffer.allocUnsafe(RELAY_BUFFER_BYTES);
  return {
    buffer,
    callback: (n) => {
      let chunk: Buffer = buffer.subarray(0, n);
      if (rewrite) {
        try {
          chunk = rewrite(chunk);
        } catch (err) {
          from().destroy(err as Error);
          return false;
        }
        if (!chunk.length) return true;
      }
      const out = to();
      out.write(chunk, written);
      if (out.writableLength === 0) return true;
      paused = true;
      return false;
    },
  };
}

/** Client connections that had their (one) plain-HTTP request. */
const answeredSockets = new WeakSet<net.Socket>();

const HOP_BY_HOP = /^(proxy-[^:]*|connection|keep-alive)\s*:/i;
const MAX_HEAD_BYTES = 64 * 1024;

/**
 * The response side of a plain-HTTP request, relayed raw: only the heads are rewritten, the final
 * one to say `Connection: close` (the proxy closes the client's connection after it, so the client
 * must not send another request on it); interim 1xx heads pass as they are, then every byte.
 * Returns copies while it parses (the relay's buffer is reused), the chunk itself after.
 */
function closingResponseHeads(): (chunk: Buffer) => Buffer {
  let pending: Buffer | undefined;
  let done = false;
  return (chunk) => {
    if (done) return chunk;
    let data = pending ? Buffer.concat([pending, chunk]) : chunk;
    const out: Buffer[] = [];
    while (!done) {
      // Not an HTTP/1.x response: passed as it is.
      if (data.length >= 5 && data.subarray(0, 5).toString('latin1') !== 'HTTP/') break;
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) {
        if (data.length > MAX_HEAD_BYTES) throw new Error(`response head over ${MAX_HEAD_BYTES} bytes`);
        pending = Buffer.from(data);
        return Buffer.concat(out);
      }
      const head = data.subarray(0, end).toString('latin1').split('\r\n');
      if (/^HTTP\/1\.[01] 1\d\d(?!\d)/.test(head[0]!) && !head[0]!.startsWith('HTTP/1.1 101')) out.push(Buffer.from(data.subarray(0, end + 4)));
      else {
        const kept = head.slice(1).filter((line) => !HOP_BY_HOP.test(line));
        out.push(Buffer.from([head[0], ...kept, 'Connection: close', '', ''].join('\r\n'), 'latin1'));
        done = true;
      }
      data = data.subarray(end + 4);
    }
    done = true;
    pending = undefined;
    out.push(data);
    return Buffer.concat(out);
  };
}

export class EgressProxy {
  private readonly resolve: (host: string) => Promise<string[]>;
  private readonly loopbackPorts: ReadonlySet<number>;
  private readonly own: () => string[];
  private readonly connectTimeoutMs: number;
  private readonly limits: Required<
    Pick<
      ProxyOptions,
      'maxConnectionsPerCommand' | 'maxConnectionsPerWorker' | 'maxConnectionsPerTenant' | 'idleTimeoutMs' | 'maxConnectionMs' | 'helloTimeoutMs'
    >
  >;
  /** Client connections open now, over every command of this worker. */
  private open_ = 0;
  /** Client connections open now per tenant (only tenants with one or more). */
  private readonly openByTenant = new Map<string, number>();

  constructor(opts: ProxyOptions = {}) {
    this.resolve = opts.resolve ?? systemResolve;
    this.loopbackPorts = new Set(opts.allowLoopbackPorts ?? []);
    this.own = opts.ownAddresses ?? interfaceAddresses;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 15_000;
    const perWorker = opts.maxConnectionsPerWorker ?? 512;
    this.limits = {
      maxConnectionsPerCommand: opts.maxConnectionsPerCommand ?? 64,
      maxConnectionsPerWorker: perWorker,
      maxConnectionsPerTenant: opts.maxConnectionsPerTenant ?? Math.max(1, Math.floor(perWorker / 2)),
      idleTimeoutMs: opts.idleTimeoutMs ?? 5 * 60_000,
      maxConnectionMs: opts.maxConnectionMs ?? 60 * 60_000,
      helloTimeoutMs: opts.helloTimeoutMs ?? 10_000,
    };
  }

  /** Client connections open now over every command (for tests and metrics). */
  get openConnections(): number {
    return this.open_;
  }

  /** Client connections open now over every command of `tenant` (for tests and metrics). */
  openConnectionsOf(tenant: string): number {
    return this.openByTenant.get(tenant) ?? 0;
  }

  /**
   * Close `sockets` (a connection's two ends) when no byte went either way for the idle time,
   * or when the connection is older than the maximum; `why` gets the reason first.
   */
  private bound(sockets: net.Socket[], why: (reason: string) => void): void {
    const end = (reason: string) => {
      why(reason);
      for (const s of sockets) s.destroy();
    };
    const idleS = this.limits.idleTimeoutMs / 1000;
    // The client's socket sees every byte of the connection (what it sends and what it gets).
    sockets[0]!.setTimeout(this.limits.idleTimeoutMs, () => end(`closed after ${idleS} s without traffic`));
    const total = setTimeout(() => end(`closed after ${this.limits.maxConnectionMs / 1000} s open`), this.limits.maxConnectionMs);
    total.unref();
    for (const s of sockets) s.once('close', () => clearTimeout(total));
  }

  /** Why an address is never connected to, or undefined. */
  private addressRefusal(address: string, port: number): string | undefined {
    const ip = parseIp(address);
    if (!ip) return 'not an IP address';
    const range = forbiddenRange(ip);
    if (range === 'loopback' && this.loopbackPorts.has(port)) return undefined;
    if (range) return `${range} address`;
    if (this.own().includes(canonicalIp(ip))) return "the worker's own address";
    return undefined;
  }

  /** The address to connect to for host:port under the policy, or why not. Resolves once. */
  async decide(policy: NetworkPolicy, host: string, port: number): Promise<Decision> {
    const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
    if (!Number.isInteger(port) || port < 1 || port > 65535) return { allowed: false, reason: `bad port ${port}` };
    if (!hostAllowed(policy, name))
      return { allowed: false, reason: policy.mode === 'allow' ? `${name} is not in the allow list (${policy.hosts.join(', ')})` : 'the network is off' };
    let addresses: string[];
    if (parseIp(name)) addresses = [name];
    else {
      try {
        addresses = await withTimeout(this.resolve(name), 10_000, `looking up ${name}`);
      } catch (err) {
        return { allowed: false, reason: `cannot resolve ${name}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
      }
    }
    let refused: { address: string; reason: string } | undefined;
    for (const address of addresses) {
      const why = this.addressRefusal(address, port);
      // Connect to the address checked, written so that no resolver reads it again (net.connect looks up what is no canonical IP).
      if (!why) return { allowed: true, address: canonicalIp(parseIp(address)!) };
      refused ??= { address, reason: why };
    }
    if (!refused) return { allowed: false, reason: `${name} has no address` };
    const what = refused.address === name ? `${name} is` : `${name} resolves to ${refused.address},`;
    return { allowed: false, address: refused.address, reason: `${what} a ${refused.reason}, which commands never reach` };
  }

  /**
   * The proxy of one command. It accepts connections once `listenFrom` got the sandbox's listening
   * socket; until then (and if that never comes) the command has no network. `tenant`: whose
   * conversation the command runs for (its connections count toward that tenant's cap).
   */
  open(policy: NetworkPolicy, record: (r: ConnectionRecord) => void, tenant = 'default'): EgressBridge {
    const sockets = new Set<net.Socket>();
    const refusals: string[] = [];
    let state: 'waiting' | 'listening' | 'closed' = 'waiting';
    const note = (r: ConnectionRecord) => {
      if (!r.allowed) refusals.push(`${r.host}:${r.port}: ${r.reason}`);
      try {
        record(r);
      } catch (err) {
        log.warn({ err }, 'egress proxy: recording a connection failed');
      }
    };
    // Over a cap, a connection is answered with a refusal (recorded with its target) and closed.
    const overCap = new WeakMap<net.Socket, string>();
    const server = http.createServer((req, res) => void this.forwardHttp(policy, req, res, note, overCap.get(req.socket)));
    server.on(
      'connect',
      (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => void this.tunnel(policy, req, socket, head, note, overCap.get(socket)),
    );
    // Connections over a cap wait only to be told why (a short while for their request head) and
    // count toward no cap: a command opening thousands at once must not fill the worker's share
    // and so shut every other conversation out. Past as many waiting refusals as the command's
    // cap, the rest are closed at once, unanswered, so their descriptors do not pile up either.
    // The tenant's cap keeps one tenant's many commands from filling the worker's cap together.
    const refusing = new Set<net.Socket>();
    server.on('connection', (s: net.Socket) => {
      let over: string | undefined;
      const ofTenant = this.openConnectionsOf(tenant);
      if (sockets.size >= this.limits.maxConnectionsPerCommand)
        over = `the command has ${sockets.size} connections open, the most one command may have (${this.limits.maxConnectionsPerCommand})`;
      else if (ofTenant >= this.limits.maxConnectionsPerTenant)
        over = `the commands of tenant ${tenant} have ${ofTenant} connections open, the most one tenant may have on this worker (${this.limits.maxConnectionsPerTenant})`;
      else if (this.open_ >= this.limits.maxConnectionsPerWorker)
        over = `the worker's commands have ${this.open_} connections open, the most the worker allows (${this.limits.maxConnectionsPerWorker})`;
      if (over !== undefined) {
        if (refusing.size >= this.limits.maxConnectionsPerCommand) return void s.destroy();
        overCap.set(s, over);
        refusing.add(s);
        s.setTimeout(Math.min(this.limits.helloTimeoutMs, 10_000), () => s.destroy());
        s.once('close', () => refusing.delete(s));
        return;
      }
      sockets.add(s);
      this.open_++;
      this.openByTenant.set(tenant, ofTenant + 1);
      s.once('close', () => {
        sockets.delete(s);
        this.open_--;
        const left = this.openConnectionsOf(tenant) - 1;
        if (left > 0) this.openByTenant.set(tenant, left);
        else this.openByTenant.delete(tenant);
      });
    });
    server.on('clientError', (_err, socket: net.Socket) => socket.destroy());
    server.on('error', (err) => log.warn({ err }, 'egress proxy: the listening socket from the sandbox failed'));
    return {
      listenFrom: (child) => {
        // Only the first message counts. The channel closes from the sandbox's side: the
        // forwarder disconnects and the shell closes fd 3 before the command runs (closing it
        // from here would keep the child's 'close' from ever coming, a quirk of node's IPC).
        child.on('message', (message: unknown, handle: unknown) => {
          if (state !== 'waiting' || message !== PROXY_LISTENER_MESSAGE || !isRawTcpHandle(handle)) {
            closeHandle(handle);
            return;
          }
          state = 'listening';
          server.listen(handle);
        });
      },
      refusals: () => [...refusals],
      close: () => {
        if (state === 'listening') server.close();
        state = 'closed';
        for (const s of [...sockets, ...refusing]) s.destroy();
      },
    };
  }

  private async tunnel(
    policy: NetworkPolicy,
    req: http.IncomingMessage,
    client: net.Socket,
    head: Buffer,
    note: (r: ConnectionRecord) => void,
    overCap?: string,
  ) {
    const started = Date.now();
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? '');
    client.on('error', () => undefined);
    if (!m) {
      client.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\r\nagentrun egress proxy: CONNECT needs host:port\n`);
      return;
    }
    const host = m[1]!.toLowerCase();
    const port = Number(m[2]);
    const base = { host, port, method: 'CONNECT' as const };
    const refuse = (reason: string, address?: string, answered = false) => {
      if (answered) client.destroy();
      else
        client.end(
          `HTTP/1.1 ${overCap ? 503 : 403} ${overCap ? 'Service Unavailable' : 'Forbidden'}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nagentrun egress proxy: ${reason}\n`,
        );
      note({ ...base, address, allowed: false, reason, bytesUp: 0, bytesDown: 0, durationMs: Date.now() - started });
    };
    if (overCap) return refuse(overCap);
    const d = await this.decide(policy, host, port);
    if (!d.allowed) return refuse(d.reason, d.address);
    // Under allow:, the name the client asks the server for must be the one checked: the tunnel is
    // answered first, its ClientHello read, and only then is the server connected to.
    const checkName = policy.mode === 'allow';
    if (checkName) {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      const hello = await this.readHello(client, head);
      const why = helloRefusal(hello.peek, host);
      if (why) return refuse(why, d.address, true);
      head = hello.bytes;
    }
    const upstream: net.Socket = net.connect({
      host: d.address,
      port,
      timeout: this.connectTimeoutMs,
      onread: relayTo(
        () => client,
        () => upstream,
      ),
    });
    let connected = false;
    let failure: string | undefined;
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(0);
      if (!checkName) client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      client.pipe(upstream);
      upstream.on('end', () => client.end());
      this.bound([client, upstream], (reason) => (failure ??= reason));
    });
    upstream.once('timeout', () => upstream.destroy(new Error('connect timed out')));
    upstream.on('error', (err) => {
      failure ??= `connect to ${d.address}:${port} failed: ${(err as NodeJS.ErrnoException).code ?? err.message}`;
      if (!connected && !checkName)
        client.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nagentrun egress proxy: ${failure}\n`);
      else client.destroy();
    });
    client.on('close', () => upstream.destroy());
    upstream.once('close', () => {
      client.destroy();
      note({
        ...base,
        address: d.address,
        allowed: true,
        ...(failure ? { reason: failure } : {}),
        bytesUp: upstream.bytesWritten,
        bytesDown: upstream.bytesRead,
        durationMs: Date.now() - started,
      });
    });
  }

  /** The tunnel's first bytes, up to a whole ClientHello (or what shows it is none), within the hello timeout. */
  private readHello(client: net.Socket, head: Buffer): Promise<{ peek: HelloPeek | { kind: 'timeout' | 'closed' }; bytes: Buffer }> {
    return new Promise((resolve) => {
      let bytes = head;
      let done = false;
      const finish = (peek: HelloPeek | { kind: 'timeout' | 'closed' }) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        client.off('data', onData);
        client.off('close', onClose);
        client.pause();
        resolve({ peek, bytes });
      };
      const check = () => {
        const peek = peekClientHello(bytes);
        if (peek.kind !== 'more') finish(peek);
      };
      const onData = (chunk: Buffer) => {
        bytes = Buffer.concat([bytes, chunk]);
        check();
      };
      const onClose = () => finish({ kind: 'closed' });
      const timer = setTimeout(() => finish({ kind: 'timeout' }), this.limits.helloTimeoutMs);
      client.on('data', onData);
      client.once('close', onClose);
      check();
    });
  }

  private async forwardHttp(policy: NetworkPolicy, req: http.IncomingMessage, res: http.ServerResponse, note: (r: ConnectionRecord) => void, overCap?: string) {
    const started = Date.now();
    // One request per connection: every answer says `Connection: close`, and a response relayed
    // raw must not be interleaved with another one.
    if (answeredSockets.has(req.socket)) {
      req.socket.destroy();
      return;
    }
    answeredSockets.add(req.socket);
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error('not http');
    } catch {
      res
        .writeHead(400, { 'content-type': 'text/plain', connection: 'close' })
        .end('agentrun egress proxy: expected an absolute http:// URL (use CONNECT for https)\n');
      return;
    }
    const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
    const port = Number(url.port || 80);
    const base = { host, port, method: 'HTTP' as const };
    const refuse = (reason: string, address?: string) => {
      res.writeHead(overCap ? 503 : 403, { 'content-type': 'text/plain', connection: 'close' }).end(`agentrun egress proxy: ${reason}\n`);
      note({ ...base, address, allowed: false, reason, bytesUp: 0, bytesDown: 0, durationMs: Date.now() - started });
    };
    if (overCap) return refuse(overCap);
    // The server sees the Host header, not the URL: it must name the target that is checked.
    const hosts = req.rawHeaders.filter((_, i) => i % 2 === 0 && req.rawHeaders[i]!.toLowerCase() === 'host').length;
    const hostHeader = req.headers.host;
    if (hosts > 1) return refuse('the request has more than one Host header');
    if (hostHeader !== undefined && !sameAuthority(hostHeader, host, port))
      return refuse(`the Host header (${hostHeader.slice(0, 100)}) differs from the request's target ${host}:${port}`);
    const d = await this.decide(policy, host, port);
    if (!d.allowed) return refuse(d.reason, d.address);
    // Sent raw, not through node's http client: its parser allocates a buffer per 64 KiB read and
    // re-frames the body, which cut a download to a fifth. The request is rebuilt from the parsed
    // one (hop-by-hop headers dropped, `Connection: close`), the response relayed as it comes.
    const client = req.socket;
    const lines = [`${req.method} ${url.pathname}${url.search} HTTP/1.1`];
    if (hostHeader === undefined) lines.push(`Host: ${url.host}`);
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
      if (!HOP_BY_HOP.test(`${req.rawHeaders[i]}:`)) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    lines.push('Connection: close', '', '');
    const chunked = /\bchunked\b/i.test(req.headers['transfer-encoding'] ?? '');
    let failure: string | undefined;
    let answered = false;
    const up: net.Socket = net.connect({
      host: d.address,
      port,
      timeout: this.connectTimeoutMs,
      onread: relayTo(
        () => {
          answered = true;
          return client;
        },
        () => up,
        closingResponseHeads(),
      ),
    });
    up.once('connect', () => {
      // The timeout is for connecting; a slow download is not cut off, an idle one is.
      up.setTimeout(0);
      this.bound([client, up], (reason) => (failure ??= reason));
      up.write(lines.join('\r\n'), 'latin1');
      // The parser took the body's framing off: chunks go back in chunks, a content-length body as it is.
      if (chunked) {
        req.on('data', (c: Buffer) => {
          if (!up.write(Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]))) {
            req.pause();
            up.once('drain', () => req.resume());
          }
        });
        req.on('end', () => up.write('0\r\n\r\n'));
      } else req.pipe(up, { end: false });
    });
    up.once('timeout', () => up.destroy(new Error('connect timed out')));
    up.on('error', (err) => {
      failure ??= `request to ${d.address}:${port} failed: ${(err as NodeJS.ErrnoException).code ?? err.message}`;
      if (!answered && !res.headersSent) res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' }).end(`agentrun egress proxy: ${failure}\n`);
      else client.destroy();
    });
    up.once('close', () => {
      if (answered) client.end();
      else if (!res.headersSent) {
        failure ??= `${d.address}:${port} closed the connection without a response`;
        res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' }).end(`agentrun egress proxy: ${failure}\n`);
      }
      note({
        ...base,
        address: d.address,
        allowed: true,
        ...(failure ? { reason: failure } : {}),
        bytesUp: up.bytesWritten,
        bytesDown: up.bytesRead,
        durationMs: Date.now() - started,
      });
    });
    res.on('close', () => up.destroy());
  }
}

/** Why a tunnel's first bytes are refused for CONNECT target `host` under `allow:`, or undefined. */
function helloRefusal(peek: HelloPeek | { kind: 'timeout' | 'closed' }, host: string): string | undefined {
  switch (peek.kind) {
    case 'tls': {
      const sni = peek.serverName?.toLowerCase().replace(/\.$/, '');
      // An address has no name to send (RFC 6066): the address itself was checked.
      if (sni === undefined) return parseIp(host) ? undefined : `the TLS ClientHello names no server (SNI); under --network allow: a tunnel must name ${host}`;
      return sni === host.replace(/\.$/, '') ? undefined : `the TLS server name ${sni} differs from the CONNECT target ${host}`;
    }
    case 'not-tls':
      return 'the tunnel does not start with a TLS ClientHello; under --network allow: a tunnel carries TLS naming its host (use plain http:// without a tunnel otherwise)';
    case 'bad':
      return `the TLS ClientHello cannot be read: ${peek.reason}`;
    case 'timeout':
      return 'no TLS ClientHello came through the tunnel in time';
    case 'closed':
      return 'the client closed the tunnel before its TLS ClientHello';
    default:
      return 'the tunnel could not be read';
  }
}

/** Whether a Host header names `host` and `port` (the port may be left out for 80). */
function sameAuthority(header: string, host: string, port: number): boolean {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(header.trim());
  if (!m) return false;
  const name = m[1]!
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  const want = host.replace(/\.$/, '');
  const same = name === want || (parseIp(name) !== undefined && parseIp(want) !== undefined && canonicalIp(parseIp(name)!) === canonicalIp(parseIp(want)!));
  return same && Number(m[2] ?? 80) === port;
}

/** A listening socket as it comes over an IPC channel untouched (node's TCP wrap), not yet a net.Server. */
function isRawTcpHandle(handle: unknown): handle is object {
  return typeof handle === 'object' && handle !== null && handle.constructor?.name === 'TCP';
}

/** Close whatever handle came with a message that is not taken. */
function closeHandle(handle: unknown): void {
  if (handle instanceof net.Socket) handle.destroy();
  else if (typeof (handle as { close?: unknown })?.close === 'function') (handle as { close(): void }).close();
}

export interface EgressBridge {
  /** Take the listening socket the sandbox sends over the IPC channel of `child` (started with one): a `message` with a raw handle. */
  listenFrom(child: Pick<EventEmitter, 'on'>): void;
  /** The connections refused so far, one line each (for the command's result). */
  refusals(): string[];
  close(): void;
}

/** The options the worker's proxy takes from its environment: the test-only loopback ports. */
function proxyOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ProxyOptions {
  const ports = (env.AGENTRUN_PROXY_ALLOW_LOOPBACK_PORTS ?? '')
    .split(',')
    .map((p) => Number(p.trim()))
    .filter((p) => Number.isInteger(p) && p > 0 && p < 65536);
  if (ports.length) log.warn({ ports }, 'AGENTRUN_PROXY_ALLOW_LOOPBACK_PORTS is set: the egress proxy lets commands reach these loopback ports (tests only)');
  return ports.length ? { allowLoopbackPorts: ports } : {};
}

let shared: EgressProxy | undefined;

/** The worker's egress proxy (created on first use). */
export function egressProxy(): EgressProxy {
  shared ??= new EgressProxy(proxyOptionsFromEnv());
  return shared;
}

/** Replace the worker's proxy (tests: a hostile resolver). */
export function setEgressProxy(p: EgressProxy | undefined): void {
  shared = p;
}
