// Rendering the stored history (after the system prompt) into Chat Completions messages, through a
// ContextPlan: dropped messages left out, cleared tool results replaced by a note, large tool
// arguments cut, the oldest part replaced by a summary. The plan is stored per turn, so a retried
// model call renders exactly the same request.
import type { ChatCompletionAssistantMessageParam, ChatCompletionMessageParam, ChatCompletionMessageToolCall } from 'openai/resources/chat/completions';
import type { StoredMessage } from '../types.js';
import { messageIdFor, messageIdHint } from './message-ids.js';

export interface ContextPlan {
  /** Seqs removed by message-id pruning. */
  dropped: number[];
  /** Tool-result seqs replaced by a note. */
  cleared: number[];
  /** Assistant seqs whose large tool arguments were cut to 500 characters. */
  truncatedArgs: number[];
  /** Messages with 0 < seq <= throughSeq are replaced by this summary (the task, seq 0, stays). */
  summary?: { throughSeq: number; content: string };
  tokensBefore: number;
  tokensAfter: number;
  /** Human-readable audit lines. */
  actions: string[];
}

export interface RenderOptions {
  conversationId: string;
  toolFormat: 'xml' | 'native';
  withMessageIds: boolean;
}

export const EMPTY_PLAN: ContextPlan = { dropped: [], cleared: [], truncatedArgs: [], tokensBefore: 0, tokensAfter: 0, actions: [] };

/** Tool arguments that carry whole files or diffs; cut to MAX_ARG_CHARS once they are old. */
export const LARGE_ARGS: Readonly<Record<string, string>> = { write_to_file: 'content', replace_in_file: 'diff' };
export const MAX_ARG_CHARS = 500;

export const SUMMARY_PREFIX = '[summary of earlier conversation]';
export const SUMMARY_ACK = 'Got it. I will continue the task from this summary.';

export function isToolResult(m: Pick<StoredMessage, 'role' | 'kind'>): boolean {
  return m.kind === 'tool_result' || m.role === 'tool';
}

