// OpenTelemetry: a conversation on a real worker exports its trace by OTLP/HTTP (JSON) to an
// in-process collector on loopback; the tree is workflow → activities → model and tool spans. Once
// on a worker in the test's process, once on the path users run: `agentrun worker` (with its host
// queue, where the model and tool steps of a local workspace run) and `agentrun run --no-worker`.
import { execFile, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { flushTracing } from '../../src/tracing/index.js';
import { createHarness, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
}

const value = (v: OtlpValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? v.arrayValue?.values.map(value);

const spans: Span[] = [];
const requests: { path: string; type: string }[] = [];
let collector: Server;
let h: Harness;

beforeAll(async () => {
  collector = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', type: req.headers['content-type'] ?? '' });
      const data = JSON.parse(body) as {
        resourceSpans: { scopeSpans: { spans: (Omit<Span, 'attributes'> & { attributes?: { key: string; value: OtlpValue }[] })[] }[] }[];
      };
      for (const rs of data.resourceSpans)
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans)
            spans.push({
              ...s,
              parentSpanId: s.parentSpanId || undefined,
              attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, value(a.value)])),
            });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  // Read when the worker is created: tracing is on for this test file's process only.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  h = await createHarness();
});

afterAll(async () => {
  await h?.close();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  await new Promise((r) => collector?.close(r));
});

