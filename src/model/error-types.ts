// Failure type names shared by activities (which throw them) and the workflow (whose
// retry policies and policy decisions read them). No imports: the workflow bundle uses it.
export const ModelErrorType = {
  RateLimited: 'ModelRateLimited',
  ServerError: 'ModelServerError',
  Timeout: 'ModelTimeout',
  Network: 'ModelNetwork',
  StreamError: 'ModelStreamError',
  BadRequest: 'ModelBadRequest',
  Auth: 'ModelAuth',
  NotFound: 'ModelNotFound',
  ContextLengthExceeded: 'ContextLengthExceeded',
  Aborted: 'ModelAborted',
  /**
   * The provider refused for now (429, 529, overloaded, a 5xx with retry-after) or its pool is full
   * or paused: the model step ends with this, non-retryable, and the workflow waits on a timer and
   * schedules it again, so waiting never spends the step's attempts. Details: [{ untilMs, reason }].
   */
  ProviderWait: 'ProviderWait',
} as const;

/** Error types the activity retry policy must not retry. */
export const NON_RETRYABLE_MODEL_ERRORS = [ModelErrorType.BadRequest, ModelErrorType.Auth, ModelErrorType.NotFound, ModelErrorType.ContextLengthExceeded];

/**
 * Attempts of the model step (`modelTurn`'s retry policy in workflows/session/loop.ts). The summary
 * request inside it is retried with the step and given up on its last but one attempt
 * (src/context/summarise.ts), so the turn still gets an attempt without it.
 */
export const MODEL_STEP_ATTEMPTS = 8;

/** A model call its shared budget (a batch's --budget, src/model/budget-pool.ts) had no room for: the session waits for a raise. */
export const BUDGET_POOL_EMPTY = 'BudgetPoolEmpty';
