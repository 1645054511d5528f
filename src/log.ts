// pino JSON logs on stderr (stdout belongs to the CLI's --json event stream). Child loggers
// carry conversationId, turn and activity. The Temporal SDK's own logs go through it too.
import { pino, type Logger } from 'pino';

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
  pino.destination(2),
);

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
