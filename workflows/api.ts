// The conversation workflow's messages: shared by the workflow and its clients (CLI, tests). A leaf:
// it imports no other workflow module and nothing of activities/ (only types of src/), so clients,
// activities and workflows all depend on it and it on none of them.
import { ApplicationFailure, defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RunConfig } from '../src/config.js';
import type { BudgetLimits, ConversationStatus, Usage } from '../src/types.js';
import type { WorkspaceHost } from '../src/workspace/routing.js';
import type { WorkspaceOrigin } from '../src/workspace/identity.js';
import type { ConversationResult, Failover } from '../src/conversation-result.js';
import type { BranchResult } from '../src/workspace/result-branch.js';

export type { ConversationResult, Failover, RecoveredCall } from '../src/conversation-result.js';

/** The workflow type new conversations start (workflows/session/workflow.ts). */
export const WORKFLOW_TYPE = 'session';
/** A visibility query matching conversations (the retired `conversation` type's runs are gone: src/retired.ts). */
export const CONVERSATION_TYPES_QUERY = `WorkflowType = '${WORKFLOW_TYPE}'`;
export const DEFAULT_TASK_QUEUE = 'agentrun';

/** A worker's refusals at a conversation's first step (activities/guard.ts): their message is the whole reason. */
export const REFUSAL_TYPES: readonly string[] = ['EnvNotAllowed', 'UnsafeWorkspace', 'NoOffHostCheckpoint', 'UnsandboxedNotAllowed'];

export interface ConversationInput {
  task: string;
  workspace: string;
  config: RunConfig;
  /** Upsert typed search attributes (only when they are registered on the namespace). */
  searchAttributes?: boolean;
  /** Start from another conversation's first `atTurn` turns and that turn's checkpoint. */
  fork?: ForkOrigin;
  /** A local workspace: the machine and directory it was started on; its first placement goes there only (src/workspace/identity.ts). */
  origin?: WorkspaceOrigin;
}

export interface ForkOrigin {
  parentId: string;
  atTurn: number;
  /** `fork --task`: a new instruction, sent as the first user message after the copied turns. */
  message?: string;
}

export interface PendingApproval {
  callId: string;
  name: string;
  preview: string;
  reasons: string[];
  sinceMs: number;
  /** The first 12 hex of sha256 over the call's arguments (canonical JSON): approving sends it back. Absent for calls from before it existed. */
  argsHash?: string;
}

export interface PendingQuestion {
  callId: string;
  question: string;
  sinceMs: number;
}

/**
 * A conversation's state as the `state` query answers it (`Session.state()` in workflows/session/loop.ts):
 * counters, the waiting question or approval, checkpoints, rollbacks, the host, sub-agents. The
 * workflow's own bookkeeping (pending messages, the unrecorded turn) is in the answer too but not
 * part of this contract.
 */
/**
 * Where one tool call of the running turn stands (workflows/session/calls.ts), as the state query shows it:
 * `scheduled` (parsed, not decided yet), `awaiting_approval`, `running` (its step, or the workflow
 * answering a control tool), `done` with how it ended.
 */
export type CallPhase =
  | { phase: 'scheduled' }
  | { phase: 'awaiting_approval' }
  | { phase: 'running' }
  | { phase: 'done'; outcome: 'ran' | 'answered' | 'invalid' | 'refused' | 'denied' | 'interrupted' | 'stopped' };

export type CallLife = { callId: string; name: string; preview: string } & CallPhase;

export interface ConversationState {
  conversationId: string;
  model: string;
  workspace: string;
  status: ConversationStatus;
  /** Why it ended, once it has. */
  reason?: string;
  turn: number;
  nextSeq: number;
  usage: Usage;
  costUsd: number;
  startedAtMs: number;
  /** Replies in a row without a tool call, and whether the loop warning was given. */
  noToolStreak: number;
  loopNudged: boolean;
  todos?: string;
  /** Runs of this conversation so far (continue-as-new starts the next). */
  runs: number;
  /** Turns that have a checkpoint (the commits are in the store). */
  checkpointTurns: number[];
  /** The same turns, in the shape clients read before `checkpointTurns`. */
  checkpoints: { turn: number }[];
  /** Workspace states saved before rollbacks: `rollback --to <commit>` undoes that rollback. */
  saves: string[];
  rollbacks: { toTurn?: number; commit?: string; atTurn: number }[];
  /** The last approval decisions (who, when). */
  approvals: ApprovalOutcome[];
  pendingApproval?: PendingApproval;
  pendingQuestion?: PendingQuestion;
  paused: boolean;
  /** Set while an infrastructure fault holds the conversation (status `stalled`). */
  stalledReason?: string;
  /** Set while the provider or its pool holds the model step (status `waiting_for_provider`): what it said. */
  providerWait?: string;
  /** How often Stop hooks kept the conversation from ending. */
  stopBlocks?: number;
  /** Repository jobs: the host holding the workspace, its queue, the last checkpoint off the host, the moves. */
  host?: WorkspaceHost;
  workspaceQueue?: string;
  offHost?: { turn: number; commit: string };
  failovers?: Failover[];
  /** Repository jobs: the result branch, once committed. */
  branch?: BranchResult;
  forkedFrom?: ForkOrigin;
  /** Sub-agents started by `delegate` (workflows/session/delegate.ts), numbered by `delegations`. */
  delegations?: number;
  children?: ChildRun[];
  /** The running (or last) turn's tool calls and where each stands. */
  calls?: CallLife[];
}

