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
  program
    .command('budget')
    .description("a conversation's budget")
    .command('raise <id>')
    .description('raise the limits of a running or awaiting_budget conversation (it goes on once no limit holds it); not below what was spent')
    .option('--max-cost <usd>', 'the new cost limit in USD')
    .option('--add-cost <usd>', 'add this many USD to the cost limit')
    .option('--max-tokens <n>', 'the new token limit')
    .option('--max-turns <n>', 'the new turn limit')
    .option('--max-time <duration>', 'the new wall-time limit (time spent awaiting a raise does not count)')
    .option('--as <name>', 'who raises it, recorded in the history (default: the OS user)')
    .action(
      action(async function (this: Command, id: string) {
        return (await import('./budget.js')).budgetRaiseCommand(id, { ...this.opts(), ...globals(this) });
      }),
    );
  const cmd = program
    .command('batch')
    .description('one repository job per line of --repos, as child workflows; exit 0 when every job completed, 1 otherwise (or when it halted)');
  cmd.option('--repos <file>', 'repositories, one git URL or path per line');
  cmd.option('--concurrency <n>', 'jobs running at once (default 4)');
  cmd.option('--detach', 'print the batch id and return');
  cmd.option('--id <id>', 'batch id (default: generated)');
  cmd.option('--no-worker', 'do not run a worker in this process');
  rolloutOptions(cmd);
  for (const s of RUN_SETTINGS) if (!['repo', 'workspace', 'ref'].includes(s.key)) cmd.option(flagOf(s), helpOf(s));
  cmd.action(
    action(async function (this: Command) {
      return (await fleet()).batchCommand({ ...(this.opts() as BatchFlags), ...globals(this) });
    }),
  );
  cmd
    .command('status <id>')
    .description("a batch's table, waves, brake and state (running, halted, completed, aborted)")
    .action(
      action(async function (this: Command, id: string) {
        return (await fleet()).batchStatusCommand(id, globals(this));
      }),
    );
  cmd
    .command('resume <id>')
    .description('go on with a halted batch (its skipped jobs run), follow it to the end and print its table')
    .option('--override', 'with the brake off for the rest of the batch')
    .option('--detach', 'return at once')
    .option('--no-worker', 'do not run a worker in this process')
    .option('--as <name>', 'who resumes it, recorded in the history (default: the OS user)')
    .action(
      action(async function (this: Command, id: string) {
        return (await fleet()).batchControlCommand(id, 'resume', { ...this.opts(), ...globals(this) });
      }),
    );
  cmd
    .command('raise-budget <id>')
    .description("add to a batch's budget (--budget): its jobs waiting for it go on")
    .requiredOption('--add <usd>', 'USD to add')
    .option('--as <name>', 'who raises it, recorded in the history (default: the OS user)')
    .action(
      action(async function (this: Command, id: string) {
        return (await fleet()).batchRaiseBudgetCommand(id, { ...this.opts(), ...globals(this) });
      }),
    );
  cmd
    .command('abort <id>')
    .description('stop a batch: no new job starts, running jobs finish, the rest are skipped')
    .option('--as <name>', 'who aborts it, recorded in the history (default: the OS user)')
    .action(
      action(async function (this: Command, id: string) {
        return (await fleet()).batchControlCommand(id, 'abort', { ...this.opts(), ...globals(this) });
      }),
    );
}

/** A batch's rollout flags: on `batch` and on `schedule create --repos`. */
export function rolloutOptions(cmd: Command): void {
  cmd.option('--waves <list>', 'start the jobs in waves: cumulative counts or percentages, e.g. 1,5%,25%,100% (the last wave takes the rest)');
  cmd.option('--shuffle-seed <n>', 'the order of the jobs across waves: shuffled with this seed (default: file order)');
  cmd.option('--brake <rate>', 'halt the batch when a wave has more bad jobs than this rate, e.g. 20%');
  cmd.option(
    '--brake-on <kinds>',
    'what counts as bad: failed,unverified,empty,infra,clone (a repository that could not be cloned) (default failed,unverified)',
  );
  cmd.option('--halt-timeout <duration>', 'how long a halted batch waits for resume or abort before it aborts (default 7d)');
  cmd.option('--budget <usd>', 'one budget for the whole batch: every model call reserves its worst case first; jobs wait (awaiting_budget) when it is spent');
  cmd.option('--job-budget <usd>', "each job's own cost limit (as --max-cost)");
}
