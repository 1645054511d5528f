// The hook runner: real shell commands with the event on stdin, exit 2 blocks with stderr, JSON
// decisions, argument rewrites, matchers, a hook that never exits is killed, code hooks, and the
// sandbox wrapper for workspace hooks.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HookRunner, type ToolHookEvent } from '../../src/extensions/hooks.js';
import type { Settings } from '../../src/extensions/settings.js';
import { pidAlive } from '../../src/embedded/net.js';
import { tempDir } from '../helpers/temp.js';

const event = (tool: string, args: Record<string, unknown>): ToolHookEvent => ({ conversationId: 'c1', turn: 3, workspace: '/tmp', callId: '5.0', tool, args });
const pre = (command: string, matcher?: string, timeout?: number): Settings['hooks'] => ({
  PreToolUse: [{ matcher, hooks: [{ type: 'command', command, timeout }] }],
});

describe('shell hooks', () => {
  it('get the event as JSON on stdin; exit 2 blocks with stderr as the reason', async () => {
    const dir = await tempDir('agentrun-hook-');
    const runner = new HookRunner({ operator: pre(`cat > ${dir}/event.json; echo "no rm here" >&2; exit 2`, 'execute_command') });
    const d = await runner.beforeTool(event('execute_command', { command: 'rm -rf /' }));
    expect(d).toMatchObject({
      action: 'block',
      reason: 'no rm here',
      records: [{ source: 'operator', event: 'PreToolUse', outcome: 'block', detail: 'no rm here' }],
    });
    expect(JSON.parse(await readFile(join(dir, 'event.json'), 'utf8'))).toEqual({
      session_id: 'c1',
      conversation_id: 'c1',
      turn: 3,
      cwd: '/tmp',
      hook_event_name: 'PreToolUse',
      tool_name: 'execute_command',
      tool_input: { command: 'rm -rf /' },
    });
  });

  it('run only for matching tool names', async () => {
    const runner = new HookRunner({ operator: pre('exit 2', 'write_to_file|replace_in_file') });
    expect((await runner.beforeTool(event('read_file', { path: 'a' }))).action).toBe('allow');
    expect((await runner.beforeTool(event('replace_in_file', { path: 'a' }))).action).toBe('block');
    // Anchored: "write" does not match write_to_file.
    const partial = new HookRunner({ operator: pre('exit 2', 'write') });
    expect((await partial.beforeTool(event('write_to_file', {}))).action).toBe('allow');
  });

  it('exit 0 with a JSON decision: deny, or updatedInput rewriting the arguments', async () => {
    const deny = new HookRunner({
      operator: pre(
        `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"use the staging bucket"}}'`,
      ),
    });
    expect(await deny.beforeTool(event('mcp__s3__put', {}))).toMatchObject({ action: 'block', reason: 'use the staging bucket' });
    const rewrite = new HookRunner({
      operator: pre(`echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"npm test -- --ci"}}}'`),
    });
    expect(await rewrite.beforeTool(event('execute_command', { command: 'npm test' }))).toMatchObject({
      action: 'allow',
      args: { command: 'npm test -- --ci' },
      records: [{ outcome: 'rewrite' }],
    });
  });

  it('other exit codes are recorded errors that do not block', async () => {
    const runner = new HookRunner({ operator: pre('echo oops >&2; exit 1') });
    expect(await runner.beforeTool(event('read_file', { path: 'a' }))).toMatchObject({
      action: 'allow',
      args: { path: 'a' },
      records: [{ outcome: 'error', detail: 'exit 1: oops; ignored' }],
    });
  });

  it('a hook that never exits is killed at its timeout, with the processes it started', async () => {
    const dir = await tempDir('agentrun-hook-');
    const runner = new HookRunner({ operator: pre(`sleep 300 & echo $! > ${dir}/child.pid; wait`, undefined, 0.5) });
    const started = Date.now();
    const d = await runner.beforeTool(event('read_file', {}));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(d).toMatchObject({ action: 'allow', records: [{ outcome: 'timeout', detail: 'the hook did not finish within 0.5s and was killed; ignored' }] });
    const pid = Number(await readFile(join(dir, 'child.pid'), 'utf8'));
    await expect.poll(() => pidAlive(pid), { timeout: 3000 }).toBe(false);
  });

  it('PostToolUse exit 2 adds its reason to the output the model sees; Stop exit 2 asks to go on', async () => {
    const runner = new HookRunner({
      operator: {
        PostToolUse: [{ matcher: 'write_to_file', hooks: [{ type: 'command', command: 'echo "lint: missing semicolon" >&2; exit 2' }] }],
        Stop: [{ hooks: [{ type: 'command', command: 'echo "tests are failing" >&2; exit 2' }] }],
      },
    });
    const after = await runner.afterTool(event('write_to_file', { path: 'a.ts' }), { ok: true, output: 'wrote a.ts' });
    expect(after.output).toBe('wrote a.ts\n\nPostToolUse hook: lint: missing semicolon');
    expect(await runner.stop({ conversationId: 'c1', turn: 4, workspace: '/tmp', stopHookActive: false })).toMatchObject({
      action: 'continue',
      reason: 'tests are failing',
    });
  });

  it('workspace hooks need the sandbox wrapper (or trust); operator hooks run as the worker', async () => {
    const refused = new HookRunner({ workspace: pre('exit 2'), workspacePath: '/tmp' });
    const d = await refused.beforeTool(event('read_file', {}));
    expect(d).toMatchObject({ action: 'allow', records: [{ source: 'workspace', outcome: 'error' }] });
    expect(d.records[0]!.detail).toMatch(/has no command sandbox/);
    const seen: string[] = [];
    const wrapped = new HookRunner({
      workspace: pre('exit 2'),
      workspacePath: '/tmp',
      wrapCommand: (spec, ctx) => {
        seen.push(
          `${ctx.origin} ${spec.command} ${spec.args.join(' ')} env=${Object.keys(spec.env ?? {})
            .sort()
            .join(',')}`,
        );
        return spec;
      },
    });
    expect((await wrapped.beforeTool(event('read_file', {}))).action).toBe('block');
    // The workspace's hook gets nothing of the worker's environment: the sandbox sets its PATH and home.
    expect(seen).toEqual(['workspace /bin/sh -c exit 2 env=AGENTRUN_PROJECT_DIR,CLAUDE_PROJECT_DIR']);
  });
});

