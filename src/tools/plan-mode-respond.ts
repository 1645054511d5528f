// plan_mode_respond: control tool; in plan mode, the answer to the person (analysis, plan).
import { z } from 'zod';
import { stringListParam } from './params.js';
import type { ToolDefinition } from './types.js';

const schema = z.object({
  response: z
    .string({ error: 'expected the response text' })
    .trim()
    .min(1, { error: 'expected a non-empty response' })
    .describe('Your analysis, plan or question for the person.'),
  options: stringListParam('Suggested replies the person can pick from, as a JSON array of strings.').optional(),
});

export const planModeRespond: ToolDefinition<typeof schema> = {
  name: 'plan_mode_respond',
  description:
    'In plan mode, answer the person with analysis, a proposed plan, design options or risks, without changing anything. ' +
    'Only read-only tools are available in plan mode.',
  schema,
  kind: 'control',
  example:
    '<plan_mode_respond>\n<response>1. Add a retry policy to the model activity. 2. Map 429 to a retryable failure. 3. Test with the scripted model.</response>\n</plan_mode_respond>',
  workflowText: 'response',
};
