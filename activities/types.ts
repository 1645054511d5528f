// Inputs and outputs of the activities. Small by design (principle 2, docs/architecture.md): references
// and metadata only — transcript content stays in PostgreSQL.
import type { RunConfig } from '../src/config.js';
import type { StoredContext } from '../src/model/request.js';
import type { RestoreResult } from '../src/workspace/checkpoint.js';
import type { BranchResult } from '../src/workspace/result-branch.js';
import type {
  ForkCopy,
  ForkInput,
  MaterializeInput,
  OffHostInput,
  PlacedWorkspace,
  PlaceLocalInput,
  PrepareWorkspaceInput,
  ResultBranchInput,
} from './workspace.js';
import type { OffHostSaved } from '../src/workspace/offhost.js';
import type { ConversationResult } from '../workflows/api.js';
import type { FinishReason, IndexEntry, StoredMessage, StreamEvent, SubagentOutcome, Usage } from '../src/types.js';

export interface ConversationRef {
  conversationId: string;
  workspace: string;
  config: RunConfig;
  /** The epoch of the workspace's placement (src/store/fence.ts): the host's writes carry it; absent before fencing. */
  epoch?: number;
}

export interface InitInput extends ConversationRef {
  task: string;
  /** The turn-0 checkpoint is made by its own step (checkpointTurnZero), alongside the first model step: none here. */
  deferCheckpoint?: boolean;
  /** The workflow that started this one as its child (Temporal's own record of it, which no caller can name): a sub-agent's parent. */
  startedBy?: string;
}

/** The turn-0 checkpoint of a conversation whose first step did not make it (InitInput.deferCheckpoint). */
export interface TurnZeroInput {
  conversationId: string;
  workspace: string;
  epoch?: number;
}

/** A message the workflow appends (user message, reminder, notice); tokens are counted on write. */
export type AppendInput = Pick<StoredMessage, 'conversationId' | 'seq' | 'turn' | 'role' | 'kind' | 'content' | 'toolName' | 'toolCallId' | 'meta'> & {
  model: string;
};

export interface PrepareInput extends ConversationRef {
  turn: number;
  /** Highest seq that belongs to the history of this turn. */
  throughSeq: number;
  /** After a provider context-length error: prune harder. */
  harder?: boolean;
}

export interface PrepareResult {
  promptTokens: number;
  safeZone: number;
  fits: boolean;
  /** Present when this pass changed the context (an audit record was written). */
  pruned?: { tokensBefore: number; tokensAfter: number; actions: string[] };
  reason?: string;
}

export interface CallModelInput extends ConversationRef {
  turn: number;
  seq: number;
  segment: number;
  /** Model calls already made for this segment by earlier activities (the retry after a context-length error). */
  priorAttempts?: number;
  /** The turn's context as prepareContext stored it and the history it read, when the caller holds them (else read from the store). */
  prepared?: PreparedRequest;
}

/** What the model call renders a turn's request from: the stored context and the history through the turn's last message. */
export interface PreparedRequest {
  context: StoredContext;
  history: StoredMessage[];
}

export interface CallModelResult {
  finishReason: FinishReason;
  usage: Usage;
  costUsd: number;
  /** True when this segment finished the message (stop, or continuation budget spent) and it was merged. */
  merged: boolean;
  tokens: number;
  preview: string;
  /** The merged assistant message as stored, when `merged`. */
  message?: StoredMessage;
}

export type { CallSummary } from '../src/parser/calls.js';
import type { CallSummary } from '../src/parser/calls.js';

export interface ParseResult {
  calls: CallSummary[];
  /** The same call with the same arguments repeated, or the same output chunk: a loop. */
  loop?: string;
}

export interface RunToolInput extends ConversationRef {
  turn: number;
  callId: string;
  resultSeq: number;
  /** Set when the workflow answers the call itself (denied, invalid, interrupted…). */
  override?: { ok: boolean; output: string; status?: IndexEntry['status']; subagent?: SubagentOutcome };
}

export interface RunToolResult {
  ok: boolean;
  status: NonNullable<IndexEntry['status']>;
  tokens: number;
  preview: string;
  changed: boolean;
  replayed?: boolean;
}

/** How the conversation ended: the workflow's result, before the final summary is added. */
export interface FinishInput extends Omit<ConversationResult, 'conversationId'> {
  conversationId: string;
}

export interface RollbackInput {
  conversationId: string;
  workspace: string;
  /** The epoch of the workspace's placement (src/store/fence.ts): the host's writes carry it; absent before fencing. */
  epoch?: number;
  /** The checkpoint's turn, or -1 for a state saved before an earlier rollback. */
  toTurn: number;
  /** The commit to restore; absent: the checkpoint of `toTurn`, from the store. */
  commit?: string;
  /** Names this rollback, so a retried activity reuses its first save. */
  key?: string;
}

export interface Activities {
  initConversation(input: InitInput): Promise<{ tokens: number; checkpoint?: { turn: number; commit: string; files: string[] }; environment?: boolean }>;
  appendMessage(input: AppendInput): Promise<{ tokens: number }>;
  emitEvents(input: { conversationId: string; events: StreamEvent[] }): Promise<void>;
  rollbackWorkspace(input: RollbackInput): Promise<RestoreResult & { commit: string }>;
  prepareWorkspace(input: PrepareWorkspaceInput): Promise<PlacedWorkspace>;
  placeLocalWorkspace(input: PlaceLocalInput): Promise<PlacedWorkspace | null>;
  materializeWorkspace(input: MaterializeInput): Promise<PlacedWorkspace>;
  saveCheckpointOffHost(input: OffHostInput): Promise<OffHostSaved>;
  commitResultBranch(input: ResultBranchInput): Promise<BranchResult>;
  forkConversation(input: ForkInput): Promise<ForkCopy>;
}
