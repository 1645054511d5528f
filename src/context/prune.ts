// The pruning pipeline, run before every model call until the request fits the safe zone:
//   (a) messages the model marked by id are dropped, with the rest of their exchange;
//   (b) what the previous turn's plan cleared or cut stays so (the prefix the provider cached);
//   when the request still exceeds the safe zone, a pruning step takes it down to the low-water
//   mark (pruneTarget of the safe zone), so the next turns only append until it is reached again:
//   (c) old tool results are cleared and old large tool arguments cut, oldest first, the newest
//       turns left whole (half of them, if that is what reaching the mark takes);
//   (d) still over the mark: ask for a summary of the oldest part, split at a turn boundary
//       (the caller makes it and plans again with it);
//   (e) no summary possible and over the safe zone: last resort inside the newest turns, then
//       give up (fits=false).
// Pure and O(n): it reads the token counts stored with each message and never re-tokenizes.
// The plan is recomputed from the store each turn, so it is the same after continue-as-new.
import type { StoredMessage } from '../types.js';
import { messageIdFor } from './message-ids.js';
import { LARGE_ARGS, MAX_ARG_CHARS, SUMMARY_ACK, SUMMARY_PREFIX, clearedNote, formatInt, isToolResult, toolResultHeader, type ContextPlan } from './render.js';
import { MESSAGE_OVERHEAD_TOKENS } from '../model/tokens.js';

export interface PruneInput {
  conversationId: string;
  /** The history, seq 0 (the task) first; each message's `tokens` was counted when it was written. */
  messages: StoredMessage[];
  systemTokens: number;
  safeZone: number;
  /** Ids the model marked for deletion with conversation_message_ids_write. */
  markedIds: { ids: string[] };
  /** The latest accepted summary, if any: always applied. */
  summary?: { throughSeq: number; content: string; tokens: number };
  /** Newest turns whose tool results and arguments are never cleared (except as a last resort). */
  keepRecentTurns: number;
  /** After a provider context-length error: half the protected turns, aim at 70% of the safe zone. */
  harder?: boolean;
  /** A summary attempt through this seq failed or did not shrink the request: don't ask again soon. */
  summaryFailedThroughSeq?: number;
  /**
   * The low-water mark of a pruning step as a fraction of the safe zone (default 0.6): lower keeps
   * less context and breaks the provider's prompt cache less often. 1 prunes to the limit, every turn.
   */
  pruneTarget?: number;
  /** What the previous turn's request had cleared and cut: kept so, to keep its prefix unchanged. */
  previous?: Pick<ContextPlan, 'cleared' | 'truncatedArgs'>;
}

export interface PruneResult {
  plan: ContextPlan;
  /** The request (system + history) is within the safe zone. */
  fits: boolean;
  /** Set when a summary of seqs 1..throughSeq is what would help next. */
  needsSummary?: { throughSeq: number };
}

/** `[message_id: 1a2b3c4d]\n` is 14 tokens in both encodings. */
const ID_HINT_TOKENS = 14;
/** Share of the history the summary replaces (Gemini CLI keeps the newest 30%). */
const SUMMARY_FRACTION = 0.7;
/** Harder pass: aim this far below the low-water mark. */
const HARDER_TARGET = 0.7;
/** Default low-water mark of a pruning step, as a fraction of the safe zone (Gemini CLI: 70% → 30% of the window). */
const DEFAULT_PRUNE_TARGET = 0.6;
/** A summary is estimated at this many tokens when choosing how much it must replace. */
const SUMMARY_ESTIMATE_TOKENS = 1_500;
/** Results this small are left alone: the note would not save anything worth the lost detail. */
const MIN_CLEAR_TOKENS = 64;
/** A summary must replace at least this much, or it is not worth a model call. */
const SUMMARY_MIN_TOKENS = 2_000;
/** After a failed summary, ask again only once the range grew by this many messages (or 25%). */
const SUMMARY_RETRY_GROWTH = 10;

/** Generated text we don't tokenize: ~3 characters per token over-counts code and English alike. */
function estimate(text: string): number {
  return Math.ceil(text.length / 3);
}

interface Group {
  /** Indexes into the message array, contiguous. */
  first: number;
  last: number;
}

interface Item {
  index: number;
  kind: 'clear' | 'args';
  saves: number;
}

