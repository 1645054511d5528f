// The data behind the conversation charts of the web page: context tokens per turn against the
// safe zone (before and after pruning, so prunes and summaries show as drops), tokens and cost
// per turn, and the timeline of the session's steps (task-queue and local activities, each with
// its turn where the history says; attempts, failures) and events (waits, signals) from the same
// histories `agentrun inspect` reads.
import type { Client } from '@temporalio/client';
import { conversationTimeline, type TimelineActivity, type TimelineEvent } from '../client/inspection.js';
import { contextWindowFor } from '../model/tokens.js';
import { parseSafeZone } from '../context/safe-zone.js';
import type { Store } from '../store/index.js';

interface TurnPoint {
  turn: number;
  /** The request's tokens before pruning and after it (what was sent). */
  contextBefore: number | null;
  contextAfter: number | null;
  /** What pruning did at this turn (empty when nothing was pruned). */
  pruned: string[];
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  requests: number;
}

export interface ChartData {
  window: number;
  safeZone: number;
  turns: TurnPoint[];
  activities: TimelineActivity[];
  events: TimelineEvent[];
}

export async function chartData(store: Store, client: Client, id: string): Promise<ChartData | undefined> {
  const row = await store.getConversation(id);
  if (!row) return undefined;
  const config = (row.config ?? {}) as { safeZone?: string | number; contextWindow?: number };
  const window = config.contextWindow ?? contextWindowFor(row.model);
  const [usage, prunes, timeline] = await Promise.all([store.getUsage(id), store.getPruneRecords(id), conversationTimeline(client, id, { local: true })]);
  const turns = new Map<number, TurnPoint>();
  const point = (turn: number) => {
    let p = turns.get(turn);
    if (!p) turns.set(turn, (p = { turn, contextBefore: null, contextAfter: null, pruned: [], promptTokens: 0, completionTokens: 0, costUsd: 0, requests: 0 }));
    return p;
  };
  for (let t = 1; t <= row.turns + 1; t++) {
    const ctx = await store.getContext(id, t);
    if (!ctx) continue;
    const p = point(t);
    const plan = (ctx.plan?.plan ?? ctx.plan ?? {}) as { tokensBefore?: number; tokensAfter?: number };
    p.contextAfter = ctx.promptTokens;
    p.contextBefore = plan.tokensBefore ?? ctx.promptTokens;
  }
  for (const r of prunes) if (r.tokensBefore !== r.tokensAfter || r.actions.length) point(r.turn).pruned.push(...r.actions);
  for (const u of usage) {
    const p = point(u.turn);
    p.promptTokens += u.usage.promptTokens;
    p.completionTokens += u.usage.completionTokens;
    p.costUsd += u.costUsd;
    p.requests++;
  }
  return {
    window,
    safeZone: parseSafeZone(config.safeZone, window),
    turns: [...turns.values()].sort((a, b) => a.turn - b.turn),
    activities: timeline.activities,
    events: timeline.events,
  };
}
