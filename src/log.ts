// pino JSON logs on stderr (stdout belongs to the CLI's --json event stream), or in a file for
// commands a person watches (`logToFile`), so log lines never land inside the conversation.
// Child loggers carry conversationId, turn and activity. The Temporal SDK's own logs go through it too.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino, type DestinationStream, type Logger } from 'pino';

/** Where log lines go; switched once at start-up (stderr until then). */
const destination: DestinationStream & { target: DestinationStream } = {
  target: pino.destination(2),
  write(line: string) {
    this.target.write(line);
  },
};

export const log: Logger = pino(
  {
    level: process.env.AGENTRUN_LOG_LEVEL ?? 'info',
    base: { service: 'agentrun' },
    // Never let a secret reach the logs, whatever object a caller passes.
    redact: {
      paths: ['apiKey', '*.apiKey', 'headers.authorization', '*.headers.authorization', 'OPENAI_API_KEY', '*.OPENAI_API_KEY'],
      censor: '[redacted]',
    },
  },
  destination,
);

let logFile: string | undefined;

/** Send every log line from now on to a file in `dir` (one per day, appended); returns its path. */
export function logToFile(dir: string, now = new Date()): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `agentrun-${now.toISOString().slice(0, 10)}.log`);
  // Synchronous: the CLI exits with process.exit, which would drop a buffered tail.
  destination.target = pino.destination({ dest: file, append: true, sync: true });
  logFile = file;
  return file;
}

/** The file log lines go to, when `logToFile` sent them there; undefined while they go to stderr. */
export function currentLogFile(): string | undefined {
  return logFile;
}

type Level = 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
const LEVELS: Record<Level, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };

/** A Temporal SDK logger (Runtime.install({ logger })) writing through pino. */
export const temporalLogger = {
  log(level: Level, message: string, meta?: Record<string, unknown>) {
    log[LEVELS[level]]({ temporal: true, ...meta }, message);
  },
  trace(message: string, meta?: Record<string, unknown>) {
    log.trace({ temporal: true, ...meta }, message);
  },
  debug(message: string, meta?: Record<string, unknown>) {
    log.debug({ temporal: true, ...meta }, message);
  },
  info(message: string, meta?: Record<string, unknown>) {
    log.info({ temporal: true, ...meta }, message);
  },
  warn(message: string, meta?: Record<string, unknown>) {
    log.warn({ temporal: true, ...meta }, message);
  },
  error(message: string, meta?: Record<string, unknown>) {
    log.error({ temporal: true, ...meta }, message);
  },
};

export type { Logger };
