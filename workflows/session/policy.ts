// Policy of a conversation: budgets, approval, plan mode, tool-less replies, loops. Pure
// functions over the run configuration and the session's counters, so each rule lives in one
// place and is tested without a server.
import type { RunConfig } from '../../src/config.js';
import type { CallSummary } from '../../activities/types.js';
import type { Usage } from '../../src/types.js';

const REMINDER =
  'Your reply used no tool. Every reply must use exactly one of the available tools. If the task is done, use attempt_completion with the result; if you need information from the user, use ask_followup_question.';

export interface Spend {
  turn: number;
  usage: Usage;
  costUsd: number;
  startedAtMs: number;
}

/** Why the conversation must stop before another turn, if it must. */
export function budgetStop(config: RunConfig, s: Spend, nowMs: number): string | undefined {
  if (s.turn >= config.maxTurns) return `turn limit reached (${config.maxTurns} turns)`;
  if (config.maxTokens && s.usage.totalTokens >= config.maxTokens) return `token budget spent (${s.usage.totalTokens} of ${config.maxTokens} tokens)`;
  if (config.maxCostUsd && s.costUsd >= config.maxCostUsd) return `cost budget spent ($${s.costUsd.toFixed(4)} of $${config.maxCostUsd})`;
  return timeBudgetStop(config, s.startedAtMs, nowMs);
}

export function timeBudgetStop(config: RunConfig, startedAtMs: number, nowMs: number): string | undefined {
  if (config.maxTimeMs && nowMs - startedAtMs >= config.maxTimeMs)
    return `time budget spent (${Math.round((nowMs - startedAtMs) / 1000)} s of ${config.maxTimeMs / 1000} s)`;
  return undefined;
}

/** Milliseconds left of the wall-time budget (undefined: no budget). */
export function timeLeftMs(config: RunConfig, startedAtMs: number, nowMs: number): number | undefined {
  return config.maxTimeMs ? Math.max(0, startedAtMs + config.maxTimeMs - nowMs) : undefined;
}

export function needsApproval(config: RunConfig, call: CallSummary): boolean {
  if (config.approval === 'always') return call.mutating || call.dangerous;
  if (config.approval === 'dangerous') return call.dangerous;
  return false;
}

/** The refusal a call gets in plan mode, where only read-only and control tools run. */
export function planModeRefusal(config: RunConfig, call: CallSummary): string | undefined {
  if (!config.planMode || call.readOnly || call.control) return undefined;
  return `${call.name} is not allowed in plan mode: only read-only tools may run. Present the plan with plan_mode_respond.`;
}

export function deniedMessage(name: string, why: string | undefined, by: string | undefined): string {
  return `The operator${by ? ` ${by}` : ''} denied this ${name} call${why ? `: ${why}` : ''}. Choose another way or ask the user.`;
}

export function approvalTimeoutReason(config: RunConfig): string {
  return `no decision within ${Math.round(config.approvalTimeoutMs / 1000)} s (default: ${config.approvalTimeoutAction})`;
}

/** A reply without a tool: remind, or fail once the streak reaches the limit. */
export function noToolReply(config: RunConfig, streak: number): { fail?: string; remind?: string } {
  if (streak >= config.maxNoToolReplies) return { fail: `the model replied ${streak} times in a row without using a tool` };
  return { remind: REMINDER };
}

/** A detected loop: nudge once, then stop. */
export function loopResponse(loop: string, alreadyNudged: boolean): { stop?: string; notice?: string } {
  if (alreadyNudged) return { stop: loop };
  return { notice: `[loop detected: ${loop}. Change your approach: do something different from the last calls, or ask the user.]` };
}

/**
 * A valid call of a read-only tool, neither a control tool nor one that needs approval: it changes
 * nothing in the workspace, so such calls run side by side, and before the turn-0 checkpoint exists.
 */
export const readsOnly = (c: CallSummary) => c.readOnly && !c.control && !c.invalid && !c.dangerous;
// Sub-agents side by side: a writing one takes the workspace lock for its run (workflows/session/delegate.ts).
const isDelegate = (c: CallSummary) => c.name === 'delegate' && !c.invalid;
const groupKind = (c: CallSummary) => (isDelegate(c) ? 'delegate' : readsOnly(c) ? 'read' : undefined);

/** Consecutive read-only calls run in parallel, and so do consecutive delegate calls; everything else in order. */
export function groupCalls(calls: CallSummary[]): CallSummary[][] {
  const out: CallSummary[][] = [];
  for (const c of calls) {
    const last = out[out.length - 1];
    const kind = groupKind(c);
    if (kind && last && last.every((x) => groupKind(x) === kind)) last.push(c);
    else out.push([c]);
  }
  return out;
}

/** Start-to-close of a tool activity: the command's own timeout plus room to kill it and report. */
export function toolTimeoutMs(call: CallSummary): number {
  const commandSeconds = call.timeoutSeconds ?? 600;
  return (commandSeconds + 120) * 1000;
}
