// Real MCP servers for tests: the npm servers run with node from node_modules (no npx download),
// and a Streamable HTTP server made with the SDK on a loopback port.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const modules = fileURLToPath(new URL('../../node_modules/', import.meta.url));

export function filesystemServer(dir: string) {
  return { command: process.execPath, args: [`${modules}@modelcontextprotocol/server-filesystem/dist/index.js`, dir], env: {} };
}

export function everythingServer() {
  return { command: process.execPath, args: [`${modules}@modelcontextprotocol/server-everything/dist/index.js`, 'stdio'], env: {} };
}

/** A Streamable HTTP MCP server (stateless) with `add` (read-only), `note` and `slow_note` (have effects). */
export async function startHttpMcpServer(
  opts: { token?: string } = {},
): Promise<{ url: string; notes: string[]; started: string[]; release(): void; requests: number; close(): Promise<void> }> {
  const notes: string[] = [];
  const started: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const state = { requests: 0 };
  const build = () => {
    const server = new McpServer({ name: 'test-http', version: '1.0.0' });
    server.registerTool(
      'add',
      { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
      async ({ a, b }) => ({ content: [{ type: 'text', text: `sum=${a + b}` }] }),
    );
    server.registerTool('note', { description: 'Remember a note', inputSchema: { text: z.string() } }, async ({ text }) => {
      notes.push(text);
      return { content: [{ type: 'text', text: `noted (${notes.length})` }] };
    });
    // Has an effect and takes until the test releases it: for crashes in the middle of a call.
    server.registerTool('slow_note', { description: 'Remember a note, slowly', inputSchema: { text: z.string() } }, async ({ text }) => {
      started.push(text);
      await gate;
      notes.push(text);
      return { content: [{ type: 'text', text: `noted slowly (${notes.length})` }] };
    });
    return server;
  };
  const http: Server = createServer(async (req, res) => {
    state.requests++;
    if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) {
      res.writeHead(401).end('unauthorized');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString()) as unknown) : undefined;
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    notes,
    started,
    release,
    get requests() {
      return state.requests;
    },
    close: () => new Promise((r) => http.close(() => r())),
  };
}
