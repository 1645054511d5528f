import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationResult } from '../../src/client/outcome.js';
import { messageIdFor } from '../../src/context/message-ids.js';
import { countTokens } from '../../src/model/tokens.js';
import { serveScriptedFile } from '../../src/model/scripted/cli.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { prefixShare, requestText } from '../helpers/cache-session.js';
import { prose } from '../helpers/prose.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

function requestTokens(body: { messages: { content?: unknown }[] }): number {
  return body.messages.reduce((n, m) => n + countTokens(typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''), 'scripted') + 4, 0);
}

describe('context management', () => {
  it('keeps 200 turns with 20 KB tool outputs inside the safe zone', async () => {
    const TURNS = 200;
    const files: Record<string, string> = { 'AGENTS.md': '# Rules\nAlways explain the plan first (rule marker R-42).\n' };
    for (let n = 1; n < TURNS; n++) files[`data/${n}.txt`] = `marker-file-${n}\n` + prose(n, 20 * 1024);
    const workspace = await tempRepo(files);
    const id = uid('ctx200');
    // Assistant message of turn k is seq 2k-1, its tool result 2k (one call per turn).
    const markIds = [5, 6, 7, 8].map((seq) => messageIdFor(id, seq)).join(',');
    const turns = [];
    for (let n = 1; n < TURNS; n++) {
      turns.push(
        n === 10
          ? {
              say: `marker-turn-${n}\n<conversation_message_ids_write>\n<message_ids>${markIds}</message_ids>\n<action>create</action>\n</conversation_message_ids_write>`,
            }
          : { say: `marker-turn-${n}\n<read_file>\n<path>data/${n}.txt</path>\n</read_file>` },
      );
    }
    turns.push({ say: '<attempt_completion>\n<result>read everything</result>\n</attempt_completion>' });
    // prompt_cache: the scripted model reports cached tokens as the prefix shared with the previous request.
    const model = await scriptModel({ default_chunk: 4096, turns, prompt_cache: true });
    const safeZone = 24_000;
    const handle = await h.start({
      id,
      task: 'Read every data file',
      workspace,
      config: { model, maxTurns: 250, contextWindow: 32_000, safeZone, continueAsNewEveryTurns: 80, keepRecentTurns: 2 },
    });
    const result = await conversationResult(handle);
    expect(result.status).toBe('completed');
    expect(result.turns).toBe(TURNS);

    const server = await serveScriptedFile(model.slice('scripted:'.length));
    const seen = server.requests.filter((r) => r.conversation === id);
    const turnRequests = seen.filter((r) => r.purpose === 'turn');
    expect(new Set(turnRequests.map((r) => r.turn)).size).toBe(TURNS);
    const sizes = turnRequests.map((r) => requestTokens(r.body));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(safeZone);
    // Pruning in steps keeps the provider's prompt cache: most of what is sent repeats the previous
    // request's prefix (measured 0.676 and a 0.666 hit rate; the same session planned in memory
    // pruning to the limit every turn, --prune-target 1, gives 0.58).
    const onePerTurn = [...new Map(turnRequests.filter((r) => !r.segment).map((r) => [r.turn, r] as const)).values()];
    const share = prefixShare(onePerTurn.map((r) => requestText(r.body.messages)));
    const hitRate = result.usage.cachedTokens! / result.usage.promptTokens;
    console.log(`200 turns under a 24k safe zone: prefix share ${share.toFixed(3)}, reported cache hit rate ${hitRate.toFixed(3)}`);
    expect(share).toBeGreaterThan(0.62);
    expect(hitRate).toBeGreaterThan(0.58);
    // Summaries were asked for and used.
    expect(seen.some((r) => r.purpose === 'summary')).toBe(true);
    expect((await h.store.getPruneState(id)).summary).not.toBeNull();
    expect(turnRequests.some((r) => JSON.stringify(r.body.messages).includes('[summary of earlier conversation]'))).toBe(true);
    // The model's id-pruning: after turn 10, turns 3 and 4 are gone from the request, turn 5 is still there.
    const turn11 = JSON.stringify(turnRequests.find((r) => r.turn === 11)!.body.messages);
    expect(turn11).not.toContain('marker-turn-3');
    expect(turn11).not.toContain('marker-turn-4');
    expect(turn11).toContain('marker-turn-5');
    expect(JSON.stringify(turnRequests.find((r) => r.turn === 9)!.body.messages)).toContain('marker-turn-3');
    // Rules reach the system prompt.
    expect(JSON.stringify(turnRequests[0]!.body.messages[0])).toContain('R-42');
    // Audit: prune records and window events, nothing deleted from the store.
    expect((await h.store.getPruneRecords(id)).length).toBeGreaterThan(0);
    const events = (await h.store.readStream(id, 0, 100_000)).map((r) => r.event);
    expect(events.some((e) => e.type === 'window')).toBe(true);
    const stored = await h.store.getMessages(id);
    expect(stored.map((m) => m.seq)).toEqual([...stored.keys()]); // nothing deleted
    expect(stored.filter((m) => m.role === 'assistant')).toHaveLength(TURNS);
    expect(
      stored.filter((m) => m.kind !== 'assistant' && m.kind !== 'tool_result' && m.kind !== 'task').map((m) => `${m.kind}: ${m.content.slice(0, 120)}`),
    ).toEqual([]);
    // At least one continue-as-new happened.
    const first = await h.client.workflow.getHandle(id, handle.firstExecutionRunId).fetchHistory();
    expect(first.events?.some((e) => e.workflowExecutionContinuedAsNewEventAttributes)).toBe(true);
  }, 600_000);

  it('nudges a looping model once, then stops it with loop_detected', async () => {
    const workspace = await tempRepo({ 'a.txt': 'a\n' });
    const model = await scriptModel({ turns: [{ say: '<read_file>\n<path>a.txt</path>\n</read_file>' }], repeat_last: true });
    const result = await h.run({ task: 'loop', workspace, config: { model } });
    expect(result.status).toBe('loop_detected');
    expect(result.reason).toMatch(/read_file/);
    const notices = (await h.store.getMessages(result.conversationId)).filter((m) => m.kind === 'notice');
    expect(notices).toHaveLength(1);
    expect(notices[0]!.content).toMatch(/loop detected/);
  });

  it('lets loop detection be switched off', async () => {
    const workspace = await tempRepo({ 'a.txt': 'a\n' });
    const model = await scriptModel({ turns: [{ say: '<read_file>\n<path>a.txt</path>\n</read_file>' }], repeat_last: true });
    const result = await h.run({ task: 'loop', workspace, config: { model, loopDetection: false, maxTurns: 8 } });
    expect(result.status).toBe('budget_exhausted');
    expect(result.turns).toBe(8);
  });

  it('stops with context_overflow when even the task does not fit', async () => {
    const workspace = await tempRepo();
    const model = await scriptModel({ turns: [{ say: 'never asked' }] });
    const result = await h.run({ task: prose(7, 40_000), workspace, config: { model, contextWindow: 8000, safeZone: 4000 } });
    expect(result.status).toBe('context_overflow');
    expect(result.reason).toMatch(/safe zone of 4000/);
  });
});
