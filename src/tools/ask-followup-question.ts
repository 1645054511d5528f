// ask_followup_question: control tool; the workflow waits for a person's answer.
import { z } from 'zod';
import { stringListParam } from './params.js';
import type { ToolDefinition } from './types.js';

const schema = z.object({
  question: z
    .string({ error: 'expected the question text' })
    .trim()
    .min(1, { error: 'expected a non-empty question' })
    .describe('The question to ask. Make it clear and specific.'),
  options: stringListParam('Up to 5 suggested answers the person can pick from, as a JSON array of strings, e.g. ["Use PostgreSQL", "Use SQLite"].').optional(),
});

export const askFollowupQuestion: ToolDefinition<typeof schema> = {
  name: 'ask_followup_question',
  description:
    'Ask the person a question when you need information to go on: an ambiguity, a choice between approaches, missing details. ' +
    'Use it sparingly; find answers with the other tools when you can. The run waits for the answer.',
  schema,
  kind: 'control',
  example:
    '<ask_followup_question>\n<question>Which database should the service use?</question>\n<options>["PostgreSQL", "SQLite"]</options>\n</ask_followup_question>',
  workflowText: 'question',
};
