// The `session` workflow: one conversation. This file builds its parts, each over its own slice of
// the state, and wires the messages from outside to them (the shape of Temporal's
// safe-message-handlers sample); the conversation itself reads in loop.ts, every step it schedules
// is in steps.ts's table, a call's life in calls.ts. Everything that reads or writes content runs in
// activities. It replaced the `conversation` workflow type, now retired: a worker refuses to start
// while runs of that type are open (src/retired.ts, docs/decisions.md).
import { ApplicationFailure, setHandler, workflowInfo } from '@temporalio/workflow';
import { ZERO_USAGE } from '../../src/types.js';
import {
  cancelSignal,
  hostDrainingSignal,
  pauseSignal,
  resumeSignal,
  rollbackUpdate,
  sendMessageSignal,
  stateQuery,
  type ConversationResult,
  type RollbackRequest,
  type RollbackResult,
} from '../api.js';
import { rootMessage } from '../failures.js';
import { BudgetGate } from './budget.js';
import { Calls } from './calls.js';
import { Delegation } from './delegate.js';
import { Environment } from './environment.js';
import { HostRouting } from './host.js';
import { SessionLoop } from './loop.js';
import { ModelStepPriority } from './model-priority.js';
import { endWorkflow } from './outcome.js';
import { People } from './people.js';
import { SessionStart } from './start.js';
import { Status } from './status.js';
import { StepRunner } from './steps.js';
import type { Requests, SessionCarried, SessionInput, SessionState } from './types.js';
import { WorkspaceGate } from './workspace-gate.js';

export async function session(input: SessionInput): Promise<ConversationResult> {
  const conversationId = workflowInfo().workflowId;
  const { config } = input;
  const st: SessionCarried = input.carried ?? {
    status: 'running',
    turn: 0,
    nextSeq: 1,
    usage: ZERO_USAGE,
    costUsd: 0,
    startedAtMs: Date.now(),
    noToolStreak: 0,
    loopNudged: false,
    checkpointTurns: [],
    saves: [],
    pending: [],
    runs: 0,
    rollbacks: [],
    approvals: [],
  };
  const requests: Requests = { paused: false };
  const status = new Status(st, config, input.workspace, input.searchAttributes === true);
  const priority = new ModelStepPriority(config);
  // Placement and setup after a move are the start's and the environment's, built below.
  let starting!: SessionStart;
  let environment!: Environment;
  const hosts = new HostRouting({
    st,
    sharedQueue: workflowInfo().taskQueue,
    config,
    materialize: (from, cp, epoch, move) => starting.materialize(from, cp, epoch, move),
    notify: (content) => st.pending.push({ role: 'user', kind: 'notice', content, turn: st.turn }),
    turnNow: () => st.turn,
    // A sub-agent on its parent's host: its config names the parent (kept over continue-as-new, unlike workspaceHost).
    stays: input.workspaceHost !== undefined || config.agent?.parentId !== undefined,
    // What setup made (node_modules …) is ignored by git, so no checkpoint holds it: a restored workspace gets setup again.
    prepare: { needed: () => st.environment?.setup?.ok === true, run: () => environment.setupAfterMove() },
  });
  // Writes, rollbacks, verify and writing sub-agents hold it alone, in order; read-only calls share it;
  // and it holds turn 0's checkpoint while that is made alongside the first model step.
  const gate = new WorkspaceGate();
  const steps = new StepRunner(conversationId, config, input.workspace, st, hosts, gate, status, priority);
  environment = new Environment(steps, st, config);
  starting = new SessionStart(steps, st, input, status, (fromSettings) => environment.setup(fromSettings));
  const people = new People(steps, status, requests, config, st);
  const budget = new BudgetGate(steps, status, requests, config, st);
  const calls = new Calls(steps, st, config, status, requests, people, new Delegation(steps, st, requests, config, input.searchAttributes));
  const loop = new SessionLoop(input, st, requests, { steps, status, priority, starting, environment, people, budget, calls });

  // ── messages from outside ──
  setHandler(stateQuery, (): SessionState => ({
    ...st,
    // The query keeps the older shape's fields that clients read.
    checkpoints: st.checkpointTurns.map((turn) => ({ turn })),
    conversationId,
    model: config.model,
    workspace: input.workspace,
    reason: loop.reason,
    pendingApproval: people.pendingApproval,
    pendingQuestion: people.pendingQuestion,
    paused: requests.paused,
    stalledReason: steps.stalled,
    providerWait: steps.waitingForProvider,
    calls: calls.shown,
  }));
  budget.register();
  steps.providerWake.register();
  setHandler(hostDrainingSignal, ({ hostId, incarnation }) => hosts.drain(hostId, incarnation));
  setHandler(sendMessageSignal, ({ text }) => {
    st.pending.push({ role: 'user', kind: 'user', content: text, turn: st.turn });
  });
  setHandler(cancelSignal, ({ reason }) => {
    requests.cancel = reason || 'cancelled by the operator';
  });
  setHandler(pauseSignal, () => {
    requests.paused = true;
  });
  setHandler(resumeSignal, () => {
    requests.paused = false;
  });
  people.register();
  setHandler(
    rollbackUpdate,
    (req) =>
      // The state to roll back to must exist first (turn 0's may be being made alongside the first model step).
      gate.exclusiveAfterTurnZero(() => rollback(steps, st, req)),
    {
      validator: (req) => {
        if (req.commit !== undefined) {
          if (!st.saves.includes(req.commit))
            throw new Error(`${req.commit} is not a state saved before a rollback of this conversation; saved: ${st.saves.join(', ') || '(none)'}`);
          return;
        }
        const turns = st.checkpointTurns;
        const beingMade = req.toTurn === 0 && gate.turnZero !== undefined;
        if (req.toTurn === undefined || !(turns.includes(req.toTurn) || beingMade)) {
          throw new Error(`no checkpoint for turn ${req.toTurn}; checkpoints exist for turns ${turns.join(', ') || '(none)'}`);
        }
      },
    },
  );

  return endWorkflow(await loop.run(), loop.cancellation);
}

