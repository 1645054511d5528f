// pino JSON logs. Child loggers carry conversationId, turn and activity.
import { pino, type Logger } from 'pino';

export const log: Logger = pino({
  level: process.env.AGENTRUN_LOG_LEVEL ?? 'info',
  base: { service: 'agentrun' },
  // Never let a secret reach the logs, whatever object a caller passes.
  redact: {
    paths: ['apiKey', '*.apiKey', 'headers.authorization', '*.headers.authorization', 'OPENAI_API_KEY', '*.OPENAI_API_KEY'],
    censor: '[redacted]',
  },
});

export type { Logger };
