// `agentrun budget raise <id>`: new limits for a conversation that is running or awaiting_budget
// (workflows/session/budget.ts). The workflow's validator refuses a raise below what was spent or of a
// finished conversation; that refusal is one line and exit 2 (talk()).
import { parseDuration } from '../duration.js';
import { raiseBudgetUpdate, type BudgetRaise } from '../../workflows/api.js';
import { emit, talk, type GlobalFlags } from './commands.js';
import { CliError, EXIT } from './errors.js';

export interface BudgetRaiseFlags extends GlobalFlags {
  maxCost?: string;
  addCost?: string;
  maxTokens?: string;
  maxTurns?: string;
  maxTime?: string;
  as?: string;
}

function number(flag: string, v: string | undefined, whole: boolean): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || (whole && !Number.isInteger(n)))
    throw new CliError(`${flag} must be ${whole ? 'a whole number' : 'a number'} ≥ 0, got "${v}"`);
  return n;
}

/** The flags as a raise; bad values are one line (exit 2) before anything is sent. */
export function budgetRaiseFromFlags(o: BudgetRaiseFlags): BudgetRaise {
  let maxTimeMs: number | undefined;
  if (o.maxTime !== undefined) {
    try {
      maxTimeMs = parseDuration(o.maxTime);
    } catch {
      throw new CliError(`--max-time must be a duration such as 90s, 30m, 2h or 1d, got "${o.maxTime}"`);
    }
  }
  const raise: BudgetRaise = {
    maxCostUsd: number('--max-cost', o.maxCost, false),
    addCostUsd: number('--add-cost', o.addCost, false),
    maxTokens: number('--max-tokens', o.maxTokens, true),
    maxTurns: number('--max-turns', o.maxTurns, true),
    maxTimeMs,
  };
  if (raise.maxCostUsd !== undefined && raise.addCostUsd !== undefined) throw new CliError('give either --max-cost or --add-cost, not both');
  if (Object.values(raise).every((v) => v === undefined))
    throw new CliError('nothing to raise: give --max-cost, --add-cost, --max-tokens, --max-turns or --max-time');
  return Object.fromEntries(Object.entries(raise).filter(([, v]) => v !== undefined)) as BudgetRaise;
}

export async function budgetRaiseCommand(id: string, o: BudgetRaiseFlags): Promise<number> {
  const raise = budgetRaiseFromFlags(o);
  const by = (await import('./operator.js')).deciderName({ as: o.as });
  const r = await talk(id, (h) => h.executeUpdate(raiseBudgetUpdate, { args: [{ ...raise, by }] }), { update: true });
  const l = r.limits;
  const limits = [
    `${l.maxTurns} turns`,
    ...(l.maxTokens !== undefined ? [`${l.maxTokens} tokens`] : []),
    ...(l.maxCostUsd !== undefined ? [`$${l.maxCostUsd.toFixed(4)}`] : []),
    ...(l.maxTimeMs !== undefined ? [`${Math.round(l.maxTimeMs / 1000)} s`] : []),
  ].join(', ');
  emit(
    o.json,
    { type: 'budget', conversationId: id, ...r, by },
    `budget of ${id} raised to ${limits} (spent: ${r.spent.turns} turns, ${r.spent.totalTokens} tokens, $${r.spent.costUsd.toFixed(4)})${r.stillOver ? `; still at a limit: ${r.stillOver}` : ''}`,
  );
  return EXIT.completed;
}