export function planContext(input: PruneInput): PruneResult {
  const msgs = isSorted(input.messages) ? input.messages : [...input.messages].sort((a, b) => a.seq - b.seq);
  const n = msgs.length;
  const harder = input.harder ?? false;
  const fraction = Math.min(1, Math.max(0.05, input.pruneTarget ?? DEFAULT_PRUNE_TARGET));
  // The low-water mark a pruning step goes down to; the safe zone is what starts one.
  const target = Math.floor(input.safeZone * fraction * (harder ? HARDER_TARGET : 1));
  const keepTurns = harder ? Math.floor(input.keepRecentTurns / 2) : input.keepRecentTurns;
  const actions: string[] = [];

  // What each message costs as rendered: its stored count, plus the id hint and result header.
  const cost = new Array<number>(n);
  let rawTotal = input.systemTokens;
  for (let i = 0; i < n; i++) {
    const m = msgs[i]!;
    let c = m.tokens;
    if (isToolResult(m)) c += ID_HINT_TOKENS + estimate(toolResultHeader(m));
    else if (m.role !== 'assistant') c += ID_HINT_TOKENS;
    cost[i] = c;
    rawTotal += c;
  }

  // Cost after cleanup, for choosing the summary split by what the request really holds.
  const eff = cost.slice();
  const removed = new Uint8Array(n); // 1 = dropped by id, 2 = inside the summary
  let total = rawTotal;

  // The stored summary, if any, replaces everything it covers (but the task).
  const summaryThrough = input.summary && input.summary.throughSeq > 0 ? input.summary.throughSeq : 0;
  let plannedSummary: ContextPlan['summary'];
  if (input.summary && summaryThrough > 0) {
    let replaced = 0;
    let count = 0;
    for (let i = 0; i < n; i++) {
      const m = msgs[i]!;
      if (m.seq > 0 && m.seq <= summaryThrough) {
        removed[i] = 2;
        replaced += cost[i]!;
        count++;
      }
    }
    const summaryCost = input.summary.tokens + MESSAGE_OVERHEAD_TOKENS + estimate(SUMMARY_PREFIX) + MESSAGE_OVERHEAD_TOKENS + estimate(SUMMARY_ACK);
    total += summaryCost - replaced;
    plannedSummary = { throughSeq: summaryThrough, content: input.summary.content };
    actions.push(`summary of seqs 1–${summaryThrough} in place of ${count} messages (${formatInt(replaced)} → ${formatInt(summaryCost)} tokens)`);
  }

  // Exchanges: user-side messages, the answer that follows, and its tool results. The model's
  // deletions take whole exchanges, so no call loses its result and no question its answer.
  const groups: Group[] = [];
  const groupOf = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const m = msgs[i]!;
    if (m.seq === 0 || removed[i]) continue;
    const cur = groups[groups.length - 1];
    const contiguous = cur !== undefined && cur.last === i - 1;
    let join = false;
    if (contiguous) {
      if (isToolResult(m)) join = true;
      else {
        const curHasAnswer = hasAssistant(msgs, cur);
        // A question and its answer stay together; several user-side messages in a row too.
        join = !curHasAnswer;
      }
    }
    if (join) cur!.last = i;
    else groups.push({ first: i, last: i });
    groupOf[i] = groups.length - 1;
  }

  let newestTurn = -Infinity;
  for (let i = 0; i < n; i++) if (msgs[i]!.seq > 0) newestTurn = Math.max(newestTurn, msgs[i]!.turn);
  // The newest `keepTurns` distinct turns are protected from cleanup.
  const protectFrom = protectedTurnFloor(msgs, keepTurns);
  const isProtected = (i: number) => msgs[i]!.seq > 0 && msgs[i]!.turn >= protectFrom;

  // (a) Message-id pruning. Applied on every pass, not only under pressure: the model asked for it,
  // and messages that come and go with the budget would confuse it.
  const dropped: number[] = [];
  if (input.markedIds.ids.length) {
    const marked = new Set(input.markedIds.ids.map((id) => id.trim().toLowerCase()));
    const lastGroup = groups.length - 1;
    const hitGroups = new Set<number>();
    let kept = 0;
    for (let i = 0; i < n; i++) {
      if (groupOf[i]! < 0 || !marked.has(messageIdFor(input.conversationId, msgs[i]!.seq))) continue;
      const g = groupOf[i]!;
      const group = groups[g]!;
      let touchesNewest = g === lastGroup;
      for (let j = group.first; j <= group.last && !touchesNewest; j++) touchesNewest = msgs[j]!.turn >= newestTurn;
      if (touchesNewest) kept++;
      else hitGroups.add(g);
    }
    let tokens = 0;
    for (const g of [...hitGroups].sort((a, b) => a - b)) {
      const group = groups[g]!;
      for (let j = group.first; j <= group.last; j++) {
        removed[j] = 1;
        dropped.push(msgs[j]!.seq);
        tokens += cost[j]!;
      }
    }
    total -= tokens;
    if (dropped.length) actions.push(`dropped ${dropped.length} messages marked by the model (${formatInt(tokens)} tokens)`);
    if (kept) actions.push(`kept ${kept} marked messages of the newest turn`);
  }

  const cleared: number[] = [];
  const truncatedArgs: number[] = [];
  const done = new Uint8Array(n); // cleanup already applied to this message

  /** Cleanup items among messages for which `eligible(i)` holds, oldest first. */
  const itemsFor = (eligible: (i: number) => boolean): Item[] => {
    const items: Item[] = [];
    for (let i = 0; i < n; i++) {
      if (removed[i] || done[i] || !eligible(i)) continue;
      const m = msgs[i]!;
      if (isToolResult(m)) {
        const saves = cost[i]! - (MESSAGE_OVERHEAD_TOKENS + ID_HINT_TOKENS + estimate(clearedNote(m)));
        if (m.tokens >= MIN_CLEAR_TOKENS && saves > 0) items.push({ index: i, kind: 'clear', saves });
      } else if (m.role === 'assistant') {
        const saves = argSavings(m);
        if (saves > 0) items.push({ index: i, kind: 'args', saves });
      }
    }
    return items;
  };

  /** Apply items in order until the request is within `limit`. */
  const applyUntil = (items: Item[], limit: number): { results: number; args: number; tokens: number } => {
    const stats = { results: 0, args: 0, tokens: 0 };
    for (const item of items) {
      if (total <= limit) break;
      apply(item);
      stats.tokens += item.saves;
      if (item.kind === 'clear') stats.results++;
      else stats.args++;
    }
    return stats;
  };
  const apply = (item: Item) => {
    const m = msgs[item.index]!;
    done[item.index] = 1;
    eff[item.index] = eff[item.index]! - item.saves;
    total -= item.saves;
    (item.kind === 'clear' ? cleared : truncatedArgs).push(m.seq);
  };

  // (b) What the previous request had cleared and cut stays so: its prefix is what the provider
  // cached. Not an action: nothing changes in the request.
  if (input.previous && (input.previous.cleared.length || input.previous.truncatedArgs.length)) {
    const clearedBefore = new Set(input.previous.cleared);
    const cutBefore = new Set(input.previous.truncatedArgs);
    for (const item of itemsFor(() => true)) {
      const seq = msgs[item.index]!.seq;
      if (item.kind === 'clear' ? clearedBefore.has(seq) : cutBefore.has(seq)) apply(item);
    }
  }

  // A pruning step starts only when the request would exceed the safe zone (or the provider
  // refused it), and then goes down to the low-water mark: the turns after it append.
  const step = harder || total > input.safeZone;

  // (c) Cleanup outside the protected turns, oldest first; half of them too if the mark needs it.
  if (step && total > target) {
    const s = applyUntil(
      itemsFor((i) => !isProtected(i)),
      target,
    );
    if (s.results || s.args) actions.push(`cleared ${describeCleanup(s)} outside the newest ${keepTurns} turns`);
    const half = Math.max(1, Math.floor(keepTurns / 2));
    if (total > target && half < keepTurns) {
      const floor = protectedTurnFloor(msgs, half);
      const h = applyUntil(
        itemsFor((i) => msgs[i]!.seq > 0 && msgs[i]!.turn < floor),
        target,
      );
      if (h.results || h.args) actions.push(`cleared ${describeCleanup(h)} outside the newest ${half} turns to reach the low-water mark`);
    }
  }

  // (d) Summary of the oldest part, split where a new exchange starts.
  let needsSummary: PruneResult['needsSummary'];
  if (step && total > target) {
    const split = summarySplit(msgs, groups, removed, eff, summaryThrough, isProtected, total - target + SUMMARY_ESTIMATE_TOKENS);
    const failed = input.summaryFailedThroughSeq;
    let blocked = false;
    if (split !== undefined && failed !== undefined && failed >= summaryThrough) {
      const growth = Math.max(SUMMARY_RETRY_GROWTH, Math.ceil((failed - summaryThrough) * 0.25));
      blocked = split < failed + growth;
    }
    if (split !== undefined && !blocked) {
      needsSummary = { throughSeq: split };
      actions.push(`summary needed of seqs ${summaryThrough + 1}–${split}`);
    } else if (split !== undefined) {
      actions.push(`no new summary: the attempt through seq ${failed} failed`);
    }
  }

  // (e) Last resort before giving up: the protected turns too, the newest last.
  if (total > input.safeZone && !needsSummary) {
    const s = applyUntil(
      itemsFor(() => true),
      target,
    );
    if (s.results || s.args) actions.push(`last resort: cleared ${describeCleanup(s)} inside the newest turns`);
  }

  const fits = total <= input.safeZone;
  if (!fits && !needsSummary) actions.push(`does not fit: ${formatInt(total)} tokens over the safe zone of ${formatInt(input.safeZone)}`);

  const plan: ContextPlan = {
    dropped,
    cleared: cleared.sort((a, b) => a - b),
    truncatedArgs: truncatedArgs.sort((a, b) => a - b),
    ...(plannedSummary ? { summary: plannedSummary } : {}),
    tokensBefore: rawTotal,
    tokensAfter: Math.max(0, total),
    actions,
  };
  return needsSummary ? { plan, fits, needsSummary } : { plan, fits };
}

