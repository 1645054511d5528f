// A call the workflow answers itself (invalid, refused, denied, a control tool, a sub-agent's end):
// its result stored at the next seq by a store-only step, as the model will read it.
import type { CallSummary } from '../../activities/types.js';
import type { IndexEntry, SubagentOutcome } from '../../src/types.js';
import type { StepRunner } from './steps.js';

/** Where the next message goes: the running turn and the next free seq. */
export interface Numbering {
  turn: number;
  nextSeq: number;
}

/** Store the call's result as the workflow decided it. `subagent`: how a child ended, for the stream (tool_completed). */
export async function answerCall(
  steps: StepRunner,
  st: Numbering,
  call: CallSummary,
  ok: boolean,
  output: string,
  status?: IndexEntry['status'],
  subagent?: SubagentOutcome,
): Promise<void> {
  const resultSeq = st.nextSeq++;
  const override = { ok, output, status, ...(subagent ? { subagent } : {}) };
  const { conversationId } = steps;
  await steps.record('recording a tool result', (store) => store.recordToolResult({ conversationId, turn: st.turn, callId: call.id, resultSeq, override }));
}

/** A store-only tool: its result written by the activity. */
export async function runStoreTool(steps: StepRunner, st: Numbering, call: CallSummary): Promise<void> {
  const resultSeq = st.nextSeq++;
  const { conversationId } = steps;
  await steps.record(`the ${call.name} call`, (store) => store.recordToolResult({ conversationId, turn: st.turn, callId: call.id, resultSeq }));
}
