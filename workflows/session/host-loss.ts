// What a lost host keeps: a call cut off by the loss of its host runs again, under its id, on the
// host the workspace was restored on. The tool step there decides from the store what that means
// (src/tools/ledger-runner.ts): a file change made again where the restored checkpoint lacks it,
// checked against the hash the call found; a command run again only if it may run twice. Here: the
// record of what became of each call, in the move's notice to the model, in `inspect` (the move's
// entry in `failovers`) and in the result.
// Deterministic: no Node APIs.
import type { Recovery } from '../../src/tools/ledger-runner.js';
import type { CallSummary } from '../../activities/types.js';
import type { MessageKind, Role } from '../../src/types.js';
import type { ConversationResult, Failover, RecoveredCall } from '../api.js';

/** What of the session's carried state the record of moves reads and writes (types.ts's SessionCarried has it). */
interface MovesState {
  failovers?: Failover[];
  pending: { role: Role; kind: MessageKind; content: string; turn: number }[];
  turn: number;
}

/** The move notice's account of the cut-off calls (each one's outcome follows it, one line a call). */
export const RUN_AGAIN_NOTICE =
  'Every call that finished before the loss is in that checkpoint; calls cut off by the loss ran again there from the transcript: a file change was made again where the file was as the call had found it, a command only where it may run twice. What became of each is listed below; a call that was not redone says so in its own result too.';

const OUTCOME: Record<Recovery, string> = {
  reapplied: 'its change was made again from the transcript (the file was as the call had found it)',
  kept: 'its change was in the restored workspace already',
  'ran-again': 'ran again (it may run twice)',
  conflict: 'NOT applied: the file is neither as the call found it nor as it left it (a conflict, named in its result); redo it if it is still needed',
  interrupted: 'NOT run again: it may not be safe to run twice, so whatever it changed is lost; check and redo it if it is still needed',
  recorded: 'changed nothing that could be lost; its result stands',
  'not-started': 'had not started; it ran there',
};

/**
 * Record what became of `call`, run again after the last move: on that move's entry (`inspect`, the
 * result) and as a line of its notice, still pending for the next model step (else a notice of its own).
 */
export function noteRecovery(st: MovesState, call: CallSummary, recovery: Recovery | undefined): void {
  const move = st.failovers?.at(-1);
  if (!move || recovery === undefined) return;
  const entry: RecoveredCall = { callId: call.id, tool: call.name, ...(call.target ? { target: call.target } : {}), recovery };
  (move.calls ??= []).push(entry);
  const line = `- ${call.preview} (call ${call.id}): ${OUTCOME[recovery]}`;
  const notice = [...st.pending].reverse().find((p) => p.kind === 'notice' && p.content.includes(`held the workspace (${move.fromHost})`));
  if (notice) notice.content += `\n${line}`;
  else
    st.pending.push({
      role: 'user',
      kind: 'notice',
      turn: st.turn,
      content: `[A call cut off when the workspace moved from host ${move.fromHost} ran again on host ${move.toHost}:]\n${line}`,
    });
}

/** The moves and what became of their cut-off calls, for the result (none: nothing). */
export function movesResult(st: Pick<MovesState, 'failovers'>): Pick<ConversationResult, 'failovers'> {
  return st.failovers?.length ? { failovers: st.failovers } : {};
}
