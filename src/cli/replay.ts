// `agentrun replay`: the deploy gate. Replays recorded histories (files, or pulled from the
// server) against the current workflow code; any nondeterminism fails with exit 1.
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { readFile } from 'node:fs/promises';
import { installRuntime, WORKFLOWS_PATH } from '../../worker/index.js';
import { CliError, EXIT } from './errors.js';
import { openSession } from './session.js';

export async function replayCommand(files: string[], flags: { fromServer?: boolean; query: string; limit: string; json?: boolean }): Promise<number> {
  if (!files.length && !flags.fromServer) throw new CliError('give history files (JSON, as `temporal workflow show --output json` writes) or --from-server');
  const histories: { workflowId: string; history: unknown }[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read history ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    try {
      histories.push({ workflowId: file, history: historyFromJSON(JSON.parse(text)) });
    } catch (err) {
      throw new CliError(`history ${file} is not JSON: ${(err as Error).message}`);
    }
  }
  installRuntime();
  let failures = 0;
  let count = 0;
  const report = (workflowId: string, error?: Error) => {
    count++;
    if (error) failures++;
    const line = flags.json
      ? JSON.stringify({ workflowId, ok: !error, error: error?.message })
      : `${error ? '✗' : '✓'} ${workflowId}${error ? `: ${error.message}` : ''}`;
    process.stdout.write(line + '\n');
  };
  const options = { workflowsPath: WORKFLOWS_PATH };
  for await (const r of Worker.runReplayHistories(options, histories as never)) report(r.workflowId, r.error);
  if (flags.fromServer) {
    const session = await openSession({});
    try {
      const limit = Number(flags.limit);
      const executions = session.client.workflow.list({ query: flags.query });
      const pulled: { workflowId: string; history: unknown }[] = [];
      for await (const e of executions) {
        pulled.push({ workflowId: `${e.workflowId}/${e.runId}`, history: await session.client.workflow.getHandle(e.workflowId, e.runId).fetchHistory() });
        if (pulled.length >= limit) break;
      }
      for await (const r of Worker.runReplayHistories(options, pulled as never)) report(r.workflowId, r.error);
    } finally {
      await session.close();
    }
  }
  process.stderr.write(`${count - failures} of ${count} histories replayed cleanly\n`);
  return failures ? EXIT.failed : EXIT.completed;
}
