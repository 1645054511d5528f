// Pieces the multi-process benches share: waiting for a child's message, and an HTTP proxy in
// front of the scripted model server that sees every SSE chunk as it leaves for the client.
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';

/** The next message of `type` from a forked bench child; rejects if the child ends first. */
export function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { type: string }) => {
      if (m.type !== type) return;
      cleanup();
      resolve(m as T);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`bench child ended (${code}) before sending ${type}`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('close', onExit);
    };
    child.on('message', onMessage);
    // 'close', not 'exit': a message sent just before the child ends may arrive after 'exit'.
    child.on('close', onExit);
  });
}

/**
 * A proxy to `upstream` (the scripted server's URL): for each request, `watch(req)` returns what
 * sees each chunk of the answer just before it is written to the client. Returns its base URL.
 */
export async function sseProxy(upstream: string, watch: (req: http.IncomingMessage) => (chunk: string) => void): Promise<{ url: string; close(): void }> {
  const up = new URL(upstream);
  const proxy = http.createServer((req, res) => {
    const onChunk = watch(req);
    const forward = http.request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers }, (ures) => {
      res.writeHead(ures.statusCode ?? 502, ures.headers);
      ures.setEncoding('utf8');
      ures.on('data', (chunk: string) => {
        onChunk(chunk);
        res.write(chunk);
      });
      ures.on('end', () => res.end());
      ures.on('error', () => res.destroy());
    });
    forward.on('error', () => res.destroy());
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}/v1`, close: () => proxy.close() };
}
