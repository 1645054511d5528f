// The conversation as it reads: run (turns until an ending, continue-as-new at a turn boundary),
// one turn (pending messages → the model step → the calls → Stop hooks and verify → the turn's
// record), and the finish. Every step goes through the step runner (steps.ts); each call's life is
// in calls.ts; the parts around the loop (start, environment, people, budget, host routing) are
// in their own files, and workflow.ts wires them and the messages from outside.
//
// A turn costs two task-queue activities: `modelTurn` (pending messages, context, the answer,
// parsing) and `toolCall` per call (with the turn's checkpoint); store-only steps are local
// activities. Deterministic: no Node APIs here.
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  makeContinueAsNewFunc,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { PendingAppend } from '../../activities/types.js';
import type { RunConfig } from '../../src/config.js';
import { ModelErrorType } from '../../src/model/error-types.js';
import { addUsage } from '../../src/types.js';
import { defaultBranch, expandBranch } from '../../src/workspace/routing.js';
import type { BranchResult } from '../../src/workspace/result-branch.js';
import { REFUSAL_TYPES, type ConversationResult } from '../api.js';
import { failureType, rootMessage } from '../failures.js';
import type { BudgetGate } from './budget.js';
import type { Calls } from './calls.js';
import { environmentResult, type Environment } from './environment.js';
import { movesResult } from './host-loss.js';
import { HostLost, withEpoch } from './host.js';
import type { ModelStepPriority } from './model-priority.js';
import type { People } from './people.js';
import { groupCalls, loopResponse, noToolReply, readsOnly, timeBudgetStop, timeLeftMs } from './policy.js';
import type { SessionStart } from './start.js';
import type { Status } from './status.js';
import type { StepRunner } from './steps.js';
import type { Ending, Requests, SessionCarried, SessionInput } from './types.js';

/** The parts of a session the loop drives (workflow.ts builds them). */
export interface SessionParts {
  steps: StepRunner;
  status: Status;
  priority: ModelStepPriority;
  starting: SessionStart;
  environment: Environment;
  people: People;
  budget: BudgetGate;
  calls: Calls;
}

export class SessionLoop {
  private readonly config: RunConfig;
  /** Why it ended, once it has (the state query shows it). */
  reason?: string;
  /** The cancellation Temporal delivered (cancel --now, the UI), rethrown at the end so the workflow ends CANCELED. */
  cancellation?: unknown;

  constructor(
    private readonly input: SessionInput,
    private readonly st: SessionCarried,
    private readonly requests: Requests,
    private readonly parts: SessionParts,
  ) {
    this.config = input.config;
  }

  async run(): Promise<ConversationResult> {
    const { st, requests, parts } = this;
    try {
      if (!this.input.carried) {
        // A setup that failed ends the conversation before any turn (no model call).
        const early = await parts.starting.start();
        if (early) return await this.finish(early);
      }
      st.runs += 1;
      let turnsThisRun = 0;
      for (;;) {
        if (requests.cancel) return await this.finish({ status: 'cancelled', reason: requests.cancel });
        if (requests.paused) {
          await this.recordTurn();
          await this.holdWhilePaused();
          continue;
        }
        const over = parts.budget.stop(Date.now());
        if (over) {
          // `--on-budget pause`: wait for a raise with the work kept (budget.ts).
          const ending = parts.budget.pauses()
            ? await parts.budget.pause(over, { recordTurn: () => this.recordTurn(), partialBranch: () => this.partialBranch() })
            : { status: 'budget_exhausted' as const, reason: over };
          if (ending) return await this.finish(ending);
          continue;
        }
        if (turnsThisRun > 0 && this.continueAsNewDue(turnsThisRun)) {
          await condition(allHandlersFinished);
          const next: SessionInput = { workspace: this.input.workspace, config: this.config, searchAttributes: this.input.searchAttributes, carried: st };
          // Pinned until continue-as-new: the next run starts on the deployment's current version (docs/decisions.md).
          return await makeContinueAsNewFunc<(input: SessionInput) => Promise<ConversationResult>>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(next);
        }
        turnsThisRun += 1;
        const ending = await this.turnWithinTimeBudget();
        if (ending) return await this.finish(ending);
      }
    } catch (err) {
      if (isCancellation(err)) {
        this.cancellation = err;
        return await CancellationScope.nonCancellable(() => this.finish({ status: 'cancelled', reason: requests.cancel ?? 'the workflow was cancelled' }));
      }
      if (err instanceof ActivityFailure) {
        // A worker's refusal (`--env`, the workspace) is its own one line; other failures name their step.
        const refused = REFUSAL_TYPES.includes(failureType(err) ?? '');
        return await this.finish({ status: 'failed', reason: refused ? rootMessage(err) : `${err.activityType} failed: ${rootMessage(err)}` });
      }
      if (err instanceof HostLost && this.config.agent?.parentId !== undefined) {
        const reason = `${err.message}; a sub-agent stays in its parent's directory, so it ends here and its parent moves the workspace`;
        return { ...(await this.finish({ status: 'failed', reason })), hostLost: { hostId: err.hostId, why: err.why } };
      }
      if (err instanceof HostLost)
        return await this.finish({ status: 'failed', reason: `${err.message}, and the workspace could not be moved to another host` });
      if (err instanceof ApplicationFailure) return await this.finish({ status: 'failed', reason: rootMessage(err) });
      throw err;
    }
  }

