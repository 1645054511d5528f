// Sub-agents: a `delegate` call runs the named agent as a child `session`
// workflow on the same workspace, with the agent's instructions, tools and model and a budget
// drawn from what the parent has left; its result is the call's result. Read-only agents run
// side by side; an agent that may write takes the parent's workspace lock for its whole run.
// The parent's cancel reaches the child (a signal for the graceful cancel; REQUEST_CANCEL and
// the cancellation scope for a hard one), and the child's spend counts in the parent's totals.
// Nesting: a sub-agent is not offered `delegate` (src/extensions/agents.ts): one level only.
import {
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  condition,
  ParentClosePolicy,
  proxyActivities,
  startChild,
  type ActivityOptions,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { CallSummary, DelegateActivities, PrepareDelegateResult } from '../activities/types.js';
import type { RunConfig } from '../src/config.js';
import { addUsage, ZERO_USAGE, type IndexEntry, type SubagentOutcome } from '../src/types.js';
import { cancelSignal, resultFromFailure, WORKFLOW_TYPE, type ChildRun, type ConversationResult } from './api.js';
import type { ControlOutcome } from './control-tools.js';
import type { Spend } from './policy.js';
import type { Placement } from './host.js';
import { activitySummary, workflowDetails, workflowSummary } from './summaries.js';
import { rootMessage } from './failures.js';
import { STEP_OPTIONS } from './step-options.js';

/** The parent's part of the session state (carried over continue-as-new). */
export interface SubagentState {
  /** delegate calls so far: numbers the children in call order. */
  delegations?: number;
  children?: ChildRun[];
}

/** What the session lends a delegate call. */
export interface DelegateHost {
  conversationId: string;
  config: RunConfig;
  /** The workspace directory the child works in. */
  workspace: string;
  /** The placement's epoch (when placed): the agent is read under its fence. */
  epoch?: number;
  searchAttributes?: boolean;
  /** Repository jobs move between hosts; sub-agents are not supported there yet. */
  repositoryJob: boolean;
  /** The host that holds the workspace (local workspaces on a fleet): the child runs its steps there too. */
  workspaceHost?: Placement;
  /** Run `fn` on the workspace's host, with that host queue's activity options (moving first if it is lost). */
  onHost?<T>(fn: (options: ActivityOptions) => Promise<T>): Promise<T>;
  /** The child ended because the workspace host was lost: the parent moves the workspace now. */
  hostLost?(lost: { hostId: string; why: string }): Promise<void>;
  /** The parent's counters: the child's budget comes from them, and its spend goes back into them. */
  st: Spend & SubagentState;
  cancelRequested(): string | undefined;
  /** Run an activity step, stalling (not failing) on infrastructure faults (Session.durably). */
  durably<T>(what: string, step: () => Promise<T>): Promise<T>;
  /** Run `fn` holding the workspace lock (no other writer, tool call or rollback meanwhile). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** `subagent`: how the child ended, for the stream (tool_completed). */
  answer(call: CallSummary, ok: boolean, output: string, status?: IndexEntry['status'], subagent?: SubagentOutcome): Promise<void>;
}

const prepare = (summary: string, options?: ActivityOptions) =>
  proxyActivities<DelegateActivities>({
    ...STEP_OPTIONS.delegateAgent,
    ...options,
    summary,
  });

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

export async function delegateCall(host: DelegateHost, call: CallSummary): Promise<ControlOutcome> {
  // Numbered before the first await, so parallel calls are numbered in the order the model wrote them.
  const n = (host.st.delegations = (host.st.delegations ?? 0) + 1);
  if (host.repositoryJob) {
    await host.answer(call, false, 'delegate is not available in repository jobs yet: do the task yourself.', 'error');
    return {};
  }
  // The agent file is the workspace's: read where the workspace is (its host), when it has one.
  const read = (options?: ActivityOptions) =>
    prepare(activitySummary.delegate(host.st.turn, call.preview), options).prepareDelegate({
      conversationId: host.conversationId,
      workspace: host.workspace,
      callId: call.id,
      ...(host.epoch !== undefined ? { epoch: host.epoch } : {}),
    });
  const prep: PrepareDelegateResult = await host.durably('reading the agent', () => (host.onHost ? host.onHost(read) : read()));
  if ('error' in prep) {
    await host.answer(call, false, prep.error, 'error');
    return {};
  }
  const budget = childBudget(host.config, host.st, Date.now(), prep.agent.maxTurns);
  if (typeof budget === 'string') {
    await host.answer(call, false, `The sub-agent was not started: ${budget}. Finish with what you have.`, 'error');
    return {};
  }
  const child: ChildRun = {
    id: `${host.conversationId}.sub-${n}`,
    agent: prep.agent.name,
    callId: call.id,
    readOnly: prep.readOnly,
    status: 'running',
    turns: 0,
    costUsd: 0,
  };
  (host.st.children ??= []).push(child);
  const { agent } = prep;
  const config: RunConfig = {
    ...host.config,
    ...budget,
    model: agent.model ?? host.config.model,
    // The agent's file is its system prompt: it replaces the parent's extra instructions.
    instructions: agent.systemPrompt,
    scheduleId: undefined,
    agent: { name: agent.name, parentId: host.conversationId, ...(agent.tools ? { tools: agent.tools } : {}) },
  };
  const run = () =>
    runChild(host, child, {
      task: prep.task,
      workspace: host.workspace,
      config,
      searchAttributes: host.searchAttributes,
      ...(host.workspaceHost ? { workspaceHost: host.workspaceHost } : {}),
    });
  const result = prep.readOnly ? await run() : await host.exclusive(run);
  if (!result) return { stop: true };
  if (result.hostLost && host.hostLost) await host.hostLost(result.hostLost);
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
  if (result.status === 'completed') {
    await host.answer(call, true, `${who} finished in ${result.turns} turns. Its result:\n<result>\n${result.result ?? ''}\n</result>`, undefined, outcome);
  } else {
    const partial = result.result ? `\nWhat it left:\n${result.result}` : '';
    await host.answer(call, false, `${who} ended ${result.status} after ${result.turns} turns: ${result.reason}.${partial}`, 'error', outcome);
  }
  return {};
}

/** Start the child and wait for its end; undefined when the parent was cancelled meanwhile (the child is cancelled too). */
/** What a child session starts with (a part of workflows/session.ts's SessionInput, which this module does not import: session imports it). */
interface ChildInput {
  task: string;
  workspace: string;
  config: RunConfig;
  searchAttributes?: boolean;
  workspaceHost?: Placement;
}
type ChildSession = (input: ChildInput) => Promise<ConversationResult>;

async function runChild(host: DelegateHost, child: ChildRun, input: ChildInput): Promise<ConversationResult | undefined> {
  // A writer that waited for the lock while the parent was cancelled never starts.
  if (host.cancelRequested() !== undefined) {
    Object.assign(child, { status: 'cancelled', reason: 'its parent was cancelled before it started' });
    return undefined;
  }
  const handle: ChildWorkflowHandle<ChildSession> = await startChild<ChildSession>(WORKFLOW_TYPE, {
    workflowId: child.id,
    args: [input],
    // What the Temporal UI shows for the child: its agent and task, under its parent.
    staticSummary: workflowSummary(input.task ?? '', { workspace: input.workspace, agent: child.agent }),
    staticDetails: workflowDetails(input.task ?? '', { workspace: input.workspace, model: input.config.model }) + `\n\nSub-agent of ${host.conversationId}.`,
    // A parent that ends (or is terminated) takes its children with it; a cancelled scope cancels them and waits.
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const end: { result?: ConversationResult; failure?: string } = {};
  handle.result().then(
    (r) => (end.result = r),
    // A child that failed carries its result in the failure (workflows/outcome.ts).
    (err: Error) => {
      const r = resultFromFailure(err);
      if (r) end.result = r;
      else if (err instanceof ChildWorkflowFailure && err.cause instanceof CancelledFailure)
        end.result = { conversationId: child.id, status: 'cancelled', reason: rootMessage(err), turns: 0, usage: ZERO_USAGE, costUsd: 0 };
      else end.failure = rootMessage(err);
    },
  );
  const ended = () => end.result !== undefined || end.failure !== undefined;
  await condition(() => ended() || host.cancelRequested() !== undefined);
  const cancelled = !ended();
  // The graceful cancel: the child's running step finishes, then it ends as cancelled.
  if (cancelled) await handle.signal(cancelSignal, { reason: `its parent ${host.conversationId} was cancelled: ${host.cancelRequested()}` });
  await condition(ended);
  const result = end.result ?? { conversationId: child.id, status: 'failed', reason: end.failure!, turns: 0, usage: ZERO_USAGE, costUsd: 0 };
  // The child's spend is the parent's too.
  Object.assign(child, {
    status: result.status,
    turns: result.turns,
    costUsd: result.costUsd,
    ...(result.status === 'completed' ? {} : { reason: result.reason }),
  });
  host.st.usage = addUsage(host.st.usage, result.usage);
  host.st.costUsd += result.costUsd;
  return cancelled ? undefined : result;
}
