// A tool call's life in a turn: decided (invalid, a control tool, refused in plan mode, waiting for
// approval, denied), then run on the workspace's host through the tool step, or answered by the
// workflow itself; a host lost under it moves the workspace, and the call runs again on the new
// host (answered as interrupted where it may not run twice). Each call's phase is kept for the
// state query. Deterministic: no Node APIs here.
import { ApplicationFailure } from '@temporalio/workflow';
import type { CallSummary } from '../../activities/types.js';
import type { RunConfig } from '../../src/config.js';
import { answerCall } from './answers.js';
import { CONTROL_TOOLS, isControlTool, type ControlState } from './control-tools.js';
import type { Delegation } from './delegate.js';
import { HostLost, type HostCarried } from './host.js';
import { noteRecovery } from './host-loss.js';
import type { People } from './people.js';
import { deniedMessage, needsApproval, planModeRefusal, readsOnly, toolTimeoutMs } from './policy.js';
import type { Status } from './status.js';
import type { StepRunner } from './steps.js';
import type { CallLife, CallPhase } from '../api.js';
import type { ControlOutcome, Requests, SessionCarried } from './types.js';

/** The part of the session state the calls read and write. */
export interface CallsState extends HostCarried, ControlState, Pick<SessionCarried, 'pending'> {
  checkpointTurns: number[];
}

export class Calls {
  /** The running turn's calls, in the order the model wrote them (the state query shows them). */
  private lives: CallLife[] = [];

  constructor(
    private readonly steps: StepRunner,
    private readonly st: CallsState,
    private readonly config: RunConfig,
    private readonly status: Status,
    private readonly requests: Requests,
    private readonly people: People,
    private readonly delegation: Delegation,
  ) {}

  /** Where each call of the running turn stands. */
  get shown(): CallLife[] {
    return this.lives.map((l) => ({ ...l }));
  }

  /** A new answer's calls, all `scheduled`. */
  begin(calls: CallSummary[]): void {
    this.lives = calls.map((c) => ({ callId: c.id, name: c.name, preview: c.preview, phase: 'scheduled' }));
  }

  private enter(call: CallSummary, phase: CallPhase): void {
    const i = this.lives.findIndex((l) => l.callId === call.id);
    if (i < 0) return;
    const { callId, name, preview } = this.lives[i]!;
    this.lives[i] = { callId, name, preview, ...phase };
  }

  /** Decide and answer one tool call. */
  async handle(call: CallSummary): Promise<ControlOutcome> {
    if (call.invalid) {
      await answerCall(this.steps, this.st, call, false, call.invalid, 'error');
      this.enter(call, { phase: 'done', outcome: 'invalid' });
      return {};
    }
    if (isControlTool(call)) {
      // A sub-agent, a question, the completion: what the session waits for now.
      this.status.show(call.preview);
      this.enter(call, { phase: 'running' });
      const outcome = await CONTROL_TOOLS[call.name]!(
        { steps: this.steps, st: this.st, people: this.people, delegation: this.delegation, requests: this.requests },
        call,
      );
      this.enter(call, { phase: 'done', outcome: outcome.stop ? 'stopped' : 'answered' });
      return outcome;
    }
    const refusal = planModeRefusal(this.config, call);
    if (refusal) {
      await answerCall(this.steps, this.st, call, false, refusal, 'error');
      this.enter(call, { phase: 'done', outcome: 'refused' });
      return {};
    }
    if (needsApproval(this.config, call)) {
      this.enter(call, { phase: 'awaiting_approval' });
      const outcome = await this.people.askApproval(call);
      if (!outcome) {
        this.enter(call, { phase: 'done', outcome: 'stopped' });
        return { stop: true };
      }
      if (!outcome.approved) {
        await answerCall(this.steps, this.st, call, false, deniedMessage(call.name, outcome.reason, outcome.by), 'denied');
        this.enter(call, { phase: 'done', outcome: 'denied' });
        return {};
      }
    }
    this.enter(call, { phase: 'running' });
    const interrupted = await this.run(call);
    this.enter(call, { phase: 'done', outcome: interrupted ? 'interrupted' : 'ran' });
    return {};
  }

