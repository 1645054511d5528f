// Budgets: the limits a raise set (workflows/session/budget.ts), mirrored to the conversation's stored
// config so inspect and the page show them; a batch's shared budget (src/model/budget-pool.ts).
// Safe to run twice: the same limits are written again, a pool is opened once, a raise counted once.
import type { BudgetLimits } from '../src/types.js';
import { openPool, raisePool, type PoolState } from '../src/store/budget-pools.js';
import type { ActivityDeps } from './deps.js';
import { stallOnInfrastructure } from './infra-errors.js';
import type { BudgetActivities } from './types.js';

export function budgetActivities(deps: ActivityDeps): BudgetActivities {
  const { store } = deps;
  return {
    storeBudgetLimits: stallOnInfrastructure(async (input: { conversationId: string; limits: BudgetLimits }): Promise<void> => {
      await store.mergeConversationConfig(input.conversationId, { ...input.limits });
    }),
    /** A batch's budget: created once, kept as it is when the batch's first step runs again. */
    openBudgetPool: stallOnInfrastructure((input: { pool: string; limitUsd: number }): Promise<PoolState> => openPool(store.pool, input.pool, input.limitUsd)),
    /** `batch raise-budget`: once per raise id, however often it runs. */
    raiseBudgetPool: stallOnInfrastructure((input: { pool: string; addUsd: number; raiseId: string }): Promise<PoolState> =>
      raisePool(store.pool, input.pool, input.addUsd, input.raiseId),
    ),
  };
}
