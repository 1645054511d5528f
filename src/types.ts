// Shared data shapes. Imported by workflow code too, so this file holds types and
// plain constants only (no Node APIs, no I/O).

export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** What a stored message is, beyond its role. */
export type MessageKind =
  | 'task' // the initial task (seq 0)
  | 'user' // a message sent by a person while the run goes on
  | 'assistant' // a model answer (merged over continuation segments)
  | 'tool_result' // the result of one tool call
  | 'reminder' // the runner's nudge after a reply with no tool call
  | 'answer' // a person's answer to ask_followup_question
  | 'notice'; // runner notes the model must see (approval denied, loop nudge, rollback…)

export type ContinuationStrategy = 'prefill' | 'prompt';

/** A tool call, after parsing. `args` are raw (strings for XML) until validated. */
/** What a tool call gave back (src/tools/): the model sees `output`. */
export interface ToolResult {
  ok: boolean;
  /** What the model sees. */
  output: string;
  meta?: Record<string, unknown>;
}

export interface ToolCall {
  /** Stable id: `${seq}.${index}` for the call's place in the assistant message. */
  id: string;
  /** The provider's id for native tool calls (needed to answer them), else undefined. */
  nativeId?: string;
  name: string;
  args: Record<string, unknown>;
  /** What the PreToolUse hooks decided as the call was parsed, before any approval (HookRecord of src/extensions/hooks.ts). */
  hooks?: Array<Record<string, unknown>>;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  reasoningTokens?: number;
  cachedTokens?: number;
}

export const ZERO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/** "1 file", "2 files": a count with its noun, singular for one. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    reasoningTokens: (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0) || undefined,
    cachedTokens: (a.cachedTokens ?? 0) + (b.cachedTokens ?? 0) || undefined,
  };
}

/**
 * The share of prompt tokens the provider served from its prompt cache (billed at the cached
 * price); undefined when no prompt tokens were counted.
 */
export function cacheHitRate(u: Pick<Usage, 'promptTokens' | 'cachedTokens'>): number | undefined {
  return u.promptTokens > 0 ? Math.min(1, (u.cachedTokens ?? 0) / u.promptTokens) : undefined;
}

