// Spans of our own at the turn port's named points (src/extensions/observer.ts), inside the activity span
// that is active when the step runs: one per model step, with OpenTelemetry's GenAI attributes
// (model, tokens, finish reason), and one per tool call, with the tool's name and outcome.
import { SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import type { ModelOutcome, ModelStep, ToolOutcome, ToolStep, TurnObserver } from '../extensions/observer.js';

const common = (e: ModelStep | ToolStep) => ({ 'agentrun.conversation_id': e.conversationId, 'agentrun.turn': e.turn, 'agentrun.attempt': e.attempt });

function failed(span: Span, error: Error): void {
  span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}

export function tracingObserver(tracer: Tracer): TurnObserver {
  // The span of a step lives from its `before` point to its `after` point (the same event object).
  const open = new WeakMap<ModelStep | ToolStep, Span>();
  return {
    beforeModel(e) {
      const attributes = { ...common(e), 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': e.model, 'agentrun.seq': e.seq };
      open.set(e, tracer.startSpan('model call', { attributes }));
    },
    afterModel(e, outcome: ModelOutcome) {
      const span = open.get(e);
      if (!span) return;
      open.delete(e);
      if (!outcome.ok) failed(span, outcome.error);
      else
        span.setAttributes({
          'gen_ai.usage.input_tokens': outcome.usage.promptTokens,
          'gen_ai.usage.output_tokens': outcome.usage.completionTokens,
          ...(outcome.finishReason ? { 'gen_ai.response.finish_reasons': [outcome.finishReason] } : {}),
          'agentrun.cost_usd': outcome.costUsd,
        });
      span.end();
    },
    beforeTool(e) {
      const attributes = {
        ...common(e),
        'gen_ai.tool.name': e.name,
        'gen_ai.tool.call.id': e.callId,
        'agentrun.tool.name': e.name,
        'agentrun.tool.call_id': e.callId,
        'agentrun.tool.answered_by_workflow': e.answeredByWorkflow,
      };
      open.set(e, tracer.startSpan(`tool ${e.name}`, { attributes }));
    },
    afterTool(e, outcome: ToolOutcome) {
      const span = open.get(e);
      if (!span) return;
      open.delete(e);
      if (!outcome.ok) failed(span, outcome.error);
      else {
        const r = outcome.result;
        span.setAttributes({ 'agentrun.tool.status': r.status, 'agentrun.tool.ok': r.ok, 'agentrun.tool.replayed': r.replayed ?? false });
        if (!r.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: r.status });
      }
      span.end();
    },
  };
}