/** An operator's rollback; runs under the workspace lock: after any running tool call, before the next, in every state. */
async function rollback(
  steps: StepRunner,
  st: Pick<SessionCarried, 'rollbacks' | 'turn' | 'saves' | 'host' | 'offHost' | 'pending'>,
  req: RollbackRequest,
): Promise<RollbackResult> {
  st.rollbacks.push({ ...req, atTurn: st.turn });
  let r;
  try {
    // A lost host: move the workspace first (its notice goes to the model too), then roll back there.
    r = await steps.run('rollback', [req.commit ? req.commit.slice(0, 12) : `turn ${req.toTurn}`], (a) =>
      a.rollbackWorkspace({ ...steps.ref, toTurn: req.toTurn ?? -1, commit: req.commit }),
    );
  } catch (err) {
    throw ApplicationFailure.nonRetryable(`rollback failed: ${rootMessage(err as Error)}`, 'RollbackFailed');
  }
  if (r.saved) st.saves.push(r.saved);
  // Repository jobs: that turn's checkpoint is already off the host; a later move starts from it.
  if (st.host && req.toTurn !== undefined && !req.commit) st.offHost = { turn: req.toTurn, commit: r.commit };
  const what = req.commit ? `the state saved at ${req.commit.slice(0, 12)}` : `its state after turn ${req.toTurn}`;
  st.pending.push({
    role: 'user',
    kind: 'notice',
    turn: st.turn,
    content: `[the operator rolled the workspace back to ${what}; ${r.restored.length} files restored, ${r.removed.length} removed. Re-read files before editing them.]`,
  });
  return { restored: r.restored, removed: r.removed, commit: r.commit, saved: r.saved, notRestored: r.notRestored };
}