  private continueAsNewDue(turnsThisRun: number): boolean {
    const every = this.config.continueAsNewEveryTurns;
    return workflowInfo().continueAsNewSuggested || (every !== undefined && turnsThisRun >= every);
  }

  /** The last turn's record, when no model step follows soon to carry it (a pause, the end). */
  private async recordTurn(): Promise<void> {
    const record = this.st.unrecordedTurn;
    if (!record) return;
    await this.parts.steps.record('recording the turn', (store) => store.endTurnRecord(record));
    this.st.unrecordedTurn = undefined;
  }

  private async holdWhilePaused(): Promise<void> {
    const { status } = this.parts;
    status.set('paused');
    await condition(() => !this.requests.paused || this.requests.cancel !== undefined);
    status.set('running');
  }

  /** One turn, raced by the wall-time budget: when it runs out, the running step is cancelled and the conversation ends. */
  private async turnWithinTimeBudget(): Promise<Ending | undefined> {
    const { budget } = this.parts;
    const left = timeLeftMs(this.config, budget.clockStart(Date.now()), Date.now());
    // A budget that pauses lets the turn in flight finish (as a model call in flight finishes past the cost limit) and pauses before the next.
    if (left === undefined || budget.pauses()) return this.turn();
    const turnScope = new CancellationScope();
    const timerScope = new CancellationScope();
    let spent = false;
    void timerScope
      .run(() => sleep(left))
      .then(
        () => {
          spent = true;
          turnScope.cancel();
        },
        () => undefined,
      );
    try {
      return await turnScope.run(() => this.turn());
    } catch (err) {
      // Once the budget cancelled the turn, however the running step ended (cancelled, or timed out
      // while being cancelled on a slow worker) is the budget's doing, not a failure.
      if (spent && (isCancellation(err) || err instanceof ActivityFailure)) {
        return {
          status: 'budget_exhausted',
          reason: timeBudgetStop(this.config, budget.clockStart(Date.now()), Date.now()) ?? 'time budget spent during a turn',
        };
      }
      throw err;
    } finally {
      timerScope.cancel();
    }
  }

  private async turn(): Promise<Ending | undefined> {
    const { st, config, parts } = this;
    const { steps, status, budget, environment, calls } = parts;
    const gate = steps.gate;
    // A rollback asked for before this turn finishes first, so its notice reaches the model now.
    await gate.exclusive(async () => {});
    let appends = this.takePending();
    st.turn += 1;
    const turn = st.turn;
    let seq = st.nextSeq++;
    // The previous turn's record rides on this step: one local activity less per turn.
    const previous = st.unrecordedTurn ? { endTurn: st.unrecordedTurn } : {};
    const step = (harder?: boolean) =>
      steps.run(
        'model',
        [turn, config.model, harder],
        (a, _afterWait, priorAttempts) =>
          a.modelTurn({
            ...steps.ref,
            turn,
            seq,
            appends,
            ...previous,
            ...(harder ? { harder } : {}),
            ...(priorAttempts ? { priorAttempts } : {}),
          }),
        {
          // Restored on another host: the restore notice is written before the answer, so the model reads it now.
          restored: () => {
            appends = [...appends, ...this.takePending()];
            seq = st.nextSeq++;
          },
        },
      );
    status.show(`the model (${config.model})`);
    let answer;
    for (;;) {
      const poolMark = budget.poolMark;
      try {
        answer = await step();
        break;
      } catch (err) {
        // A batch's shared budget had no room for the call: wait for a raise, then the same step again.
        const pool = await budget.waitForPool(err, poolMark);
        if (pool === 'retry') continue;
        if (pool) return pool;
        // The provider counts differently than we do: prune harder once and try again.
        if (failureType(err) !== ModelErrorType.ContextLengthExceeded) throw err;
        answer = await step(true);
        break;
      }
    }
    parts.priority.learn(answer);
    // What changes the workspace waits for its turn-0 checkpoint. Calls that only read (a first look
    // around a large tree) run meanwhile.
    st.unrecordedTurn = undefined;
    st.usage = addUsage(st.usage, answer.usage);
    st.costUsd += answer.costUsd;
    if (!answer.fits) return { status: 'context_overflow', reason: answer.reason ?? 'the conversation no longer fits the context window' };

    let completion: string | undefined;
    calls.begin(answer.calls);
    if (answer.calls.length === 0) {
      st.noToolStreak += 1;
      const r = noToolReply(config, st.noToolStreak);
      if (r.fail) return { status: 'failed', reason: r.fail };
      st.pending.push({ role: 'user', kind: 'reminder', content: r.remind!, turn });
    } else {
      st.noToolStreak = 0;
      for (const group of groupCalls(answer.calls)) {
        if (gate.turnZero && !group.every(readsOnly)) await gate.turnZero;
        const results = await Promise.all(group.map((c) => calls.handle(c)));
        if (results.some((r) => r.stop)) {
          if (this.requests.cancel) return { status: 'cancelled', reason: this.requests.cancel };
          return { status: 'failed', reason: 'the question to the user was not answered in time' };
        }
        completion = results.find((r) => r.completion !== undefined)?.completion;
        if (completion !== undefined) break;
      }
      // Stop hooks, verify, the end: not before the checkpoint exists (only reads ran meanwhile).
      if (completion !== undefined && gate.turnZero) await gate.turnZero;
      if (completion !== undefined && answer.stopHook) {
        completion = await environment.stopHooks(turn, completion);
      }
      const verify = st.environment?.verify;
      if (completion !== undefined && verify !== undefined) {
        completion = await environment.verify(turn, completion, verify);
      }
      if (answer.loop && completion === undefined) {
        const r = loopResponse(answer.loop, st.loopNudged);
        if (r.stop) return { status: 'loop_detected', reason: r.stop };
        st.loopNudged = true;
        st.pending.push({ role: 'user', kind: 'notice', content: r.notice!, turn });
      }
    }
    const record = { conversationId: steps.conversationId, turn, usage: st.usage, costUsd: st.costUsd, status: st.status };
    // The record rides on the next model step (or a pause, or the end: recordTurn).
    st.unrecordedTurn = record;
    status.publish();
    if (completion !== undefined && st.host && config.repo !== undefined) st.branch = await this.resultBranch();
    if (completion !== undefined && environment.verifyFailed) return { status: 'failed', reason: 'verification failed', result: completion };
    if (completion !== undefined) return { status: 'completed', reason: 'the model called attempt_completion', result: completion };
    return undefined;
  }

