// agentrun embedded in your own service: a worker in this process with a custom tool and a hook,
// and a client that runs a conversation and follows its events.
//
//   TEMPORAL_ADDRESS=127.0.0.1:7233 DATABASE_URL=postgres://… node --import tsx examples/sdk/main.ts [WORKSPACE]
//
// Without WORKSPACE it makes a temporary git repository. The model is the scripted one
// (examples/sdk/script.yaml); set AGENTRUN_MODEL to use a real provider (with OPENAI_API_KEY).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { createClient, createWorker, defineTool } from '../../src/index.js';

const temporal = { address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' };
const database = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const schema = process.env.AGENTRUN_DB_SCHEMA;
const taskQueue = process.env.AGENTRUN_TASK_QUEUE ?? `sdk-example-${process.pid}`;
const script = fileURLToPath(new URL('./script.yaml', import.meta.url));
const model = process.env.AGENTRUN_MODEL ?? `scripted:${script}`;

// Your own tool: the model sees its XML usage and JSON schema, made from the zod schema.
const openTickets = defineTool({
  name: 'open_tickets',
  description: 'List the open tickets of the tracker, optionally by label.',
  schema: z.object({ label: z.string().optional().describe('Only tickets with this label') }),
  kind: 'read',
  run: async ({ label }) => {
    const tickets = [
      { id: 12, title: 'crash on empty input', labels: ['bug'] },
      { id: 14, title: 'document the API', labels: ['docs'] },
      { id: 15, title: 'wrong exit code', labels: ['bug'] },
    ];
    return tickets
      .filter((t) => !label || t.labels.includes(label))
      .map((t) => `#${t.id} ${t.title}`)
      .join('\n');
  },
});

function workspace(): string {
  if (process.argv[2]) return process.argv[2];
  const dir = mkdtempSync(join(tmpdir(), 'agentrun-sdk-'));
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  execFileSync('git', ['-c', 'user.name=sdk', '-c', 'user.email=sdk@example.com', 'commit', '-q', '--allow-empty', '-m', 'initial'], { cwd: dir });
  return dir;
}

const worker = await createWorker({
  temporal,
  database,
  schema,
  taskQueue,
  tools: [openTickets],
  hooks: {
    // Your policy in code: no file may be written outside docs or BUGS.md.
    beforeTool: ({ tool, args }) => {
      if (tool === 'write_to_file' && !/^(docs\/|BUGS\.md$)/.test(String(args.path))) return { block: 'only docs/ and BUGS.md may be written' };
    },
  },
  shutdownGraceSec: 5,
  // The scripted model is a test input: this worker serves the example's own script, nothing else.
  testModels: { scriptsDirs: [dirname(script)], recorded: false },
});
const running = worker.run();

const client = await createClient({ temporal, database, schema, taskQueue });
try {
  const dir = workspace();
  const { conversationId } = await client.start({ task: 'List the open bugs in BUGS.md', workspace: dir, model });
  console.log(`conversation ${conversationId} in ${dir}`);
  for await (const event of client.watch(conversationId)) {
    if (event.type === 'tool_completed') console.log(`tool ${event.name}: ${event.ok ? 'ok' : 'error'} ${event.preview.split('\n')[0]}`);
    if (event.type === 'finished') console.log(`finished: ${event.status}`);
  }
  const result = await client.result(conversationId);
  console.log(`result: ${result.result}`);
  process.exitCode = result.status === 'completed' ? 0 : 1;
} finally {
  await client.close();
  worker.shutdown();
  await running;
}
// Temporal's native runtime (and the scripted model's server) keep handles open: exit explicitly.
process.exit();
