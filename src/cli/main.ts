// The `agentrun` command line. Every command also speaks --json (one JSON object per line).
// Only commander and the settings table load at start: each command imports what it needs when
// it runs, so `--help` and `--version` stay instant and `list` never loads the worker.
import { Command } from 'commander';
import { asBadInput, CliError, EXIT } from './errors.js';
import { flagOf, helpOf, RUN_SETTINGS } from './settings.js';
import type { GlobalFlags } from './commands.js';
import { scheduleCommands } from './schedule.js';
import { fleetCommands } from './fleet-commands.js';
import { evalCommands } from './eval-commands.js';
import { poolCommands } from './pools.js';
import { DEFAULT_ACTIVITY_SLOTS } from '../runtime/capacity.js';
import { exitQuietlyWhenReaderLeaves } from './pipes.js';
import { exitCodeForSignal, installStopSignals, stopSignalReceived } from './stop-signals.js';

const commands = () => import('./commands.js');
/** The options the user typed (not commander's defaults), so a config file can fill in the rest. */
const typed = (cmd: Command) => Object.fromEntries(Object.entries(cmd.opts()).filter(([k]) => cmd.getOptionValueSource(k) === 'cli'));

/** The sandbox user and paths of a worker: bad ones are one line and exit 2, before anything starts. */
async function checkSandboxSettings(): Promise<void> {
  const { parseSandboxUser } = await import('../sandbox/owner.js');
  const { existsSync } = await import('node:fs');
  const user = process.env.AGENTRUN_SANDBOX_USER?.trim();
  if (user && user !== 'nobody') {
    asBadInput(() => parseSandboxUser(user));
  }
  for (const dir of (process.env.AGENTRUN_SANDBOX_PATHS ?? '').split(':').filter(Boolean))
    if (!dir.startsWith('/') || dir === '/' || !existsSync(dir))
      throw new CliError(`sandbox path "${dir}" must be an existing absolute directory other than / (--sandbox-path, AGENTRUN_SANDBOX_PATHS)`);
}

