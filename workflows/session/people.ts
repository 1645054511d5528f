// People in a `session` conversation: a tool call that waits for an operator's approval, a
// question that waits for the user's answer, and the updates that bring them in. A wait is bounded
// (the approval or question timeout) and ends early on a cancel. Deterministic: no Node APIs here.
import { condition, setHandler } from '@temporalio/workflow';
import type { CallSummary } from '../../src/turn/calls.js';
import type { RunConfig } from '../../src/config.js';
import { answerUpdate, decideApprovalUpdate, type ApprovalDecision, type ApprovalOutcome, type PendingApproval, type PendingQuestion } from '../api.js';
import { approvalTimeoutReason } from './policy.js';
import type { Status } from './status.js';
import type { StepRunner } from './steps.js';
import type { Requests } from './types.js';

export class People {
  /** The call waiting for approval, shown by `pending`, the page and the state query. */
  pendingApproval?: PendingApproval;
  private decision?: ApprovalDecision & { atMs: number };
  pendingQuestion?: PendingQuestion;
  private answerText?: string;

  constructor(
    private readonly steps: StepRunner,
    private readonly status: Status,
    private readonly requests: Requests,
    private readonly config: RunConfig,
    /** The last approval decisions (who, when). */
    private readonly st: { approvals: ApprovalOutcome[] },
  ) {
    status.explainWith('waiting', () =>
      this.pendingApproval ? `approval of ${this.pendingApproval.preview}` : this.pendingQuestion ? 'an answer to its question' : undefined,
    );
  }

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

  /** Ask the user; the answer, or undefined when none came in time or the conversation was cancelled. */
  async ask(call: CallSummary, question: string): Promise<string | undefined> {
    const { conversationId } = this.steps;
    this.pendingQuestion = { callId: call.id, question, sinceMs: Date.now() };
    this.answerText = undefined;
    this.status.set('waiting');
    await this.steps.record('announcing the question', (store) =>
      store.emitEvents({ conversationId, events: [{ type: 'question_asked', callId: call.id, question }] }),
    );
    const answered = await this.waitFor(() => this.answerText !== undefined, this.config.questionTimeoutMs);
    this.pendingQuestion = undefined;
    const text = this.answerText;
    this.answerText = undefined;
    return answered ? text : undefined;
  }

  /** Ask the operator; undefined when the conversation was cancelled while waiting. */
  async askApproval(call: CallSummary): Promise<ApprovalOutcome | undefined> {
    const { conversationId } = this.steps;
    const { config } = this;
    this.pendingApproval = {
      callId: call.id,
      name: call.name,
      preview: call.preview,
      reasons: call.reasons,
      sinceMs: Date.now(),
      ...(call.argsHash !== undefined ? { argsHash: call.argsHash } : {}),
    };
    this.decision = undefined;
    this.status.set('waiting');
    const reason = call.reasons.join('; ') || `${call.name} needs approval`;
    await this.steps.record('announcing the approval', (store) =>
      store.emitEvents({ conversationId, events: [{ type: 'approval_requested', callId: call.id, name: call.name, reason }] }),
    );
    const decided = await this.waitFor(() => this.decision !== undefined, config.approvalTimeoutMs);
    this.pendingApproval = undefined;
    if (!decided && this.requests.cancel) return undefined;
    const d = this.decision as (ApprovalDecision & { atMs: number }) | undefined;
    this.decision = undefined;
    const outcome: ApprovalOutcome = d
      ? { callId: call.id, approved: d.approved, by: d.by, atMs: d.atMs, reason: d.reason }
      : {
          callId: call.id,
          approved: config.approvalTimeoutAction === 'approve',
          atMs: Date.now(),
          reason: approvalTimeoutReason(config),
          timedOut: true,
        };
    this.st.approvals = [...this.st.approvals.slice(-19), outcome];
    await this.steps.record('recording the decision', (store) => store.emitEvents({ conversationId, events: [{ type: 'approval_decided', ...outcome }] }));
    return outcome;
  }

  /** Wait for a person, bounded by `timeoutMs`; false on timeout or cancel. */
  private async waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
    if (this.status.now !== 'waiting') this.status.set('waiting');
    const ok = await condition(() => done() || this.requests.cancel !== undefined, timeoutMs);
    this.status.set('running');
    return ok && done();
  }
}
