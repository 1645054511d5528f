// Exit codes of DESIGN "Interfaces" and the one-line error every command prints on bad input.
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

export function exitCodeFor(status: ConversationStatus): number {
  switch (status) {
    case 'completed':
      return EXIT.completed;
    case 'budget_exhausted':
      return EXIT.budget;
    case 'waiting':
      return EXIT.waiting;
    default:
      return EXIT.failed;
  }
}
