// Summarisation of the oldest part of a conversation into a structured snapshot, as Gemini CLI's
// chat compression does: a private scratchpad, then a <state_snapshot> that becomes the agent's
// only memory of that part. The conversation goes in as one transcript (not as chat turns), so
// native tool calls need no pairing and the model does not take it up as its own conversation.
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { StoredMessage } from '../types.js';
import { isToolResult, toolResultHeader, truncateNativeArgs, truncateXmlArgs } from './render.js';

export const COMPRESSION_PROMPT = `You are the component that summarizes internal chat history into a given structure.

When the conversation history grows too large, you will be invoked to distill the entire history into a concise, structured XML snapshot. This snapshot is CRITICAL, as it will become the agent's *only* memory of the past. The agent will resume its work based solely on this snapshot and the most recent messages. All crucial details, plans, errors, and user directives MUST be preserved.

First, you will think through the entire history in a private <scratchpad>. Review the user's overall goal, the agent's actions, tool outputs, file modifications, and any unresolved questions. Identify every piece of information that is essential for future actions.

After your reasoning is complete, generate the final <state_snapshot> XML object. Be incredibly dense with information. Omit any irrelevant conversational filler.

The structure MUST be as follows:

<state_snapshot>
    <overall_goal>
        <!-- A single, concise sentence describing the user's high-level objective. -->
    </overall_goal>

    <key_knowledge>
        <!-- Crucial facts, conventions, and constraints the agent must remember: build and test commands, project conventions, API details, decisions, errors and their causes. Use bullet points. -->
    </key_knowledge>

    <file_system_state>
        <!-- Files that were created, read, modified or deleted, each with its status and the critical learnings. Example:
         - CWD: /home/user/project
         - READ: package.json - uses vitest for tests.
         - MODIFIED: src/services/auth.ts - replaced 'jsonwebtoken' with 'jose'.
         - CREATED: tests/new-feature.test.ts - initial test structure.
        -->
    </file_system_state>

    <recent_actions>
        <!-- The last few significant actions and their outcomes, factual. -->
    </recent_actions>

    <current_plan>
        <!-- The step-by-step plan, each step marked [DONE], [IN PROGRESS] or [TODO]. -->
    </current_plan>
</state_snapshot>`;

export const SNAPSHOT_INSTRUCTION = 'First, reason in your scratchpad. Then, generate the <state_snapshot>.';

export interface SummaryRequestOptions {
  /** The summary this one replaces (covering seqs before the range), carried forward. */
  previous?: { throughSeq: number; content: string };
  /** Budget for the transcript, in characters (default 400,000, ~100k tokens). */
  maxChars?: number;
}

const DEFAULT_MAX_CHARS = 400_000;
/** Each tool result and each assistant message is cut to this (head and tail) in the transcript. */
const RESULT_CHARS = 4_000;
const ASSISTANT_CHARS = 6_000;
/** When the transcript is still over budget, the oldest entries shrink to this. */
const PREVIEW_CHARS = 300;

function headTail(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.7);
  const tail = max - head;
  return `${text.slice(0, head)}\n[… ${text.length - max} characters omitted …]\n${text.slice(text.length - tail)}`;
}

function entry(m: StoredMessage, max: { result: number; assistant: number }): string {
  if (m.role === 'assistant') {
    let text = truncateXmlArgs(m.content ?? '').content;
    const calls = truncateNativeArgs(m.toolCalls ?? []).toolCalls;
    for (const c of calls) text += `\n[tool call] ${c.name} ${c.arguments}`;
    return `[assistant, turn ${m.turn}]\n${headTail(text.trim(), max.assistant)}`;
  }
  if (isToolResult(m)) {
    const status = typeof m.meta?.status === 'string' && m.meta.status !== 'ok' ? ` (${m.meta.status})` : '';
    return `${toolResultHeader(m)}${status}\n${headTail(m.content, max.result)}`;
  }
  const who = m.kind === 'task' ? 'task' : m.kind === 'answer' ? 'user answer' : m.kind === 'user' ? 'user' : 'runner note';
  // What people said is kept whole: user directives must survive the summary.
  return `[${who}]\n${m.content}`;
}

/**
 * The request that asks the model for a <state_snapshot> of seqs 1..throughSeq (the task, seq 0,
 * is shown for context but stays in the conversation anyway). Bounded by `maxChars`: long outputs
 * are cut to head and tail, and the oldest entries shrink further if needed, so the request fits
 * the model even when the range is far larger than its window.
 */
export function summaryRequest(messages: StoredMessage[], throughSeq: number, opts: SummaryRequestOptions = {}): ChatCompletionMessageParam[] {
  const maxChars = opts.maxChars ?? DEFAULT_MAX_CHARS;
  const previous = opts.previous && opts.previous.throughSeq < throughSeq ? opts.previous : undefined;
  const from = previous ? previous.throughSeq : 0;
  const task = messages.find((m) => m.seq === 0);
  const range = messages.filter((m) => m.seq > from && m.seq <= throughSeq).sort((a, b) => a.seq - b.seq);

  const entries = range.map((m) => entry(m, { result: RESULT_CHARS, assistant: ASSISTANT_CHARS }));
  const fixed = (task?.content.length ?? 0) + (previous?.content.length ?? 0) + 500;
  let size = fixed + entries.reduce((n, e) => n + e.length + 2, 0);
  // Oldest first: the newest part of the range matters most for "recent actions". What people
  // said is never shortened.
  for (let i = 0; i < entries.length && size > maxChars; i++) {
    const m = range[i]!;
    if (m.role === 'user' && !isToolResult(m)) continue;
    const small = entry(m, { result: PREVIEW_CHARS, assistant: PREVIEW_CHARS });
    size -= entries[i]!.length - small.length;
    entries[i] = small;
  }
  for (let i = 0; i < entries.length && size > maxChars; i++) {
    const m = range[i]!;
    if (m.role === 'user' && !isToolResult(m)) continue;
    size -= entries[i]!.length - 60;
    entries[i] = `[${range[i]!.role}, seq ${range[i]!.seq}: omitted for length]`;
  }

  const parts: string[] = [];
  if (task) parts.push(`<task>\n${task.content}\n</task>`);
  if (previous)
    parts.push(
      `<previous_state_snapshot>\n${previous.content.trim()}\n</previous_state_snapshot>\nThe snapshot above covers the conversation before the transcript below; fold it into the new snapshot.`,
    );
  parts.push(`<transcript>\n${entries.join('\n\n')}\n</transcript>`);
  parts.push(SNAPSHOT_INSTRUCTION);
  return [
    { role: 'system', content: COMPRESSION_PROMPT },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

/**
 * The snapshot out of the model's answer: the <state_snapshot> element, without the scratchpad.
 * Undefined when the answer holds nothing usable (an empty summary is a failure).
 */
export function extractSnapshot(answer: string): string | undefined {
  const start = answer.lastIndexOf('<state_snapshot>');
  if (start >= 0) {
    const end = answer.indexOf('</state_snapshot>', start);
    const snap = end >= 0 ? answer.slice(start, end + '</state_snapshot>'.length) : `${answer.slice(start).trim()}\n</state_snapshot>`;
    return snap.replace(/\s+$/, '');
  }
  const rest = answer.replace(/<scratchpad>[\s\S]*?(<\/scratchpad>|$)/g, '').trim();
  return rest ? rest : undefined;
}

/** A summary is only worth keeping if it is smaller than what it replaces. */
export function acceptSummary(summaryTokens: number, replacedTokens: number): boolean {
  return summaryTokens > 0 && summaryTokens < replacedTokens;
}
