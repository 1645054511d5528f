// attempt_completion: control tool; ends the task with a final result.
import { z } from 'zod';
import type { ToolDefinition } from './types.js';

const schema = z.object({
  result: z
    .string({ error: 'expected the final result text' })
    .trim()
    .min(1, { error: 'expected a non-empty result' })
    .describe('The final result of the task. State what was done; do not end with a question or an offer of further help.'),
  command: z.string().trim().optional().describe('A command that shows the result to the person, e.g. `open index.html` or `npm start` (not echo or cat).'),
});

export const attemptCompletion: ToolDefinition<typeof schema> = {
  name: 'attempt_completion',
  description: 'Finish the task and present the result. Use it only once the earlier tool calls have succeeded and the task is done. Calling it ends the run.',
  schema,
  kind: 'control',
  example:
    '<attempt_completion>\n<result>The parser now accepts CRLF line endings; tests in test/parser.test.ts cover it and pass.</result>\n</attempt_completion>',
  workflowText: 'result',
};
