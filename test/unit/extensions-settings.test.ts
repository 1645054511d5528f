// settings.json: the schema, and one clear error naming the file and the key.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings, loadSettingsFile, operatorSettingsPath, parseSettings, SettingsError } from '../../src/extensions/settings.js';
import { WorkerExtensions } from '../../src/extensions/worker.js';
import { readRepositoryExtensions, repositorySettings } from '../../src/extensions/repository.js';
import { tempDir } from '../helpers/temp.js';

async function file(content: string): Promise<string> {
  const dir = await tempDir('agentrun-settings-');
  await writeFile(join(dir, 'settings.json'), content);
  return join(dir, 'settings.json');
}

describe('settings.json', () => {
  it('reads Claude-Code-shaped mcpServers and hooks', async () => {
    const f = await file(
      JSON.stringify({
        mcpServers: {
          fs: { command: 'npx', args: ['-y', 'x'] },
          web: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
        },
        hooks: {
          PreToolUse: [{ matcher: 'execute_command|write_to_file', hooks: [{ type: 'command', command: 'check.sh', timeout: 5 }] }],
          Stop: [{ hooks: [{ type: 'command', command: 'lint.sh' }] }],
        },
      }),
    );
    const s = await loadSettingsFile(f);
    expect(s.mcpServers.fs).toEqual({ command: 'npx', args: ['-y', 'x'], env: {} });
    expect(s.mcpServers.web).toMatchObject({ url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } });
    expect(s.hooks.PreToolUse?.[0]?.hooks[0]).toEqual({ type: 'command', command: 'check.sh', timeout: 5 });
  });

  it('a missing file is empty settings', async () => {
    const dir = await tempDir('agentrun-settings-');
    expect(await loadSettings({ home: dir, workspace: dir })).toEqual({ operator: { mcpServers: {}, hooks: {} }, workspace: { mcpServers: {}, hooks: {} } });
  });

  it.each([
    ['{ "mcpServers": ', /settings\.json: not valid JSON: /],
    ['{ "mcpServer": {} }', /settings\.json: unknown key "mcpServer"; fix the file or remove it$/],
    ['{ "mcpServers": { "fs": { "args": ["x"] } } }', /settings\.json: mcpServers\.fs: an MCP server needs either "command" \(stdio\) or "url"/],
    ['{ "mcpServers": { "fs": { "url": "not a url" } } }', /mcpServers\.fs\.url: Invalid URL/],
    ['{ "mcpServers": { "my server": { "command": "x" } } }', /mcpServers\.my server: bad name: use letters, digits/],
    [
      '{ "hooks": { "PreToolUse": [{ "matcher": "/(/", "hooks": [{ "type": "command", "command": "x" }] }] } }',
      /hooks\.PreToolUse\.0\.matcher: not a valid regular expression/,
    ],
    [
      '{ "hooks": { "PreToolUse": [{ "matcher": "read_.*", "hooks": [{ "type": "command", "command": "x" }] }] } }',
      /hooks\.PreToolUse\.0\.matcher: "read_\.\*" is not a tool name, "\*", a glob .* write a regular expression as \/…\//,
    ],
    ['{ "hooks": { "BeforeEverything": [] } }', /hooks: unknown hook event "BeforeEverything" \(known: PreToolUse, PostToolUse, Stop, SubagentStop/],
    ['{ "hooks": { "Stop": [{ "hooks": [{ "type": "command", "command": "x", "timeout": -1 }] }] } }', /hooks\.Stop\.0\.hooks\.0\.timeout: /],
  ])('invalid: %s', async (content, message) => {
    const f = await file(content);
    const err = await loadSettingsFile(f).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SettingsError);
    expect((err as Error).message.startsWith(f)).toBe(true);
    expect((err as Error).message).toMatch(message);
  });

  it('MCP servers given in code are checked the same way', () => {
    expect(() => parseSettings({ mcpServers: { x: { command: '' } } }, 'here')).toThrow(/^here: mcpServers\.x\.command: Too small/);
    expect(() => new WorkerExtensions({ mcpServers: { x: { url: 'nope' } as never } })).toThrow(
      /^createWorker\(\{ mcpServers \}\): mcpServers\.x\.url: Invalid URL/,
    );
  });

  it('an invalid workspace file (as read at the start) is told to the model and its servers and hooks are left out', async () => {
    const ws = await tempDir('agentrun-ws-');
    await mkdir(join(ws, '.agentrun'));
    await writeFile(join(ws, '.agentrun/settings.json'), '{ "hooks": 3 }');
    const snapshot = await readRepositoryExtensions(ws, true);
    expect(snapshot.found).toEqual(['hooks']);
    let error: string | undefined;
    try {
      repositorySettings(snapshot);
    } catch (err) {
      error = (err as Error).message;
    }
    const ext = new WorkerExtensions({});
    const scope = await ext.scopeFor(ws, { conversationId: 'c1', readOnly: false, repository: { error } });
    expect(scope.notes).toEqual([
      `The settings file .agentrun/settings.json: hooks: Invalid input: expected record, received number; its MCP servers and hooks are not in use.`,
    ]);
    // Without what was kept at the start, nothing of the workspace's file is read.
    expect((await ext.scopeFor(ws)).notes).toEqual([]);
    await ext.close();
  });

  it("the operator's settings file is read again when it changes, and a bad one is told each time", async () => {
    const home = await tempDir('agentrun-home-');
    const file = operatorSettingsPath(home);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, '{ "hooks": 3 }');
    const ext = new WorkerExtensions({ home });
    expect((await ext.scopeFor(undefined)).notes).toHaveLength(1);
    expect((await ext.scopeFor(undefined)).notes).toHaveLength(1);
    await writeFile(file, '{}');
    expect((await ext.scopeFor(undefined)).notes).toEqual([]);
    expect((await ext.scopeFor(undefined)).notes).toEqual([]);
    await writeFile(file, '{ "hooks": 4 }');
    expect((await ext.scopeFor(undefined)).notes).toHaveLength(1);
    await ext.close();
  });
});