function describeCleanup(s: { results: number; args: number; tokens: number }): string {
  const parts: string[] = [];
  if (s.results) parts.push(`${s.results} tool result${s.results === 1 ? '' : 's'}`);
  if (s.args) parts.push(`large arguments of ${s.args} tool use${s.args === 1 ? '' : 's'}`);
  return `${parts.join(' and ')} (${formatInt(s.tokens)} tokens)`;
}

function isSorted(messages: StoredMessage[]): boolean {
  for (let i = 1; i < messages.length; i++) if (messages[i - 1]!.seq > messages[i]!.seq) return false;
  return true;
}

function hasAssistant(msgs: StoredMessage[], g: Group): boolean {
  for (let j = g.first; j <= g.last; j++) if (msgs[j]!.role === 'assistant') return true;
  return false;
}

/** Lowest turn number among the newest `keep` distinct turns (Infinity when keep is 0). */
function protectedTurnFloor(msgs: StoredMessage[], keep: number): number {
  if (keep <= 0) return Infinity;
  const seen = new Set<number>();
  let floor = Infinity;
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i]!;
    if (m.seq === 0) continue;
    if (!seen.has(m.turn)) {
      if (seen.size === keep) continue;
      seen.add(m.turn);
      floor = Math.min(floor, m.turn);
    }
  }
  return floor;
}

