// The `eval` commands as commander definitions only: their work (src/cli/eval.ts) loads when one
// of them runs, so `--help` stays instant.
import type { Command } from 'commander';

type Action = <A extends unknown[]>(fn: (this: Command, ...args: A) => Promise<number>) => (this: Command, ...args: A) => Promise<void>;

const evals = () => import('./eval.js');

/** The gate and the report's files: on `eval run` and `eval report`. */
function reportOptions(cmd: Command): Command {
  return cmd
    .option('--min-pass-rate <rate>', 'fail (exit 1) when the pass rate over all trials is below this, e.g. 0.8 or 80%')
    .option('--max-cost-ratio <x>', "fail when the cost per trial is above this many times the recordings' cost")
    .option('--no-regressions', 'fail when a case regressed: a replay that did not reproduce, or a live case the recording passed that no trial passed')
    .option('--junit <file>', 'also write the report as JUnit XML')
    .option('--markdown <file>', 'also write the report as Markdown (for a pull-request comment)');
}

export function evalCommands(program: Command, action: Action, globals: (cmd: Command) => { json?: boolean }): void {
  const cmd = program.command('eval').description('golden sets frozen from real runs, run as a batch against today’s code, a model or a prompt, with a gate');
  cmd
    .command('add <set> [ids...]')
    .description('freeze finished conversations into <set>: start tree, task, settings, setup, verify and outcome, recorded answers and tool results, cost')
    .option('--from-batch <id>', 'every job of a batch that ended')
    .option('--where <conditions>', 'only those with status=S, verify=passed|failed, model=M (comma-separated)')
    .option('--check-command <cmd>', 'a per-case check a live run must also pass (run after verify, in the sandbox)')
    .option('--must-change <paths>', 'files a live run must change (comma-separated)')
    .option('--must-not-change <paths>', 'files a live run must leave alone (comma-separated)')
    .action(
      action(async function (this: Command, set: string, ids: string[]) {
        return (await evals()).evalAddCommand(set, ids, { ...this.opts(), ...globals(this) });
      }),
    );
  cmd
    .command('list [set]')
    .description('the sets; with <set>: its cases and runs')
    .action(
      action(async function (this: Command, set?: string) {
        return (await evals()).evalListCommand(set, globals(this));
      }),
    );
  reportOptions(
    cmd
      .command('run <set>')
      .description('run a set as a durable batch: --replay (recorded answers, tools for real), --live --model M, or --fork-at K --model M')
      .option('--replay', 'serve each case its recorded answers against this release: tools run for real; reports where a case diverges')
      .option('--live', 'run each task again from its starting tree with --model (and --prompt, --settings), graded by its end state')
      .option('--fork-at <k>', 'the recorded first K turns, then --model from there')
      .option('--model <model>', 'the model to try (live and fork)')
      .option('--prompt <file>', 'extra system instructions to try (live and fork)')
      .option('--settings <file>', "run options over each case's own (JSON or YAML, as --config)")
      .option('--trials <k>', 'runs per case (default 1): pass@k and pass^k per case')
      .option('--concurrency <n>', 'jobs running at once (default 4)')
      .option('--budget <usd>', "the run's own budget: every model call reserves from it")
      .option('--id <id>', 'the run id (default: generated)')
      .option('--workdir <dir>', "where local workspaces' cases start, one directory per trial (default: the system's temporary directory)")
      .option('--detach', 'print the run id and return (agentrun eval report ID later)')
      .option('--no-worker', 'do not run a worker in this process'),
  ).action(
    action(async function (this: Command, set: string) {
      return (await evals()).evalRunCommand(set, { ...this.opts(), ...globals(this) });
    }),
  );
  reportOptions(cmd.command('report <run>').description("an eval run's report, once its batch ended; the gate decides the exit code"))
    .option('--no-worker', 'do not run a worker in this process')
    .action(
      action(async function (this: Command, run: string) {
        return (await evals()).evalReportCommand(run, { ...this.opts(), ...globals(this) });
      }),
    );
  cmd
    .command('compare <a> <b>')
    .description('two runs of a set: which cases changed, and whether each change and the pass rate are beyond noise')
    .action(
      action(async function (this: Command, a: string, b: string) {
        return (await evals()).evalCompareCommand(a, b, globals(this));
      }),
    );
  cmd
    .command('export <set> <file>')
    .description('write a set to a file (no credentials) to import on another fleet')
    .action(
      action(async function (this: Command, set: string, file: string) {
        return (await evals()).evalExportCommand(set, file, globals(this));
      }),
    );
  cmd
    .command('import <file>')
    .description('read a set written by eval export')
    .option('--as <set>', 'under another name')
    .action(
      action(async function (this: Command, file: string) {
        return (await evals()).evalImportCommand(file, { ...this.opts(), ...globals(this) });
      }),
    );
}
