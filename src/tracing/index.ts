// OpenTelemetry traces of conversations, exported by OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
// (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Temporal's interceptors give the workflow and
// activity spans (RunWorkflow → StartActivity → RunActivity); the turn port's tracing observer adds
// one span per model call (tokens, finish reason, attempt) and per tool call inside them, on every
// worker that runs activities (the shared queue's and each host's own). Unset, nothing is loaded.
import { createRequire } from 'node:module';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { SerializableSpan } from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';
import type { TurnObserver } from '../extensions/observer.js';
import { log } from '../log.js';

export interface WorkerTracing {
  /**
   * Spread into Worker.create's options. The workflow interceptors are bundled with the
   * workflows, so a prebuilt bundle (without them) cannot be used while tracing.
   */
  workerOptions: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /** For a worker that runs activities only (a host's own queue): the activity spans alone. */
  activityOptions: Pick<WorkerOptions, 'interceptors'>;
  /** The spans at the turn port's named points (src/tracing/spans.ts). */
  observer: TurnObserver;
}

/**
 * The few ids a workflow span carries. Temporal's exporter copies whatever it is given onto every
 * span; given the whole WorkflowInfo it would export the memo, search attributes, last result, ….
 */
function workflowSpanAttributes(info: WorkflowInfo): Record<string, string> {
  return {
    temporalWorkflowId: info.workflowId,
    run_id: info.runId,
    'temporal.workflow_type': info.workflowType,
    'temporal.task_queue': info.taskQueue,
    'temporal.namespace': info.namespace,
  };
}

let started: Promise<TracingRuntime> | undefined;

interface TracingRuntime {
  provider: import('@opentelemetry/sdk-trace-base').BasicTracerProvider;
  processor: import('@opentelemetry/sdk-trace-base').SpanProcessor;
  resource: import('@opentelemetry/resources').Resource;
}

function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()) && env.OTEL_SDK_DISABLED !== 'true';
}

/** The process-wide tracer provider and exporter, made once (the exporter reads the OTEL_* variables). */
async function runtime(): Promise<TracingRuntime> {
  started ??= (async () => {
    const [
      api,
      { W3CTraceContextPropagator },
      { AsyncLocalStorageContextManager },
      { BasicTracerProvider, BatchSpanProcessor },
      { Resource },
      { OTLPTraceExporter },
    ] = await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/core'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/exporter-trace-otlp-http'),
    ]);
    const resource = new Resource({ 'service.name': process.env.OTEL_SERVICE_NAME ?? 'agentrun' });
    // Short delay: a CLI process that runs one conversation exits soon after the last span.
    const processor = new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 1000 });
    const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
    // Spans of an activity find their parent through the active context across awaits.
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.trace.setGlobalTracerProvider(provider);
    // Activities continue the workflow's trace from the context Temporal carries in their headers.
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    log.info({ endpoint: process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT }, 'OpenTelemetry tracing on');
    return { provider, processor, resource };
  })();
  return started;
}

/** Interceptors and sinks for a worker, or undefined when tracing is off (no OTel code loaded). */
export async function workerTracing(): Promise<WorkerTracing | undefined> {
  if (!tracingEnabled()) return undefined;
  const { provider, processor, resource } = await runtime();
  const [{ OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor, makeWorkflowExporter }, { tracingObserver }] = await Promise.all([
    import('@temporalio/interceptors-opentelemetry/lib/worker/index.js'),
    import('./spans.js'),
  ]);
  const tracer = provider.getTracer('agentrun');
  const require = createRequire(import.meta.url);
  const activity: NonNullable<WorkerOptions['interceptors']>['activity'] = [
    (ctx) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
      outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
    }),
  ];
  const exporter = makeWorkflowExporter(processor, resource);
  // Its `info` argument is only copied onto each span's attributes: hand it the few ids instead.
  const ids = (info: WorkflowInfo) => workflowSpanAttributes(info) as unknown as WorkflowInfo;
  return {
    workerOptions: {
      interceptors: { workflowModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')], activity },
      sinks: { exporter: { export: { ...exporter.export, fn: (info: WorkflowInfo, spans: SerializableSpan[]) => exporter.export.fn(ids(info), spans) } } },
    },
    activityOptions: { interceptors: { activity } },
    observer: tracingObserver(tracer),
  };
}

/** Send the spans still buffered (before a CLI process exits). No-op when tracing is off. */
export async function flushTracing(): Promise<void> {
  if (!started) return;
  const { provider } = await started;
  await provider.forceFlush().catch((err: Error) => log.warn({ err: err.message }, 'could not export the last spans'));
}
