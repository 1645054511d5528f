// Small process and port helpers shared by the embedded servers.
import net from 'node:net';

/** A port the OS says is free right now on 127.0.0.1 (0 asks for any). Throws if `port` is taken. */
export function listenProbe(port: number, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ port, host, exclusive: true }, () => {
      const addr = srv.address();
      const got = typeof addr === 'object' && addr ? addr.port : port;
      srv.close(() => resolve(got));
    });
  });
}

export async function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return listenProbe(port, host).then(
    () => true,
    () => false,
  );
}

/** The first free port among the preferences, else one the OS picks. */
export async function pickPort(...preferred: (number | undefined)[]): Promise<number> {
  for (const p of preferred) if (p && (await isPortFree(p))) return p;
  return listenProbe(0);
}

/** Does something accept TCP connections at host:port (within timeoutMs)? */
export function portAnswers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

export function pidAlive(pid: number | undefined): boolean {
  if (!pid || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!pidAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !pidAlive(pid);
}

/** host and port of `host:port` or `[v6]:port`. */
export function splitHostPort(address: string, defaultPort: number): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(address) ?? /^([^:]+)(?::(\d+))?$/.exec(address);
  if (!m) return { host: address, port: defaultPort };
  return { host: m[1]!, port: m[2] ? Number(m[2]) : defaultPort };
}
