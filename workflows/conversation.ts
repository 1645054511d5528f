// The conversation workflow: order and policy only (DESIGN principle 1). Every step that
// reads or writes content is an activity; this file decides what runs next.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  allHandlersFinished,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { Activities, CallSummary } from '../activities/types.js';
import type { RunConfig } from '../src/config.js';
import { ModelErrorType, NON_RETRYABLE_MODEL_ERRORS } from '../src/model/error-types.js';
import { SA_COST, SA_MODEL, SA_SCHEDULE, SA_STATUS, SA_TURNS, SA_WORKSPACE } from '../src/search-attributes.js';
import { addUsage, ZERO_USAGE, type ConversationStatus, type IndexEntry, type MessageKind, type Role } from '../src/types.js';
import {
  answerUpdate,
  cancelSignal,
  decideApprovalUpdate,
  pauseSignal,
  resumeSignal,
  rollbackUpdate,
  sendMessageSignal,
  stateQuery,
  type ApprovalDecision,
  type CarriedState,
  type ConversationInput,
  type ConversationResult,
  type ConversationState,
  type PendingApproval,
  type PendingQuestion,
} from './api.js';

const retry = (maximumAttempts: number, maximumInterval = '30s') => ({
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval,
  maximumAttempts,
});

function activities(config: RunConfig) {
  const heartbeatTimeout = config.heartbeatTimeoutMs;
  const small: ActivityOptions = { startToCloseTimeout: '1m', retry: retry(10) };
  return {
    store: proxyActivities<Activities>(small),
    context: proxyActivities<Activities>({
      startToCloseTimeout: '10m',
      heartbeatTimeout: Math.max(heartbeatTimeout, 60_000),
      retry: { ...retry(5), nonRetryableErrorTypes: NON_RETRYABLE_MODEL_ERRORS },
    }),
    model: proxyActivities<Activities>({
      startToCloseTimeout: '15m',
      heartbeatTimeout,
      retry: { ...retry(8, '60s'), nonRetryableErrorTypes: NON_RETRYABLE_MODEL_ERRORS },
    }),
    tool: proxyActivities<Activities>({ startToCloseTimeout: '31m', heartbeatTimeout, retry: retry(5) }),
    git: proxyActivities<Activities>({ startToCloseTimeout: '5m', retry: retry(5) }),
  };
}

const REMINDER =
  'Your reply used no tool. Every reply must use exactly one of the available tools. If the task is done, use attempt_completion with the result; if you need information from the user, use ask_followup_question.';