describe('code hooks', () => {
  it('beforeTool blocks or rewrites before shell hooks see the call; a throw blocks', async () => {
    const dir = await tempDir('agentrun-hook-');
    const runner = new HookRunner({
      code: { beforeTool: ({ args }) => (args.path === 'secret' ? { block: 'not that file' } : { args: { ...args, path: `src/${String(args.path)}` } }) },
      operator: pre(`cat > ${dir}/seen.json`),
    });
    expect(await runner.beforeTool(event('read_file', { path: 'secret' }))).toMatchObject({ action: 'block', reason: 'not that file' });
    const d = await runner.beforeTool(event('read_file', { path: 'a.ts' }));
    expect(d).toMatchObject({ action: 'allow', args: { path: 'src/a.ts' } });
    expect(JSON.parse(await readFile(join(dir, 'seen.json'), 'utf8')).tool_input).toEqual({ path: 'src/a.ts' });
    const throwing = new HookRunner({
      code: {
        beforeTool: () => {
          throw new Error('policy service down');
        },
      },
    });
    expect(await throwing.beforeTool(event('read_file', {}))).toMatchObject({ action: 'block', reason: 'the beforeTool hook failed: policy service down' });
  });

  it('afterTool replaces the output', async () => {
    const runner = new HookRunner({ code: { afterTool: ({ result }) => ({ output: result.output.replace(/token=\w+/, 'token=***') }) } });
    expect((await runner.afterTool(event('execute_command', {}), { ok: true, output: 'token=abc123' })).output).toBe('token=***');
  });
});
