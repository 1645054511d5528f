// MCP servers through the worker's connection manager: the npm servers over stdio, a Streamable
// HTTP server, and servers that fail, hang, or come from an untrusted workspace.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpConnections, type McpServerEntry } from '../../src/extensions/mcp.js';
import { runInExtensionScope } from '../../src/extensions/scope.js';
import { mcpServerSchema } from '../../src/extensions/settings.js';
import { renderXmlToolDocs, runTool, toOpenAITools, validateToolArgs } from '../../src/tools/index.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import { everythingServer, filesystemServer, startHttpMcpServer } from '../helpers/mcp.js';
import { pidAlive } from '../../src/embedded/net.js';
import { tempDir } from '../helpers/temp.js';

const entry = (name: string, config: unknown, origin: 'operator' | 'workspace' = 'operator', workspace?: string): McpServerEntry => ({
  name,
  config: mcpServerSchema.parse(config),
  origin,
  workspace,
});

let dir: string;
let http: Awaited<ReturnType<typeof startHttpMcpServer>>;
let mcp: McpConnections;
let tools: ToolDefinition[];

beforeAll(async () => {
  dir = await tempDir('agentrun-mcp-');
  await writeFile(join(dir, 'hello.txt'), 'hello from the filesystem server\n');
  http = await startHttpMcpServer({ token: 's3cret' });
  mcp = new McpConnections({ startTimeoutSec: 30 });
  const set = await mcp.toolsFor([
    entry('fs', filesystemServer(dir)),
    entry('everything', everythingServer()),
    entry('web', { url: http.url, headers: { authorization: 'Bearer s3cret' } }),
  ]);
  expect(set.problems).toEqual([]);
  tools = set.tools;
});

afterAll(async () => {
  await mcp?.close();
  await http?.close();
});

const inScope = <T>(fn: () => Promise<T>) => runInExtensionScope({ tools, notes: [] }, fn);
const tool = (name: string) => tools.find((t) => t.name === name)!;

describe('MCP servers', () => {
  it('lists the tools of both npm servers and the HTTP server as mcp__<server>__<tool>', () => {
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'mcp__fs__read_text_file',
        'mcp__fs__write_file',
        'mcp__everything__echo',
        'mcp__everything__get-sum',
        'mcp__web__add',
        'mcp__web__note',
      ]),
    );
    // Read-only only when the server says so.
    expect(tool('mcp__fs__read_text_file').kind).toBe('read');
    expect(tool('mcp__fs__write_file')).toMatchObject({ kind: 'network', repeatable: true }); // annotated idempotent
    expect(tool('mcp__web__add').kind).toBe('read');
    expect(tool('mcp__web__note')).toMatchObject({ kind: 'network', repeatable: false });
  });

  it('renders their schemas for the XML prompt and as native function schemas', async () => {
    const docs = await inScope(async () => renderXmlToolDocs());
    expect(docs).toContain('## mcp__everything__get-sum');
    expect(docs).toMatch(/- a: \(required\) First number/);
    expect(docs).toContain('<mcp__everything__get-sum>\n<a>number</a>\n<b>number</b>\n</mcp__everything__get-sum>');
    const native = await inScope(async () => toOpenAITools());
    const sum = native.find((t) => t.function.name === 'mcp__everything__get-sum')!;
    expect(sum.function.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] });
    expect(sum.function.parameters).not.toHaveProperty('$schema');
  });

  it('calls stdio tools with XML string arguments and native JSON arguments', async () => {
    const ctx = { workspace: dir };
    const read = await inScope(() => runTool('mcp__fs__read_text_file', { path: join(dir, 'hello.txt') }, ctx));
    expect(read).toMatchObject({ ok: true, output: 'hello from the filesystem server\n' });
    const sumXml = await inScope(() => runTool('mcp__everything__get-sum', { a: '2', b: ' 40 ' }, ctx));
    expect(sumXml.ok).toBe(true);
    expect(sumXml.output).toContain('42');
    const sumNative = await inScope(() => runTool('mcp__everything__get-sum', { a: 1.5, b: 1 }, ctx));
    expect(sumNative.output).toContain('2.5');
    const write = await inScope(() => runTool('mcp__fs__write_file', { path: join(dir, 'out.txt'), content: 'written over MCP' }, ctx));
    expect(write.ok).toBe(true);
    expect(await readFile(join(dir, 'out.txt'), 'utf8')).toBe('written over MCP');
  });

  it('reports bad arguments and server-side errors as results the model sees', async () => {
    const ctx = { workspace: dir };
    const v = await inScope(async () => validateToolArgs('mcp__everything__get-sum', { a: 'two', b: '1' }));
    expect(v.ok).toBe(false);
    expect(!v.ok && v.error).toMatch(/Parameter "a"/);
    const outside = await inScope(() => runTool('mcp__fs__read_text_file', { path: '/etc/passwd' }, ctx));
    expect(outside.ok).toBe(false);
    expect(outside.output).toMatch(/^Error: .*(denied|outside)/i);
  });

  it('calls the Streamable HTTP server with its headers', async () => {
    const ctx = { workspace: dir };
    const r = await inScope(() => runTool('mcp__web__add', { a: '20', b: '22' }, ctx));
    expect(r).toMatchObject({ ok: true, output: 'sum=42' });
    await inScope(() => runTool('mcp__web__note', { text: 'remember me' }, ctx));
    expect(http.notes).toEqual(['remember me']);
  });

  it('reconnects a stdio server after its connection dropped', async () => {
    const m = new McpConnections();
    const first = await m.toolsFor([entry('every', everythingServer())]);
    const echo = first.tools.find((t) => t.name === 'mcp__every__echo')!;
    // Drop the connection under the manager's feet: the next call reopens it.
    const conn = (m as unknown as { connections: Map<string, { client?: { close(): Promise<void> } }> }).connections.values().next().value!;
    await conn.client!.close();
    expect(m.status()[0]!.connected).toBe(false);
    const r = await echo.run!({ message: 'again' }, { workspace: dir });
    expect(r).toMatchObject({ ok: true });
    expect(r.output).toContain('again');
    expect(m.status()[0]!.connected).toBe(true);
    await m.close();
  });
});

