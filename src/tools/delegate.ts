// delegate: control tool; hands a task to a named sub-agent (.agentrun/agents/<name>.md), which
// runs as a child workflow (workflows/session/delegate.ts). Offered only when agents exist: its
// description then lists them (src/extensions/agents.ts delegateToolFor).
import { z } from 'zod';
import type { ToolDefinition } from './types.js';

const schema = z.object({
  agent: z
    .string({ error: 'expected the name of one of the agents listed in the description' })
    .trim()
    .min(1, { error: 'expected an agent name' })
    .describe('The name of the agent, one of those listed above.'),
  task: z
    .string({ error: 'expected the task for the agent' })
    .trim()
    .min(1, { error: 'expected a non-empty task' })
    .describe('The complete task for the agent: it sees nothing of this conversation, so include every path, name and constraint it needs.'),
});

export const delegate: ToolDefinition<typeof schema> = {
  name: 'delegate',
  description:
    "Hand a self-contained task to a sub-agent, which works in the same workspace with its own instructions and tools and reports back; its final result is this call's result.",
  schema,
  kind: 'control',
  example:
    '<delegate>\n<agent>reviewer</agent>\n<task>Review src/parser.ts for unhandled CRLF line endings and list each problem with its line.</task>\n</delegate>',
};
