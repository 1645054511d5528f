// conversation_message_ids_write: control tool; marks messages (by their 8-hex id hints) for the pruner.
import { z } from 'zod';
import type { ToolDefinition } from './types.js';

const IDS = /^\s*[0-9a-f]{8}(\s*,\s*[0-9a-f]{8})*\s*,?\s*$/i;

const schema = z.object({
  message_ids: z
    .string({ error: 'expected comma-separated 8-character message ids' })
    .regex(IDS, { error: 'expected comma-separated 8-character hexadecimal message ids, e.g. "9226b3a4,204e1cd8"' })
    .transform((s) => [
      ...new Set(
        s
          .split(',')
          .map((x) => x.trim().toLowerCase())
          .filter(Boolean),
      ),
    ])
    .describe('Comma-separated 8-character ids from the "[Hint: message_id: …]" notes, e.g. 9226b3a4,204e1cd8.'),
  action: z
    .enum(['create', 'append', 'delete'], { error: 'expected create, append or delete' })
    .describe('create: replace the marked list with these ids; append: add them to it; delete: remove them from it.'),
});

export const conversationMessageIdsWrite: ToolDefinition<typeof schema> = {
  name: 'conversation_message_ids_write',
  description:
    'Mark earlier conversation messages that are no longer needed (large tool outputs, superseded file contents) so they are removed from the context from the next turn on. ' +
    'Each message shows its id in a "[Hint: message_id: xxxxxxxx]" note.',
  schema,
  kind: 'control',
  example: '<conversation_message_ids_write>\n<message_ids>9226b3a4,204e1cd8</message_ids>\n<action>create</action>\n</conversation_message_ids_write>',
};
