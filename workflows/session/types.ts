// The `session` workflow's input and state. Types only: the CLI imports them without the workflow's code.
import type { EndTurnRecordInput, VerifyOutcome } from '../../activities/types.js';
import type { RunConfig } from '../../src/config.js';
import type { BranchResult } from '../../src/workspace/result-branch.js';
import type { WorkspaceOrigin } from '../../src/workspace/identity.js';
import type { ConversationStatus, MessageKind, Role, SetupEnd } from '../../src/types.js';
import type { ApprovalOutcome, ChildRun, ConversationState, ForkOrigin } from '../api.js';
import type { HostCarried, Placement } from './host.js';

export interface SessionInput {
  /** The task: sent once, at the start (not carried over continue-as-new: it is in the store). */
  task?: string;
  workspace: string;
  config: RunConfig;
  /** Upsert typed search attributes (only when they are registered on the namespace). */
  searchAttributes?: boolean;
  carried?: SessionCarried;
  /** Start from another conversation's first `atTurn` turns and that turn's checkpoint (repository jobs). */
  fork?: ForkOrigin;
  /** A sub-agent on its parent's workspace: already placed on the parent's host. */
  workspaceHost?: Placement;
  /** A local workspace: the machine and directory it was started on (first placement only; not carried over continue-as-new). */
  origin?: WorkspaceOrigin;
}

/** What a later run needs after continue-as-new: bounded, no transcript, no per-message index. */
export interface SessionCarried
  extends
    HostCarried,
    SubagentState,
    BudgetCarried,
    Pick<ConversationState, 'status' | 'turn' | 'nextSeq' | 'usage' | 'costUsd' | 'startedAtMs' | 'noToolStreak' | 'loopNudged' | 'todos' | 'runs'> {
  /** Turns that have a checkpoint (the commits are in the store). */
  checkpointTurns: number[];
  /** Workspace states saved before rollbacks: `rollback --to <commit>` undoes that rollback. */
  saves: string[];
  /** Messages for the model, written with the next turn. */
  pending: { role: Role; kind: MessageKind; content: string; turn: number }[];
  rollbacks: { toTurn?: number; commit?: string; atTurn: number }[];
  /** The last approval decisions (who, when). */
  approvals: ApprovalOutcome[];
  // HOST ROUTING: `host`, `workspaceQueue`, `offHost`, `failovers` (host.ts).
  /** Repository jobs: the result branch, once committed. */
  branch?: BranchResult;
  forkedFrom?: ForkOrigin;
  /** How often Stop hooks kept the conversation from ending. */
  stopBlocks?: number;
  /** The last turn's record (store row, `turn_completed`), written by the next model step, or before a pause or the end. */
  unrecordedTurn?: EndTurnRecordInput;
  /** The repository's environment: how setup went, the verify command in force and its runs (setup's log is in the stream). */
  environment?: SessionEnvironment;
}

export interface SessionEnvironment {
  setup?: Pick<SetupEnd, 'ok' | 'ms' | 'cached' | 'exitCode' | 'reason' | 'tail'>;
  verify?: string;
  /** Verify runs at attempt_completion so far; the last one's outcome (its tail bounded). */
  verifyRuns: number;
  lastVerify?: VerifyOutcome;
  baseline?: VerifyOutcome;
}

/** The `state` query's answer: the public state (api.ts), and the carried bookkeeping with it. */
export type SessionState = SessionCarried & ConversationState;

/** How a conversation ends. */
export type Ending = { status: ConversationStatus; reason: string; result?: string };

/** The workspace as every host step names it: the conversation, the directory, the placement's epoch. */
export interface WorkspaceRef {
  conversationId: string;
  workspace: string;
  epoch?: number;
}

/** What the operator asked of the conversation by signal: set by the handlers (workflow.ts), read where the session waits. */
export interface Requests {
  /** The cancel signal: the operator's reason. */
  cancel?: string;
  /** Between the pause and the resume signals. */
  paused: boolean;
}

/** Carried over continue-as-new: the wall time spent awaiting a budget raise so far (budget.ts). */
export interface BudgetCarried {
  budgetWaitedMs?: number;
}

/** The parent's part of the session state (carried over continue-as-new; delegate.ts). */
export interface SubagentState {
  /** delegate calls so far: numbers the children in call order. */
  delegations?: number;
  children?: ChildRun[];
}

/** How a call the workflow answers itself ends for the turn. */
export interface ControlOutcome {
  /** attempt_completion: the task is done with this result. */
  completion?: string;
  /** The conversation cannot go on (the question was not answered). */
  stop?: boolean;
}