  /** A budget wait that ran out (--on-budget-timeout partial-branch): the work so far, pushed for repository jobs. */
  private async partialBranch(): Promise<BranchResult | undefined> {
    return this.st.host ? (this.st.branch = await this.resultBranch(true)) : undefined;
  }

  /** Repository jobs: commit the workspace onto the result branch (and push it); on the new host after a loss. */
  private resultBranch(partial = false): Promise<BranchResult> {
    const { config, st } = this;
    const { steps } = this.parts;
    const { conversationId } = steps;
    const branch = partial
      ? `${defaultBranch(conversationId)}-partial`
      : expandBranch(config.branch ?? defaultBranch(conversationId), conversationId, st.startedAtMs);
    return steps.run(
      'resultBranch',
      [branch],
      (a) =>
        a.commitResultBranch({
          conversationId,
          workspace: steps.ref.workspace,
          task: this.input.task ?? '',
          base: st.host!.base,
          branch,
          push: partial ? config.repo !== undefined : config.push,
          ...(st.environment?.lastVerify
            ? {
                verify: {
                  command: st.environment.lastVerify.command,
                  passed: st.environment.lastVerify.passed,
                  exitCode: st.environment.lastVerify.exitCode,
                  attempts: st.environment.verifyRuns,
                },
              }
            : {}),
          ...withEpoch(steps.hosts.epoch),
        }),
      partial ? { what: 'the partial branch' } : {},
    );
  }

  /** Messages decided since the last turn get their seqs now, so they never land between a turn's tool results. */
  takePending(): PendingAppend[] {
    const out = this.st.pending.map((p) => ({ ...p, seq: this.st.nextSeq++ }));
    this.st.pending = [];
    return out;
  }

  private async finish(end: Ending): Promise<ConversationResult> {
    const { st, parts } = this;
    const { steps } = parts;
    const { conversationId } = steps;
    this.reason = end.reason;
    parts.people.clear();
    parts.status.set(end.status);
    const outcome = { status: end.status, reason: end.reason, turns: st.turn, usage: st.usage, costUsd: st.costUsd };
    // The turn-0 checkpoint still being made (the first step failed, or was cancelled): finished or failed first.
    if (steps.gate.turnZero) await steps.gate.turnZero.catch(() => undefined);
    const finished = await CancellationScope.nonCancellable(async () => {
      await this.recordTurn();
      return steps.record('recording the end', (store) => store.finishSession({ conversationId, ...outcome, result: end.result }));
    });
    // Rollbacks asked for during the last step still run (and are answered) before the end,
    // and their notices are kept in the transcript.
    do {
      await condition(allHandlersFinished);
      for (const p of this.takePending())
        await steps.record('writing a notice', (store) => store.appendMessage({ conversationId, ...p, model: this.config.model }));
    } while (!allHandlersFinished());
    return {
      conversationId,
      ...outcome,
      result: end.result ?? finished.summary,
      ...(st.branch ? { branch: st.branch } : {}),
      ...environmentResult(st.environment),
      ...movesResult(st),
    };
  }
}
