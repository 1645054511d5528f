// `agentrun schedule …`: recurring conversations on Temporal Schedules. Every run a
// schedule starts carries its name (config.scheduleId and the AgentrunSchedule attribute).
// The commands are registered at start; what they run (the Temporal client…) loads when one runs.
import { DEFAULT_TENANT, runPriority } from '../model/pool-names.js';
import type { ScheduleDescription, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Command } from 'commander';
import type { ConversationInput } from '../../workflows/api.js';
import type { BatchInput } from '../../workflows/batch/api.js';
import { batchStartMetadata } from '../../workflows/batch/api.js';
import { sessionStartMetadata } from '../../workflows/session/api.js';
import { CliError, EXIT } from './errors.js';
import type { RunFlags } from './options.js';
import type { Session } from './session.js';
import { flagOf, helpOf, RUN_SETTINGS } from './settings.js';
import { rolloutOptions } from './fleet-commands.js';
import type { BatchFlags } from './fleet.js';

/** --overlap values and the ScheduleOverlapPolicy member each stands for. */
const OVERLAP = {
  skip: 'SKIP',
  'buffer-one': 'BUFFER_ONE',
  'buffer-all': 'BUFFER_ALL',
  'cancel-other': 'CANCEL_OTHER',
  'terminate-other': 'TERMINATE_OTHER',
  'allow-all': 'ALLOW_ALL',
} as const satisfies Record<string, keyof typeof ScheduleOverlapPolicy>;

type Action = <A extends unknown[]>(fn: (this: Command, ...args: A) => Promise<number>) => (this: Command, ...args: A) => Promise<void>;

