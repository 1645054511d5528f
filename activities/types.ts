// The contract of the activities: the inputs and outputs of every registered activity (createActivities,
// activities/index.ts, returns `Activities`), the one file the workflow code names them from. Small by
// design (principle 2, docs/architecture.md): references and metadata only — transcript content
// stays in PostgreSQL.
import type { RunConfig } from '../src/config.js';
import type { RestoreResult } from '../src/workspace/checkpoint.js';
import type { BranchResult, VerifyNote } from '../src/workspace/result-branch.js';
import type { OffHostSaved } from '../src/workspace/offhost.js';
import type { WorkspaceOrigin } from '../src/workspace/identity.js';
import type { SetupOutcome } from '../src/environment/setup.js';
import type { PoolState } from '../src/store/budget-pools.js';
import type { StopVerdict } from '../src/extensions/observer.js';
import type { ConversationResult } from '../src/conversation-result.js';
import type { BudgetLimits, ConversationStatus, IndexEntry, StoredMessage, StreamEvent, Usage, VerifyOutcome } from '../src/types.js';
import type { CallOverride, RunToolResult, ToolStepResult } from '../src/turn/answer.js';
import type { Classification } from '../src/turn/calls.js';
import type { ModelStepInput, ModelStepResult } from '../src/turn/model-step.js';

export type { CallSummary, Classification } from '../src/turn/calls.js';
export type { PendingAppend } from '../src/turn/model-step.js';
export type { RunToolResult } from '../src/turn/answer.js';

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

