// The conversation workflow's messages: shared by the workflow and its clients (CLI, tests).
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RunConfig } from '../src/config.js';
import type { ConversationStatus, IndexEntry, Usage } from '../src/types.js';

export const WORKFLOW_TYPE = 'conversation';
export const DEFAULT_TASK_QUEUE = 'agentrun';

export interface ConversationInput {
  task: string;
  workspace: string;
  config: RunConfig;
  /** Upsert typed search attributes (only when they are registered on the namespace). */
  searchAttributes?: boolean;
  /** State carried over continue-as-new; absent on the first run. */
  carried?: CarriedState;
}

export interface PendingApproval {
  callId: string;
  name: string;
  preview: string;
  reasons: string[];
  sinceMs: number;
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
}

export interface ConversationState extends CarriedState {
  conversationId: string;
  model: string;
  workspace: string;
  reason?: string;
  pendingApproval?: PendingApproval;
  pendingQuestion?: PendingQuestion;
  paused: boolean;
}

export interface ConversationResult {
  conversationId: string;
  status: ConversationStatus;
  reason: string;
  turns: number;
  usage: Usage;
  costUsd: number;
  result?: string;
}

export interface ApprovalDecision {
  callId?: string;
  approved: boolean;
  reason?: string;
}

export const sendMessageSignal = defineSignal<[{ text: string }]>('sendMessage');
/** Graceful cancel: the running step finishes, then the conversation ends as cancelled. */
export const cancelSignal = defineSignal<[{ reason?: string }]>('cancel');
export const pauseSignal = defineSignal<[]>('pause');
export const resumeSignal = defineSignal<[]>('resume');
export const decideApprovalUpdate = defineUpdate<{ callId: string; approved: boolean }, [ApprovalDecision]>('decideApproval');
export const answerUpdate = defineUpdate<{ callId: string }, [{ text: string }]>('answer');
export const rollbackUpdate = defineUpdate<{ restored: string[]; removed: string[]; commit: string }, [{ toTurn: number }]>('rollback');
export const stateQuery = defineQuery<ConversationState>('state');
