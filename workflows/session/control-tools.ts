// Control tools: calls the workflow answers itself instead of running them in the workspace.
// Each tool's whole behaviour is here, over the parts of the session it uses: the step runner (to
// answer), its slice of the state (the todo list), people (questions) and sub-agents.
import type { CallSummary } from '../../activities/types.js';
import { answerCall, runStoreTool, type Numbering } from './answers.js';
import type { Delegation } from './delegate.js';
import type { People } from './people.js';
import type { StepRunner } from './steps.js';
import type { ControlOutcome, Requests } from './types.js';

/** The part of the session state control tools read and write. */
export interface ControlState extends Numbering {
  todos?: string;
}

/** What a control tool works with. */
interface ControlParts {
  steps: StepRunner;
  st: ControlState;
  people: People;
  delegation: Delegation;
  requests: Requests;
}

type ControlTool = (parts: ControlParts, call: CallSummary) => Promise<ControlOutcome>;

const askUser: ControlTool = async ({ steps, st, people, requests }, call) => {
  const text = await people.ask(call, call.text ?? '');
  if (text === undefined) {
    // Nobody answered in time: the call says so (a cancel ends the conversation without it).
    if (!requests.cancel) await answerCall(steps, st, call, false, 'No answer arrived in time.', 'error');
    return { stop: true };
  }
  await answerCall(steps, st, call, true, `<answer>\n${text}\n</answer>`);
  return {};
};

export const CONTROL_TOOLS: Record<string, ControlTool> = {
  async attempt_completion({ steps, st }, call) {
    await answerCall(steps, st, call, true, 'The task is marked complete.');
    return { completion: call.text ?? '' };
  },
  ask_followup_question: askUser,
  // In plan mode the plan goes to the user, who answers (approve, change) like a question.
  plan_mode_respond: askUser,
  async todo_write({ steps, st }, call) {
    st.todos = call.text;
    await answerCall(steps, st, call, true, `The todo list is updated:\n${call.text ?? ''}`);
    return {};
  },
  async todo_read({ steps, st }, call) {
    await answerCall(steps, st, call, true, st.todos ?? '(the todo list is empty)');
    return {};
  },
  // A sub-agent as a child workflow; the whole behaviour is in delegate.ts.
  delegate: ({ delegation }, call) => delegation.call(call),
  // Message-id pruning: marks transcript messages for removal from later contexts (store only).
  async conversation_message_ids_write({ steps, st }, call) {
    await runStoreTool(steps, st, call);
    return {};
  },
};

export function isControlTool(call: CallSummary): boolean {
  return call.control && CONTROL_TOOLS[call.name] !== undefined;
}
