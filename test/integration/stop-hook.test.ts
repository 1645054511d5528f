// The Stop hook end to end through the CLI: a shell hook from AGENTRUN_HOME/settings.json runs
// when the model calls attempt_completion; exit 2 keeps the conversation going with its stderr as
// the model's next message; a hook that always blocks is given up on after three times.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { scriptModel, tempRepo, uid } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';
import { jsonLines, runCli } from '../helpers/dist.js';

const _ROOT = fileURLToPath(new URL('../..', import.meta.url));
const _exec = promisify(execFile);

const complete = { say: '<attempt_completion>\n<result>done</result>\n</attempt_completion>' };

/** `agentrun` with an operator settings.json holding these Stop hooks; the --json lines of `args`. */
async function withStopHook(
  command: (home: string) => string,
  args: string[],
): Promise<{ home: string; lines: Record<string, any>[]; cli: (...a: string[]) => Promise<string> }> {
  const home = await tempDir('agentrun-stop-home-');
  await writeFile(join(home, 'settings.json'), JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: command(home), timeout: 30 }] }] } }));
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    DATABASE_URL: inject('databaseUrl'),
    AGENTRUN_HOME: home,
    AGENTRUN_TASK_QUEUE: uid('stop-tq'),
    AGENTRUN_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    AGENTRUN_LOG_LEVEL: 'warn',
    OPENAI_API_KEY: '',
  };
  const cli = async (...a: string[]) => {
    const r = await runCli(a, { env, timeout: 180_000 });
    if (r.code !== 0) throw new Error(`agentrun ${a[0]} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
  return { home, cli, lines: jsonLines(await cli(...args)) };
}

describe('the Stop hook', () => {
  it('exit 2 keeps the conversation going with the reason as a message; the model finishes once the hook is content', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({
      turns: [complete, { say: '<write_to_file>\n<path>CHANGELOG.md</path>\n<content>- greeting\n</content>\n</write_to_file>' }, complete],
    });
    // Runs in the workspace (cwd) with the event on stdin, as in Claude Code.
    const hook = (home: string) =>
      `cat > ${home}/stop-event.json; test -f CHANGELOG.md || { echo "CHANGELOG.md has no entry for this change: add one before finishing" >&2; exit 2; }`;
    const { home, lines, cli } = await withStopHook(hook, [
      'run',
      '--json',
      '--task',
      'Add a greeting',
      '--workspace',
      workspace,
      '--model',
      model,
      '--approval',
      'never',
    ]);
    const end = lines.at(-1)!;
    expect(end).toMatchObject({ type: 'result', status: 'completed', turns: 3, result: 'done' });
    expect(await readFile(join(workspace, 'CHANGELOG.md'), 'utf8')).toContain('- greeting');

    const inspected = JSON.parse(await cli('inspect', String(end.conversationId), '--json')) as {
      transcript: { turn: number; messages: { kind: string; content: string; toolName?: string; hooks?: unknown[] }[] }[];
    };
    // What the hook decided each time is kept with the attempt_completion result it answered.
    const completions = inspected.transcript.flatMap((t) => t.messages).filter((m) => m.toolName === 'attempt_completion');
    expect(completions.map((m) => m.hooks)).toEqual([
      [
        {
          source: 'operator',
          event: 'Stop',
          command: hook(home),
          outcome: 'block',
          detail: 'CHANGELOG.md has no entry for this change: add one before finishing',
          ms: expect.any(Number),
        },
      ],
      [{ source: 'operator', event: 'Stop', command: hook(home), outcome: 'allow', ms: expect.any(Number) }],
    ]);
    const notices = inspected.transcript.flatMap((t) => t.messages).filter((m) => m.kind === 'notice');
    expect(notices.map((m) => m.content)).toEqual([
      '[A Stop hook did not let the conversation end (1 of at most 3 times): CHANGELOG.md has no entry for this change: add one before finishing]\nDeal with that, then call attempt_completion again.',
    ]);
    // The last event the hook saw: the second stop, after one block.
    const event = JSON.parse(await readFile(join(home, 'stop-event.json'), 'utf8')) as Record<string, unknown>;
    expect(event).toMatchObject({ hook_event_name: 'Stop', stop_hook_active: true, cwd: workspace, conversation_id: end.conversationId, turn: 3 });
  });

  it('a hook that always blocks is asked three times, then the conversation ends', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [complete], repeat_last: true });
    const { home, lines } = await withStopHook(
      (h) => `cat >> ${h}/stops.jsonl; echo >> ${h}/stops.jsonl; echo "never done" >&2; exit 2`,
      ['run', '--json', '--task', 'Finish', '--workspace', workspace, '--model', model, '--approval', 'never'],
    );
    expect(lines.at(-1)).toMatchObject({ type: 'result', status: 'completed', turns: 4 });
    const seen = (await readFile(join(home, 'stops.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { stop_hook_active: boolean; turn: number });
    expect(seen.map((e) => [e.turn, e.stop_hook_active])).toEqual([
      [1, false],
      [2, true],
      [3, true],
    ]);
    expect(existsSync(join(workspace, 'CHANGELOG.md'))).toBe(false);
  });
});