/** en-US digit grouping without depending on the ICU data Node was built with. */
export function formatInt(n: number): string {
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

const TARGET_KEYS = ['path', 'command', 'regex', 'question', 'url', 'query', 'message_ids', 'file_pattern'];

/** What a tool result was about (`src/a.ts`, the command…), from the metadata the tools store. */
function toolTarget(m: Pick<StoredMessage, 'meta'>): string | undefined {
  const meta = m.meta ?? {};
  let target: unknown = meta.target;
  if (typeof target !== 'string') {
    const args = (typeof meta.args === 'object' && meta.args !== null ? meta.args : meta) as Record<string, unknown>;
    target = TARGET_KEYS.map((k) => args[k]).find((v) => typeof v === 'string' && v.length > 0);
  }
  if (typeof target !== 'string' || !target) return undefined;
  const oneLine = target.replace(/\s+/g, ' ').trim();
  return oneLine.length > 100 ? `${oneLine.slice(0, 100)}…` : oneLine;
}

/** The seed's (Cline's) header of a tool result: `[read_file for 'src/a.ts'] Result:`. */
export function toolResultHeader(m: Pick<StoredMessage, 'toolName' | 'meta'>): string {
  const target = toolTarget(m);
  return `[${m.toolName ?? 'tool'}${target ? ` for '${target}'` : ''}] Result:`;
}

export function clearedNote(m: Pick<StoredMessage, 'toolName' | 'meta' | 'tokens'>): string {
  const target = toolTarget(m);
  return `[tool result cleared to save context: ${m.toolName ?? 'tool'}${target ? ` '${target}'` : ''} (${formatInt(m.tokens)} tokens). Run the tool again if you need it.]`;
}

function cutNote(more: number): string {
  return `\n[… ${formatInt(more)} more characters cut to save context; the file on disk has the full text]`;
}

/**
 * Cut every large argument (`<content>` of write_to_file, `<diff>` of replace_in_file) in XML tool
 * uses to MAX_ARG_CHARS. Unlike the seed, all tool uses of a message are handled, not the first.
 */
export function truncateXmlArgs(content: string): { content: string; cutChars: number } {
  let out = '';
  let pos = 0;
  let cutChars = 0;
  for (;;) {
    let next = -1;
    let tool = '';
    for (const name of Object.keys(LARGE_ARGS)) {
      const i = content.indexOf(`<${name}>`, pos);
      if (i >= 0 && (next < 0 || i < next)) {
        next = i;
        tool = name;
      }
    }
    if (next < 0) break;
    const closeTag = `</${tool}>`;
    const closeAt = content.indexOf(closeTag, next);
    const blockEnd = closeAt < 0 ? content.length : closeAt;
    const param = LARGE_ARGS[tool]!;
    const open = `<${param}>`;
    const start = content.indexOf(open, next);
    // The closing tag of the parameter is the last one in the block: file content may mention it.
    const end = start < 0 ? -1 : content.lastIndexOf(`</${param}>`, blockEnd);
    const innerStart = start + open.length;
    if (start >= 0 && start < blockEnd && end >= innerStart && end - innerStart > MAX_ARG_CHARS) {
      const more = end - innerStart - MAX_ARG_CHARS;
      out += content.slice(pos, innerStart + MAX_ARG_CHARS) + cutNote(more);
      cutChars += more;
      pos = end;
    }
    const resume = closeAt < 0 ? content.length : closeAt + closeTag.length;
    out += content.slice(pos, resume);
    pos = resume;
  }
  return { content: out + content.slice(pos), cutChars };
}

/** The same for native tool calls: the large string field of the JSON arguments is cut. */
export function truncateNativeArgs(calls: NonNullable<StoredMessage['toolCalls']>): { toolCalls: NonNullable<StoredMessage['toolCalls']>; cutChars: number } {
  let cutChars = 0;
  const toolCalls = calls.map((call) => {
    const field = LARGE_ARGS[call.name];
    if (!field || call.arguments.length <= MAX_ARG_CHARS) return call;
    let args: unknown;
    try {
      args = JSON.parse(call.arguments);
    } catch {
      return call;
    }
    if (typeof args !== 'object' || args === null) return call;
    const value = (args as Record<string, unknown>)[field];
    if (typeof value !== 'string' || value.length <= MAX_ARG_CHARS) return call;
    const more = value.length - MAX_ARG_CHARS;
    cutChars += more;
    return { ...call, arguments: JSON.stringify({ ...(args as object), [field]: value.slice(0, MAX_ARG_CHARS) + cutNote(more) }) };
  });
  return { toolCalls, cutChars };
}

type Out = ChatCompletionMessageParam;

export function renderMessages(messages: StoredMessage[], plan: ContextPlan, opts: RenderOptions): ChatCompletionMessageParam[] {
  const dropped = new Set(plan.dropped);
  const cleared = new Set(plan.cleared);
  const truncated = new Set(plan.truncatedArgs);
  const summaryThrough = plan.summary ? plan.summary.throughSeq : 0;
  const native = opts.toolFormat === 'native';
  const sorted = isSorted(messages) ? messages : [...messages].sort((a, b) => a.seq - b.seq);

  const hint = (seq: number, text: string) => (opts.withMessageIds ? `${messageIdHint(messageIdFor(opts.conversationId, seq))}\n${text}` : text);
  // Rendered id of each native call, by `${seq}.${index}` and by provider id, for the tool messages.
  const callIds = new Map<string, string>();
  const out: Out[] = [];
  const summaryMsg: Out | undefined = plan.summary ? { role: 'user', content: `${SUMMARY_PREFIX}\n${plan.summary.content.trim()}` } : undefined;
  let summaryPlaced = !summaryMsg;
  // The summary goes right after the task (seq 0), before everything it does not replace.
  const placeSummary = () => {
    if (summaryPlaced) return;
    summaryPlaced = true;
    out.push(summaryMsg!);
  };

  for (const m of sorted) {
    if (m.seq > 0 && m.seq <= summaryThrough) continue;
    if (dropped.has(m.seq) && m.seq !== 0) continue;
    if (m.seq > 0) placeSummary();

    if (m.role === 'assistant') {
      let content = m.content ?? '';
      let calls = m.toolCalls ?? [];
      if (truncated.has(m.seq)) {
        content = truncateXmlArgs(content).content;
        calls = truncateNativeArgs(calls).toolCalls;
      }
      if (native && calls.length) {
        const toolCalls: ChatCompletionMessageToolCall[] = calls.map((c, i) => {
          const id = c.id || `call_${m.seq}_${i}`;
          callIds.set(`${m.seq}.${i}`, id);
          callIds.set(id, id);
          return { id, type: 'function', function: { name: c.name, arguments: c.arguments } };
        });
        const msg: ChatCompletionAssistantMessageParam = { role: 'assistant', content: content || null, tool_calls: toolCalls };
        out.push(msg);
      } else {
        out.push({ role: 'assistant', content });
      }
      continue;
    }

    if (isToolResult(m)) {
      const body = cleared.has(m.seq) ? clearedNote(m) : m.content;
      if (native) {
        const nativeId = typeof m.meta?.nativeId === 'string' ? m.meta.nativeId : undefined;
        const id = (m.toolCallId && callIds.get(m.toolCallId)) ?? (nativeId && callIds.get(nativeId)) ?? undefined;
        if (id) {
          out.push({ role: 'tool', tool_call_id: id, content: hint(m.seq, body) });
          continue;
        }
        // Its call is not in the request (e.g. an XML-era call): keep the text as a user message.
      }
      const text = cleared.has(m.seq) ? body : `${toolResultHeader(m)}\n${body}`;
      out.push({ role: 'user', content: hint(m.seq, text) });
      continue;
    }

    // task, user, answer, reminder, notice (and any stray system message): the user side.
    out.push({ role: 'user', content: hint(m.seq, m.content) });
  }
  placeSummary();
  return finish(out, native, summaryMsg);
}

function isSorted(messages: StoredMessage[]): boolean {
  for (let i = 1; i < messages.length; i++) if (messages[i - 1]!.seq > messages[i]!.seq) return false;
  return true;
}

/**
 * Make the sequence acceptable to strict providers: consecutive user messages merged (several
 * XML tool results of one answer, the task followed by the summary), an assistant ack after the
 * summary when a user message would follow, every native tool call answered.
 */
function finish(out: Out[], native: boolean, summaryMsg: Out | undefined): Out[] {
  const result: Out[] = [];
  for (let i = 0; i < out.length; i++) {
    const m = out[i]!;
    if (native && m.role !== 'tool') answerMissing(result);
    const prevNow = result[result.length - 1];
    if (m === summaryMsg && typeof m.content === 'string') {
      pushUser(result, m.content);
      const next = out[i + 1];
      if (next && next.role !== 'assistant') result.push({ role: 'assistant', content: SUMMARY_ACK });
      continue;
    }
    if (m.role === 'user' && typeof m.content === 'string') {
      pushUser(result, m.content);
      continue;
    }
    if (m.role === 'assistant' && prevNow?.role === 'assistant' && !prevNow.tool_calls?.length && !m.tool_calls?.length) {
      // Two answers in a row (the message between them was dropped): one message, no lost text.
      prevNow.content = [prevNow.content, m.content].filter((c) => typeof c === 'string' && c).join('\n\n');
      continue;
    }
    result.push(m);
  }
  if (native) answerMissing(result);
  return result;
}

function pushUser(result: Out[], content: string): void {
  const prev = result[result.length - 1];
  if (prev?.role === 'user' && typeof prev.content === 'string') prev.content = `${prev.content}\n\n${content}`;
  else result.push({ role: 'user', content });
}

/** Native calls without a result (a crash between call and result): the API refuses those. */
function answerMissing(result: Out[]): void {
  let a = result.length - 1;
  while (a >= 0 && result[a]!.role === 'tool') a--;
  const assistant = result[a];
  if (!assistant || assistant.role !== 'assistant' || !assistant.tool_calls?.length) return;
  const answered = new Set(result.slice(a + 1).map((m) => (m.role === 'tool' ? m.tool_call_id : '')));
  for (const call of assistant.tool_calls) {
    if (!answered.has(call.id)) result.push({ role: 'tool', tool_call_id: call.id, content: '[no result was recorded for this call]' });
  }
}