export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('agentrun')
    .description('Durable runner for LLM coding agents on Temporal')
    .option('--json', 'one JSON object per line')
    .option('-V, --version', 'print the version and the git commit it was built from')
    .option('--verbose', 'logs on stderr (default: a file under AGENTRUN_HOME/logs, except for worker and dev)')
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    .exitOverride();

  // commander calls actions with `this` = the command; keep it for opts().
  const action = <A extends unknown[]>(fn: (this: Command, ...args: A) => Promise<number>) =>
    async function (this: Command, ...args: A) {
      setExit(await fn.apply(this, args));
    };
  const globals = (cmd: Command) => cmd.optsWithGlobals() as GlobalFlags;

  const withRunOptions = (cmd: Command) => {
    for (const s of RUN_SETTINGS) cmd.option(flagOf(s), helpOf(s));
    return cmd
      .option('--id <id>', 'conversation id (default: generated); refused if in use')
      .option('--replace', 'with --id of a finished conversation: delete it and start over');
  };

  withRunOptions(
    program.command('run').description('start a conversation and follow it to the end (exit 0 completed, 1 failed, 2 bad input, 3 budget, 4 waiting)'),
  )
    .option('--no-worker', 'do not run a worker in this process (one is already polling)')
    .option('--wait', 'keep following while the conversation waits for a person')
    .option(
      '--repository-extensions <mode>',
      "off|on: run a repository's own hooks, MCP servers, agent files and setup/verify/cache from .agentrun/ (read once, from the starting tree) [default $AGENTRUN_REPOSITORY_EXTENSIONS, else off]",
    )
    .action(
      action(async function (this: Command) {
        (await import('./session.js')).applyRepositoryExtensions((this.opts() as { repositoryExtensions?: string }).repositoryExtensions);
        return (await commands()).runCommand({ ...typed(this), ...globals(this) });
      }),
    );
  withRunOptions(program.command('start').description('start a conversation, print its id and return')).action(
    action(async function (this: Command) {
      return (await commands()).startCommand({ ...typed(this), ...globals(this) });
    }),
  );
  program
    .command('rerun <id>')
    .description(
      "run <id>'s task again with its options, as a new conversation from turn 0's checkpoint (a copy; <id> and its workspace are untouched); --model recorded:<id> replays it offline",
    )
    .option('--model <model>', 'another model, or recorded:<id> to serve the recorded answers of a conversation')
    .option('--workspace <dir>', 'local workspaces: the new or empty directory for the copy (default AGENTRUN_HOME/reruns/<new id>)')
    .option('--id <id>', "the rerun's conversation id (default: generated)")
    .option('--detach', 'print the new id and return')
    .option('--no-worker', 'do not run a worker in this process (one is already polling)')
    .option('--wait', 'keep following while the conversation waits for a person')
    .action(
      action(async function (this: Command, id: string) {
        const { rerunCommand } = await import('./rerun.js');
        return rerunCommand(id, { ...this.opts(), ...globals(this) });
      }),
    );
  program
    .command('watch <id>')
    .description('follow the live stream of a conversation')
    .option('--from <offset>', 'resume after this stream offset')
    .action(
      action(async function (this: Command, id: string) {
        return (await commands()).watchCommand(id, { ...this.opts(), ...globals(this) });
      }),
    );
  program
    .command('inspect <id>')
    .description('transcript, timeline, prune records, checkpoints and usage')
    .option('--max-chars <n>', 'characters of each message to show', '2000')
    .option('--no-diffs', 'leave out the checkpoint diffs')
    .action(
      action(async function (this: Command, id: string) {
        return (await commands()).inspectCommand(id, { ...this.opts(), ...globals(this) } as GlobalFlags & { maxChars: string; diffs: boolean });
      }),
    );
  program
    .command('list')
    .description('conversations, from Temporal visibility')
    .option('--status <status>', 'running, waiting, completed, failed, cancelled, budget_exhausted, …')
    .option('--limit <n>', 'at most this many', '50')
    .option('--model <model>', 'only conversations with this model')
    .option('--workspace <dir>', 'only conversations in this workspace (repository)')
    .option('--min-cost <usd>', 'only conversations that cost at least this much')
    .option('--since <when>', 'started since: a duration ago (2h, 7d) or a date (2026-11-01)')
    .option('--until <when>', 'started until: a duration ago or a date')
    .action(
      action(async function (this: Command) {
        return (await commands()).listCommand({ ...this.opts(), ...globals(this) });
      }),
    );
  program
    .command('pending')
    .description('questions and approvals waiting for a person, across conversations')
    .option('--token-file <file>', 'your operator token, when an operators file is configured (or $AGENTRUN_OPERATOR_TOKEN)')
    .option('--operators <file>', 'the operators file (name:sha256 lines; default $AGENTRUN_OPERATORS)')
    .action(
      action(async function (this: Command) {
        return (await commands()).pendingCommand({ ...this.opts(), ...globals(this) });
      }),
    );
  program
    .command('send <id> <message>')
    .description('send a message to a running conversation (read at the next turn)')
    .action(
      action(async function (this: Command, id: string, message: string) {
        return (await commands()).sendCommand(id, message, globals(this));
      }),
    );
  program
    .command('answer <id> <text>')
    .description('answer the question a conversation is waiting on')
    .action(
      action(async function (this: Command, id: string, text: string) {
        return (await commands()).answerCommand(id, text, globals(this));
      }),
    );
  for (const [name, approved] of [
    ['approve', true],
    ['deny', false],
  ] as const) {
    program
      .command(`${name} <id>`)
      .description(`${name} the tool call a conversation is waiting on`)
      .option('--call <callId>', 'the call id (default: the one waiting)')
      .option('--reason <text>', 'told to the model')
      .option('--args-hash <hash>', 'the argsHash `pending` showed (default: the one it showed for this call)')
      .option('--as <name>', 'who decides, recorded in the history (default: the OS user); refused when an operators file is configured')
      .option('--token-file <file>', 'your operator token, when an operators file is configured (or $AGENTRUN_OPERATOR_TOKEN)')
      .option('--operators <file>', 'the operators file (name:sha256 lines; default $AGENTRUN_OPERATORS)')
      .action(
        action(async function (this: Command, id: string) {
          return (await commands()).decideCommand(id, approved, { ...this.opts(), ...globals(this) });
        }),
      );
  }
  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    program
      .command(`${name} <id>`)
      .description(paused ? 'pause a conversation after its running step (resume continues it)' : 'resume a paused conversation')
      .action(
        action(async function (this: Command, id: string) {
          return (await commands()).pauseCommand(id, paused, globals(this));
        }),
      );
  }
  program
    .command('cancel <id>')
    .description('cancel a conversation: the running step finishes, then it ends as cancelled')
    .option('--reason <text>', 'recorded as the reason')
    .option('--now', 'abort the running step too (the model request is aborted)')
    .action(
      action(async function (this: Command, id: string) {
        return (await commands()).cancelCommand(id, { ...this.opts(), ...globals(this) });
      }),
    );
  program
    .command('rollback <id>')
    .description("restore the workspace files of a turn's checkpoint")
    .requiredOption(
      '--to <turn|commit>',
      'the turn whose checkpoint to restore (0 = before the agent started), or the `saved` commit of an earlier rollback to undo it',
    )
    .action(
      action(async function (this: Command, id: string) {
        return (await commands()).rollbackCommand(id, { ...this.opts(), ...globals(this) } as GlobalFlags & { to: string });
      }),
    );
  program
    .command('doctor')
    .description('check this machine: Node, Temporal, PostgreSQL, the sandbox, the model provider, disk, workers (exit 0 when ready)')
    .option('--model <model>', 'the model to check (default: as `run` would choose)')
    .option('--min-free <gb>', 'free disk wanted for AGENTRUN_HOME, in GB', '1')
    .option('--task-queue <name>', 'the task queue whose workers to look for [default $AGENTRUN_TASK_QUEUE, else agentrun]')
    .action(
      action(async function (this: Command) {
        const { doctorCommand } = await import('./doctor.js');
        return doctorCommand({ ...this.opts(), ...globals(this) });
      }),
    );
  program
    .command('worker')
    .description('run a worker (graceful shutdown on SIGTERM)')
    .option('--task-queue <name>', 'task queue to poll [default $AGENTRUN_TASK_QUEUE, else agentrun]')
    .option('--metrics-port <port>', 'health and Prometheus metrics port (0 = off; when the default is taken, a free one)', '9464')
    .option(
      '--max-activities <n>',
      'activities running at once on this worker; each conversation runs one at a time, so this caps the conversations it carries',
      String(DEFAULT_ACTIVITY_SLOTS),
    )
    .option('--metrics-host <host>', "address /metrics and /healthz bind (default 127.0.0.1; 0.0.0.0 for a pod's probes)")
    .option('--sandbox <mode>', 'off: run commands without the bubblewrap sandbox (only where the container is the boundary)')
    .option(
      '--repository-extensions <mode>',
      "off|on: run a repository's own hooks, MCP servers, agent files and setup/verify/cache from .agentrun/ (read once, from the starting tree) [default $AGENTRUN_REPOSITORY_EXTENSIONS, else off]",
    )
    .option(
      '--allow-unsandboxed',
      'run conversations that ask for `--sandbox off` (their commands then run as this worker, with its files, secrets and network: a trust decision about whoever starts conversations) [default $AGENTRUN_ALLOW_UNSANDBOXED, else refused]',
    )
    .option(
      '--allow-env <name...>',
      "environment variables a conversation's --env may pass to commands (repeatable or comma-separated; never OPENAI_API_KEY, DATABASE_URL, PG*, TEMPORAL_*, AGENTRUN_*) [default $AGENTRUN_ALLOW_ENV, else none]",
    )
    .option(
      '--sandbox-user <user>',
      'a root worker runs commands as this unprivileged user (NAME, UID or UID:GID) [default $AGENTRUN_SANDBOX_USER, else nobody]',
    )
    .option('--sandbox-path <dir...>', "toolchain directories added read-only to the sandbox's root (repeatable) [default $AGENTRUN_SANDBOX_PATHS]")
    .option(
      '--workspace-usage-interval <duration>',
      "at most one measure of a conversation's workspace disk use per this long (30s, 2m; 0: after every checkpoint), so `list` is at most this late [default $AGENTRUN_WORKSPACE_USAGE_INTERVAL, else 30s]",
    )
    .option('--deployment <name>', 'Worker Versioning: the worker deployment this worker belongs to [default $AGENTRUN_DEPLOYMENT; unset: unversioned]')
    .option('--build-id <id>', 'Worker Versioning build id (default: package version and commit)')
    .option(
      '--sticky-queue-timeout <duration>',
      "how long a conversation this worker has cached waits for it after it vanished (SIGKILL, a lost host) before any worker replays it; lower: faster recovery, but a busy worker's conversations are replayed more often [default $AGENTRUN_STICKY_QUEUE_TIMEOUT, else 10s]",
    )
    .option(
      '--shutdown-grace <duration>',
      'on SIGTERM, how long running activities (a model stream, a command) get to finish before they are cancelled and retried on another worker; the container must allow more [default $AGENTRUN_SHUTDOWN_GRACE, else 30s]',
    )
    .action(
      action(async function (this: Command) {
        const { stickyQueueTimeout, shutdownGrace } = this.opts() as { stickyQueueTimeout?: string; shutdownGrace?: string };
        const { parseStickyQueueTimeout } = await import('../runtime/sticky-queue.js');
        const { parseShutdownGrace } = await import('../runtime/shutdown-grace.js');
        const { workerStickyQueueTimeout, workerShutdownGrace } = await import('./session.js');
        const stickyQueueTimeoutMs =
          stickyQueueTimeout === undefined
            ? workerStickyQueueTimeout()
            : asBadInput(() => parseStickyQueueTimeout(stickyQueueTimeout, '--sticky-queue-timeout'));
        const shutdownGraceMs = shutdownGrace === undefined ? workerShutdownGrace() : asBadInput(() => parseShutdownGrace(shutdownGrace, '--shutdown-grace'));
        const sandbox = (this.opts() as { sandbox?: string }).sandbox;
        if (sandbox !== undefined && sandbox !== 'off') throw new CliError(`--sandbox of a worker can only be off, got "${sandbox}"`);
        if (sandbox) process.env.AGENTRUN_SANDBOX = 'off';
        (await import('./session.js')).applyRepositoryExtensions((this.opts() as { repositoryExtensions?: string }).repositoryExtensions);
        if ((this.opts() as { allowUnsandboxed?: boolean }).allowUnsandboxed) process.env.AGENTRUN_ALLOW_UNSANDBOXED = '1';
        const { sandboxUser, sandboxPath } = this.opts() as { sandboxUser?: string; sandboxPath?: string[] };
        if (sandboxUser !== undefined) process.env.AGENTRUN_SANDBOX_USER = sandboxUser;
        if (sandboxPath?.length) process.env.AGENTRUN_SANDBOX_PATHS = sandboxPath.join(':');
        await checkSandboxSettings();
        const usageInterval = (this.opts() as { workspaceUsageInterval?: string }).workspaceUsageInterval;
        if (usageInterval !== undefined) {
          const { parseUsageInterval } = await import('../workspace/host.js');
          asBadInput(() => parseUsageInterval(usageInterval.trim(), '--workspace-usage-interval'));
          process.env.AGENTRUN_WORKSPACE_USAGE_INTERVAL = usageInterval;
        }
        const given = (this.opts() as { allowEnv?: string[] }).allowEnv;
        const { workerAllowedEnv, checkUsageInterval } = await import('./session.js');
        await checkUsageInterval();
        const allowEnv = workerAllowedEnv(given?.flatMap((n) => n.split(',')));
        const { workerCommand } = await import('./service.js');
        const o = this.opts() as { taskQueue?: string };
        const metricsPortGiven = this.getOptionValueSource('metricsPort') === 'cli';
        const deployment = (this.opts() as { deployment?: string }).deployment ?? (process.env.AGENTRUN_DEPLOYMENT?.trim() || undefined);
        return workerCommand({
          ...this.opts(),
          allowEnv,
          deployment,
          stickyQueueTimeoutMs,
          shutdownGraceMs,
          metricsPortGiven,
          taskQueue: o.taskQueue ?? process.env.AGENTRUN_TASK_QUEUE ?? 'agentrun',
          ...globals(this),
        } as Parameters<typeof workerCommand>[0]);
      }),
    );
  program
    .command('dev')
    .description('start the embedded Temporal dev server and PostgreSQL (and a worker) and stay up')
    .option('--no-worker', 'do not run a worker')
    .option('--port <port>', 'Temporal frontend port (default 7233, or a free one when it is taken)')
    .option('--ui-port <port>', 'Temporal UI port (default 8233, or a free one when it is taken)')
    .option(
      '--repository-extensions <mode>',
      "off|on: run a repository's own hooks, MCP servers, agent files and setup/verify/cache from .agentrun/ (read once, from the starting tree) [default $AGENTRUN_REPOSITORY_EXTENSIONS, else off]",
    )
    .action(
      action(async function (this: Command) {
        (await import('./session.js')).applyRepositoryExtensions((this.opts() as { repositoryExtensions?: string }).repositoryExtensions);
        const { devCommand } = await import('./service.js');
        return devCommand({ ...this.opts(), ...globals(this) });
      }),
    );
  program
    .command('ui')
    .description('serve the web page: conversations, live streams, approvals and questions (until Ctrl-C)')
    .option('--port <port>', 'port to listen on (0 = any free port)', '8080')
    .option('--host <host>', 'address to bind (loopback by default; the page needs its token)', '127.0.0.1')
    .option('--operators <file>', 'per-operator tokens: name:sha256 lines (default $AGENTRUN_OPERATORS; unset: one token, AGENTRUN_UI_TOKEN)')
    .option('--session-ttl <duration>', 'how long a login lasts (default $AGENTRUN_UI_SESSION_TTL, else 12h)')
    .option('--secure-cookie', 'a TLS proxy serves the page: mark the session cookie Secure (or AGENTRUN_UI_SECURE_COOKIE=1)')
    .option(
      '--trusted-user-header <name>',
      'an authenticating proxy on this host names the user in this header (e.g. X-Forwarded-User); believed only from loopback peers',
    )
    .action(
      action(async function (this: Command) {
        const o = { ...this.opts(), ...globals(this) } as GlobalFlags & {
          port: string;
          host: string;
          operators?: string;
          sessionTtl?: string;
          secureCookie?: boolean;
          trustedUserHeader?: string;
        };
        const [{ withSession }, { uiCommand }] = await Promise.all([commands(), import('./ui.js')]);
        return withSession({}, (session) => uiCommand(session, o));
      }),
    );
  const operator = program.command('operator').description('operators: who may approve from the web page and the CLI (AGENTRUN_OPERATORS)');
  operator
    .command('add <name>')
    .description('make a token for an operator: prints it once and appends name:sha256(token) to the operators file')
    .option('--operators <file>', 'the operators file (created 0600 when missing; default $AGENTRUN_OPERATORS)')
    .option(
      '--tenant <tenant>',
      'bind the operator to this tenant (repeat for several): the page and approve/deny show and act on those tenants only; none: every tenant',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .action(
      action(async function (this: Command, name: string) {
        const { operatorAddCommand } = await import('./operator.js');
        return operatorAddCommand(name, { ...this.opts(), ...globals(this) });
      }),
    );
  program
    .command('replay [files...]')
    .description('replay histories (files, or pulled from the server) against the current workflow code')
    .option('--from-server', 'pull histories of conversations from the server')
    .option('--query <query>', 'visibility query for --from-server (default: both conversation workflow types)')
    .option('--limit <n>', 'at most this many histories from the server', '100')
    .action(
      action(async function (this: Command, files: string[]) {
        const [{ replayCommand }, { CONVERSATION_TYPES_QUERY }] = await Promise.all([import('./replay.js'), import('../../workflows/api.js')]);
        const o = this.opts() as { query?: string };
        return replayCommand(files, { ...this.opts(), query: o.query ?? CONVERSATION_TYPES_QUERY, ...globals(this) } as Parameters<typeof replayCommand>[1]);
      }),
    );
  scheduleCommands(program, action, globals);
  fleetCommands(program, action, globals);
  evalCommands(program, action, globals);
  poolCommands(program, action, globals);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  exitQuietlyWhenReaderLeaves(EXIT.completed);
  let code = EXIT.completed as number;
  const program = buildProgram((c) => (code = c));
  // Services (worker, dev) log to stderr; every other command to a file, or stderr with --verbose.
  const command = argv.slice(2).find((a) => !a.startsWith('-'));
  const service = command === 'worker' || command === 'dev';
  const verbose = argv.includes('--verbose');
  // Set before anything imports the logger (src/log.ts reads it once). A person watches the other
  // commands: their logs go to a file (info and up), never between the lines; --verbose: stderr.
  process.env.AGENTRUN_LOG_LEVEL ??= service || !verbose ? 'info' : 'warn';
  if (argv[2] === '--version' || argv[2] === '-V') {
    const { versionString } = await import('./version.js');
    process.stdout.write(`agentrun ${versionString()}\n`);
    return EXIT.completed;
  }
  const helpOnly = !command || command === 'help' || argv.includes('--help') || argv.includes('-h');
  // `dev` in a terminal is watched by a person too: its banner stays clean, its logs go to the file it names.
  const watchedDev = command === 'dev' && process.stderr.isTTY === true;
  if ((!service || watchedDev) && !verbose && !helpOnly) {
    const [{ logToFile }, { agentrunHome }, { join }] = await Promise.all([import('../log.js'), import('../runtime/home.js'), import('node:path')]);
    logToFile(join(agentrunHome(), 'logs'));
  }
  // `worker` drains on SIGTERM its own way; every other command stops what it started on any of the three.
  if (command !== 'worker' && !helpOnly) installStopSignals();
  try {
    await program.parseAsync(argv);
    const signal = stopSignalReceived();
    return signal ? exitCodeForSignal(signal) : code;
  } catch (err) {
    const e = err as Error & { exitCode?: number; code?: string };
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return EXIT.completed;
    if (e.code?.startsWith('commander.')) return EXIT.badInput; // commander already printed the problem
    const json = argv.includes('--json');
    const message = e instanceof CliError ? e.message : `${e.message}${process.env.AGENTRUN_DEBUG ? `\n${e.stack}` : ''}`;
    if (json) process.stdout.write(JSON.stringify({ type: 'error', error: message }) + '\n');
    process.stderr.write(`agentrun: ${message}\n`);
    // What a signal cut short may fail as it stops; the exit code still says the signal ended it.
    const signal = stopSignalReceived();
    if (signal) return exitCodeForSignal(signal);
    return e instanceof CliError ? e.exitCode : EXIT.failed;
  }
}
