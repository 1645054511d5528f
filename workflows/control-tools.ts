// Control tools: calls the workflow answers itself instead of running them in the workspace.
// Each tool's whole behaviour is here; the session provides the few steps they need.
import type { CallSummary } from '../activities/types.js';
import type { IndexEntry } from '../src/types.js';

/** What a control tool may do to the conversation. */
export interface ControlHost {
  /** Store the call's result (a local activity: no workspace involved). */
  answer(call: CallSummary, ok: boolean, output: string, status?: IndexEntry['status']): Promise<void>;
  /** Run a store-only tool (its result written by the activity). */
  runStoreTool(call: CallSummary): Promise<void>;
  /** Ask the user and wait; undefined when no answer came (timeout or cancel). */
  ask(call: CallSummary, question: string): Promise<string | undefined>;
  todos: string | undefined;
  /** Run a sub-agent for this delegate call and answer it with the result (workflows/delegate.ts). */
  delegate(call: CallSummary): Promise<ControlOutcome>;
}

export interface ControlOutcome {
  /** attempt_completion: the task is done with this result. */
  completion?: string;
  /** The conversation cannot go on (the question was not answered). */
  stop?: boolean;
}

type ControlTool = (host: ControlHost, call: CallSummary) => Promise<ControlOutcome>;

const askUser: ControlTool = async (host, call) => {
  const text = await host.ask(call, call.text ?? '');
  if (text === undefined) return { stop: true };
  await host.answer(call, true, `<answer>\n${text}\n</answer>`);
  return {};
};

export const CONTROL_TOOLS: Record<string, ControlTool> = {
  async attempt_completion(host, call) {
    await host.answer(call, true, 'The task is marked complete.');
    return { completion: call.text ?? '' };
  },
  ask_followup_question: askUser,
  // In plan mode the plan goes to the user, who answers (approve, change) like a question.
  plan_mode_respond: askUser,
  async todo_write(host, call) {
    host.todos = call.text;
    await host.answer(call, true, `The todo list is updated:\n${call.text ?? ''}`);
    return {};
  },
  async todo_read(host, call) {
    await host.answer(call, true, host.todos ?? '(the todo list is empty)');
    return {};
  },
  // A sub-agent as a child workflow; the whole behaviour is in workflows/delegate.ts.
  delegate: (host, call) => host.delegate(call),
  // Message-id pruning: marks transcript messages for removal from later contexts (store only).
  async conversation_message_ids_write(host, call) {
    await host.runStoreTool(call);
    return {};
  },
};

export function isControlTool(call: CallSummary): boolean {
  return call.control && CONTROL_TOOLS[call.name] !== undefined;
}