describe('OpenTelemetry traces', () => {
  it('exports one trace per conversation: workflow → activities → model calls and tools', async () => {
    const id = uid('traced');
    const workspace = await tempRepo();
    const model = 'scripted:' + join(import.meta.dirname, '../fixtures/edit-and-complete.yaml');
    const handle = await h.start({ id, task: 'Add a greet function', workspace, config: { model } });
    await handle.result();

    // The workflow span carries no id: find the trace through our spans, which do.
    const mine = () => {
      const traceIds = new Set(spans.filter((s) => s.attributes['agentrun.conversation_id'] === id).map((s) => s.traceId));
      return spans.filter((s) => s.name === 'RunWorkflow:session' && traceIds.has(s.traceId));
    };
    for (let i = 0; i < 50 && (mine().length === 0 || !spans.some((s) => s.name === 'tool attempt_completion')); i++) {
      await flushTracing();
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((r) => r.path === '/v1/traces' && r.type.startsWith('application/json'))).toBe(true);

    expect(mine()).toHaveLength(1);
    const [root] = mine();
    expect(root!.parentSpanId).toBeUndefined();
    expect(root, `workflow span of ${id} among ${[...new Set(spans.map((s) => s.name))].join(', ')}`).toBeDefined();
    const trace = spans.filter((s) => s.traceId === root!.traceId);
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const parentOf = (s: Span) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
    const path = (s: Span): string[] => {
      const names: string[] = [];
      for (let p: Span | undefined = s; p; p = parentOf(p)) names.unshift(p.name);
      return names;
    };

    // Four turns: four model calls, each under its activity, under the workflow.
    const modelCalls = trace.filter((s) => s.name === 'model call');
    expect(modelCalls).toHaveLength(4);
    for (const m of modelCalls) {
      expect(path(m)).toEqual(['RunWorkflow:session', 'StartActivity:modelTurn', 'RunActivity:modelTurn', 'model call']);
      expect(m.attributes['agentrun.conversation_id']).toBe(id);
      expect(m.attributes['agentrun.attempt']).toBe(1);
      expect(m.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(m.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      expect(m.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
    }
    expect(modelCalls.map((m) => m.attributes['agentrun.turn']).sort()).toEqual([1, 2, 3, 4]);

    // The tools the model called, each under its runTool activity.
    const tools = trace.filter((s) => s.name.startsWith('tool '));
    expect(tools.map((t) => t.name).sort()).toEqual(['tool attempt_completion', 'tool read_file', 'tool replace_in_file', 'tool write_to_file'].sort());
    const write = tools.find((t) => t.name === 'tool write_to_file')!;
    expect(path(write)).toEqual(['RunWorkflow:session', 'StartActivity:toolCall', 'RunActivity:toolCall', 'tool write_to_file']);
    expect(write.attributes).toMatchObject({ 'agentrun.tool.status': 'ok', 'agentrun.tool.ok': true, 'agentrun.turn': 1 });

    // Every span of the trace hangs from the workflow span: nothing is orphaned.
    for (const s of trace) expect(path(s)[0]).toBe('RunWorkflow:session');
  });

  it("the CLI's own worker (host queue included) exports a model call span per request and a tool span per call, nested under their turn's activities; workflow spans carry ids, not the workflow info", async () => {
    const home = await tempDir('agentrun-trace-home-');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      DATABASE_URL: inject('databaseUrl'),
      AGENTRUN_HOME: home,
      AGENTRUN_TASK_QUEUE: uid('tq-traced'),
      AGENTRUN_LOG_LEVEL: 'info',
      OPENAI_API_KEY: '',
      OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT,
    };
    // Tracing needs the worker's own bundle (its workflow interceptors): no prebuilt bundle here.
    delete env.AGENTRUN_WORKFLOW_BUNDLE;
    const worker = spawn(process.execPath, [join(ROOT, 'bin/agentrun.js'), 'worker', '--metrics-port', '0'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    worker.stdout.on('data', (d) => (out += d));
    worker.stderr.on('data', (d) => (out += d));
    try {
      for (let i = 0; i < 600 && !out.includes('worker started'); i++) {
        if (worker.exitCode !== null) throw new Error(`agentrun worker exited ${worker.exitCode}: ${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(out).toContain('worker started');
      const workspace = await tempRepo();
      const model = 'scripted:' + join(import.meta.dirname, '../fixtures/edit-and-complete.yaml');
      const run = await promisify(execFile)(
        process.execPath,
        [join(ROOT, 'bin/agentrun.js'), 'run', '--no-worker', '--json', '--workspace', workspace, '--task', 'Add a greet function', '--model', model],
        { cwd: ROOT, env, timeout: 120_000 },
      );
      const lines = run.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const result = lines.at(-1)!;
      expect(result).toMatchObject({ type: 'result', status: 'completed' });
      const id = String(result.conversationId);

      // The worker's batch processor exports within about a second of each span's end.
      const ours = () => spans.filter((s) => s.attributes['agentrun.conversation_id'] === id);
      // And every span's parent below the workflow's: a workflow task's span ends, and is exported,
      // after the activities it scheduled have started.
      const exported = () => {
        const trace = spans.filter((s) => s.traceId === ours()[0]?.traceId);
        const ids = new Set(trace.map((s) => s.spanId));
        const parented = trace.every((s) => s.name.startsWith('RunWorkflow') || !s.parentSpanId || ids.has(s.parentSpanId));
        return parented && ours().some((s) => s.name === 'tool attempt_completion');
      };
      for (let i = 0; i < 100 && !exported(); i++) await new Promise((r) => setTimeout(r, 200));
      const traceId = ours()[0]?.traceId;
      const trace = spans.filter((s) => s.traceId === traceId);
      const byId = new Map(trace.map((s) => [s.spanId, s]));
      const path = (s: Span): string[] => {
        const names: string[] = [];
        for (let p: Span | undefined = s; p; p = p.parentSpanId ? byId.get(p.parentSpanId) : undefined) names.unshift(p.name);
        return names;
      };
      const names = [...new Set(trace.map((s) => s.name))].sort();
      expect(names, 'the steps on the host queue are traced').toEqual(
        expect.arrayContaining(['RunActivity:modelTurn', 'RunActivity:toolCall', 'RunActivity:initConversation']),
      );

      // One model call span per model request (four turns), with the GenAI attributes.
      const modelCalls = trace.filter((s) => s.name === 'model call');
      expect(modelCalls.map((m) => m.attributes['agentrun.turn']).sort()).toEqual([1, 2, 3, 4]);
      for (const m of modelCalls) {
        expect(path(m)).toEqual(['RunWorkflow:session', 'StartActivity:modelTurn', 'RunActivity:modelTurn', 'model call']);
        expect(m.attributes).toMatchObject({
          'gen_ai.request.model': model,
          'gen_ai.response.finish_reasons': ['stop'],
          'agentrun.conversation_id': id,
          'agentrun.attempt': 1,
        });
        expect(m.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
        expect(m.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      }

      // One tool span per call, under the activity that ran it, in the turn of the model call that asked for it.
      const tools = trace.filter((s) => s.name.startsWith('tool '));
      expect(tools.map((t) => [t.name, t.attributes['agentrun.turn']]).sort()).toEqual(
        [
          ['tool write_to_file', 1],
          ['tool read_file', 2],
          ['tool replace_in_file', 3],
          ['tool attempt_completion', 4],
        ].sort(),
      );
      for (const t of tools.filter((t) => t.name !== 'tool attempt_completion')) {
        expect(path(t)).toEqual(['RunWorkflow:session', 'StartActivity:toolCall', 'RunActivity:toolCall', t.name]);
        expect(t.attributes).toMatchObject({ 'agentrun.tool.ok': true, 'agentrun.tool.status': 'ok', 'gen_ai.tool.name': t.name.slice(5) });
      }
      for (const s of trace) expect(path(s)[0]).toBe('RunWorkflow:session');

      // Workflow spans carry a few ids, not the workflow's info (memo, search attributes, last result, …).
      const workflowSpans = trace.filter((s) => s.name.startsWith('RunWorkflow:') || s.name.startsWith('StartActivity:'));
      expect(workflowSpans.length).toBeGreaterThan(0);
      for (const s of workflowSpans) {
        for (const key of ['memo', 'lastResult', 'searchAttributes', 'typedSearchAttributes', 'historyLength', 'unsafe', 'firstExecutionRunId'])
          expect(s.attributes, `${s.name} carries ${key}`).not.toHaveProperty(key);
        expect(Object.keys(s.attributes).length).toBeLessThanOrEqual(6);
      }
      const root = trace.find((s) => s.name === 'RunWorkflow:session')!;
      expect(root.attributes).toMatchObject({ temporalWorkflowId: id, 'temporal.workflow_type': 'session' });
    } finally {
      worker.kill('SIGTERM');
      if (worker.exitCode === null) await new Promise((r) => worker.once('exit', r));
    }
  }, 180_000);

  it('`agentrun run` with its own worker in the process traces the model calls and tools the same way', async () => {
    const home = await tempDir('agentrun-trace-run-home-');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      DATABASE_URL: inject('databaseUrl'),
      AGENTRUN_HOME: home,
      AGENTRUN_TASK_QUEUE: uid('tq-traced-run'),
      AGENTRUN_LOG_LEVEL: 'warn',
      OPENAI_API_KEY: '',
      OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT,
    };
    delete env.AGENTRUN_WORKFLOW_BUNDLE;
    const workspace = await tempRepo();
    const model = 'scripted:' + join(import.meta.dirname, '../fixtures/edit-and-complete.yaml');
    const run = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'bin/agentrun.js'), 'run', '--json', '--workspace', workspace, '--task', 'Add a greet function', '--model', model],
      { cwd: ROOT, env, timeout: 150_000 },
    );
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(result).toMatchObject({ type: 'result', status: 'completed' });
    const id = String(result.conversationId);
    // `run` flushes its spans as it shuts its worker down.
    const ours = () => spans.filter((s) => s.attributes['agentrun.conversation_id'] === id);
    for (let i = 0; i < 50 && ours().filter((s) => s.name === 'model call').length < 4; i++) await new Promise((r) => setTimeout(r, 200));
    const trace = spans.filter((s) => s.traceId === ours()[0]?.traceId);
    const names = new Set(trace.map((s) => s.name));
    for (const name of ['RunWorkflow:session', 'RunActivity:modelTurn', 'RunActivity:toolCall', 'tool write_to_file', 'tool replace_in_file'])
      expect(names.has(name), `${name} in the trace of agentrun run`).toBe(true);
    const modelCalls = trace.filter((s) => s.name === 'model call');
    expect(modelCalls.map((m) => m.attributes['agentrun.turn']).sort()).toEqual([1, 2, 3, 4]);
    for (const m of modelCalls) expect(m.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
  }, 180_000);
});
