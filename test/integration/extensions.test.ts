// Extensions in real conversations (real Temporal, Postgres, git, scripted model over HTTP): the
// scripted model calls an MCP tool and a custom tool in both formats; a workspace shell hook
// blocks execute_command with exit 2 and the model sees the reason; a code hook rewrites
// arguments; a throwing custom tool is an error result; a broken server is told to the model.
import { conversationResult } from '../../src/client/outcome.js';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/extensions/tools.js';
import { WorkerExtensions } from '../../src/extensions/worker.js';
import { serveScriptedFile } from '../../src/model/scripted/index.js';
import { decideApprovalUpdate } from '../../workflows/api.js';
import { createHarness, scriptModel, tempRepo, type Harness } from '../helpers/harness.js';
import { filesystemServer, startHttpMcpServer } from '../helpers/mcp.js';

let h: Harness;
let ext: WorkerExtensions;
let http: Awaited<ReturnType<typeof startHttpMcpServer>>;
const rewrites: string[] = [];
const observed: Array<{ conversationId: string; hook: string; turn?: number; detail?: string }> = [];

const wordCount = defineTool({
  name: 'word_count',
  description: 'Count the words of a text.',
  schema: z.object({ text: z.string().describe('The text to count'), min_length: z.number().int().optional().describe('Only count words this long') }),
  kind: 'read',
  run: ({ text, min_length }) => `${text.split(/\s+/).filter((w) => w.length >= (min_length ?? 1)).length} words`,
});

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy the service.',
  schema: z.object({ target: z.string() }),
  kind: 'network',
  run: async ({ target }) => {
    throw new Error(`target ${target} is unknown`);
  },
});

// A custom execute tool whose commands go through ctx.exec: the conversation's command sandbox.
// Under /usr: in the sandbox's root, bound read-only (/opt is not in it at all).
const ESCAPE = '/usr/agentrun-escape-test.txt';
const stampFiles = defineTool({
  name: 'stamp_files',
  description: 'Stamp the workspace by running a command.',
  schema: z.object({ stamp: z.string() }),
  kind: 'execute',
  needsApproval: false,
  run: async ({ stamp }, ctx) => {
    const r = await ctx.exec(`echo ${stamp} > stamp.txt && cat stamp.txt; echo out > ${ESCAPE}; echo "outside: $?"`);
    return `exit ${r.exitCode}\n${r.output}`;
  },
});

let slowRuns = 0;
const slowLookup = defineTool({
  name: 'slow_lookup',
  description: 'A lookup that takes a few seconds.',
  schema: z.object({ key: z.string() }),
  kind: 'read',
  run: async ({ key }) => {
    slowRuns++;
    await new Promise((r) => setTimeout(r, 4000));
    return `value of ${key}`;
  },
});