async function withSession(fn: (s: Session) => Promise<number>, opts: { startIfMissing?: boolean } = {}): Promise<number> {
  const { openSession } = await import('./session.js');
  const session = await openSession(opts);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

function summary(name: string, d: ScheduleDescription) {
  return {
    name,
    cron: (d.memo?.cron as string | undefined) ?? '',
    paused: d.state.paused,
    note: d.state.note,
    overlap: d.policies.overlap,
    recentRuns: d.info.recentActions.map((a) => ({ at: a.takenAt.toISOString(), workflowId: a.action.workflow.workflowId })),
    nextRuns: d.info.nextActionTimes.slice(0, 3).map((t) => t.toISOString()),
  };
}

async function schedule(session: Session, name: string) {
  const handle = session.client.schedule.getHandle(name);
  try {
    return { handle, description: await handle.describe() };
  } catch (err) {
    const { ScheduleNotFoundError } = await import('@temporalio/client');
    if (err instanceof ScheduleNotFoundError) throw new CliError(`no schedule named ${name}`);
    throw err;
  }
}

export function scheduleCommands(program: Command, action: Action, globals: (c: Command) => { json?: boolean }): void {
  const sched = program.command('schedule').description('recurring conversations on Temporal Schedules');
  const emit = (json: boolean | undefined, obj: unknown, text: string) => process.stdout.write((json ? JSON.stringify(obj) : text) + '\n');

  const create = sched
    .command('create <name>')
    .description('create a schedule that starts a conversation (or, with --repos, a batch) on a cron spec')
    .requiredOption('--cron <expr>', 'cron expression, e.g. "0 2 * * *"')
    .option('--overlap <policy>', 'skip | buffer-one | buffer-all | cancel-other | terminate-other | allow-all', 'skip')
    .option('--timezone <tz>', 'time zone of the cron spec', 'UTC')
    .option('--paused', 'create it paused')
    .option('--repos <file>', 'start a batch instead: one repository job per line of the file (as `agentrun batch`)')
    .option('--concurrency <n>', 'with --repos: jobs running at once (default 4)')
    .option('--pause-on-failure', 'pause the schedule when a run fails (a batch fails when its brake halts it)')
    .option(
      '--budget-month <usd>',
      "with --repos: one budget per calendar month (UTC) that all the month's runs share; jobs wait (awaiting_budget) when it is spent",
    );
  rolloutOptions(create);
  for (const s of RUN_SETTINGS) create.option(flagOf(s), helpOf(s));
  create.action(
    action(async function (this: Command, name: string) {
      const o = this.opts() as {
        cron: string;
        overlap: string;
        timezone: string;
        paused?: boolean;
        repos?: string;
        concurrency?: string;
        pauseOnFailure?: boolean;
        budgetMonth?: string;
      } & Pick<BatchFlags, 'waves' | 'shuffleSeed' | 'brake' | 'brakeOn' | 'haltTimeout' | 'budget' | 'jobBudget'>;
      const typed = Object.fromEntries(Object.entries(this.opts()).filter(([k]) => this.getOptionValueSource(k) === 'cli')) as RunFlags;
      const policy = OVERLAP[o.overlap as keyof typeof OVERLAP];
      if (!policy) throw new CliError(`--overlap must be one of ${Object.keys(OVERLAP).join(', ')}`);
      if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new CliError('schedule names may use letters, digits, dot, dash and underscore');
      const [{ runRequestFromFlags }, { ScheduleOverlapPolicy }, { SA_SCHEDULE, SA_STATUS }, { WORKFLOW_TYPE }] = await Promise.all([
        import('./options.js'),
        import('@temporalio/client'),
        import('../search-attributes.js'),
        import('../../workflows/api.js'),
      ]);
      const overlap = ScheduleOverlapPolicy[policy];
      for (const [flag, v] of Object.entries({
        '--concurrency': o.concurrency,
        '--waves': o.waves,
        '--brake': o.brake,
        '--shuffle-seed': o.shuffleSeed,
        '--budget': o.budget,
        '--job-budget': o.jobBudget,
        '--budget-month': o.budgetMonth,
      }))
        if (v !== undefined && !o.repos) throw new CliError(`${flag} applies to a scheduled batch: give --repos FILE too`);
      // --repos: each run is a batch workflow (one repository job per line), as `agentrun batch` starts.
      const batch = o.repos
        ? await (
            await import('./fleet.js')
          ).batchInputFromFlags(
            {
              ...typed,
              repos: o.repos,
              concurrency: o.concurrency,
              waves: o.waves,
              shuffleSeed: o.shuffleSeed,
              brake: o.brake,
              brakeOn: o.brakeOn,
              haltTimeout: o.haltTimeout,
              budget: o.budget,
              jobBudget: o.jobBudget,
              pauseOnFailure: o.pauseOnFailure,
              budgetMonth: o.budgetMonth,
            },
            'nightly',
          )
        : undefined;
      const req = batch ? { task: batch.task, config: batch.config } : await runRequestFromFlags(typed);
      const workflowType = batch ? (await import('../../workflows/batch/api.js')).BATCH_WORKFLOW_TYPE : WORKFLOW_TYPE;
      return withSession(async (session) => {
        // Scheduled runs are nightly work unless told otherwise: interactive runs and batches go first.
        const config = { ...req.config, scheduleId: name, priority: req.config.priority ?? 'nightly', tenant: req.config.tenant ?? DEFAULT_TENANT };
        const input: ConversationInput | BatchInput = batch
          ? { ...batch, config, searchAttributes: session.searchAttributes }
          : { ...(req as ConversationInput), config, searchAttributes: session.searchAttributes };
        try {
          await session.client.schedule.create({
            scheduleId: name,
            spec: { cronExpressions: [o.cron], timezone: o.timezone },
            policies: { overlap, ...(o.pauseOnFailure ? { pauseOnFailure: true } : {}) },
            memo: { cron: o.cron, ...(batch?.budgetMonthUsd !== undefined ? { budgetMonthUsd: batch.budgetMonthUsd } : {}) },
            state: { paused: o.paused ?? false, note: `agentrun: ${req.task.slice(0, 200)}` },
            action: {
              type: 'startWorkflow',
              workflowType,
              workflowId: `${name}`,
              taskQueue: session.taskQueue,
              args: [input],
              // What the Temporal UI shows for each run the schedule starts.
              ...(batch ? batchStartMetadata(batch) : sessionStartMetadata(input as ConversationInput)),
              // Sent by the 1.24 client's encoder, though its action type does not list it.
              ...({ priority: runPriority(config) } as object),
              typedSearchAttributes: session.searchAttributes
                ? [
                    { key: SA_SCHEDULE, value: name },
                    { key: SA_STATUS, value: 'running' },
                  ]
                : undefined,
            },
          });
        } catch (err) {
          const msg = (err as Error).message;
          if (/already/i.test(msg)) throw new CliError(`a schedule named ${name} already exists`);
          if (/cron|spec|invalid/i.test(msg)) throw new CliError(`invalid schedule: ${msg}`);
          throw err;
        }
        emit(
          globals(this).json,
          {
            created: name,
            cron: o.cron,
            overlap: o.overlap,
            ...(batch ? { batch: { jobs: batch.repos.length, concurrency: batch.concurrency } } : {}),
            ...(batch?.budgetMonthUsd !== undefined ? { budgetMonthUsd: batch.budgetMonthUsd } : {}),
          },
          `schedule ${name} created (${o.cron}, overlap ${o.overlap}${batch ? `, a batch of ${batch.repos.length} repositories` : ''}${batch?.budgetMonthUsd !== undefined ? `, $${batch.budgetMonthUsd} a month` : ''})`,
        );
        return EXIT.completed;
      });
    }),
  );

  sched
    .command('list')
    .description('list schedules')
    .action(
      action(async function (this: Command) {
        return withSession(async (session) => {
          for await (const s of session.client.schedule.list()) {
            const paused = s.state.paused;
            emit(
              globals(this).json,
              { name: s.scheduleId, paused, note: s.state.note, nextRuns: s.info.nextActionTimes.map((t) => t.toISOString()) },
              `${s.scheduleId.padEnd(24)} ${paused ? 'paused ' : 'active '} next ${s.info.nextActionTimes[0]?.toISOString() ?? '-'}  ${s.state.note ?? ''}`,
            );
          }
          return EXIT.completed;
        });
      }),
    );

  sched
    .command('describe <name>')
    .alias('show')
    .description("show a schedule, its recent runs and its month's spend against --budget-month")
    .option('--month <yyyy-mm>', 'the month whose budget to show (default: this month, UTC)')
    .action(
      action(async function (this: Command, name: string) {
        const { monthBudget, monthBudgetLine, monthBudgetOf, monthFlag } = await import('./schedule-run.js');
        const month = monthFlag((this.opts() as { month?: string }).month);
        return withSession(async (session) => {
          const { description } = await schedule(session, name);
          const s = summary(name, description);
          const limit = monthBudgetOf(description);
          const budget = limit === undefined ? undefined : await monthBudget(session, name, limit, month);
          emit(
            globals(this).json,
            { ...s, ...(budget ? { budget } : {}) },
            `${s.name}: ${s.cron} ${s.paused ? '(paused)' : ''}\n  overlap: ${s.overlap}\n  next: ${s.nextRuns.join(', ')}\n  recent: ${s.recentRuns.map((r) => `${r.workflowId} at ${r.at}`).join('\n          ') || '(none)'}${budget ? `\n  ${monthBudgetLine(name, budget)}` : ''}`,
          );
          return EXIT.completed;
        });
      }),
    );

  sched
    .command('raise-budget <name>')
    .description("add to a schedule's monthly budget (--budget-month): the month's jobs waiting for it go on")
    .requiredOption('--add <usd>', 'USD to add')
    .option('--month <yyyy-mm>', 'the month to raise (default: this month, UTC)')
    .action(
      action(async function (this: Command, name: string) {
        const flags = this.opts() as { add?: string; month?: string };
        const { raiseMonthBudget } = await import('./schedule-run.js');
        return withSession(async (session) => {
          const { description } = await schedule(session, name);
          const { state, month, woken } = await raiseMonthBudget(session, name, description, flags);
          emit(
            globals(this).json,
            { type: 'budget', name, month, limitUsd: state.limitUsd, spentUsd: state.spentUsd, reservedUsd: state.reservedUsd, woken },
            `schedule ${name}: the budget of ${month} raised to $${state.limitUsd.toFixed(4)} ($${state.spentUsd.toFixed(4)} spent, $${state.reservedUsd.toFixed(4)} reserved)`,
          );
          return EXIT.completed;
        });
      }),
    );

  sched
    .command('trigger <name>')
    .description('start a run of the schedule now and follow it to its end, as run and batch do (Ctrl-C detaches)')
    .option('--detach', 'return at once')
    .option('--no-worker', 'do not run a worker in this process')
    .action(
      action(async function (this: Command, name: string) {
        const flags = this.opts() as { detach?: boolean; worker?: boolean };
        return withSession(
          async (session) => {
            const { handle, description } = await schedule(session, name);
            const json = globals(this).json;
            const before = new Set(
              [...description.info.runningActions, ...description.info.recentActions.map((a) => a.action)].map((a) => a.workflow.workflowId),
            );
            if (!flags.detach && flags.worker !== false) await session.startWorker();
            await handle.trigger((await import('@temporalio/client')).ScheduleOverlapPolicy.ALLOW_ALL);
            if (flags.detach) {
              emit(json, { name, trigger: true }, `trigger: ${name}`);
              return EXIT.completed;
            }
            return (await import('./schedule-run.js')).followTriggered(session, handle, before, json);
          },
          { startIfMissing: !flags.detach },
        );
      }),
    );

  for (const verb of ['pause', 'unpause', 'delete'] as const) {
    sched
      .command(`${verb} <name>`)
      .description(`${verb} a schedule`)
      .action(
        action(async function (this: Command, name: string) {
          return withSession(async (session) => {
            const { handle } = await schedule(session, name);
            if (verb === 'pause') await handle.pause('paused with agentrun');
            else if (verb === 'unpause') await handle.unpause('unpaused with agentrun');
            else await handle.delete();
            emit(globals(this).json, { name, [verb]: true }, `${verb}: ${name}`);
            return EXIT.completed;
          });
        }),
      );
  }
}
