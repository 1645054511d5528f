// Sub-agents as child workflows, on the real stack: real Temporal, PostgreSQL,
// git and the scripted model over HTTP. Each agent file names its own scripted model
// (`model: scripted:FILE`), which is how one script per conversation is chosen.
import { conversationResult } from '../../src/client/outcome.js';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelSignal, stateQuery, type ConversationResult, type ConversationState } from '../../workflows/api.js';
import { gatherInspection } from '../../src/client/inspection.js';
import { printInspection } from '../../src/cli/inspect.js';
import { startUiServer } from '../../src/ui/server.js';
import { startChildWorker } from '../helpers/child-worker.js';
import { createHarness, scriptModel, tempRepo, priceScriptedModel, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';
import { runCli } from '../helpers/dist.js';

let h: Harness;
beforeAll(async () => {
  // These tests add up costs: the scripted model gets a price here.
  priceScriptedModel();
  h = await createHarness({ worker: false, repositoryExtensions: true });
});
afterAll(async () => {
  await h?.close();
});

type State = ConversationState;

const say = (s: string, extra: Record<string, unknown> = {}) => ({ say: s, ...extra });
const complete = (result: string) => say(`<attempt_completion>\n<result>${result}</result>\n</attempt_completion>`);
const delegateCall = (agent: string, task: string) => `<delegate>\n<agent>${agent}</agent>\n<task>${task}</task>\n</delegate>`;

/** A workspace with agents, each on its own scripted model. */
async function workspaceWithAgents(
  agents: Record<string, { description: string; tools?: string; maxTurns?: number; turns: unknown[] }>,
  files: Record<string, string> = {},
): Promise<string> {
  const ws = await tempRepo(files);
  await mkdir(join(ws, '.agentrun/agents'), { recursive: true });
  for (const [name, a] of Object.entries(agents)) {
    const model = await scriptModel({ turns: a.turns });
    const front = [
      `description: ${a.description}`,
      ...(a.tools ? [`tools: ${a.tools}`] : []),
      `model: ${model}`,
      ...(a.maxTurns ? [`max_turns: ${a.maxTurns}`] : []),
    ];
    await writeFile(join(ws, '.agentrun/agents', `${name}.md`), `---\n${front.join('\n')}\n---\nYou are the ${name} agent. Work carefully.\n`);
  }
  return ws;
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 90_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const state = (id: string) => h.client.workflow.getHandle(id).query(stateQuery) as Promise<State>;
const toolResults = async (id: string, name: string) => (await h.store.getMessages(id)).filter((m) => m.kind === 'tool_result' && m.toolName === name);

describe('delegate', () => {
  it('runs two read-only agents side by side and a writing one, and returns their results as tool results', async () => {
    const ws = await workspaceWithAgents(
      {
        // Slow first answers keep both readers running at once, which the parent's state shows.
        'reader-a': {
          description: 'Reads a.txt and reports.',
          tools: 'read_file, list_files',
          turns: [say('<read_file>\n<path>a.txt</path>\n</read_file>', { first_token_delay_ms: 2500 }), complete('a.txt holds alpha')],
        },
        'reader-b': {
          description: 'Reads b.txt and reports.',
          tools: 'Read, Grep',
          // write_to_file is not one of its tools: refused with the reason, then it goes on.
          turns: [
            say('<write_to_file>\n<path>b.txt</path>\n<content>\noverwritten\n</content>\n</write_to_file>', { first_token_delay_ms: 2500 }),
            say('<read_file>\n<path>b.txt</path>\n</read_file>'),
            complete('b.txt holds beta'),
          ],
        },
        writer: {
          description: 'Writes files.',
          tools: 'write_to_file, read_file',
          turns: [
            say('<write_to_file>\n<path>out/report.txt</path>\n<content>\nwritten by the writer\n</content>\n</write_to_file>'),
            complete('wrote out/report.txt'),
          ],
        },
      },
      { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' },
    );
    const parent = await scriptModel({
      turns: [
        say(
          `Two readers, then the writer.\n${delegateCall('reader-a', 'Read a.txt.')}\n${delegateCall('reader-b', 'Read b.txt.')}\n${delegateCall('writer', 'Write out/report.txt.')}`,
        ),
        complete('all three agents reported'),
      ],
    });
    const worker = await startChildWorker(h);
    try {
      const handle = await h.start({ task: 'use the agents', workspace: ws, config: { model: parent, approval: 'never', maxCostUsd: 5 } });
      const both = await until('both readers running at once', async () => {
        const s = await state(handle.workflowId);
        const running = (s.children ?? []).filter((c) => c.readOnly && c.status === 'running');
        return running.length === 2 && running;
      });
      expect(both.map((c) => c.agent).sort()).toEqual(['reader-a', 'reader-b']);
      const result = await conversationResult(handle);
      expect(result.status).toBe('completed');

      const s = await state(handle.workflowId);
      const id = handle.workflowId;
      // Listed as they started (after reading their files); numbered in the order of the calls.
      const children = [...s.children!].sort((a, b) => a.id.localeCompare(b.id));
      expect(children.map((c) => [c.id, c.agent, c.readOnly, c.status])).toEqual([
        [`${id}.sub-1`, 'reader-a', true, 'completed'],
        [`${id}.sub-2`, 'reader-b', true, 'completed'],
        [`${id}.sub-3`, 'writer', false, 'completed'],
      ]);
      expect(children.map((c) => c.turns)).toEqual([2, 3, 2]);

      // Each result is answered when its agent ends (the transcript has them in that order).
      const results = await toolResults(id, 'delegate');
      expect(results.map((m) => m.meta?.ok)).toEqual([true, true, true]);
      const of = (agent: string) => results.find((m) => m.content.startsWith(`The sub-agent "${agent}"`))!.content;
      expect(of('reader-a')).toBe(`The sub-agent "reader-a" (${id}.sub-1) finished in 2 turns. Its result:\n<result>\na.txt holds alpha\n</result>`);
      expect(of('reader-b')).toContain('b.txt holds beta');
      expect(of('writer')).toContain('wrote out/report.txt');

      // The writer's file is there; the reader could not write.
      expect(await readFile(join(ws, 'out/report.txt'), 'utf8')).toBe('written by the writer');
      expect(await readFile(join(ws, 'b.txt'), 'utf8')).toBe('beta\n');
      const refused = await toolResults(`${id}.sub-2`, 'write_to_file');
      expect(refused[0]!.content).toBe('write_to_file is not one of the tools of the agent "reader-b": use read_file, search_files, attempt_completion.');

      // Each child is a conversation of its own, with the agent's prompt and tools only.
      const child = await h.store.getConversation(`${id}.sub-1`);
      expect(child).toMatchObject({ status: 'completed', turns: 2, task: 'Read a.txt.' });
      const system: string = (await h.store.getContext(`${id}.sub-1`, 1))!.plan.system;
      expect(system).toContain('ADDITIONAL INSTRUCTIONS\n\nYou are the reader-a agent. Work carefully.');
      expect([...system.matchAll(/^## (\w+)$/gm)].map((m) => m[1])).toEqual([
        'read_file',
        'list_files',
        'attempt_completion',
        'todo_write',
        'todo_read',
        'conversation_message_ids_write',
      ]);
      const parentSystem: string = (await h.store.getContext(id, 1))!.plan.system;
      expect(parentSystem).toContain('## delegate\n');
      expect(parentSystem).toContain(
        '- reader-a: Reads a.txt and reports. (read-only)\n- reader-b: Reads b.txt and reports. (read-only)\n- writer: Writes files.\n',
      );

      // inspect shows the tree (from the store, so a finished parent too).
      const inspection = (await gatherInspection({ store: h.store, client: h.client, home: h.home }, id, { maxChars: 200, diffs: false }))!;
      expect(inspection.subagents.map((a) => [a.id, a.agent, a.status, a.turns])).toEqual(children.map((c) => [c.id, c.agent, 'completed', c.turns]));
      let printed = '';
      printInspection(inspection, (t) => (printed += t));
      const lines = printed.split('\n');
      const at = lines.indexOf('sub-agents');
      expect(lines.slice(at + 1, at + 4).map((l) => l.replace(/cost \$\d+\.\d{4}$/, 'cost $N'))).toEqual([
        `  ${id}.sub-1  reader-a  completed  turns 2  cost $N`,
        `  ${id}.sub-2  reader-b  completed  turns 3  cost $N`,
        `  ${id}.sub-3  writer  completed  turns 2  cost $N`,
      ]);

      // The web page's API lists them too (the page links each to its own conversation).
      const token = 'sub-ui-' + Math.random().toString(36).slice(2);
      const ui = await startUiServer({ store: h.store, client: h.client, port: 0, token: { token, name: 'test', source: 'env' } });
      try {
        const detail = (await (await fetch(new URL(`/api/conversations/${id}`, ui.url), { headers: { authorization: `Bearer ${token}` } })).json()) as {
          subagents: { id: string; agent: string }[];
        };
        expect(detail.subagents.map((a) => a.agent)).toEqual(['reader-a', 'reader-b', 'writer']);
      } finally {
        await ui.close();
      }

      // The children's spend is in the parent's totals.
      const childCost = s.children!.reduce((n, c) => n + c.costUsd, 0);
      expect(childCost).toBeGreaterThan(0);
      const own = (await h.store.getUsage(id)).reduce((n, u) => n + u.costUsd, 0);
      expect(result.costUsd).toBeCloseTo(own + childCost, 9);
    } finally {
      await worker.kill('SIGTERM');
    }
  });

  it('runs writing agents one at a time', async () => {
    const ws = await workspaceWithAgents({
      editor: {
        description: 'Edits notes.txt.',
        tools: 'write_to_file',
        turns: [
          say('<write_to_file>\n<path>notes.txt</path>\n<content>\nedited\n</content>\n</write_to_file>', { first_token_delay_ms: 1500 }),
          complete('edited'),
        ],
      },
    });
    const parent = await scriptModel({
      turns: [say(`${delegateCall('editor', 'First edit.')}\n${delegateCall('editor', 'Second edit.')}`), complete('both edits done')],
    });
    const worker = await startChildWorker(h);
    try {
      const handle = await h.start({ task: 'two writers', workspace: ws, config: { model: parent, approval: 'never' } });
      expect(((await handle.result()) as ConversationResult).status).toBe('completed');
      const rows = await Promise.all([1, 2].map((n) => h.store.getConversation(`${handle.workflowId}.sub-${n}`)));
      expect(rows.map((r) => r!.status)).toEqual(['completed', 'completed']);
      // Whichever took the workspace first, the other started (its row is written by its first step) only after it had ended.
      const [first, second] = rows.sort((a, b) => a!.createdAt.getTime() - b!.createdAt.getTime());
      expect(second!.createdAt.getTime()).toBeGreaterThanOrEqual(first!.finishedAt!.getTime());
    } finally {
      await worker.kill('SIGTERM');
    }
  });

  it('answers an unknown agent name with the agents there are, and the conversation goes on', async () => {
    const ws = await workspaceWithAgents({ helper: { description: 'Helps.', turns: [complete('helped')] } });
    const parent = await scriptModel({ turns: [say(delegateCall('nobody', 'Do it.')), complete('done without it')] });
    const worker = await startChildWorker(h);
    try {
      const handle = await h.start({ task: 'try an agent', workspace: ws, config: { model: parent, approval: 'never' } });
      const result = await conversationResult(handle);
      expect(result).toMatchObject({ status: 'completed', result: 'done without it' });
      const [answer] = await toolResults(handle.workflowId, 'delegate');
      expect(answer!.meta?.ok).toBe(false);
      expect(answer!.content).toBe(
        'there is no agent named "nobody"; the agents of this workspace are: helper. Call delegate with one of those agents, or do the task yourself.',
      );
      expect((await state(handle.workflowId)).children ?? []).toEqual([]);
    } finally {
      await worker.kill('SIGTERM');
    }
  });

  it('refuses delegate inside a sub-agent (one level only)', async () => {
    const ws = await workspaceWithAgents({
      nester: { description: 'Tries to nest.', turns: [say(delegateCall('nester', 'Again.')), complete('did it myself')] },
    });
    const parent = await scriptModel({ turns: [say(delegateCall('nester', 'Go.')), complete('ok')] });
    const worker = await startChildWorker(h);
    try {
      const handle = await h.start({ task: 'nest', workspace: ws, config: { model: parent, approval: 'never' } });
      expect(((await handle.result()) as ConversationResult).status).toBe('completed');
      const [inner] = await toolResults(`${handle.workflowId}.sub-1`, 'delegate');
      expect(inner!.content).toMatch(/^delegate is not available to a sub-agent: agents do not start agents of their own \(one level only\)/);
      expect((await state(handle.workflowId)).children!.map((c) => [c.agent, c.status])).toEqual([['nester', 'completed']]);
    } finally {
      await worker.kill('SIGTERM');
    }
  });

  it('cancel of the parent cancels the running child', async () => {
    const ws = await workspaceWithAgents({
      slow: {
        description: 'Takes its time.',
        tools: 'execute_command',
        turns: [
          say('<execute_command>\n<command>sleep 2</command>\n<requires_approval>false</requires_approval>\n</execute_command>'),
          complete('never reached'),
        ],
      },
    });
    const parent = await scriptModel({ turns: [say(delegateCall('slow', 'Wait.')), complete('never reached')] });
    const worker = await startChildWorker(h);
    try {
      const handle = await h.start({ task: 'cancel me', workspace: ws, config: { model: parent, approval: 'never' } });
      const childId = `${handle.workflowId}.sub-1`;
      await until('the child running its command', async () => (await h.store.getMessages(childId)).some((m) => m.role === 'assistant'));
      await handle.signal(cancelSignal, { reason: 'operator stop' });
      const result = await conversationResult(handle);
      expect(result).toMatchObject({ status: 'cancelled', reason: 'operator stop' });
      const child = await conversationResult(h.client.workflow.getHandle(childId));
      expect(child.status).toBe('cancelled');
      expect(child.reason).toBe(`its parent ${handle.workflowId} was cancelled: operator stop`);
      expect((await state(handle.workflowId)).children!.map((c) => [c.agent, c.status])).toEqual([['slow', 'cancelled']]);
    } finally {
      await worker.kill('SIGTERM');
    }
  });

  it('a hard cancel of the parent (cancel --now) reaches the child through the cancellation scope', async () => {
    const ws = await workspaceWithAgents({
      slow: {
        description: 'Takes its time.',
        tools: 'execute_command',
        turns: [
          say('<execute_command>\n<command>sleep 60</command>\n<requires_approval>false</requires_approval>\n</execute_command>'),
          complete('never reached'),
        ],
      },
    });
    const parent = await scriptModel({ turns: [say(delegateCall('slow', 'Wait.')), complete('never reached')] });
    const worker = await startChildWorker(h);
    try {
      const handle = await h.start({ task: 'cancel me now', workspace: ws, config: { model: parent, approval: 'never' } });
      const childId = `${handle.workflowId}.sub-1`;
      await until('the child running its command', async () => (await h.store.getMessages(childId)).some((m) => m.role === 'assistant'));
      await handle.cancel();
      expect((await conversationResult(handle)).status).toBe('cancelled');
      // The command was cut short (sleep 60 never finished) and the child ended as cancelled.
      expect((await conversationResult(h.client.workflow.getHandle(childId))).status).toBe('cancelled');
    } finally {
      await worker.kill('SIGTERM');
    }
  });

  it('a SIGKILL of the worker during a child resumes both, and the parent completes', async () => {
    const longText = Array.from({ length: 60 }, (_, i) => `line ${i} of the writer's notes`).join('\n');
    const ws = await workspaceWithAgents({
      writer: {
        description: 'Writes files.',
        tools: 'write_to_file',
        turns: [
          say(`${longText}\n<write_to_file>\n<path>crash.txt</path>\n<content>\nsurvived\n</content>\n</write_to_file>`, { chunk: 8, delay_ms: 25 }),
          complete('wrote crash.txt'),
        ],
      },
    });
    const parent = await scriptModel({ turns: [say(delegateCall('writer', 'Write crash.txt.')), complete('the writer is done')] });
    const doomed = await startChildWorker(h);
    const handle = await h.start({ task: 'survive a crash', workspace: ws, config: { model: parent, approval: 'never', heartbeatTimeoutMs: 2000 } });
    const childId = `${handle.workflowId}.sub-1`;
    await until('the child streaming its answer', async () => (await h.store.readStream(childId)).some((e) => e.event.type === 'delta'));
    await doomed.kill('SIGKILL');
    const survivor = await startChildWorker(h);
    try {
      const result = await conversationResult(handle);
      expect(result).toMatchObject({ status: 'completed', result: 'the writer is done' });
      expect(await readFile(join(ws, 'crash.txt'), 'utf8')).toBe('survived');
      const [answer] = await toolResults(handle.workflowId, 'delegate');
      expect(answer!.content).toContain('wrote crash.txt');
      expect((await h.store.getConversation(childId))!.status).toBe('completed');
    } finally {
      await survivor.kill('SIGTERM');
    }
  });
});

describe('the stream', () => {
  it('tells a delegate call and its sub-agent’s result like every tool call, in `agentrun run --json`', async () => {
    const ws = await workspaceWithAgents(
      {
        reader: {
          description: 'Reads a.txt.',
          tools: 'read_file',
          turns: [say('<read_file>\n<path>a.txt</path>\n</read_file>'), complete('a.txt holds alpha')],
        },
      },
      { 'a.txt': 'alpha\n' },
    );
    const parent = await scriptModel({ turns: [say(delegateCall('reader', 'Read a.txt and say what it holds.')), complete('the reader says alpha')] });
    const home = await tempDir('agentrun-cli-home-');
    const ran = await runCli(['run', '--json', '--task', 'ask the reader', '--workspace', ws, '--model', parent, '--approval', 'never'], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: h.temporalAddress,
        DATABASE_URL: h.databaseUrl,
        AGENTRUN_HOME: home,
        AGENTRUN_TASK_QUEUE: `${h.taskQueue}-cli`,
        AGENTRUN_WORKFLOW_BUNDLE: h.workflowBundlePath,
        AGENTRUN_LOG_LEVEL: 'warn',
        OPENAI_API_KEY: '',
        // Unpriced here: the scripted models cost $0 (this file prices them for its other tests).
        AGENTRUN_PRICING: '',
        AGENTRUN_REPOSITORY_EXTENSIONS: 'on',
      },
    });
    expect(ran.code, ran.stderr).toBe(0);
    const lines = ran.lines;
    const id = lines.find((l) => l.type === 'result')!.conversationId as string;
    const started = lines.find((l) => l.type === 'tool_started' && l.name === 'delegate');
    const completed = lines.find((l) => l.type === 'tool_completed' && l.name === 'delegate');
    expect(started).toMatchObject({ preview: expect.stringContaining('delegate') });
    expect(completed).toMatchObject({
      callId: started!.callId,
      ok: true,
      preview: expect.stringMatching(/^The sub-agent "reader" \(.*\.sub-1\) finished in 2 turns/),
      subagent: { conversationId: `${id}.sub-1`, agent: 'reader', status: 'completed', turns: 2, costUsd: 0, result: 'a.txt holds alpha' },
    });
    // In order: the call starts, then ends with the child's result, before the parent's next turn.
    const at = (l: unknown) => lines.indexOf(l as Record<string, any>);
    expect(at(started)).toBeLessThan(at(completed));
    expect(at(completed)).toBeLessThan(lines.findIndex((l) => l.type === 'turn_started' && l.turn === 2));
    expect(lines.at(-1)).toMatchObject({ type: 'result', status: 'completed' });
    // The Temporal UI names the child by its agent and task.
    const child = await h.client.workflow.getHandle(`${id}.sub-1`).describe();
    expect(await child.staticSummary()).toBe(`reader: Read a.txt and say what it holds. · ${ws}`);
    expect(await child.staticDetails()).toContain(`Sub-agent of ${id}.`);
  });
});
