// Row shapes returned by the store.
import type { ConversationStatus, StreamEvent, ToolResult, Usage } from '../types.js';

export interface ConversationRow {
  id: string;
  task: string;
  workspace: string;
  model: string;
  config: unknown;
  scheduleId?: string;
  status: ConversationStatus;
  reason?: string;
  turns: number;
  usage: Usage;
  costUsd: number;
  createdAt: Date;
  updatedAt: Date;
  finishedAt?: Date;
  /** What gc removed (src/workspace/gc.ts): when, the workspace and its size, stream rows, refs, bundles. */
  collected?: Record<string, unknown>;
}

/** A decision on a call that waited for approval: who, when, and whether it timed out instead. */
export interface ApprovalRow {
  callId: string;
  approved: boolean;
  by?: string;
  reason?: string;
  timedOut?: boolean;
  atMs: number;
}

export interface ConversationInput {
  id: string;
  task: string;
  workspace: string;
  model: string;
  config: unknown;
  scheduleId?: string;
}

export interface ConversationPatch {
  status?: ConversationStatus;
  reason?: string;
  turns?: number;
  usage?: Usage;
  costUsd?: number;
  /** true stamps finished_at (once; a repeated call keeps the first time). */
  finished?: boolean;
}

export interface SegmentRow {
  conversationId: string;
  seq: number;
  segment: number;
  content: string;
  reasoning?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
  finishReason: string;
  usage: Usage;
}

export interface StreamRow {
  offset: number;
  event: StreamEvent;
  at: Date;
}

export interface PruneRecordInput {
  /** Which pass of the pruning pipeline in this turn (default 0). */
  pass?: number;
  tokensBefore: number;
  tokensAfter: number;
  actions: string[];
  plan: unknown;
}

export interface PruneRecordRow {
  turn: number;
  pass: number;
  tokensBefore: number;
  tokensAfter: number;
  actions: string[];
  plan: unknown;
  at: Date;
}

export interface CheckpointRow {
  turn: number;
  commit: string;
  files: string[];
  at: Date;
}

export interface UsageInput {
  conversationId: string;
  turn: number;
  seq: number;
  segment: number;
  /** Activity attempt number; each attempt that reached the model is billed (default 1). */
  attempt?: number;
  model: string;
  usage: Usage;
  costUsd: number;
  /** `turn`, `summary`, … (as in the x-agentrun-purpose header). */
  purpose: string;
}

export interface UsageRow extends Required<Omit<UsageInput, 'conversationId'>> {
  at: Date;
}

/** A tool call's entry in the ledger (src/tools/ledger-runner.ts runs each call once by it). */
export interface LedgerEntry {
  callId: string;
  tool: string;
  argsHash: string;
  state: 'started' | 'done';
  intent?: { path: string; beforeHash: string | null; afterHash: string };
  result?: ToolResult;
}

/** The ledger as the tools' runner sees it; the store implements it. */
export interface LedgerPort {
  get(callId: string): Promise<LedgerEntry | null>;
  /**
   * Claim the call: true when this caller recorded it (and so runs it), false when another
   * attempt already had. One atomic statement decides (the store: INSERT … ON CONFLICT DO NOTHING RETURNING).
   */
  start(entry: LedgerEntry): Promise<boolean>;
  finish(callId: string, result: ToolResult): Promise<void>;
}

/** One connection through the egress proxy, as recorded (src/sandbox/proxy.ts ConnectionRecord). */
export interface NetworkConnectionInput {
  conversationId: string;
  callId?: string;
  host: string;
  port: number;
  address?: string;
  method: 'CONNECT' | 'HTTP';
  allowed: boolean;
  reason?: string;
  bytesUp: number;
  bytesDown: number;
  durationMs: number;
}

export interface NetworkConnectionRow extends NetworkConnectionInput {
  /** The placement whose command made the connection (absent: recorded before epochs were kept, or outside a fenced step). */
  epoch?: number;
  at: Date;
}
