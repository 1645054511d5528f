// Provider errors → typed Temporal ApplicationFailures (principle 4, docs/architecture.md).
// The OpenAI client runs with maxRetries: 0; Temporal's retry policy does the retrying,
// and these types tell it what is worth retrying and when.
import { ApplicationFailure } from '@temporalio/common';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { ModelErrorType } from './error-types.js';
import { FirstTokenTimeout } from './stream.js';
import { header, rateLimitResetMs } from './pool-headers.js';

/** `retry-after-ms` wins over `retry-after` (seconds or an HTTP date). Milliseconds, or undefined. */
function retryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = header(headers, 'retry-after');
  if (!ra) return undefined;
  if (Number.isFinite(Number(ra))) return Math.max(0, Number(ra) * 1000);
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function isContextLengthError(err: APIError): boolean {
  const code = (err as { code?: unknown }).code ?? (err.error as { code?: unknown } | undefined)?.code;
  if (code === 'context_length_exceeded') return true;
  return /maximum context length|context length|too many tokens|context_length/i.test(err.message);
}

const OVERLOADED = /overloaded/i;

/** A refusal for now (ModelErrorType.RateLimited), retried after the delay the provider named, if any. */
export function rateLimited(message: string, delayMs: number | undefined, details?: unknown, asked = 'as the provider asked'): ApplicationFailure {
  return ApplicationFailure.create({
    message: `${message}${delayMs !== undefined ? `, retrying after ${delayMs} ms ${asked}` : ''}`,
    type: ModelErrorType.RateLimited,
    nextRetryDelay: delayMs !== undefined ? Math.max(delayMs, 1) : undefined,
    details: details === undefined ? undefined : [details],
  });
}

/** Map anything thrown by a model call into an ApplicationFailure with a clear message. */
export function toModelFailure(err: unknown, what: string, malformedLine?: string): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof FirstTokenTimeout) {
    return ApplicationFailure.create({ message: `${what}: ${err.message}; will retry`, type: ModelErrorType.Timeout });
  }
  if (err instanceof APIUserAbortError) {
    return ApplicationFailure.create({ message: `${what}: request aborted (conversation cancelled or activity timed out)`, type: ModelErrorType.Aborted });
  }
  if (err instanceof APIConnectionTimeoutError) {
    return ApplicationFailure.create({ message: `${what}: the provider did not answer in time`, type: ModelErrorType.Timeout, cause: err });
  }
  if (err instanceof APIConnectionError) {
    return ApplicationFailure.create({ message: `${what}: network error talking to the provider (${err.message}); will retry`, type: ModelErrorType.Network });
  }
  if (err instanceof APIError) {
    const status = err.status;
    const detail = err.message.slice(0, 500);
    if (status === undefined) {
      // An error object sent inside the stream (`data: {"error": …}`); Anthropic's `overloaded_error` is a refusal for now.
      if (OVERLOADED.test(detail)) return rateLimited(`${what}: the provider is overloaded`, undefined);
      return ApplicationFailure.create({ message: `${what}: the provider sent an error in the stream: ${detail}`, type: ModelErrorType.StreamError });
    }
    // A refusal for now, not a fault: 429, 529 (overloaded), or any 5xx that says when to come back.
    const refusalDelay = retryAfterMs(err.headers) ?? rateLimitResetMs(err.headers);
    if (status === 429) return rateLimited(`${what}: rate limited (429)`, refusalDelay);
    if (status === 529 || (status >= 500 && OVERLOADED.test(detail))) return rateLimited(`${what}: the provider is overloaded (${status})`, refusalDelay);
    if (status >= 500 && retryAfterMs(err.headers) !== undefined) return rateLimited(`${what}: provider error ${status} with retry-after`, refusalDelay);
    if (status === 408 || status === 409 || status >= 500) {
      const delay = retryAfterMs(err.headers);
      return ApplicationFailure.create({
        message: `${what}: provider error ${status}: ${detail}; will retry`,
        type: status === 408 ? ModelErrorType.Timeout : ModelErrorType.ServerError,
        nextRetryDelay: delay !== undefined ? Math.max(delay, 1) : undefined,
      });
    }
    if (status === 400 && isContextLengthError(err)) {
      return ApplicationFailure.create({
        message: `${what}: the request exceeds the model's context window: ${detail}`,
        type: ModelErrorType.ContextLengthExceeded,
        nonRetryable: true,
      });
    }
    if (status === 401 || status === 403) {
      return ApplicationFailure.create({
        message: `${what}: the provider refused the credentials (${status}); check OPENAI_API_KEY on the worker`,
        type: ModelErrorType.Auth,
        nonRetryable: true,
      });
    }
    if (status === 404) {
      return ApplicationFailure.create({
        message: `${what}: model or endpoint not found (404): ${detail}; check --model and OPENAI_BASE_URL`,
        type: ModelErrorType.NotFound,
        nonRetryable: true,
      });
    }
    return ApplicationFailure.create({
      message: `${what}: the provider rejected the request (${status}): ${detail}`,
      type: ModelErrorType.BadRequest,
      nonRetryable: true,
    });
  }
  if (err instanceof SyntaxError) {
    const line = malformedLine ? ` Offending line: ${JSON.stringify(malformedLine.slice(0, 300))}` : '';
    return ApplicationFailure.create({
      message: `${what}: malformed server-sent event from the provider (${err.message}).${line}`,
      type: ModelErrorType.StreamError,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.create({ message: `${what}: ${message}`, type: ModelErrorType.StreamError });
}