/** `12,345 cached (67%)`, or '' when nothing was cached. */
export function formatCached(u: Pick<Usage, 'promptTokens' | 'cachedTokens'>): string {
  const rate = cacheHitRate(u);
  if (!u.cachedTokens || rate === undefined) return '';
  return `${u.cachedTokens.toLocaleString('en-US')} cached (${Math.round(rate * 100)}%)`;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call' | 'unknown';

/** One message as stored in PostgreSQL, keyed by (conversationId, seq). */
export interface StoredMessage {
  conversationId: string;
  seq: number;
  turn: number;
  role: Role;
  kind: MessageKind;
  content: string;
  /** Reasoning kept apart from the answer (reasoning_content deltas, <thinking> blocks). */
  reasoning?: string;
  /** Native tool calls of an assistant message (name, id, raw JSON argument string). */
  toolCalls?: { id: string; name: string; arguments: string }[];
  /** For tool results: which call this answers. */
  toolCallId?: string;
  toolName?: string;
  /** Tokens of this message, counted once when written (with the per-message overhead). */
  tokens: number;
  meta?: Record<string, unknown>;
}

/** The workflow's compact view of a stored message (principle 2, docs/architecture.md). */
export interface IndexEntry {
  seq: number;
  turn: number;
  role: Role;
  kind: MessageKind;
  tokens: number;
  toolName?: string;
  status?: 'ok' | 'error' | 'interrupted' | 'denied';
}

/** Live stream events, written by activities to the stream table, read by watchers. */
/** How a sub-agent (a `delegate` call's child conversation) ended, as its parent's stream reports it. */
export interface SubagentOutcome {
  conversationId: string;
  agent: string;
  status: ConversationStatus;
  turns: number;
  costUsd: number;
  /** Its attempt_completion result (or what it left), whole. */
  result?: string;
  reason?: string;
}

/** A conversation's budget limits (RunConfig's fields), as raised by `agentrun budget raise`. */
export interface BudgetLimits {
  maxTurns: number;
  maxTokens?: number;
  maxCostUsd?: number;
  maxTimeMs?: number;
}

export type StreamEvent =
  | { type: 'conversation_started'; task: string; model: string }
  | { type: 'turn_started'; turn: number }
  | { type: 'delta'; seq: number; attempt: number; segment: number; text: string }
  | { type: 'reasoning'; seq: number; attempt: number; segment: number; text: string }
  | { type: 'reset'; seq: number; attempt: number; segment: number; reason: string }
  /** The next segment of an answer: after a `length` cut-off, or after the attempt `resumedAfter` died mid-answer. */
  | { type: 'continuation'; seq: number; segment: number; resumedAfter?: number }
  | { type: 'message_completed'; seq: number; finishReason: FinishReason; usage: Usage }
  | { type: 'tool_started'; callId: string; name: string; preview: string }
  | {
      type: 'tool_completed';
      callId: string;
      name: string;
      ok: boolean;
      preview: string;
      /** A delegate call's sub-agent and what it returned. */ subagent?: SubagentOutcome;
    }
  | { type: 'approval_requested'; callId: string; name: string; reason: string }
  | { type: 'approval_decided'; callId: string; approved: boolean; by?: string; atMs: number; reason?: string; timedOut?: boolean }
  | { type: 'question_asked'; callId: string; question: string }
  | { type: 'window'; turn: number; tokensBefore: number; tokensAfter: number; actions: string[] }
  | { type: 'turn_completed'; turn: number; usage: Usage; costUsd: number }
  | { type: 'checkpoint'; turn: number; commit: string; files: string[] }
  | { type: 'rollback'; toTurn: number; commit: string; restored: string[]; removed: string[]; saved?: string; notRestored?: string[] }
  | { type: 'finished'; status: ConversationStatus; reason: string; summary?: string; /** attempt_completion's text */ result?: string }
  /** `drained`: the move followed a graceful drain of host `from` (nothing lost), not a loss. */
  | { type: 'workspace_restored'; host: string; turn: number; commit: string; from?: string; drained?: true }
  /** A local workspace's checkpoint bundle was above AGENTRUN_MAX_BUNDLE_BYTES: no off-host checkpoints from then on. */
  | { type: 'offhost_skipped'; turn: number; bytes: number; maxBytes: number; reason: string }
  | { type: 'result_branch'; branch: string; commit: string; pushed: boolean; files: number; insertions: number; deletions: number; verified?: boolean }
  /** `afterMove`: setup again on `host` after the workspace's Nth move there (its ignored files did not move). */
  | { type: 'setup_started'; commands: string[]; attempt: number; network?: string; host?: string; afterMove?: number }
  | { type: 'setup_output'; text: string }
  /** What the repository's .agentrun/ defines, and whether this run uses it (read once, at the start). */
  | { type: 'repository_extensions'; enabled: boolean; found: string[]; notice: string }
  | ({
      type: 'setup_finished';
      /** What else setup created (src/environment/setup-outputs.ts): left out of the result commit. */
      created?: { dirs: string[]; files: { path: string; blob: string }[] };
      host?: string;
      afterMove?: number;
    } & SetupEnd)
  /** At a budget limit with --on-budget pause: no model call until a raise (or the wait runs out). */
  | { type: 'budget_paused'; reason: string; waitMs: number }
  | { type: 'budget_raised'; limits: BudgetLimits; by?: string }
  | ({ type: 'verify' } & VerifyRun);

/** How a setup run ended: its stream event, the activity's result, `inspect`'s line. */
export interface SetupEnd {
  ok: boolean;
  ms: number;
  cached: boolean;
  /** The failing command's exit code (null: killed, or timed out). */
  exitCode?: number | null;
  /** Why it failed, one line: `setup failed (exit 7)`, `setup timed out after 20m` … */
  reason?: string;
  tail?: string;
  key?: string;
  /** Directories restored from or saved to the cache. */
  dirs?: string[];
}

/** One run of the repository's verify command: the workflow's record of it, its stream event, `inspect`'s line. */
export interface VerifyOutcome {
  command: string;
  passed: boolean;
  exitCode: number | null;
  ms: number;
  attempt: number;
  tail: string;
}

/** A verify run as the stream keeps it: `baseline` for the run before turn 1 (`--verify-baseline`). */
export interface VerifyRun extends VerifyOutcome {
  baseline?: boolean;
}

export type ConversationStatus =
  | 'running'
  | 'waiting' // for a person: approval or answer
  | 'paused'
  | 'stalled' // an infrastructure fault (database, git, disk) holds it; it goes on when the fault clears
  | 'awaiting_budget' // at a budget limit with --on-budget pause: waits for `agentrun budget raise`
  | 'waiting_for_provider' // the provider refused for now (429, 529) or its pool is full or paused; it goes on when the provider takes it
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'budget_exhausted'
  | 'loop_detected'
  | 'context_overflow';

export const FINAL_STATUSES: readonly ConversationStatus[] = ['completed', 'failed', 'cancelled', 'budget_exhausted', 'loop_detected', 'context_overflow'];

/** The failure type of an activity that met an infrastructure fault (activities/infra-errors.ts; the workflow reads it in workflows/session/steps.ts): the session stalls on it instead of failing. */
export const INFRASTRUCTURE_ERROR = 'InfrastructureError';
