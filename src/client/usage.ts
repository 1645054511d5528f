// Model usage summed per turn from the per-call rows (the usage table), with the provider's cached
// prompt tokens: what `inspect` prints and the page charts. Shared by CLI, SDK and page.
import { cacheHitRate, type Usage } from '../types.js';

export interface TurnUsage {
  turn: number;
  promptTokens: number;
  /** Prompt tokens the provider served from its prompt cache. */
  cachedTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number;
  /** Model calls: segments, retried attempts and summaries included. */
  requests: number;
}

export function usageByTurn(rows: readonly { turn: number; usage: Usage; costUsd: number }[]): TurnUsage[] {
  const byTurn = new Map<number, TurnUsage>();
  for (const u of rows) {
    let t = byTurn.get(u.turn);
    if (!t) byTurn.set(u.turn, (t = { turn: u.turn, promptTokens: 0, cachedTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: 0, requests: 0 }));
    t.promptTokens += u.usage.promptTokens;
    t.cachedTokens += u.usage.cachedTokens ?? 0;
    t.completionTokens += u.usage.completionTokens;
    t.totalTokens += u.usage.totalTokens;
    t.costUsd += u.costUsd;
    t.requests++;
  }
  return [...byTurn.values()].sort((a, b) => a.turn - b.turn).map((t) => ({ ...t, costUsd: Math.round(t.costUsd * 1e8) / 1e8 }));
}

/** The conversation's prompt tokens, cached share and cost over all its model calls. */
export function cacheSummary(turns: readonly TurnUsage[]): { promptTokens: number; cachedTokens: number; hitRate: number | undefined } {
  const promptTokens = turns.reduce((n, t) => n + t.promptTokens, 0);
  const cachedTokens = turns.reduce((n, t) => n + t.cachedTokens, 0);
  return { promptTokens, cachedTokens, hitRate: cacheHitRate({ promptTokens, cachedTokens }) };
}
