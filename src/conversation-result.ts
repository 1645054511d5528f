// What a conversation ends with, as its workflow returns it and the finish activity stores it: shared
// by the workflow (workflows/api.ts re-exports it for clients) and the activities below it, so
// neither reaches the other's layer for it.
import type { ConversationStatus, Usage } from './types.js';
import type { BranchResult } from './workspace/result-branch.js';
import type { Recovery } from './tools/ledger-runner.js';

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
  /** A sub-agent that ended because its (its parent's) workspace host was lost: the parent moves at once. */
  hostLost?: { hostId: string; why: string };
  /** Repository jobs whose host was lost or drained: each move, and what became of the calls it cut off. */
  failovers?: Failover[];
}

export interface Failover {
  fromHost: string;
  toHost: string;
  /** The turn whose off-host checkpoint the workspace was restored to. */
  restoredTurn: number;
  atTurn: number;
  reason: string;
  /** A graceful drain, not a loss: every finished call's changes moved, calls not started ran on the new host. */
  drained?: boolean;
  /** The calls cut off by the move that ran again on the new host (workflows/session/host-loss.ts), in the order they ended there. */
  calls?: RecoveredCall[];
}

/** A call cut off by a move and run again where the workspace went: what became of it (src/tools/ledger-runner.ts `Recovery`). */
export interface RecoveredCall {
  callId: string;
  tool: string;
  /** The file or command, as the call's preview names it. */
  target?: string;
  recovery: Recovery;
}
