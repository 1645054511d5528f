// The fleet commands (fork, gc, batch) as commander definitions only: their work (src/cli/fleet.ts,
// the Temporal client, git) loads when one of them runs, so `--help` stays instant.
import type { Command } from 'commander';
import type { BatchFlags } from './fleet.js';
import { flagOf, helpOf, RUN_SETTINGS } from './settings.js';

type Action = <A extends unknown[]>(fn: (this: Command, ...args: A) => Promise<number>) => (this: Command, ...args: A) => Promise<void>;

const fleet = () => import('./fleet.js');

export function fleetCommands(program: Command, action: Action, globals: (cmd: Command) => { json?: boolean }): void {
  program
    .command('fork <id>')
    .description("start a new conversation from the first N turns of <id> and turn N's checkpoint (repository jobs); <id> is untouched")
    .option('--at-turn <n>', 'how many turns of <id> to keep')
    .option('--model <model>', 'another model for the fork')
    .option('--task <text>', 'a new instruction for the fork, sent after the kept turns')
    .option('--id <id>', "the fork's conversation id (default: generated)")
    .option(
      '--branch <name>',
      "the fork's result branch, may hold {{date}} and {{id}} (default agentrun/<fork id>; the parent's is never reused unless given here)",
    )
    .option('--push', "push the fork's result branch (default: as the parent did)")
    .option('--no-push', "do not push the fork's result branch")
    .action(
      action(async function (this: Command, id: string) {
        return (await fleet()).forkCommand(id, { ...this.opts(), ...globals(this) });
      }),
    );
  program
    .command('gc')
    .description('remove workspaces (on this machine), stream rows, context plans and checkpoint refs of finished conversations')
    .option('--older-than <duration>', 'finished at least this long ago (default 7d)')
    .option('--dry-run', 'say what would be removed, remove nothing')
    .action(
      action(async function (this: Command) {
        return (await fleet()).gcCommand({ ...this.opts(), ...globals(this) });
      }),
    );
  const cmd = program.command('batch').description('one repository job per line of --repos, as child workflows; exit 0 when every job completed, 1 otherwise');
  cmd.option('--repos <file>', 'repositories, one git URL or path per line');
  cmd.option('--concurrency <n>', 'jobs running at once (default 4)');
  cmd.option('--detach', 'print the batch id and return');
  cmd.option('--id <id>', 'batch id (default: generated)');
  cmd.option('--no-worker', 'do not run a worker in this process');
  for (const s of RUN_SETTINGS) if (!['repo', 'workspace', 'ref'].includes(s.key)) cmd.option(flagOf(s), helpOf(s));
  cmd.action(
    action(async function (this: Command) {
      return (await fleet()).batchCommand({ ...(this.opts() as BatchFlags), ...globals(this) });
    }),
  );
}
