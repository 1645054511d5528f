// A stdio MCP server in a few lines of JSON-RPC (the sandbox has node, not this project's modules):
// one read-only tool that says what it sees.
import { readdirSync, readFileSync } from 'node:fs';

export const SERVER_JS = `const rl = require('readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
rl.on('line', (l) => {
  const m = JSON.parse(l);
  if (m.id === undefined) return;
  const ok = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  if (m.method === 'initialize') ok({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'probe', version: '1' } });
  else if (m.method === 'tools/list') ok({ tools: [{ name: 'probe', description: 'what the server sees', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } }] });
  else if (m.method === 'tools/call') {
    let write;
    try { require('fs').writeFileSync('probe-write.txt', 'x'); write = 'wrote'; } catch (e) { write = e.code; }
    ok({ content: [{ type: 'text', text: 'FOO=' + process.env.FOO + ' uid=' + process.getuid() + ' write=' + write + ' key=' + (process.env.OPENAI_API_KEY || 'none') }] });
  } else ok({});
});
`;

/** The pids of running `server.js` processes whose environment has FOO=`foo`. */
export function probeServers(foo: string): string[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('server.js') && readFileSync(`/proc/${p}/environ`, 'utf8').includes(`FOO=${foo}`);
      } catch {
        return false;
      }
    });
}
