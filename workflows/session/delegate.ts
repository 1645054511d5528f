// Sub-agents: a `delegate` call runs the named agent as a child `session`
// workflow on the same workspace, with the agent's instructions, tools and model and a budget
// drawn from what the parent has left; its result is the call's result. Read-only agents run
// side by side; an agent that may write takes the parent's workspace lock for its whole run.
// The parent's cancel reaches the child (a signal for the graceful cancel; REQUEST_CANCEL and
// the cancellation scope for a hard one), and the child's spend counts in the parent's totals.
// Nesting: a sub-agent is not offered `delegate` (src/extensions/agents.ts): one level only.
// A sub-agent's own checkpoints never leave the host (it never moves; its parent does), so a writer's
// changes are made the parent's turn checkpoint, stored off the host, before its call is answered:
// a host lost after that keeps them, as it keeps every call's that finished.
import {
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  condition,
  ParentClosePolicy,
  startChild,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { CallSummary, PrepareDelegateResult } from '../../activities/types.js';
import type { RunConfig } from '../../src/config.js';
import { addUsage, ZERO_USAGE, type SubagentOutcome } from '../../src/types.js';
import { cancelSignal, resultFromFailure, WORKFLOW_TYPE, type ChildRun, type ConversationResult } from '../api.js';
import { rootMessage } from '../failures.js';
import { workflowDetails, workflowSummary } from '../summaries.js';
import { answerCall } from './answers.js';
import { HostLost, type HostCarried, type Placement } from './host.js';
import type { Spend } from './policy.js';
import type { StepRunner } from './steps.js';
import type { ControlOutcome, Requests, SubagentState } from './types.js';

/** The part of the session state a delegate call reads and writes: the parent's counters (the child's budget comes from them, and its spend goes back into them). */
type DelegateState = Spend & SubagentState & HostCarried & { nextSeq: number; checkpointTurns: number[] };

/** The child's limits: its agent's, within what the parent has left; a reason when nothing is left. */
export function childBudget(
  config: RunConfig,
  st: Spend,
  nowMs: number,
  agentMaxTurns?: number,
): Pick<RunConfig, 'maxTurns' | 'maxTokens' | 'maxCostUsd' | 'maxTimeMs'> | string {
  const turns = config.maxTurns - st.turn;
  const tokens = config.maxTokens === undefined ? undefined : config.maxTokens - st.usage.totalTokens;
  const cost = config.maxCostUsd === undefined ? undefined : config.maxCostUsd - st.costUsd;
  const time = config.maxTimeMs === undefined ? undefined : st.startedAtMs + config.maxTimeMs - nowMs;
  if (turns <= 0 || (tokens !== undefined && tokens <= 0) || (cost !== undefined && cost <= 0) || (time !== undefined && time < 1000)) {
    return 'the conversation has no budget left for a sub-agent (turns, tokens, cost or time)';
  }
  return {
    maxTurns: Math.min(agentMaxTurns ?? turns, turns),
    ...(tokens !== undefined ? { maxTokens: tokens } : {}),
    ...(cost !== undefined ? { maxCostUsd: cost } : {}),
    ...(time !== undefined ? { maxTimeMs: time } : {}),
  };
}

/** Sub-agents of one session: each `delegate` call runs its agent as a child session and is answered with the child's end. */
export class Delegation {
  constructor(
    private readonly steps: StepRunner,
    private readonly st: DelegateState,
    private readonly requests: Requests,
    private readonly config: RunConfig,
    private readonly searchAttributes: boolean | undefined,
  ) {}

  /** The host that holds the workspace (local workspaces on a fleet): the child runs its steps there too. Read when used: a move changes it. */
  private get workspaceHost(): Placement | undefined {
    const now = this.st.host;
    return now ? { hostId: now.hostId, workspace: now.workspace, base: now.base, ...(now.incarnation ? { incarnation: now.incarnation } : {}) } : undefined;
  }

  async call(call: CallSummary): Promise<ControlOutcome> {
    const { steps, st, config } = this;
    const { conversationId } = steps;
    // A workspace on a host delegates: its child starts on that host.
    // On a host, the agent file is read there (not on the shared queue), and a child that lost the
    // host makes the parent move at once.
    const onHost = st.host !== undefined;
    const answer = (ok: boolean, output: string, status?: 'error', subagent?: SubagentOutcome) => answerCall(steps, st, call, ok, output, status, subagent);
    // Numbered before the first await, so parallel calls are numbered in the order the model wrote them.
    const n = (st.delegations = (st.delegations ?? 0) + 1);
    // Repository jobs move between hosts; sub-agents are not supported there yet.
    if (config.repo !== undefined) {
      await answer(false, 'delegate is not available in repository jobs yet: do the task yourself.', 'error');
      return {};
    }
    // The agent file is the workspace's: read where the workspace is (its host), under the placement's fence.
    const prep: PrepareDelegateResult = await steps.run('delegateAgent', [st.turn, call.preview], (a) =>
      a.prepareDelegate({
        conversationId,
        workspace: steps.ref.workspace,
        callId: call.id,
        ...(steps.hosts.epoch !== undefined ? { epoch: steps.hosts.epoch } : {}),
      }),
    );
    if ('error' in prep) {
      await answer(false, prep.error, 'error');
      return {};
    }
    const budget = childBudget(config, st, Date.now(), prep.agent.maxTurns);
    if (typeof budget === 'string') {
      await answer(false, `The sub-agent was not started: ${budget}. Finish with what you have.`, 'error');
      return {};
    }
    const child: ChildRun = {
      id: `${conversationId}.sub-${n}`,
      agent: prep.agent.name,
      callId: call.id,
      readOnly: prep.readOnly,
      status: 'running',
      turns: 0,
      costUsd: 0,
    };
    (st.children ??= []).push(child);
    const { agent } = prep;
    const childConfig: RunConfig = {
      ...config,
      ...budget,
      model: agent.model ?? config.model,
      // The agent's file is its system prompt: it replaces the parent's extra instructions.
      instructions: agent.systemPrompt,
      scheduleId: undefined,
      agent: { name: agent.name, parentId: conversationId, ...(agent.tools ? { tools: agent.tools } : {}) },
    };
    const run = () => {
      const workspaceHost = this.workspaceHost;
      return this.runChild(child, {
        task: prep.task,
        workspace: steps.ref.workspace,
        config: childConfig,
        searchAttributes: this.searchAttributes,
        ...(workspaceHost ? { workspaceHost } : {}),
      });
    };
    /** The loss that took a writer's changes before they left the host. */
    let lostChanges: HostLost | undefined;
    const result = prep.readOnly
      ? await run()
      : await steps.gate.exclusive(async () => {
          const r = await run();
          if (r && onHost) {
            if (!r.hostLost) lostChanges = await this.saveChanges();
          }
          return r;
        });
    if (!result) return { stop: true };
    const restored = () =>
      `the workspace was restored to its checkpoint after turn ${st.offHost?.turn ?? 0}; redo what is still needed, and re-read files before editing them`;
    let gone = '';
    // The child ended because the workspace host was lost: the parent moves the workspace now.
    if (result.hostLost && onHost) {
      const lost = new HostLost(result.hostLost.hostId, result.hostLost.why);
      // A reader changed nothing: the move is all. A writer's changes went with the host unless the new one kept the workspace.
      if (prep.readOnly) await steps.hosts.recover(lost);
      else if (await this.moveKeeping(lost)) gone = ` Whatever it changed went with that host: ${restored()}.`;
    } else if (lostChanges) {
      const last = await this.moveKeeping(lostChanges);
      if (last) gone = ` But the workspace host ${last.hostId} was lost (${last.why}) before its changes left it: they are gone, ${restored()}.`;
    }
    const who = `The sub-agent "${agent.name}" (${child.id})`;
    const outcome: SubagentOutcome = {
      conversationId: child.id,
      agent: agent.name,
      status: result.status,
      turns: result.turns,
      costUsd: result.costUsd,
      ...(result.result !== undefined ? { result: result.result } : {}),
      ...(result.status === 'completed' ? {} : { reason: result.reason }),
    };
    if (result.status === 'completed' && !gone) {
      await answer(true, `${who} finished in ${result.turns} turns. Its result:\n<result>\n${result.result ?? ''}\n</result>`, undefined, outcome);
    } else if (result.status === 'completed') {
      await answer(false, `${who} finished in ${result.turns} turns.${gone} What it reported:\n<result>\n${result.result ?? ''}\n</result>`, 'error', outcome);
    } else {
      const partial = result.result ? `\nWhat it left:\n${result.result}` : '';
      await answer(false, `${who} ended ${result.status} after ${result.turns} turns: ${result.reason}.${gone}${partial}`, 'error', outcome);
    }
    return {};
  }

  /**
   * After a sub-agent that may have written: the parent's turn checkpoint, stored off the host, so its
   * changes survive a host lost from now on. The loss, when the host went before they left it.
   */
  private async saveChanges(): Promise<HostLost | undefined> {
    const { steps, st } = this;
    try {
      const cp = await steps.run('subagentCheckpoint', [st.turn, 'off the host, after the sub-agent'], (a) =>
        a.checkpointTurn({ ...steps.ref, turn: st.turn, ...steps.hosts.fencedPush(st.turn) }),
      );
      if (cp && !st.checkpointTurns.includes(cp.turn)) st.checkpointTurns.push(cp.turn);
      if (cp) st.offHost = { turn: cp.turn, commit: cp.commit };
      return undefined;
    } catch (err) {
      if (err instanceof HostLost) return err;
      throw err;
    }
  }

  /**
   * Move the workspace off `lost`; a host that reached it as it was (nothing restored) keeps the
   * sub-agent's changes, saved there now. The loss that took them, if one did.
   */
  private async moveKeeping(lost: HostLost): Promise<HostLost | undefined> {
    for (let l: HostLost | undefined = lost; l; l = await this.saveChanges()) if (await this.steps.hosts.recover(l)) return l;
    return undefined;
  }

  /** Start the child and wait for its end; undefined when the parent was cancelled meanwhile (the child is cancelled too). */
  private async runChild(child: ChildRun, input: ChildInput): Promise<ConversationResult | undefined> {
    // A writer that waited for the lock while the parent was cancelled never starts.
    if (this.requests.cancel !== undefined) {
      Object.assign(child, { status: 'cancelled', reason: 'its parent was cancelled before it started' });
      return undefined;
    }
    const handle: ChildWorkflowHandle<ChildSession> = await startChild<ChildSession>(WORKFLOW_TYPE, {
      workflowId: child.id,
      args: [input],
      // What the Temporal UI shows for the child: its agent and task, under its parent.
      staticSummary: workflowSummary(input.task ?? '', { workspace: input.workspace, agent: child.agent }),
      staticDetails:
        workflowDetails(input.task ?? '', { workspace: input.workspace, model: input.config.model }) + `\n\nSub-agent of ${this.steps.conversationId}.`,
      // A parent that ends (or is terminated) takes its children with it; a cancelled scope cancels them and waits.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    });
    const end: { result?: ConversationResult; failure?: string } = {};
    handle.result().then(
      (r) => (end.result = r),
      // A child that failed carries its result in the failure (workflows/session/outcome.ts).
      (err: Error) => {
        const r = resultFromFailure(err);
        if (r) end.result = r;
        else if (err instanceof ChildWorkflowFailure && err.cause instanceof CancelledFailure)
          end.result = { conversationId: child.id, status: 'cancelled', reason: rootMessage(err), turns: 0, usage: ZERO_USAGE, costUsd: 0 };
        else end.failure = rootMessage(err);
      },
    );
    const ended = () => end.result !== undefined || end.failure !== undefined;
    await condition(() => ended() || this.requests.cancel !== undefined);
    const cancelled = !ended();
    // The graceful cancel: the child's running step finishes, then it ends as cancelled.
    if (cancelled) await handle.signal(cancelSignal, { reason: `its parent ${this.steps.conversationId} was cancelled: ${this.requests.cancel}` });
    await condition(ended);
    const result = end.result ?? { conversationId: child.id, status: 'failed', reason: end.failure!, turns: 0, usage: ZERO_USAGE, costUsd: 0 };
    // The child's spend is the parent's too.
    Object.assign(child, {
      status: result.status,
      turns: result.turns,
      costUsd: result.costUsd,
      ...(result.status === 'completed' ? {} : { reason: result.reason }),
    });
    this.st.usage = addUsage(this.st.usage, result.usage);
    this.st.costUsd += result.costUsd;
    return cancelled ? undefined : result;
  }
}
/** What a child session starts with (a part of SessionInput). */
interface ChildInput {
  task: string;
  workspace: string;
  config: RunConfig;
  searchAttributes?: boolean;
  workspaceHost?: Placement;
}
type ChildSession = (input: ChildInput) => Promise<ConversationResult>;