/** One sub-agent run (workflows/session/delegate.ts), as the parent's state (query, inspect, web page) shows it. */
export interface ChildRun {
  /** Its workflow id: `<parent id>.sub-<n>`. */
  id: string;
  agent: string;
  callId: string;
  readOnly: boolean;
  status: ConversationStatus;
  turns: number;
  costUsd: number;
  reason?: string;
}

/**
 * How a conversation that did not complete ends its workflow (docs/deploy.md, "Outcomes in Temporal"):
 * `failed` and `budget_exhausted` fail it with a non-retryable ApplicationFailure of these types whose
 * details hold the ConversationResult; a cancellation Temporal asked for ends it CANCELED, the result
 * kept in the memo under RESULT_MEMO (a cancelled workflow carries no details).
 */
export const CONVERSATION_FAILED = 'ConversationFailed';
export const BUDGET_EXHAUSTED = 'BudgetExhausted';
export const RESULT_MEMO = 'agentrunResult';

/** The ConversationResult a failed conversation's workflow failure carries, found along the error's causes. */
export function resultFromFailure(err: unknown): ConversationResult | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof ApplicationFailure && (e.type === CONVERSATION_FAILED || e.type === BUDGET_EXHAUSTED)) {
      const r = e.details?.[0] as ConversationResult | undefined;
      if (r && typeof r === 'object' && typeof r.status === 'string') return r;
    }
  }
  return undefined;
}

export interface ApprovalDecision {
  callId?: string;
  approved: boolean;
  reason?: string;
  /** Who decided: the operator its token belongs to (the page, the CLI with an operators file), else the CLI's --as NAME. */
  by?: string;
  /** The pending call's argsHash as the decider saw it: refused when the waiting call's arguments differ. */
  argsHash?: string;
}

/** How an approval ended: recorded in the tool result, the event and the state. */
export interface ApprovalOutcome {
  callId: string;
  approved: boolean;
  by?: string;
  atMs: number;
  reason?: string;
  timedOut?: boolean;
}

export interface RollbackRequest {
  /** The turn whose checkpoint to restore. */
  toTurn?: number;
  /** Or a state saved before an earlier rollback (its `saved` commit): undoes that rollback. */
  commit?: string;
}

export interface RollbackResult {
  restored: string[];
  removed: string[];
  commit: string;
  /** The workspace as it was just before this rollback, saved so the rollback can be undone (`rollback --to <saved>`). */
  saved?: string;
  /** Ignored files (.gitignore) that checkpoints do not hold: left as they are. */
  notRestored?: string[];
}

export const sendMessageSignal = defineSignal<[{ text: string }]>('sendMessage');
/** Graceful cancel: the running step finishes, then the conversation ends as cancelled. */
export const cancelSignal = defineSignal<[{ reason?: string }]>('cancel');
export const pauseSignal = defineSignal<[]>('pause');
export const resumeSignal = defineSignal<[]>('resume');
export const decideApprovalUpdate = defineUpdate<{ callId: string; approved: boolean; by?: string; atMs?: number }, [ApprovalDecision]>('decideApproval');
export const answerUpdate = defineUpdate<{ callId: string }, [{ text: string }]>('answer');
export const rollbackUpdate = defineUpdate<RollbackResult, [RollbackRequest]>('rollback');
/**
 * A worker being drained: conversations whose workspace it holds move to another host now. The
 * incarnation names the process (absent from workers before incarnations: then the id is meant).
 */
export const hostDrainingSignal = defineSignal<[{ hostId: string; incarnation?: string }]>('hostDraining');
export const stateQuery = defineQuery<ConversationState>('state');

/** `agentrun budget raise`: new limits (absent: unchanged); `addCostUsd` adds to the cost limit (or to the spend, without one). */
export interface BudgetRaise {
  maxCostUsd?: number;
  addCostUsd?: number;
  maxTokens?: number;
  maxTurns?: number;
  maxTimeMs?: number;
  /** Who raised it (recorded in the update's payload and the stream). */
  by?: string;
}

export interface BudgetRaiseResult {
  limits: BudgetLimits;
  spent: { turns: number; totalTokens: number; costUsd: number; activeMs: number };
  /** Still at a limit after this raise (another limit holds it): it stays `awaiting_budget`. */
  stillOver?: string;
}

/** A budget that pauses (`--on-budget pause`) waits at its limit for this (workflows/session/budget.ts). */
export const raiseBudgetUpdate = defineUpdate<BudgetRaiseResult, [BudgetRaise]>('raiseBudget');

/** Sent by a batch whose shared budget was raised (`batch raise-budget`): its jobs waiting for it try again. */
export const budgetAvailableSignal = defineSignal<[]>('budgetAvailable');
