// Exit codes of the README's command table and the one-line error every command prints on bad input.
import type { ConversationStatus } from '../types.js';

export const EXIT = { completed: 0, failed: 1, badInput: 2, budget: 3, waiting: 4 } as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.badInput,
  ) {
    super(message);
  }
}

/** What `read` returns; what it throws (a setting's one-line message) as bad input: exit 2 with that line. */
export function asBadInput<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

export function exitCodeFor(status: ConversationStatus): number {
  switch (status) {
    case 'completed':
      return EXIT.completed;
    case 'budget_exhausted':
      return EXIT.budget;
    case 'waiting':
    case 'awaiting_budget':
      return EXIT.waiting;
    default:
      return EXIT.failed;
  }
}