describe('MCP servers that do not work', () => {
  it('a server that exits at start gives a clear error with its stderr; the others still work', async () => {
    const m = new McpConnections();
    const set = await m.toolsFor([
      entry('broken', { command: process.execPath, args: ['-e', 'console.error("missing API key FOO"); process.exit(3)'] }),
      entry('every', everythingServer()),
    ]);
    expect(set.tools.some((t) => t.name === 'mcp__every__echo')).toBe(true);
    expect(set.problems).toHaveLength(1);
    expect(set.problems[0]).toMatch(/^MCP server "broken" \(operator settings\) is not available: .*missing API key FOO/);
    await m.close();
  });

  it('a command that does not exist is named as such', async () => {
    const m = new McpConnections();
    const set = await m.toolsFor([entry('nope', { command: '/nonexistent/mcp-server' })]);
    expect(set.problems[0]).toMatch(/"nope".*(not found|ENOENT)/);
    await m.close();
  });

  it('a server that hangs at start is given up after its timeout, and its process is killed', async () => {
    const m = new McpConnections();
    const started = Date.now();
    const pidFile = join(dir, 'hang.pid');
    const set = await m.toolsFor([
      entry('hang', {
        command: process.execPath,
        args: ['-e', `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`],
        timeout: 1.5,
      }),
    ]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(set.tools).toEqual([]);
    expect(set.problems[0]).toMatch(/"hang".*did not answer within 1.5s of starting/);
    const pid = Number(await readFile(pidFile, 'utf8'));
    await expect.poll(() => pidAlive(pid), { timeout: 5000 }).toBe(false);
    // Not retried on every activity: the failure is remembered for a while.
    const again = Date.now();
    await m.toolsFor([
      entry('hang', {
        command: process.execPath,
        args: ['-e', `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`],
        timeout: 1.5,
      }),
    ]);
    expect(Date.now() - again).toBeLessThan(500);
    await m.close();
  });

  it('an HTTP server that refuses the credentials; ${VAR} in the operator settings reads the environment', async () => {
    const m = new McpConnections({ startTimeoutSec: 5 });
    const set = await m.toolsFor([entry('web', { url: http.url })]);
    expect(set.problems[0]).toMatch(/"web".*not available/);
    process.env.AGENTRUN_TEST_MCP_TOKEN = 's3cret';
    const withEnv = await m.toolsFor([entry('web2', { url: http.url, headers: { authorization: 'Bearer ${AGENTRUN_TEST_MCP_TOKEN}' } })]);
    expect(withEnv.problems).toEqual([]);
    expect(withEnv.tools.map((t) => t.name)).toContain('mcp__web2__add');
    // Not in a workspace's file: that would hand the worker's environment to the repository.
    const fromRepo = await m.toolsFor([entry('web3', { url: http.url, headers: { authorization: 'Bearer ${AGENTRUN_TEST_MCP_TOKEN}' } }, 'workspace', dir)]);
    expect(fromRepo.problems[0]).toMatch(/"web3".*would connect from the worker's network/);
    await m.close();
    const trusted = new McpConnections({ trustWorkspaceCommands: true });
    const literal = await trusted.toolsFor([
      entry('web4', { url: http.url, headers: { authorization: 'Bearer ${AGENTRUN_TEST_MCP_TOKEN}' } }, 'workspace', dir),
    ]);
    expect(literal.problems[0]).toMatch(/"web4".*not available/);
    await trusted.close();
    delete process.env.AGENTRUN_TEST_MCP_TOKEN;
  });

  it('a stdio server from workspace settings does not start without a sandbox or trust', async () => {
    const m = new McpConnections();
    const set = await m.toolsFor([entry('repo', everythingServer(), 'workspace', dir)]);
    expect(set.problems[0]).toMatch(/comes from the workspace's .agentrun\/settings.json and this worker has no command sandbox/);
    await m.close();
    // With a wrapper (the sandbox's hook), the command goes through it.
    const wrapped: string[] = [];
    const m2 = new McpConnections({ wrapCommand: (spec, ctx) => (wrapped.push(`${ctx.origin}:${ctx.what}`), spec) });
    const set2 = await m2.toolsFor([entry('repo', everythingServer(), 'workspace', dir)]);
    expect(set2.problems).toEqual([]);
    expect(wrapped).toEqual(['workspace:MCP server "repo"']);
    await m2.close();
  });

  it('tools with effects ask a person unless the operator trusts the server; a workspace cannot trust its own', async () => {
    // Read-only by the server's annotation: no approval.
    expect(tool('mcp__web__add').approvalReason).toBeUndefined();
    expect(tool('mcp__fs__read_text_file').approvalReason).toBeUndefined();
    // Not marked read-only: asked under the default policy, with the way out named.
    expect(tool('mcp__web__note').approvalReason).toMatch(
      /^mcp__web__note is an MCP tool that may have effects: server "web" does not mark "note" read-only \(set "trust": true/,
    );
    expect(tool('mcp__fs__write_file').approvalReason).toMatch(/may have effects/);
    const m = new McpConnections({ trustWorkspaceCommands: true });
    const web = { url: http.url, headers: { authorization: 'Bearer s3cret' }, trust: true };
    const set = await m.toolsFor([
      entry('ops', web),
      entry('repo', everythingServer(), 'workspace', dir),
      entry('repo2', { ...everythingServer(), trust: true }, 'workspace', dir),
    ]);
    expect(set.problems).toEqual([]);
    const find = (name: string) => set.tools.find((t) => t.name === name)!;
    expect(find('mcp__ops__note').approvalReason).toBeUndefined();
    const effectful = set.tools.filter((t) => t.name.startsWith('mcp__repo2__') && t.kind !== 'read');
    expect(effectful.length).toBeGreaterThan(0);
    expect(effectful.every((t) => t.approvalReason !== undefined)).toBe(true);
    await m.close();
  });

  it("a workspace's servers are closed after they go unused; the operator's stay", async () => {
    const m = new McpConnections({ trustWorkspaceCommands: true, idleCloseSec: 0.3 });
    await m.toolsFor([entry('repo', everythingServer(), 'workspace', dir), entry('ops', everythingServer())]);
    expect(m.status().map((s) => [s.name, s.connected])).toEqual([
      ['repo', true],
      ['ops', true],
    ]);
    await new Promise((r) => setTimeout(r, 500));
    await m.toolsFor([entry('ops', everythingServer())]);
    expect(m.status().map((s) => [s.name, s.connected])).toEqual([['ops', true]]);
    await m.close();
  });
});