beforeAll(async () => {
  h = await createHarness({ worker: false, repositoryExtensions: true });
  http = await startHttpMcpServer();
  await writeFile(
    join(h.home, 'settings.json'),
    JSON.stringify({ mcpServers: { fs: filesystemServer('/tmp'), broken: { command: process.execPath, args: ['-e', 'process.exit(1)'] } } }),
  );
  ext = new WorkerExtensions({
    home: h.home,
    tools: [wordCount, deploy, slowLookup, stampFiles],
    // Trusted by the operator (code): its tools with effects run without asking.
    mcpServers: { web: { url: http.url, trust: true } },
    trustWorkspaceCommands: true,
    hooks: {
      beforeModel: ({ conversationId, turn }) => void observed.push({ conversationId, hook: 'beforeModel', turn }),
      afterModel: ({ conversationId, turn, content }) => void observed.push({ conversationId, hook: 'afterModel', turn, detail: content.slice(0, 17) }),
      onTurnEnd: ({ conversationId, turn }) => void observed.push({ conversationId, hook: 'onTurnEnd', turn }),
      onFinish: ({ conversationId, status, result }) => {
        observed.push({ conversationId, hook: 'onFinish', detail: `${status}: ${result}` });
        throw new Error('a failing observer does not fail the conversation');
      },
      beforeTool: ({ tool, args }) => {
        if (tool === 'write_to_file' && typeof args.path === 'string' && args.path.startsWith('tmp/')) {
          rewrites.push(args.path);
          return { args: { ...args, path: args.path.replace(/^tmp\//, 'kept/') } };
        }
      },
    },
  });
  await h.startWorker({ extensions: ext });
});

afterAll(async () => {
  await h?.close();
  await ext?.close();
  await http?.close();
});

async function workspaceWithHook(): Promise<string> {
  const ws = await tempRepo({ 'data.txt': 'alpha beta gamma\n' });
  await mkdir(join(ws, '.agentrun'), { recursive: true });
  await writeFile(
    join(ws, '.agentrun/settings.json'),
    JSON.stringify({
      hooks: {
        PreToolUse: [
          {
            matcher: 'execute_command',
            hooks: [
              {
                type: 'command',
                command: `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const e=JSON.parse(s);if(/rm -rf/.test(e.tool_input.command)){console.error("rm -rf is not allowed in this repository ("+e.hook_event_name+")");process.exit(2)}})'`,
              },
            ],
          },
        ],
      },
    }),
  );
  return ws;
}

describe('extensions in a conversation', () => {
  it('XML: MCP tool, custom tool, a blocking shell hook, a rewriting code hook and a throwing tool', async () => {
    const workspace = await workspaceWithHook();
    const model = await scriptModel({
      turns: [
        { say: `Reading over MCP.\n<mcp__fs__read_text_file>\n<path>${workspace}/data.txt</path>\n</mcp__fs__read_text_file>` },
        { say: '<word_count>\n<text>alpha beta gamma delta</text>\n<min_length>5</min_length>\n</word_count>' },
        { say: '<execute_command>\n<command>rm -rf build</command>\n<requires_approval>false</requires_approval>\n</execute_command>' },
        { say: '<write_to_file>\n<path>tmp/out.txt</path>\n<content>hello</content>\n</write_to_file>' },
        { say: '<deploy>\n<target>prod</target>\n</deploy>' },
        { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' },
      ],
    });
    const handle = await h.start({ task: 'Use the tools', workspace, config: { model } });
    // deploy is a custom network tool: under the default policy a person approves each call.
    const waiting = await h.waitForState(handle.workflowId, (s) => s.pendingApproval !== undefined);
    expect(waiting.pendingApproval).toMatchObject({ name: 'deploy', reasons: ['deploy is a custom network tool: its effects reach beyond the workspace'] });
    await handle.executeUpdate(decideApprovalUpdate, { args: [{ callId: waiting.pendingApproval!.callId, approved: true, by: 'alice' }] });
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');
    const results = (await h.store.getMessages(result.conversationId)).filter((m) => m.kind === 'tool_result');
    expect(results.map((m) => m.toolName)).toEqual([
      'mcp__fs__read_text_file',
      'word_count',
      'execute_command',
      'write_to_file',
      'deploy',
      'attempt_completion',
    ]);
    expect(results[0]!.content).toContain('alpha beta gamma');
    expect(results[1]!.content).toContain('3 words');
    expect(results[2]!.content).toContain('Blocked by a hook: rm -rf is not allowed in this repository (PreToolUse)');
    expect(results[2]!.meta).toMatchObject({ ok: false, hooks: [{ source: 'workspace', event: 'PreToolUse', outcome: 'block' }] });
    expect(rewrites).toEqual(['tmp/out.txt']);
    expect(await readFile(join(workspace, 'kept/out.txt'), 'utf8')).toBe('hello');
    expect(results[3]!.meta).toMatchObject({ hooks: [{ source: 'code', event: 'beforeTool', outcome: 'rewrite' }] });
    expect(results[4]!.content).toBe('Error: deploy failed: target prod is unknown');

    // The observing code hooks ran around the model calls, turn ends and the finish.
    const mine = observed.filter((o) => o.conversationId === result.conversationId);
    expect(mine.filter((o) => o.hook === 'beforeModel').map((o) => o.turn)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(mine.find((o) => o.hook === 'afterModel' && o.turn === 1)?.detail).toBe('Reading over MCP.');
    // Every turn's end is observed (at least once: a retried step repeats it), before the next turn's model call.
    const ends = mine.filter((o) => o.hook === 'onTurnEnd').map((o) => o.turn);
    expect([...new Set(ends)]).toEqual([1, 2, 3, 4, 5, 6]);
    for (let turn = 1; turn < 6; turn++) {
      const ended = mine.findIndex((o) => o.hook === 'onTurnEnd' && o.turn === turn);
      expect(ended).toBeLessThan(mine.findIndex((o) => o.hook === 'beforeModel' && o.turn === turn + 1));
    }
    expect(mine.filter((o) => o.hook === 'onFinish').map((o) => o.detail)).toEqual(['completed: done']);

    // The prompt documented the extension tools and told the model about the broken server.
    const ctx = await h.store.getContext(result.conversationId, 1);
    const system = (ctx!.plan as { system: string }).system;
    expect(system).toContain('## mcp__fs__read_text_file');
    expect(system).toContain('## word_count\nDescription: Count the words of a text.');
    expect(system).toContain('<min_length>number (optional)</min_length>');
    expect(system).toMatch(/MCP server "broken" \(operator settings\) is not available/);
  });

  it('a custom execute tool runs its commands in the command sandbox: the workspace is writable, the rest is not', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [{ say: '<stamp_files>\n<stamp>v42</stamp>\n</stamp_files>' }, { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' }],
    });
    const result = await h.run({ task: 'Stamp', workspace, config: { model } });
    expect(result.status).toBe('completed');
    const stamped = (await h.store.getMessages(result.conversationId)).find((m) => m.toolName === 'stamp_files' && m.kind === 'tool_result')!;
    expect(await readFile(join(workspace, 'stamp.txt'), 'utf8')).toBe('v42\n');
    // stdout and stderr come through two pipes: their order in the output is not fixed.
    expect(stamped.content).toMatch(/^exit 0\nThe command exited with code 0\.\nOutput:\n/);
    for (const part of ['v42\n', 'Read-only file system', 'outside: 1']) expect(stamped.content).toContain(part);
    expect(existsSync(ESCAPE)).toBe(false);
  });

  it('native: the MCP and custom tools are offered as functions and called with JSON arguments', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [
        {
          tool_calls: [
            { name: 'mcp__web__add', arguments: { a: 19, b: 23 } },
            { name: 'word_count', arguments: { text: 'one two' } },
          ],
        },
        { tool_calls: [{ name: 'mcp__web__note', arguments: { text: 'from the model' } }] },
        { tool_calls: [{ name: 'attempt_completion', arguments: { result: 'ok' } }] },
      ],
    });
    const result = await h.run({ task: 'Add', workspace, config: { model, toolFormat: 'native' } });
    expect(result.status).toBe('completed');
    const results = (await h.store.getMessages(result.conversationId)).filter((m) => m.kind === 'tool_result');
    expect(results.map((m) => [m.toolName, m.content])).toEqual([
      ['mcp__web__add', 'sum=42'],
      ['word_count', '2 words'],
      ['mcp__web__note', 'noted (1)'],
      ['attempt_completion', expect.any(String)],
    ]);
    expect(http.notes).toEqual(['from the model']);
    const server = await serveScriptedFile(model.slice('scripted:'.length));
    const request = server.requests.find((r) => r.conversation === result.conversationId && r.purpose === 'turn')!;
    const tools = (request.body as { tools: Array<{ function: { name: string; parameters: Record<string, unknown> } }> }).tools;
    const add = tools.find((t) => t.function.name === 'mcp__web__add')!;
    expect(add.function.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] });
    expect(tools.find((t) => t.function.name === 'word_count')!.function.parameters).toMatchObject({
      properties: { text: { type: 'string' }, min_length: { type: 'integer' } },
      required: ['text'],
    });
  });

  it('an extension tool slower than the heartbeat timeout is kept alive, and runs once', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [{ say: '<slow_lookup>\n<key>k1</key>\n</slow_lookup>' }, { say: '<attempt_completion>\n<result>ok</result>\n</attempt_completion>' }],
    });
    const result = await h.run({ task: 'Look up', workspace, config: { model, heartbeatTimeoutMs: 1500 } });
    expect(result.status).toBe('completed');
    const results = (await h.store.getMessages(result.conversationId)).filter((m) => m.kind === 'tool_result');
    expect(results[0]).toMatchObject({ toolName: 'slow_lookup', content: 'value of k1' });
    expect(slowRuns).toBe(1);
  });
});