/**
 * Tokens saved by cutting the large arguments of an assistant message, from the character counts
 * and the message's own tokens-per-character (no tokenizing).
 */
function argSavings(m: StoredMessage): number {
  let chars = m.content.length;
  let cut = 0;
  for (const [tool, param] of Object.entries(LARGE_ARGS)) {
    let from = 0;
    for (;;) {
      const at = m.content.indexOf(`<${tool}>`, from);
      if (at < 0) break;
      const close = m.content.indexOf(`</${tool}>`, at);
      const blockEnd = close < 0 ? m.content.length : close;
      const start = m.content.indexOf(`<${param}>`, at);
      const end = start < 0 ? -1 : m.content.lastIndexOf(`</${param}>`, blockEnd);
      const inner = end - (start + param.length + 2);
      if (start >= 0 && start < blockEnd && inner > MAX_ARG_CHARS) cut += inner - MAX_ARG_CHARS;
      from = close < 0 ? m.content.length : close + tool.length + 3;
    }
  }
  for (const call of m.toolCalls ?? []) {
    chars += call.arguments.length;
    const param = LARGE_ARGS[call.name];
    if (!param || call.arguments.length <= MAX_ARG_CHARS) continue;
    try {
      const value = (JSON.parse(call.arguments) as Record<string, unknown>)[param];
      if (typeof value === 'string' && value.length > MAX_ARG_CHARS) cut += value.length - MAX_ARG_CHARS;
    } catch {
      // Unparseable arguments are rendered as they are.
    }
  }
  if (cut === 0) return 0;
  // The note that replaces the cut text costs ~25 tokens per argument; keep it simple and subtract one.
  return Math.floor((cut * m.tokens) / Math.max(1, chars)) - 25;
}

/**
 * The last seq of the oldest ~70% of the live history (more if the low-water mark needs it), ending
 * where an exchange ends, outside the protected turns, after any existing summary. Undefined when
 * no such split exists.
 */
function summarySplit(
  msgs: StoredMessage[],
  groups: Group[],
  removed: Uint8Array,
  cost: number[],
  summaryThrough: number,
  isProtected: (i: number) => boolean,
  /** Tokens the summarised part must hold for the request to reach the low-water mark. */
  excess: number,
): number | undefined {
  let live = 0;
  for (let i = 0; i < msgs.length; i++) if (msgs[i]!.seq > 0 && !removed[i]) live += cost[i]!;
  const goal = Math.max(live * SUMMARY_FRACTION, excess);
  let cumulative = 0;
  let lastSplit: number | undefined;
  for (const g of groups) {
    // The kept part starts at this group: everything before it is summarised.
    if (isProtected(g.first)) break;
    for (let j = g.first; j <= g.last; j++) if (!removed[j]) cumulative += cost[j]!;
    // A group's end is a boundary if the next message starts a new exchange (never a tool result).
    const next = msgs[g.last + 1];
    if (next && isToolResult(next)) continue;
    const throughSeq = msgs[g.last]!.seq;
    if (throughSeq <= summaryThrough || cumulative < SUMMARY_MIN_TOKENS) continue;
    lastSplit = throughSeq;
    if (cumulative >= goal) return throughSeq;
  }
  return lastSplit;
}
