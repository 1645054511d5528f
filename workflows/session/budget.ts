// A budget that pauses (`--on-budget pause`): at its limit the conversation records its turn, makes
// no model call and waits, as `awaiting_budget`, for `agentrun budget raise` (an Update) or for
// `--budget-wait` to run out. Time spent waiting does not count against `--max-time`. The session
// holds one BudgetGate and asks it before each turn (loop.ts).
import { condition, setHandler } from '@temporalio/workflow';
import { BUDGET_POOL_EMPTY } from '../../src/model/error-types.js';
import type { RunConfig } from '../../src/config.js';
import { FINAL_STATUSES, type BudgetLimits, type ConversationStatus, type Usage } from '../../src/types.js';
import type { BranchResult } from '../../src/workspace/result-branch.js';
import { budgetAvailableSignal, raiseBudgetUpdate, type BudgetRaise, type BudgetRaiseResult } from '../api.js';
import { failureType, rootMessage } from '../failures.js';
import { budgetStop, type Spend } from './policy.js';
import type { Status } from './status.js';
import type { StepRunner } from './steps.js';
import type { BudgetCarried, Requests } from './types.js';

function limitsOf(config: RunConfig): BudgetLimits {
  return { maxTurns: config.maxTurns, maxTokens: config.maxTokens, maxCostUsd: config.maxCostUsd, maxTimeMs: config.maxTimeMs };
}

const usd = (n: number) => `$${n.toFixed(4)}`;

/**
 * The limits after `raise`, or an Error saying why it is refused: nothing given, a negative or
 * non-finite value, both cost forms, or a limit below what was already spent. Lowering a limit
 * above the spend is allowed (the conversation then pauses at its next check).
 */
export function raisedLimits(config: RunConfig, spent: { turn: number; usage: Usage; costUsd: number; activeMs: number }, raise: BudgetRaise): BudgetLimits {
  const given = (['maxCostUsd', 'addCostUsd', 'maxTokens', 'maxTurns', 'maxTimeMs'] as const).filter((k) => raise[k] !== undefined);
  if (!given.length) throw new Error('nothing to raise: give --max-cost, --add-cost, --max-tokens, --max-turns or --max-time');
  for (const k of given) {
    const v = raise[k]!;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new Error(`${k} must be a number ≥ 0, got ${String(v)}`);
  }
  if (raise.maxCostUsd !== undefined && raise.addCostUsd !== undefined) throw new Error('give either --max-cost or --add-cost, not both');
  const limits = limitsOf(config);
  if (raise.maxCostUsd !== undefined) limits.maxCostUsd = raise.maxCostUsd;
  if (raise.addCostUsd !== undefined) limits.maxCostUsd = (config.maxCostUsd ?? spent.costUsd) + raise.addCostUsd;
  if (limits.maxCostUsd !== undefined && limits.maxCostUsd !== config.maxCostUsd && limits.maxCostUsd < spent.costUsd)
    throw new Error(`a cost limit of ${usd(limits.maxCostUsd)} is below what was already spent (${usd(spent.costUsd)})`);
  if (raise.maxTokens !== undefined) {
    if (!Number.isInteger(raise.maxTokens) || raise.maxTokens < spent.usage.totalTokens)
      throw new Error(`a token limit of ${raise.maxTokens} is below what was already used (${spent.usage.totalTokens} tokens)`);
    limits.maxTokens = raise.maxTokens;
  }
  if (raise.maxTurns !== undefined) {
    if (!Number.isInteger(raise.maxTurns) || raise.maxTurns < spent.turn)
      throw new Error(`a turn limit of ${raise.maxTurns} is below the turns already taken (${spent.turn})`);
    limits.maxTurns = raise.maxTurns;
  }
  if (raise.maxTimeMs !== undefined) {
    if (raise.maxTimeMs < spent.activeMs)
      throw new Error(`a time limit of ${Math.round(raise.maxTimeMs / 1000)} s is below the time already spent (${Math.round(spent.activeMs / 1000)} s)`);
    limits.maxTimeMs = raise.maxTimeMs;
  }
  // Zero limits mean none in RunConfig's terms; a raise never removes one by accident.
  if (limits.maxTurns <= 0) throw new Error('the turn limit must be at least 1');
  return limits;
}

export class BudgetGate {
  /** Workflow time when the current wait began. */
  private waitingSince?: number;
  private waitReason?: string;

  /** Raises of the shared budget seen so far (budgetAvailableSignal). */
  private poolRaises = 0;

  constructor(
    private readonly steps: StepRunner,
    private readonly status: Status,
    private readonly requests: Requests,
    private readonly config: RunConfig,
    private readonly st: BudgetCarried & Spend & { status: ConversationStatus },
  ) {
    status.explainWith('awaiting_budget', () => this.waitingFor);
  }

  /** Where the shared budget's raises stand: taken before a model step, so a raise during the step is not missed. */
  get poolMark(): number {
    return this.poolRaises;
  }

