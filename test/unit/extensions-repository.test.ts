// A repository's .agentrun/ read once at the start: regular files only (no link, no FIFO, capped),
// everything it defines named for the notice, nothing of it kept when the worker's switch is off.
import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  parseRepositoryExtensions,
  readRepositoryExtensions,
  REPOSITORY_FILE_CAP,
  repositoryExtensionsFromEnv,
  repositoryNotice,
  repositorySettings,
} from '../../src/extensions/repository.js';
import { tempDir } from '../helpers/temp.js';

const SETTINGS = {
  hooks: { PreToolUse: [{ matcher: 'execute_command', hooks: [{ type: 'command', command: 'touch marker' }] }] },
  mcpServers: { docs: { command: 'node', args: ['server.js'] } },
  setup: 'npm ci',
  verify: 'npm test',
};

async function repo(settings: unknown = SETTINGS): Promise<string> {
  const ws = await tempDir('agentrun-ws-');
  await mkdir(join(ws, '.agentrun/agents'), { recursive: true });
  await writeFile(join(ws, '.agentrun/settings.json'), JSON.stringify(settings));
  await writeFile(join(ws, '.agentrun/agents/reviewer.md'), '---\ndescription: reviews\n---\nReview.');
  return ws;
}

describe('repository extensions', () => {
  it('the switch is off or on; anything else is an error naming where it came from', () => {
    expect(parseRepositoryExtensions(' ON ', '--repository-extensions')).toBe(true);
    expect(parseRepositoryExtensions('off', '--repository-extensions')).toBe(false);
    expect(() => parseRepositoryExtensions('yes', '--repository-extensions')).toThrow('--repository-extensions must be off or on, got "yes"');
    expect(repositoryExtensionsFromEnv({})).toBe(false);
    expect(() => repositoryExtensionsFromEnv({ AGENTRUN_REPOSITORY_EXTENSIONS: '1' })).toThrow(/^AGENTRUN_REPOSITORY_EXTENSIONS must be off or on/);
  });

  it('off: what the repository defines is named, none of it kept', async () => {
    const snapshot = await readRepositoryExtensions(await repo(), false);
    expect(snapshot).toEqual({ enabled: false, found: ['hooks (PreToolUse)', 'MCP servers (docs)', 'setup', 'verify', 'agents (reviewer)'] });
    expect(repositoryNotice(snapshot)).toMatch(/^repository extensions are off on this worker: ignored hooks \(PreToolUse\), MCP servers \(docs\), setup/);
    expect(repositorySettings(snapshot)).toBeUndefined();
  });

  it('on: the settings and agent files are kept as read', async () => {
    const snapshot = await readRepositoryExtensions(await repo(), true);
    expect(snapshot.agents).toEqual([{ name: 'reviewer', text: '---\ndescription: reviews\n---\nReview.' }]);
    expect(repositorySettings(snapshot)?.setup).toBe('npm ci');
    expect(repositoryNotice(snapshot)).toMatch(/read once, from the starting tree.*changes to \.agentrun\/ made during the run have no effect/);
  });

  it('a link, a FIFO or a huge file is refused without blocking; a linked .agentrun is not followed', async () => {
    const outside = await repo();
    const linked = await tempDir('agentrun-ws-');
    await mkdir(join(linked, '.agentrun'));
    await symlink(join(outside, '.agentrun/settings.json'), join(linked, '.agentrun/settings.json'));
    const a = await readRepositoryExtensions(linked, true);
    expect(() => repositorySettings(a)).toThrow(/\.agentrun\/settings\.json is a symbolic link/);

    const fifo = await tempDir('agentrun-ws-');
    await mkdir(join(fifo, '.agentrun'));
    execFileSync('mkfifo', [join(fifo, '.agentrun/settings.json')]);
    const b = await readRepositoryExtensions(fifo, true);
    expect(() => repositorySettings(b)).toThrow(/is not a regular file/);

    const huge = await tempDir('agentrun-ws-');
    await mkdir(join(huge, '.agentrun'));
    await writeFile(join(huge, '.agentrun/settings.json'), ' '.repeat(REPOSITORY_FILE_CAP + 1));
    const c = await readRepositoryExtensions(huge, true);
    expect(() => repositorySettings(c)).toThrow(/larger than 256 KiB/);

    const dirLink = await tempDir('agentrun-ws-');
    await symlink(join(outside, '.agentrun'), join(dirLink, '.agentrun'));
    expect(await readRepositoryExtensions(dirLink, true)).toEqual({ enabled: true, found: [] });
  });
});
