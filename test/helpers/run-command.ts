// A stand-in worker for the kill test: runs one execute_command in the sandbox and waits.
// argv: workspace, command. Prints "started" once the command runs.
import { runTool } from '../../src/tools/index.js';

const [workspace, command] = process.argv.slice(2) as [string, string];
setTimeout(() => process.stdout.write('started\n'), 500);
await runTool('execute_command', { command, requires_approval: 'false' }, { workspace });