export interface RunToolInput extends ConversationRef {
  turn: number;
  callId: string;
  resultSeq: number;
  /** Set when the workflow answers the call itself (denied, invalid, interrupted…). */
  override?: CallOverride;
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

export interface SessionRef {
  conversationId: string;
  workspace: string;
  /** The epoch of the workspace's placement (src/store/fence.ts): the host's writes carry it; absent before fencing. */
  epoch?: number;
}

export interface ModelTurnInput extends SessionRef, ModelStepInput {
  /** The previous turn's record, written first (the workflow saves a local activity per turn). */
  endTurn?: EndTurnRecordInput;
}

export interface ModelTurnResult extends ModelStepResult {
  /** The workspace has Stop hooks: the workflow runs `stopHook` before it lets the conversation end. */
  stopHook?: boolean;
  /** The run's tenant weight (`agentrun tenant weight set`), for the next step's Temporal fairness weight. */
  tenantWeight?: number;
}

export interface ToolCallInput extends SessionRef {
  turn: number;
  callId: string;
  resultSeq: number;
  /** The call's classification from its summary (src/turn/calls.ts): run on it, not checked again; absent (summaries from before it): classified here. */
  classified?: Classification;
  /** Checkpoint the workspace after the call when it changed files (mutating tools). */
  checkpoint?: boolean;
  /** Push that checkpoint off the host (repository jobs) or store it as a bundle (local workspaces) before answering, so a move can restore it. */
  offHost?: boolean;
  /** The commit the workflow knows at this turn's ref on the remote ('' none): the push's --force-with-lease. */
  lease?: string;
  /** Run again after the workspace was restored on another host: a change the call made on the lost host is made again (src/turn/answer.ts). */
  afterMove?: boolean;
}

export type ToolCallResult = ToolStepResult;

/** The turn's checkpoint made outside a tool call (after a sub-agent that may write), and stored off the host. */
export interface CheckpointTurnInput extends SessionRef {
  turn: number;
  /** The commit the workflow knows at this turn's ref on the remote ('' none): the push's --force-with-lease. */
  lease?: string;
}

export interface RecordToolResultInput {
  conversationId: string;
  turn: number;
  callId: string;
  resultSeq: number;
  override?: RunToolInput['override'];
}

export interface EndTurnRecordInput {
  conversationId: string;
  turn: number;
  usage: Usage;
  costUsd: number;
  status: ConversationStatus;
}

/** How the session ended (the store row, the stream's `finished` event). */
export type FinishSessionInput = FinishInput;

export interface StopHookInput extends SessionRef {
  turn: number;
  /** How often Stop hooks kept this conversation going already (Claude Code's `stop_hook_active` when > 0). */
  blocked: number;
}

/** `continue`: the reason a Stop hook gave for not ending (the model reads it); else the conversation ends. */
export type StopHookResult = StopVerdict;

export interface PrepareDelegateInput {
  conversationId: string;
  workspace: string;
  callId: string;
  /** The placement's epoch: a superseded host's reading writes nothing (activities/fence.ts). */
  epoch?: number;
}

export type PrepareDelegateResult =
  | { error: string }
  | {
      agent: { name: string; systemPrompt: string; model?: string; maxTurns?: number; tools?: string[] };
      task: string;
      /** Its tools only read: it may run beside other read-only agents. */
      readOnly: boolean;
    };

export interface SetupWorkspaceInput extends SessionRef {
  /** Run verify once before turn 1 too, and record it. */
  baseline?: boolean;
  /**
   * Setup again after the workspace's Nth move to another host: what setup made is ignored by git,
   * so it is not in the checkpoint the workspace was rebuilt from. Its events are apart from the first setup's.
   */
  afterMove?: number;
  /** Attempts of this setup scheduled in earlier rounds (a probed host that answered): its attempt numbers continue from them. */
  priorAttempts?: number;
}

export type { VerifyOutcome };

export interface SetupWorkspaceResult {
  /** Absent when the conversation has no setup. */
  setup?: SetupOutcome;
  /** The verify command in force (flag or settings): the workflow runs it at attempt_completion. */
  verify?: string;
  baseline?: VerifyOutcome;
  /** A settings file that cannot be used: the conversation ends with this line before any turn. */
  refused?: string;
}

export interface VerifyWorkspaceInput extends SessionRef {
  command: string;
  attempt: number;
}

export interface PlacedWorkspace {
  hostId: string;
  workspace: string;
  base: string;
  /** Local workspaces: the directory was reachable on this host as it was, so nothing was restored. */
  kept?: boolean;
  /** This worker process: a drain of it does not apply to the next process under the same host id. */
  incarnation: string;
}

export interface PlaceLocalInput {
  conversationId: string;
  workspace: string;
  /** Where the conversation was started (the client's machine and that directory): placed only there. */
  origin?: WorkspaceOrigin;
  /** This placement's epoch: raised in the store's fence first, so writes of earlier placements are refused (src/store/fence.ts). */
  epoch?: number;
  /** A move after a graceful drain of `fromHost` (not a loss): the stream's event says so. */
  fromHost?: string;
  drained?: boolean;
}

export interface PrepareWorkspaceInput {
  conversationId: string;
  task: string;
  config: RunConfig;
  /** This placement's epoch: raised in the store's fence first, so writes of earlier placements are refused (src/store/fence.ts). */
  epoch?: number;
  /** A move after a graceful drain of `fromHost` (not a loss): the stream's event says so. */
  fromHost?: string;
  drained?: boolean;
}

export interface MaterializeInput {
  conversationId: string;
  /** Repository jobs: the remote; absent for local workspaces (rebuilt from their stored bundles). */
  repo?: string;
  /** Local workspaces: the directory on the lost host, kept when this host reaches it intact. */
  workspace?: string;
  /** The job's base commit; found below the checkpoint when absent (a fork). */
  base?: string;
  turn: number;
  commit: string;
  /** Whose checkpoint ref to fetch (a fork's parent); default the conversation itself. */
  fromConversationId?: string;
  /** This placement's epoch: raised in the store's fence first, so writes of earlier placements are refused (src/store/fence.ts). */
  epoch?: number;
  /** A move after a graceful drain of `fromHost` (not a loss): the stream's event says so. */
  fromHost?: string;
  drained?: boolean;
}

export interface ForkInput {
  conversationId: string;
  parentId: string;
  atTurn: number;
  task: string;
  config: RunConfig;
}

export interface ForkCopy {
  index: IndexEntry[];
  nextSeq: number;
  checkpoints: { turn: number; commit: string; files: number }[];
}

export interface OffHostInput {
  conversationId: string;
  /** Repository jobs: pushed to the remote; absent: a bundle in the store. */
  repo?: string;
  workspace: string;
  turn: number;
  commit: string;
  /** The epoch of the placement (src/store/fence.ts): the host's writes carry it. */
  epoch?: number;
  /** The commit the workflow knows at the turn's ref ('' none): the push's --force-with-lease. */
  lease?: string;
}

export interface ResultBranchInput {
  conversationId: string;
  workspace: string;
  task: string;
  base: string;
  branch: string;
  push: boolean;
  /** The job's last verify run, named in the commit message. */
  verify?: VerifyNote;
  /** The epoch of the placement (src/store/fence.ts): the host's writes carry it. */
  epoch?: number;
}

/** Every registered activity. */
export interface Activities {
  // The session's own steps (activities/session.ts).
  modelTurn(input: ModelTurnInput): Promise<ModelTurnResult>;
  toolCall(input: ToolCallInput): Promise<ToolCallResult>;
  recordToolResult(input: RecordToolResultInput): Promise<RunToolResult>;
  endTurnRecord(input: EndTurnRecordInput): Promise<void>;
  stopHook(input: StopHookInput): Promise<StopHookResult>;
  finishSession(input: FinishSessionInput): Promise<{ summary?: string }>;
  initConversation(input: InitInput): Promise<{ tokens: number; checkpoint?: { turn: number; commit: string; files: string[] }; environment?: boolean }>;
  checkpointTurnZero(input: TurnZeroInput): Promise<{ commit: string; files: number } | undefined>;
  checkpointTurn(input: CheckpointTurnInput): Promise<ToolStepResult['checkpoint']>;
  appendMessage(input: AppendInput): Promise<{ tokens: number }>;
  emitEvents(input: { conversationId: string; events: StreamEvent[] }): Promise<void>;
  rollbackWorkspace(input: RollbackInput): Promise<RestoreResult & { commit: string }>;
  // Placement, moves and the result branch (activities/workspace.ts).
  prepareWorkspace(input: PrepareWorkspaceInput): Promise<PlacedWorkspace>;
  placeLocalWorkspace(input: PlaceLocalInput): Promise<PlacedWorkspace | null>;
  materializeWorkspace(input: MaterializeInput): Promise<PlacedWorkspace>;
  saveCheckpointOffHost(input: OffHostInput): Promise<OffHostSaved>;
  commitResultBranch(input: ResultBranchInput): Promise<BranchResult>;
  forkConversation(input: ForkInput): Promise<ForkCopy>;
  /** Nothing: the workflow asks whether a host answers at all (after a step's attempt there timed out). */
  probeHost(): Promise<void>;
  // Sub-agents (activities/delegate.ts).
  prepareDelegate(input: PrepareDelegateInput): Promise<PrepareDelegateResult>;
  // The environment: setup and verify (activities/environment.ts).
  setupWorkspace(input: SetupWorkspaceInput): Promise<SetupWorkspaceResult>;
  verifyWorkspace(input: VerifyWorkspaceInput): Promise<VerifyOutcome>;
  // Budgets and a batch's shared budget (activities/budget.ts).
  storeBudgetLimits(input: { conversationId: string; limits: BudgetLimits }): Promise<void>;
  openBudgetPool(input: { pool: string; limitUsd: number }): Promise<PoolState>;
  raiseBudgetPool(input: { pool: string; addUsd: number; raiseId: string }): Promise<PoolState>;
  // A batch's own steps (activities/batch.ts).
  pauseSchedule(input: { scheduleId: string; note: string }): Promise<void>;
}

/** The activities each module registers, by the name the workflow code proxies them under. */
export type SessionActivities = Pick<
  Activities,
  | 'modelTurn'
  | 'toolCall'
  | 'recordToolResult'
  | 'endTurnRecord'
  | 'stopHook'
  | 'finishSession'
  | 'initConversation'
  | 'checkpointTurnZero'
  | 'checkpointTurn'
  | 'appendMessage'
  | 'emitEvents'
  | 'rollbackWorkspace'
>;
export type WorkspaceActivities = Pick<
  Activities,
  'prepareWorkspace' | 'placeLocalWorkspace' | 'materializeWorkspace' | 'saveCheckpointOffHost' | 'commitResultBranch' | 'forkConversation' | 'probeHost'
>;
export type DelegateActivities = Pick<Activities, 'prepareDelegate'>;
export type EnvironmentActivities = Pick<Activities, 'setupWorkspace' | 'verifyWorkspace'>;
export type BudgetActivities = Pick<Activities, 'storeBudgetLimits' | 'openBudgetPool' | 'raiseBudgetPool'>;
export type BatchActivities = Pick<Activities, 'pauseSchedule'>;
