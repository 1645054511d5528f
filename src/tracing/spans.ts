// Spans of our own inside Temporal's RunActivity spans: one per model call, with the tokens,
// finish reason and attempt, and one per tool call, with the tool's name and outcome.
import { SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory } from '@temporalio/worker';
import type { CallModelInput, CallModelResult, RunToolInput, RunToolResult } from '../../activities/types.js';
import type { ModelTurnInput, ModelTurnResult } from '../../activities/session.js';
import type { Store } from '../store/index.js';

/** Run `fn` in an active span; a thrown error marks the span failed and is rethrown. */
function inSpan<T>(tracer: Tracer, name: string, attributes: Attributes, fn: () => Promise<T>, done: (span: Span, result: T) => void): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      const result = await fn();
      done(span, result);
      return result;
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

export function modelAndToolSpans(tracer: Tracer, store: Store): ActivityInterceptorsFactory {
  return (ctx) => {
    // The session workflow's model step (modelTurn) and tool steps (toolCall, recordToolResult);
    // callModel and runTool are the frozen conversation workflow's.
    const type = ctx.info.activityType;
    const isModel = type === 'modelTurn' || type === 'callModel';
    if (!isModel && !['toolCall', 'recordToolResult', 'runTool'].includes(type)) return {};
    const inbound: ActivityInboundCallsInterceptor = {
      async execute(input, next) {
        const arg = input.args[0] as CallModelInput | RunToolInput;
        const common = { 'agentrun.conversation_id': arg.conversationId, 'agentrun.turn': arg.turn, 'agentrun.attempt': ctx.info.attempt };
        if (isModel) {
          const a = arg as CallModelInput | ModelTurnInput;
          const model = 'config' in a ? a.config.model : (await store.getConversation(a.conversationId).catch(() => null))?.model;
          const attributes = {
            ...common,
            ...(model ? { 'gen_ai.request.model': model } : {}),
            ...('segment' in a ? { 'agentrun.segment': a.segment } : {}),
            'agentrun.seq': a.seq,
          };
          return inSpan(
            tracer,
            'model call',
            attributes,
            () => next(input) as Promise<CallModelResult | ModelTurnResult>,
            (span, r) =>
              span.setAttributes({
                'gen_ai.usage.input_tokens': r.usage.promptTokens,
                'gen_ai.usage.output_tokens': r.usage.completionTokens,
                'gen_ai.response.finish_reasons': [r.finishReason],
                'agentrun.cost_usd': r.costUsd,
              }),
          );
        }
        const a = arg as RunToolInput;
        // The input holds only the call id; the name is in the store (one small read, only when tracing).
        const name = (await store.getToolCall(a.conversationId, a.callId).catch(() => null))?.name ?? 'unknown';
        const attributes = {
          ...common,
          'agentrun.tool.name': name,
          'agentrun.tool.call_id': a.callId,
          'agentrun.tool.answered_by_workflow': Boolean(a.override),
        };
        return inSpan(
          tracer,
          `tool ${name}`,
          attributes,
          () => next(input) as Promise<RunToolResult>,
          (span, r) => {
            span.setAttributes({ 'agentrun.tool.status': r.status, 'agentrun.tool.ok': r.ok, 'agentrun.tool.replayed': r.replayed ?? false });
            if (!r.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: r.status });
          },
        );
      },
    };
    return { inbound };
  };
}