  /**
   * A model step its shared budget had no room for (BUDGET_POOL_EMPTY): wait, as `awaiting_budget`,
   * for a raise after `mark`. 'retry' when raised, an ending when the wait ran out or the
   * conversation was cancelled, undefined when `err` is another failure.
   */
  async waitForPool(err: unknown, mark: number): Promise<'retry' | { status: ConversationStatus; reason: string } | undefined> {
    if (failureType(err) !== BUDGET_POOL_EMPTY) return undefined;
    const { config, requests } = this;
    const reason = rootMessage(err as Error);
    // A sub-agent is not signalled by the batch: it ends, and its parent waits at its own next call.
    if (config.agent?.parentId !== undefined) return { status: 'budget_exhausted', reason };
    this.waitReason = reason;
    this.status.set('awaiting_budget');
    await this.announcePause(reason);
    const raised = await condition(() => this.poolRaises > mark || requests.cancel !== undefined, config.budgetWaitMs);
    this.waitReason = undefined;
    this.status.set('running');
    if (requests.cancel !== undefined) return { status: 'cancelled', reason: requests.cancel };
    if (raised) return 'retry';
    return { status: 'budget_exhausted', reason: `${reason}; no raise within ${Math.round(config.budgetWaitMs / 1000)} s` };
  }

  /** With `onBudget: 'pause'`: the conversation waits at its limit. A sub-agent ends (its parent pauses at its next check). */
  pauses(): boolean {
    if (this.config.onBudget !== 'pause' || this.config.agent?.parentId !== undefined) return false;
    return true;
  }

  /** The start of the wall-time budget: the real start moved on by the time spent awaiting a raise (and the wait in progress). */
  clockStart(nowMs: number): number {
    const st = this.st;
    return st.startedAtMs + (st.budgetWaitedMs ?? 0) + (this.waitingSince !== undefined ? nowMs - this.waitingSince : 0);
  }

  /** Why the conversation must not take another turn, with waiting time excluded from the time budget. */
  stop(nowMs: number): string | undefined {
    return budgetStop(this.config, { ...this.st, startedAtMs: this.clockStart(nowMs) }, nowMs);
  }

  /** What the Temporal UI's current details say it waits for. */
  get waitingFor(): string | undefined {
    return this.waitReason === undefined ? undefined : `a budget raise (agentrun budget raise): ${this.waitReason}`;
  }

  register(): void {
    setHandler(budgetAvailableSignal, () => {
      this.poolRaises += 1;
    });
    setHandler(raiseBudgetUpdate, (raise) => this.raise(raise), {
      validator: (raise) => {
        if (FINAL_STATUSES.includes(this.st.status))
          throw new Error(`conversation ${this.steps.conversationId} has ended (${this.st.status}): there is nothing to raise`);
        this.raisedLimits(raise);
      },
    });
  }

  private raisedLimits(raise: BudgetRaise): BudgetLimits {
    const now = Date.now();
    return raisedLimits(this.config, { ...this.st, activeMs: now - this.clockStart(now) }, raise);
  }

  private async raise(raise: BudgetRaise): Promise<BudgetRaiseResult> {
    const limits = this.raisedLimits(raise);
    // The workflow's config is authoritative (carried over continue-as-new); the store's row mirrors it for inspect.
    Object.assign(this.config, limits);
    // The answer as of the raise: the conversation may take its next turn while the limits are recorded.
    const now = Date.now();
    const st = this.st;
    const stillOver = this.stop(now);
    const answer: BudgetRaiseResult = {
      limits,
      spent: { turns: st.turn, totalTokens: st.usage.totalTokens, costUsd: st.costUsd, activeMs: now - this.clockStart(now) },
      ...(stillOver ? { stillOver } : {}),
    };
    const { conversationId, budgetStore } = this.steps;
    await this.steps.durably('recording the raised budget', async () => {
      await budgetStore.storeBudgetLimits({ conversationId, limits });
      await budgetStore.emitEvents({ conversationId, events: [{ type: 'budget_raised', limits, ...(raise.by ? { by: raise.by } : {}) }] });
    });
    return answer;
  }

  /**
   * At a limit: record the turn, show `awaiting_budget`, and wait for a raise that lifts every limit
   * (or a cancel: undefined, the loop ends it). On timeout the ending, with the work on a partial
   * branch under `--on-budget-timeout partial-branch`.
   */
  async pause(
    reason: string,
    around: {
      /** The last turn's record, written before the wait. */
      recordTurn: () => Promise<void>;
      /** Commit the workspace to agentrun/<id>-partial (pushed for repository jobs); undefined when there is no workspace host to commit on. */
      partialBranch: () => Promise<BranchResult | undefined>;
    },
  ): Promise<{ status: ConversationStatus; reason: string } | undefined> {
    const { config, st, requests } = this;
    await around.recordTurn();
    this.waitingSince = Date.now();
    this.waitReason = reason;
    this.status.set('awaiting_budget');
    await this.announcePause(reason);
    const raised = await condition(() => this.stop(Date.now()) === undefined || requests.cancel !== undefined, config.budgetWaitMs);
    st.budgetWaitedMs = (st.budgetWaitedMs ?? 0) + (Date.now() - this.waitingSince);
    this.waitingSince = undefined;
    this.waitReason = undefined;
    this.status.set('running');
    if (raised || requests.cancel !== undefined) return undefined;
    const ending = `${reason}; no budget raise within ${Math.round(config.budgetWaitMs / 1000)} s`;
    if (config.onBudgetTimeout !== 'partial-branch') return { status: 'budget_exhausted', reason: ending };
    const branch = await around.partialBranch();
    return {
      status: 'budget_exhausted',
      reason: branch
        ? `${ending}; the work is on ${branch.branch}${branch.pushed ? ' (pushed)' : ''}`
        : `${ending}; no workspace host to commit a partial branch on`,
    };
  }

  private announcePause(reason: string): Promise<void> {
    const { conversationId, budgetStore } = this.steps;
    return this.steps.durably('announcing the budget pause', () =>
      budgetStore.emitEvents({ conversationId, events: [{ type: 'budget_paused', reason, waitMs: this.config.budgetWaitMs }] }),
    );
  }
}
