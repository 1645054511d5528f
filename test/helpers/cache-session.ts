// A coding session's requests turn after turn, as prepareContext plans them and callModel renders
// them (the real system prompt, pruner and renderer; the previous turn's plan carried over), with
// no model: each turn is a read, a write or a command whose output has a given size. Used by the
// prompt-cache tests and bench/cache.ts to see how much of each request repeats the previous one.
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { systemPromptTokens } from '../../src/turn/prepare.js';
import { buildSystemPrompt } from '../../src/context/prompt.js';
import { planContext, type PruneInput } from '../../src/context/prune.js';
import type { ContextPlan } from '../../src/context/render.js';
import { messageTokens } from '../../src/model/tokens.js';
import { renderRequest } from '../../src/context/request.js';
import { renderXmlToolDocs } from '../../src/tools/index.js';
import type { StoredMessage } from '../../src/types.js';
import { prose } from './prose.js';

export const SESSION_MODEL = 'gpt-4o';

export interface SessionOptions {
  conversationId: string;
  turns: number;
  safeZone: number;
  /** --prune-target; undefined: the default. */
  pruneTarget?: number;
  keepRecentTurns?: number;
  /** Tokens of turn t's tool output (about: prose is cut by characters). */
  outputTokens(turn: number): number;
}

export interface SessionTurn {
  turn: number;
  messages: ChatCompletionMessageParam[];
  plan: ContextPlan;
  fits: boolean;
  /** The pruner changed the request beyond appending: a step (cleared, cut, summarised). */
  step: boolean;
}

/** What a provider's prompt cache keys on: the tools (none in XML format) and the messages, in order. */
export function requestText(messages: ChatCompletionMessageParam[]): string {
  return JSON.stringify(messages);
}

export function sharedPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** The share of all characters sent that repeat the previous request's prefix. */
export function prefixShare(requests: string[]): number {
  let shared = 0;
  let total = 0;
  requests.forEach((r, i) => {
    total += r.length;
    if (i > 0) shared += sharedPrefix(requests[i - 1]!, r);
  });
  return total ? shared / total : 0;
}

const SYSTEM = buildSystemPrompt({
  toolDocs: renderXmlToolDocs(),
  toolFormat: 'xml',
  rules: [],
  workspace: '/work/project',
  osInfo: 'Linux 6.8 (x64)',
  shell: '/bin/bash',
  date: '2026-11-27',
});

/** Characters of prose that count about `tokens` tokens (prose runs ~4.2 characters a token). */
function proseOf(seed: number, tokens: number): string {
  return prose(seed, Math.round(tokens * 4.2));
}

/** Every turn's request of a session of reads, writes and commands; `summarise` stands in for the summary call. */
export function* sessionRequests(o: SessionOptions): Generator<SessionTurn> {
  const msg = (m: Omit<StoredMessage, 'conversationId' | 'tokens'>): StoredMessage => ({
    conversationId: o.conversationId,
    ...m,
    tokens: messageTokens({ role: m.role, content: m.content }, SESSION_MODEL),
  });
  const history: StoredMessage[] = [
    msg({ seq: 0, turn: 0, role: 'user', kind: 'task', content: 'Port the parser module to the new tokenizer API and keep the tests green.' }),
  ];
  const systemTokens = systemPromptTokens(SYSTEM, SESSION_MODEL);
  let previous: PruneInput['previous'];
  let summary: PruneInput['summary'];
  let seq = 1;
  let lastKey = JSON.stringify([[], [], [], undefined]);
  for (let t = 1; t <= o.turns; t++) {
    const base: PruneInput = {
      conversationId: o.conversationId,
      messages: history,
      systemTokens,
      safeZone: o.safeZone,
      markedIds: { ids: [] },
      keepRecentTurns: o.keepRecentTurns ?? 3,
      pruneTarget: o.pruneTarget,
      previous,
      summary,
    };
    let r = planContext(base);
    if (r.needsSummary) {
      // A fixed snapshot, about what a model writes, in place of the summary call.
      summary = { throughSeq: r.needsSummary.throughSeq, content: `<state_snapshot>${proseOf(t, 600)}</state_snapshot>`, tokens: 620 };
      r = planContext({ ...base, summary });
    }
    const messages = renderRequest(o.conversationId, { system: SYSTEM, plan: r.plan }, history, 'xml');
    // A standing summary is listed among the actions every turn; a step changes what is pruned.
    const key = JSON.stringify([r.plan.cleared, r.plan.truncatedArgs, r.plan.dropped, r.plan.summary?.throughSeq]);
    yield { turn: t, messages, plan: r.plan, fits: r.fits, step: key !== lastKey };
    lastKey = key;
    previous = { cleared: r.plan.cleared, truncatedArgs: r.plan.truncatedArgs };

    // The turn's answer and its tool result: read a file, write one, or run a command.
    const kind = t % 5 === 0 ? 'write' : t % 3 === 0 ? 'command' : 'read';
    const path = `src/parser/part${t}.ts`;
    const size = o.outputTokens(t);
    const aSeq = seq++;
    const answer =
      kind === 'write'
        ? `Writing the port of ${path}.\n<write_to_file>\n<path>${path}</path>\n<content>\n${proseOf(t + 1000, Math.min(size, 400))}\n</content>\n</write_to_file>`
        : kind === 'command'
          ? `Running the tests.\n<execute_command>\n<command>npm test -- part${t}</command>\n</execute_command>`
          : `Reading ${path}.\n<read_file>\n<path>${path}</path>\n</read_file>`;
    history.push(msg({ seq: aSeq, turn: t, role: 'assistant', kind: 'assistant', content: answer }));
    const output = kind === 'write' ? `Wrote ${path}.` : proseOf(t, size);
    history.push(
      msg({
        seq: seq++,
        turn: t,
        role: 'tool',
        kind: 'tool_result',
        content: output,
        toolName: kind === 'write' ? 'write_to_file' : kind === 'command' ? 'execute_command' : 'read_file',
        toolCallId: `${aSeq}.0`,
        meta: kind === 'command' ? { ok: true, status: 'ok', command: `npm test -- part${t}` } : { ok: true, status: 'ok', path },
      }),
    );
  }
}
