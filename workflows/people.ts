// People in a `session` conversation: a tool call that waits for an operator's approval, a
// question that waits for the user's answer, and the updates that bring them in. A wait is bounded
// (the approval or question timeout) and ends early on a cancel. Deterministic: no Node APIs here.
import { condition, setHandler } from '@temporalio/workflow';
import type { CallSummary } from '../src/turn/calls.js';
import type { IndexEntry } from '../src/types.js';
import { answerUpdate, decideApprovalUpdate, type ApprovalDecision, type ApprovalOutcome, type PendingApproval, type PendingQuestion } from './api.js';
import { approvalTimeoutReason } from './policy.js';
import type { SessionCore } from './session-types.js';

export class People {
  /** The call waiting for approval, shown by `pending`, the page and the state query. */
  pendingApproval?: PendingApproval;
  private decision?: ApprovalDecision & { atMs: number };
  pendingQuestion?: PendingQuestion;
  private answerText?: string;

  constructor(
    private readonly s: SessionCore,
    /** Store a call's result (a local activity): a question nobody answered is answered so. */
    private readonly answer: (call: CallSummary, ok: boolean, output: string, status?: IndexEntry['status']) => Promise<void>,
  ) {}

  /** The approval and answer updates: each validated against what waits now. */
  register(): void {
    setHandler(
      decideApprovalUpdate,
      async (d) => {
        const callId = this.pendingApproval!.callId;
        const atMs = Date.now();
        this.decision = { ...d, atMs };
        return { callId, approved: d.approved, by: d.by, atMs };
      },
      {
        validator: (d) => {
          if (!this.pendingApproval) throw new Error('no tool call is waiting for approval');
          if (d.callId && d.callId !== this.pendingApproval.callId) throw new Error(`call ${d.callId} is not the one waiting (${this.pendingApproval.callId})`);
          // What was approved must be what was shown: the arguments' hash from `pending` / the page.
          const shown = this.pendingApproval.argsHash;
          if (d.argsHash !== undefined && shown !== undefined && d.argsHash !== shown)
            throw new Error(
              `the arguments of call ${this.pendingApproval.callId} changed since you looked (you saw ${d.argsHash}, it is ${shown}); run agentrun pending again`,
            );
          // Until the workflow takes the decision, a second one (another operator, a retry) must not replace it.
          if (this.decision !== undefined) throw new Error(`call ${this.pendingApproval.callId} is already decided`);
        },
      },
    );
    setHandler(
      answerUpdate,
      async ({ text }) => {
        const callId = this.pendingQuestion!.callId;
        this.answerText = text;
        return { callId };
      },
      {
        validator: ({ text }) => {
          if (!this.pendingQuestion) throw new Error('no question is waiting for an answer');
          if (!text.trim()) throw new Error('the answer is empty');
        },
      },
    );
  }

  /** The conversation ended: nothing waits any more. */
  clear(): void {
    this.pendingApproval = undefined;
    this.pendingQuestion = undefined;
  }

  /** Ask the user; the answer, or undefined when none came in time (the call answered so) or the conversation was cancelled. */
  async ask(call: CallSummary, question: string): Promise<string | undefined> {
    const s = this.s;
    this.pendingQuestion = { callId: call.id, question, sinceMs: Date.now() };
    this.answerText = undefined;
    s.setStatus('waiting');
    await s.durably('announcing the question', () =>
      s.local.emitEvents({ conversationId: s.conversationId, events: [{ type: 'question_asked', callId: call.id, question }] }),
    );
    const answered = await this.waitFor(() => this.answerText !== undefined, s.config.questionTimeoutMs);
    this.pendingQuestion = undefined;
    const text = this.answerText;
    this.answerText = undefined;
    if (answered) return text;
    if (!s.cancelRequested) await this.answer(call, false, 'No answer arrived in time.', 'error');
    return undefined;
  }

  /** Ask the operator; undefined when the conversation was cancelled while waiting. */
  async askApproval(call: CallSummary): Promise<ApprovalOutcome | undefined> {
    const s = this.s;
    this.pendingApproval = {
      callId: call.id,
      name: call.name,
      preview: call.preview,
      reasons: call.reasons,
      sinceMs: Date.now(),
      ...(call.argsHash !== undefined ? { argsHash: call.argsHash } : {}),
    };
    this.decision = undefined;
    s.setStatus('waiting');
    const reason = call.reasons.join('; ') || `${call.name} needs approval`;
    await s.durably('announcing the approval', () =>
      s.local.emitEvents({ conversationId: s.conversationId, events: [{ type: 'approval_requested', callId: call.id, name: call.name, reason }] }),
    );
    const decided = await this.waitFor(() => this.decision !== undefined, s.config.approvalTimeoutMs);
    this.pendingApproval = undefined;
    if (!decided && s.cancelRequested) return undefined;
    const d = this.decision as (ApprovalDecision & { atMs: number }) | undefined;
    this.decision = undefined;
    const outcome: ApprovalOutcome = d
      ? { callId: call.id, approved: d.approved, by: d.by, atMs: d.atMs, reason: d.reason }
      : {
          callId: call.id,
          approved: s.config.approvalTimeoutAction === 'approve',
          atMs: Date.now(),
          reason: approvalTimeoutReason(s.config),
          timedOut: true,
        };
    s.st.approvals = [...s.st.approvals.slice(-19), outcome];
    await s.durably('recording the decision', () =>
      s.local.emitEvents({ conversationId: s.conversationId, events: [{ type: 'approval_decided', ...outcome }] }),
    );
    return outcome;
  }

  /** Wait for a person, bounded by `timeoutMs`; false on timeout or cancel. */
  private async waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
    const s = this.s;
    if (s.st.status !== 'waiting') s.setStatus('waiting');
    const ok = await condition(() => done() || s.cancelRequested !== undefined, timeoutMs);
    s.setStatus('running');
    return ok && done();
  }
}
