// A call is classified once: as the model step parses it. The tool step runs the stored call on
// that classification (carried by its summary), so the danger check does not run again, not in
// the ledger and not in execute_command; a call whose summary carries none (summaries made before
// calls carried it) is classified by the tool step, once. The real activities, store, sandbox and
// scripted model; the danger check is the real one, counted.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createActivities } from '../../activities/index.js';
import { runConfigSchema } from '../../src/config.js';
import { Store } from '../../src/store/index.js';
import { markHostQueuePolled } from '../../src/workspace/host.js';
import { tempDirSync } from '../helpers/temp.js';
import { DATABASE_URL, dropSchema, freshSchemaName } from '../helpers/store-schema.js';

const checks = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/command-safety/dangerous.js', async (original) => {
  const real = await original<typeof import('../../src/command-safety/dangerous.js')>();
  return {
    ...real,
    checkCommand: (...args: Parameters<typeof real.checkCommand>) => {
      checks.count++;
      return real.checkCommand(...args);
    },
  };
});

const SCHEMA = freshSchemaName('t_classified');
let store: Store;
let home: string;
beforeAll(async () => {
  store = await Store.connect(DATABASE_URL, { schema: SCHEMA, max: 4 });
  home = tempDirSync('agentrun-classified-home-');
  markHostQueuePolled(); // this process is the workspace's host, as a worker is
});
afterAll(async () => {
  await store?.close();
  await dropSchema(SCHEMA);
});

/** A conversation whose first answer is one execute_command call, through its model step; the danger checks that step made. */
async function parsedCommand(command: string) {
  const a = createActivities({ store, home });
  const workspace = tempDirSync('agentrun-classified-ws-');
  execFileSync('git', ['init', '-q', workspace]);
  const script = path.join(tempDirSync('agentrun-classified-script-'), 'script.yaml');
  writeFileSync(
    script,
    JSON.stringify({
      turns: [{ say: `Counting.\n<execute_command>\n<command>${command}</command>\n<requires_approval>false</requires_approval>\n</execute_command>` }],
    }),
  );
  const config = runConfigSchema.parse({ model: `scripted:${script}`, loopDetection: false });
  const conversationId = `c-${randomUUID()}`;
  const ref = { conversationId, workspace, epoch: 1 };
  expect(await a.placeLocalWorkspace({ conversationId, workspace, epoch: 1 })).not.toBeNull();
  await a.initConversation({ ...ref, config, task: 'count' });
  const before = checks.count;
  const answer = await a.modelTurn({ ...ref, turn: 1, seq: 1, appends: [] });
  return { a, ref, answer, parseChecks: checks.count - before };
}

describe('a call is classified once', () => {
  it('the model step classifies the call; the tool step runs it on that classification, checking nothing again', async () => {
    const { a, ref, answer, parseChecks } = await parsedCommand('echo counted >> n.txt');
    expect(parseChecks).toBe(1);
    const [call] = answer.calls;
    expect(call).toMatchObject({ name: 'execute_command', dangerous: false, target: 'echo counted >> n.txt', safety: { dangerous: false, repeatable: false } });
    const before = checks.count;
    const r = await a.toolCall({ ...ref, turn: 1, callId: call!.id, resultSeq: 2, classified: { target: call!.target!, safety: call!.safety! } });
    expect(r).toMatchObject({ ok: true, status: 'ok' });
    expect(checks.count - before).toBe(0);
    // What the ledger and the command recorded is the classification the call came with.
    const entry = await store.ledger(ref.conversationId).get(call!.id);
    expect(entry?.result?.meta).toMatchObject({ dangerous: false, repeatable: false });
    expect((await store.getMessage(ref.conversationId, 2))?.meta).toMatchObject({ ok: true, target: 'echo counted >> n.txt' });
  });

  it('a call whose summary carries no classification (recorded before) is classified by the tool step, once', async () => {
    const { a, ref, answer } = await parsedCommand('echo again >> n.txt');
    const [call] = answer.calls;
    const before = checks.count;
    const r = await a.toolCall({ ...ref, turn: 1, callId: call!.id, resultSeq: 2 });
    expect(r).toMatchObject({ ok: true, status: 'ok' });
    expect(checks.count - before).toBe(1);
    expect((await store.ledger(ref.conversationId).get(call!.id))?.result?.meta).toMatchObject({ dangerous: false, repeatable: false });
  });
});
