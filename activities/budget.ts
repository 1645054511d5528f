// Budgets: the limits a raise set (workflows/budget.ts), mirrored to the conversation's stored
// config so inspect and the page show them. Safe to run twice: the same limits are written again.
import type { BudgetLimits } from '../src/types.js';
import type { ActivityDeps } from './deps.js';
import { stallOnInfrastructure } from './infra-errors.js';

export function budgetActivities(deps: ActivityDeps) {
  const { store } = deps;
  return {
    storeBudgetLimits: stallOnInfrastructure(async (input: { conversationId: string; limits: BudgetLimits }): Promise<void> => {
      await store.mergeConversationConfig(input.conversationId, { ...input.limits });
    }),
  };
}

export type BudgetActivities = ReturnType<typeof budgetActivities>;
