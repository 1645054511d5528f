// bench/mcp: what an MCP tool costs beside a built-in one. Starts @modelcontextprotocol/server-everything
// (stdio, node from node_modules) through the worker's connection manager, then times N calls of
// mcp__everything__echo through the tool registry (validation + JSON-RPC round trip) beside N
// calls of the built-in read_file on a small file, measured in the same run.
// Goal: an MCP call adds under 5 ms (median) to a built-in call; the server starts in under 3 s.
// Run: npx tsx bench/mcp.ts [--calls N]
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpConnections } from '../src/extensions/mcp.js';
import { runInExtensionScope } from '../src/extensions/scope.js';
import { mcpServerSchema } from '../src/extensions/settings.js';
import { runTool } from '../src/tools/index.js';

const argCalls = process.argv.indexOf('--calls');
const CALLS = argCalls > 0 ? Number(process.argv[argCalls + 1]) : 300;
const server = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'agentrun-bench-mcp-'));
writeFileSync(path.join(dir, 'a.txt'), 'hello\n'.repeat(20));
const mcp = new McpConnections();
const t0 = performance.now();
const set = await mcp.toolsFor([
  { name: 'everything', origin: 'operator', config: mcpServerSchema.parse({ command: process.execPath, args: [server, 'stdio'] }) },
]);
const startMs = performance.now() - t0;
if (set.problems.length) throw new Error(set.problems.join('; '));

async function time(fn: () => Promise<unknown>): Promise<number[]> {
  const xs: number[] = [];
  for (let i = 0; i < 20; i++) await fn(); // warm
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  return xs;
}

const ctx = { workspace: dir };
const scope = { tools: set.tools, notes: [] };
const builtin = await runInExtensionScope(scope, () => time(() => runTool('read_file', { path: 'a.txt' }, ctx)));
const viaMcp = await runInExtensionScope(scope, () =>
  time(async () => {
    const r = await runTool('mcp__everything__echo', { message: 'ping' }, ctx);
    if (!r.ok) throw new Error(r.output);
  }),
);
await mcp.close();

const b = median(builtin);
const m = median(viaMcp);
console.log(`server start (initialize + tools/list): ${startMs.toFixed(0)} ms   goal < 3000 ms`);
console.log(`baseline read_file (built-in):          ${b.toFixed(3)} ms median of ${CALLS}`);
console.log(`mcp__everything__echo (stdio):          ${m.toFixed(3)} ms median of ${CALLS}`);
console.log(`added by MCP:                           ${(m - b).toFixed(3)} ms   goal < 5 ms   ratio ${(m / b).toFixed(1)}x`);
process.exit(0);