export async function conversation(input: ConversationInput): Promise<ConversationResult> {
  const { config, workspace } = input;
  const conversationId = workflowInfo().workflowId;
  const acts = activities(config);
  const ref = { conversationId, workspace, config };

  const st: CarriedState = input.carried ?? {
    status: 'running',
    turn: 0,
    nextSeq: 1,
    usage: ZERO_USAGE,
    costUsd: 0,
    startedAtMs: Date.now(),
    index: [],
    noToolStreak: 0,
    loopNudged: false,
    checkpoints: [],
    inbox: [],
    runs: 0,
    rollbacks: [],
  };
  let reason: string | undefined;
  let cancelRequested: string | undefined;
  let paused = false;
  let pendingApproval: PendingApproval | undefined;
  let decision: ApprovalDecision | undefined;
  let pendingQuestion: PendingQuestion | undefined;
  let answer: string | undefined;
  let rollbackRequest: { toTurn: number; done?: { restored: string[]; removed: string[]; commit: string }; error?: string } | undefined;

  setHandler(stateQuery, (): ConversationState => ({
    ...st,
    conversationId,
    model: config.model,
    workspace,
    reason,
    pendingApproval,
    pendingQuestion,
    paused,
  }));
  setHandler(sendMessageSignal, ({ text }) => {
    st.inbox.push(text);
  });
  setHandler(cancelSignal, ({ reason: why }) => {
    cancelRequested = why || 'cancelled by the operator';
  });
  setHandler(pauseSignal, () => {
    paused = true;
  });
  setHandler(resumeSignal, () => {
    paused = false;
  });
  setHandler(
    decideApprovalUpdate,
    async (d) => {
      const callId = pendingApproval!.callId;
      decision = d;
      return { callId, approved: d.approved };
    },
    {
      validator: (d) => {
        if (!pendingApproval) throw new Error('no tool call is waiting for approval');
        if (d.callId && d.callId !== pendingApproval.callId) throw new Error(`call ${d.callId} is not the one waiting (${pendingApproval.callId})`);
      },
    },
  );
  setHandler(
    answerUpdate,
    async ({ text }) => {
      const callId = pendingQuestion!.callId;
      answer = text;
      return { callId };
    },
    {
      validator: ({ text }) => {
        if (!pendingQuestion) throw new Error('no question is waiting for an answer');
        if (!text.trim()) throw new Error('the answer is empty');
      },
    },
  );
  setHandler(
    rollbackUpdate,
    async ({ toTurn }) => {
      rollbackRequest = { toTurn: toTurn! };
      await condition(() => rollbackRequest?.done !== undefined || rollbackRequest?.error !== undefined);
      const r = rollbackRequest!;
      rollbackRequest = undefined;
      if (r.error) throw ApplicationFailure.nonRetryable(r.error, 'RollbackFailed');
      return r.done!;
    },
    {
      validator: ({ toTurn }) => {
        if (toTurn === undefined) throw new Error('this conversation (an older workflow) rolls back to turns only: give --to a turn number');
        if (!st.checkpoints.some((c) => c.turn === toTurn)) {
          throw new Error(`no checkpoint for turn ${toTurn}; checkpoints exist for turns ${st.checkpoints.map((c) => c.turn).join(', ') || '(none)'}`);
        }
      },
    },
  );

  const setStatus = (status: ConversationStatus) => {
    st.status = status;
    updateSearchAttributes();
  };
  const updateSearchAttributes = () => {
    if (!input.searchAttributes) return;
    upsertSearchAttributes([
      { key: SA_STATUS, value: st.status },
      { key: SA_WORKSPACE, value: workspace },
      { key: SA_MODEL, value: config.model },
      { key: SA_TURNS, value: st.turn },
      { key: SA_COST, value: st.costUsd },
      ...(config.scheduleId ? [{ key: SA_SCHEDULE, value: config.scheduleId }] : []),
    ]);
  };

  const record = (entry: IndexEntry) => {
    st.index.push(entry);
  };

  const append = async (role: Role, kind: MessageKind, content: string, extra: { toolName?: string; toolCallId?: string } = {}) => {
    const seq = st.nextSeq++;
    const { tokens } = await acts.store.appendMessage({ conversationId, seq, turn: st.turn, role, kind, content, model: config.model, ...extra });
    record({ seq, turn: st.turn, role, kind, tokens, toolName: extra.toolName });
  };

  const finish = async (status: ConversationStatus, why: string, result?: string): Promise<ConversationResult> => {
    reason = why;
    pendingApproval = undefined;
    pendingQuestion = undefined;
    setStatus(status);
    // Histories from before the summary existed recorded no result here: read it defensively.
    const finished = await CancellationScope.nonCancellable(() =>
      acts.store.finishConversation({ ...ref, status, reason: why, turns: st.turn, usage: st.usage, costUsd: st.costUsd, result }),
    );
    const summary = (finished as { summary?: string } | undefined)?.summary;
    await condition(allHandlersFinished);
    return { conversationId, status, reason: why, turns: st.turn, usage: st.usage, costUsd: st.costUsd, result: result ?? summary };
  };

  /** Mark the conversation as waiting as soon as something is pending (before it is announced). */
  const markWaiting = () => {
    if (patched('waiting-status-before-event')) setStatus('waiting');
  };

  /** Wait for a person, bounded by `timeoutMs`; false on timeout. */
  const waitFor = async (done: () => boolean, timeoutMs: number): Promise<boolean> => {
    if (st.status !== 'waiting') setStatus('waiting');
    const ok = await condition(() => done() || cancelRequested !== undefined, timeoutMs);
    setStatus('running');
    return ok;
  };

  const budgetStop = (): string | undefined => {
    if (st.turn >= config.maxTurns) return `turn limit reached (${config.maxTurns} turns)`;
    if (config.maxTokens && st.usage.totalTokens >= config.maxTokens) return `token budget spent (${st.usage.totalTokens} of ${config.maxTokens} tokens)`;
    if (config.maxCostUsd && st.costUsd >= config.maxCostUsd) return `cost budget spent ($${st.costUsd.toFixed(4)} of $${config.maxCostUsd})`;
    if (config.maxTimeMs && Date.now() - st.startedAtMs >= config.maxTimeMs)
      return `time budget spent (${Math.round((Date.now() - st.startedAtMs) / 1000)} s of ${config.maxTimeMs / 1000} s)`;
    return undefined;
  };

  const doRollback = async () => {
    const req = rollbackRequest!;
    const cp = st.checkpoints.find((c) => c.turn === req.toTurn)!;
    try {
      const r = await acts.git.rollbackWorkspace({ ...ref, toTurn: req.toTurn, commit: cp.commit });
      st.rollbacks.push({ toTurn: req.toTurn, atTurn: st.turn });
      await append(
        'user',
        'notice',
        `[the operator rolled the workspace back to its state after turn ${req.toTurn}; ${r.restored.length} files restored, ${r.removed.length} removed. Re-read files before editing them.]`,
      );
      req.done = { ...r, commit: cp.commit };
    } catch (err) {
      req.error = `rollback failed: ${(err as Error).message}`;
    }
  };

  /** Answer one tool call; returns the completion text when the task is done. */
  const handleCall = async (call: CallSummary): Promise<{ changed: boolean; completion?: string; stop?: boolean }> => {
    const resultSeq = st.nextSeq++;
    const answerWith = async (ok: boolean, output: string, status?: IndexEntry['status']) => {
      const r = await acts.tool.runTool({ ...ref, turn: st.turn, callId: call.id, resultSeq, override: { ok, output, status } });
      record({ seq: resultSeq, turn: st.turn, role: 'tool', kind: 'tool_result', tokens: r.tokens, toolName: call.name, status: r.status });
    };
    if (call.invalid) {
      await answerWith(false, call.invalid, 'error');
      return { changed: false };
    }
    if (call.control) {
      switch (call.name) {
        case 'attempt_completion':
          await answerWith(true, 'The task is marked complete.');
          return { changed: false, completion: call.text ?? '' };
        case 'ask_followup_question':
        case 'plan_mode_respond': {
          const question = call.text ?? '';
          pendingQuestion = { callId: call.id, question, sinceMs: Date.now() };
          answer = undefined;
          markWaiting();
          await acts.store.emitEvents({ conversationId, events: [{ type: 'question_asked', callId: call.id, question }] });
          const answered = await waitFor(() => answer !== undefined, config.questionTimeoutMs);
          pendingQuestion = undefined;
          if (!answered) {
            if (cancelRequested) return { changed: false, stop: true };
            await answerWith(false, 'No answer arrived in time.', 'error');
            return { changed: false, stop: true };
          }
          const text = answer!;
          answer = undefined;
          await answerWith(true, `<answer>\n${text}\n</answer>`);
          return { changed: false };
        }
        case 'todo_write':
          st.todos = call.text;
          await answerWith(true, `The todo list is updated:\n${call.text ?? ''}`);
          return { changed: false };
        case 'todo_read':
          await answerWith(true, st.todos ?? '(the todo list is empty)');
          return { changed: false };
        default:
          break; // other control tools (conversation_message_ids_write) run in the tool activity
      }
    }
    if (config.planMode && !call.readOnly && !call.control) {
      await answerWith(false, `${call.name} is not allowed in plan mode: only read-only tools may run. Present the plan with plan_mode_respond.`, 'error');
      return { changed: false };
    }
    const needsApproval = config.approval === 'always' ? call.mutating || call.dangerous : config.approval === 'dangerous' ? call.dangerous : false;
    if (needsApproval) {
      pendingApproval = { callId: call.id, name: call.name, preview: call.preview, reasons: call.reasons, sinceMs: Date.now() };
      decision = undefined;
      markWaiting();
      await acts.store.emitEvents({
        conversationId,
        events: [{ type: 'approval_requested', callId: call.id, name: call.name, reason: call.reasons.join('; ') || `${call.name} needs approval` }],
      });
      const decided = await waitFor(() => decision !== undefined, config.approvalTimeoutMs);
      pendingApproval = undefined;
      if (!decided && cancelRequested) return { changed: false, stop: true };
      const approved = decided ? decision!.approved : config.approvalTimeoutAction === 'approve';
      const why = decided ? decision!.reason : `no decision within ${Math.round(config.approvalTimeoutMs / 1000)} s (default: ${config.approvalTimeoutAction})`;
      decision = undefined;
      if (!approved) {
        await answerWith(false, `The operator denied this ${call.name} call${why ? `: ${why}` : ''}. Choose another way or ask the user.`, 'denied');
        return { changed: false };
      }
    }
    const r = await acts.tool.runTool({ ...ref, turn: st.turn, callId: call.id, resultSeq });
    record({ seq: resultSeq, turn: st.turn, role: 'tool', kind: 'tool_result', tokens: r.tokens, toolName: call.name, status: r.status });
    return { changed: r.changed };
  };

  /** Consecutive read-only calls run in parallel; everything else in order. */
  const groups = (calls: CallSummary[]): CallSummary[][] => {
    const out: CallSummary[][] = [];
    for (const c of calls) {
      const parallel = c.readOnly && !c.control && !c.invalid && !c.dangerous;
      const last = out[out.length - 1];
      if (parallel && last && last.every((x) => x.readOnly && !x.control && !x.invalid && !x.dangerous)) last.push(c);
      else out.push([c]);
    }
    return out;
  };

  try {
    if (!input.carried) {
      const init = await acts.git.initConversation({ ...ref, task: input.task });
      record({ seq: 0, turn: 0, role: 'user', kind: 'task', tokens: init.tokens });
      if (init.checkpoint) st.checkpoints.push({ turn: 0, commit: init.checkpoint.commit, files: init.checkpoint.files.length });
      updateSearchAttributes();
    }
    st.runs += 1;
    let turnsThisRun = 0;

    for (;;) {
      if (cancelRequested) return await finish('cancelled', cancelRequested);
      if (paused) {
        setStatus('paused');
        await condition(() => !paused || cancelRequested !== undefined);
        setStatus('running');
        continue;
      }
      if (rollbackRequest && !rollbackRequest.done && !rollbackRequest.error) await doRollback();
      const over = budgetStop();
      if (over) return await finish('budget_exhausted', over);
      if (turnsThisRun > 0 && (workflowInfo().continueAsNewSuggested || (config.continueAsNewEveryTurns && turnsThisRun >= config.continueAsNewEveryTurns))) {
        await condition(allHandlersFinished);
        return await continueAsNew<typeof conversation>({ ...input, carried: st });
      }
      while (st.inbox.length) await append('user', 'user', st.inbox.shift()!);

      st.turn += 1;
      turnsThisRun += 1;
      const turn = st.turn;
      const seq = st.nextSeq++;
      let context = await acts.context.prepareContext({ ...ref, turn, throughSeq: seq - 1 });
      if (!context.fits) return await finish('context_overflow', context.reason ?? 'the conversation no longer fits the context window');

      let harder = false;
      let tokens = 0;
      for (let segment = 0; ; segment++) {
        try {
          const r = await acts.model.callModel({ ...ref, turn, seq, segment, ...(harder && segment === 0 ? { priorAttempts: 1 } : {}) });
          st.usage = addUsage(st.usage, r.usage);
          st.costUsd += r.costUsd;
          tokens = r.tokens;
          if (r.merged) break;
        } catch (err) {
          if (!harder && segment === 0 && failureType(err) === ModelErrorType.ContextLengthExceeded) {
            // The provider counts differently than we do: prune harder once and try again.
            harder = true;
            context = await acts.context.prepareContext({ ...ref, turn, throughSeq: seq - 1, harder: true });
            if (!context.fits) return await finish('context_overflow', context.reason ?? 'the conversation no longer fits the context window');
            segment = -1;
            continue;
          }
          throw err;
        }
      }
      record({ seq, turn, role: 'assistant', kind: 'assistant', tokens });

      const parsed = await acts.store.parseResponse({ ...ref, turn, seq });
      let changed = false;
      let completion: string | undefined;
      if (parsed.calls.length === 0) {
        st.noToolStreak += 1;
        if (st.noToolStreak >= config.maxNoToolReplies) {
          return await finish('failed', `the model replied ${st.noToolStreak} times in a row without using a tool`);
        }
        await append('user', 'reminder', REMINDER);
      } else {
        st.noToolStreak = 0;
        for (const group of groups(parsed.calls)) {
          const results = await Promise.all(group.map(handleCall));
          for (const r of results) {
            changed ||= r.changed;
            if (r.completion !== undefined) completion = r.completion;
          }
          if (results.some((r) => r.stop)) {
            if (cancelRequested) return await finish('cancelled', cancelRequested);
            return await finish('failed', 'the question to the user was not answered in time');
          }
          if (completion !== undefined) break;
        }
        if (parsed.loop && completion === undefined) {
          if (st.loopNudged) return await finish('loop_detected', parsed.loop);
          st.loopNudged = true;
          await append('user', 'notice', `[loop detected: ${parsed.loop}. Change your approach: do something different from the last calls, or ask the user.]`);
        }
      }

      const end = await acts.git.endTurn({ ...ref, turn, changed, usage: st.usage, costUsd: st.costUsd, status: st.status });
      if (end.checkpoint) st.checkpoints.push({ turn: end.checkpoint.turn, commit: end.checkpoint.commit, files: end.checkpoint.files.length });
      updateSearchAttributes();
      if (completion !== undefined) return await finish('completed', 'the model called attempt_completion', completion);
    }
  } catch (err) {
    if (isCancellation(err)) {
      return await CancellationScope.nonCancellable(() => finish('cancelled', cancelRequested ?? 'the workflow was cancelled'));
    }
    if (err instanceof ActivityFailure) {
      return await finish('failed', `${err.activityType} failed: ${rootMessage(err)}`);
    }
    throw err;
  }
}

function failureType(err: unknown): string | undefined {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) return err.cause.type ?? undefined;
  return undefined;
}

function rootMessage(err: Error): string {
  let e: Error = err;
  while (e.cause instanceof Error) e = e.cause;
  return e.message;
}
