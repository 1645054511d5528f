// The conversation workflow's messages: shared by the workflow and its clients (CLI, tests). A leaf:
// it imports no other workflow module and nothing of activities/ (only types of src/), so clients,
// activities and workflows all depend on it and it on none of them.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RunConfig } from '../src/config.js';
import type { ConversationStatus, IndexEntry, Usage } from '../src/types.js';
import type { WorkspaceHost } from '../src/workspace/routing.js';
import type { BranchResult } from '../src/workspace/result-branch.js';

/** The workflow type new conversations start (workflows/session.ts). */
export const WORKFLOW_TYPE = 'session';
/** The frozen first workflow type: it still serves runs started before `session` existed, and replays their histories. */
export const LEGACY_WORKFLOW_TYPE = 'conversation';
/** A visibility query matching conversations of either workflow type. */
export const CONVERSATION_TYPES_QUERY = `WorkflowType IN ('${'session'}', '${'conversation'}')`;
export const DEFAULT_TASK_QUEUE = 'agentrun';
/** The failure type of an activity that met an infrastructure fault (activities/infra-errors.ts): the session stalls on it instead of failing. */
export const INFRASTRUCTURE_ERROR = 'InfrastructureError';

/** A worker's refusals at a conversation's first step (activities/guard.ts): their message is the whole reason. */
export const REFUSAL_TYPES: readonly string[] = ['EnvNotAllowed', 'UnsafeWorkspace'];

export interface ConversationInput {
  task: string;
  workspace: string;
  config: RunConfig;
  /** Upsert typed search attributes (only when they are registered on the namespace). */
  searchAttributes?: boolean;
  /** State carried over continue-as-new; absent on the first run. */
  carried?: CarriedState;
  /** Start from another conversation's first `atTurn` turns and that turn's checkpoint. */
  fork?: ForkOrigin;
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

/** Everything a later run needs after continue-as-new: compact, no transcript content. */
export interface CarriedState {
  status: ConversationStatus;
  turn: number;
  nextSeq: number;
  usage: Usage;
  costUsd: number;
  startedAtMs: number;
  index: IndexEntry[];
  noToolStreak: number;
  loopNudged: boolean;
  todos?: string;
  checkpoints: { turn: number; commit: string; files: number }[];
  inbox: string[];
  runs: number;
  rollbacks: { toTurn: number; atTurn: number }[];
  /** Repository jobs: the host holding the workspace, and the hosts it moved from. */
  host?: WorkspaceHost;
  failovers?: Failover[];
  /** Repository jobs: the result branch, once committed. */
  branch?: BranchResult;
  forkedFrom?: ForkOrigin;
}

export interface Failover {
  fromHost: string;
  toHost: string;
  /** The turn whose off-host checkpoint the workspace was restored to. */
  restoredTurn: number;
  atTurn: number;
  reason: string;
}

export interface ConversationState extends CarriedState {
  conversationId: string;
  model: string;
  workspace: string;
  reason?: string;
  pendingApproval?: PendingApproval;
  pendingQuestion?: PendingQuestion;
  paused: boolean;
  /** Sub-agents started by `delegate` (session workflow only; workflows/delegate.ts). */
  children?: ChildRun[];
}

/** One sub-agent run (workflows/delegate.ts), as the parent's state (query, inspect, web page) shows it. */
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

export interface ConversationResult {
  conversationId: string;
  status: ConversationStatus;
  reason: string;
  turns: number;
  usage: Usage;
  costUsd: number;
  result?: string;
  /** Repository jobs: the branch holding the result, its commit and diffstat. */
  branch?: BranchResult;
  /** The setup step, when the conversation had one; a failed one's reason and log tail. */
  setup?: { ok: boolean; ms: number; cached: boolean; exitCode?: number | null; reason?: string; tail?: string };
  /** The repository's check: its last run (passed null: it never ran), the runs, the baseline before turn 1. */
  verify?: {
    command: string;
    passed: boolean | null;
    exitCode: number | null;
    attempts: number;
    ms: number;
    tail?: string;
    baseline?: { passed: boolean; exitCode: number | null };
  };
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
/** A worker being drained: conversations whose workspace it holds move to another host now. */
export const hostDrainingSignal = defineSignal<[{ hostId: string }]>('hostDraining');
export const stateQuery = defineQuery<ConversationState>('state');