  /** The tool step on the workspace's host; true when the call was answered as interrupted. */
  private async run(call: CallSummary): Promise<boolean> {
    const { st, steps } = this;
    const resultSeq = st.nextSeq++;
    this.status.show(call.preview);
    // A sub-agent never moves (its parent does, from the parent's checkpoints): nothing of its own leaves the host.
    const offHost = st.host && this.config.agent?.parentId === undefined ? { offHost: true } : {};
    /** Runs again on the host a drain moved the workspace to. */
    let movedByDrain = false;
    /** Runs again where a move restored the workspace: what it did on the old host is made again there (host-loss.ts). */
    let afterMove = false;
    let r;
    for (;;) {
      try {
        r = await steps.run(
          'tool',
          [st.turn, call.preview],
          (a) =>
            a.toolCall({
              ...steps.ref,
              turn: st.turn,
              callId: call.id,
              resultSeq,
              // As the call was classified when parsed (summaries from before carry none: the step classifies it).
              classified: call.safety && { target: call.target ?? '', safety: call.safety },
              checkpoint: call.mutating,
              ...offHost,
              ...steps.hosts.fencedPush(st.turn),
              ...(afterMove ? { afterMove } : {}),
            }),
          { arg: toolTimeoutMs(call), what: `the ${call.name} call`, reads: readsOnly(call) },
        );
        break;
      } catch (err) {
        if (!(err instanceof HostLost)) throw err;
        // A read while turn 0's checkpoint is made: nothing left the host yet; the checkpoint's step
        // places the workspace again, and the read runs there.
        if (steps.gate.turnZero) {
          await steps.gate.turnZero;
          continue;
        }
        let restored: boolean;
        try {
          restored = await steps.hosts.recover(err);
        } catch (failed) {
          // Moved, but setup failed on the new host: the conversation ends there, and the call
          // went with the old host all the same. Answered, so the transcript says what became of it.
          if (failed instanceof ApplicationFailure && failed.type === 'SetupFailed') {
            await this.answerInterrupted(call, resultSeq);
          }
          throw failed;
        }
        // The workspace kept as it was on the new host: the call runs again there; its ledger entry answers a started call as interrupted.
        if (!restored) continue;
        // Restored from an older checkpoint: the call runs again there (host-loss.ts). Drained, not
        // lost: the worker finished what it ran (its checkpoint left the host) before it said so, so
        // this call had not started there, or ran out of the shutdown grace (answered as cut off below).
        afterMove = true;
        movedByDrain = err.drained;
        continue;
      }
    }
    if (afterMove) noteRecovery(st, call, r.recovery);
    // Cut off by the end of a drain's grace and not run again: its answer says why.
    const cutOff = movedByDrain && r.recovery === 'interrupted';
    if (cutOff) await this.answerInterrupted(call, resultSeq, 'cutOff');
    if (r.checkpoint && !st.checkpointTurns.includes(r.checkpoint.turn)) st.checkpointTurns.push(r.checkpoint.turn);
    if (r.checkpoint && st.host) st.offHost = { turn: r.checkpoint.turn, commit: r.checkpoint.commit };
    return cutOff || r.recovery === 'interrupted';
  }

  /**
   * Whatever the call did went with the host: it is answered as interrupted, never run again.
   * `cutOff`: its host was drained, but the call outlasted the shutdown grace.
   */
  private async answerInterrupted(call: CallSummary, resultSeq: number, cutOff?: 'cutOff'): Promise<void> {
    const output = cutOff
      ? `This ${call.name} call was interrupted: its worker was restarted and the call outlasted the shutdown grace (see the notice that follows). Its effect, if any, is lost.`
      : `This ${call.name} call was interrupted: the workspace host was lost (see the notice that follows). Its effect, if any, is lost.`;
    const { conversationId } = this.steps;
    await this.steps.record('answering the interrupted call', (store) =>
      store.recordToolResult({ conversationId, turn: this.st.turn, callId: call.id, resultSeq, override: { ok: false, output, status: 'interrupted' } }),
    );
  }
}
