// todo_write / todo_read: control tools; the list lives in workflow state and is shown by inspect.
import { z } from 'zod';
import type { ToolDefinition } from './types.js';

const TODO_STATUSES = ['pending', 'in_progress', 'completed', 'cancelled'] as const;
type TodoStatus = (typeof TODO_STATUSES)[number];

interface TodoItem {
  id: string;
  content: string;
  status: TodoStatus;
}

const MARK: Record<string, TodoStatus> = {
  ' ': 'pending',
  '': 'pending',
  x: 'completed',
  X: 'completed',
  '~': 'in_progress',
  '>': 'in_progress',
  '-': 'cancelled',
};

/** Markdown checklist (`- [ ] a`, `- [x] b`, `- [~] c`) to items; JSON arrays pass through. */
function parseTodos(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const s = v.trim();
  if (s.startsWith('[') && !/^\[[ xX~>-]?\]/.test(s)) {
    try {
      return JSON.parse(s) as unknown;
    } catch {
      return v;
    }
  }
  const items: unknown[] = [];
  for (const line of s.split('\n')) {
    if (!line.trim()) continue;
    const m = /^\s*(?:[-*]|\d+[.)])?\s*\[([ xX~>-]?)\]\s*(.+)$/.exec(line);
    if (m) items.push({ content: m[2]!.trim(), status: MARK[m[1]!] });
    else {
      const plain = /^\s*(?:[-*]|\d+[.)])\s+(.+)$/.exec(line);
      if (!plain) return v; // not a list: let the schema report it
      items.push({ content: plain[1]!.trim(), status: 'pending' });
    }
  }
  return items;
}

const item = z.object({
  id: z.union([z.string(), z.number()]).optional().describe('A stable id (default: the position, 1-based).'),
  content: z.string().trim().min(1, { error: 'expected the text of the todo item' }).describe('What to do.'),
  status: z
    .enum(TODO_STATUSES, { error: `expected one of ${TODO_STATUSES.join(', ')}` })
    .default('pending')
    .describe('pending, in_progress, completed or cancelled.'),
});

const schema = z.object({
  todos: z
    .preprocess(
      parseTodos,
      z.array(item, { error: 'expected a JSON array of {content, status} or a markdown checklist ("- [ ] step", "- [x] done", "- [~] doing")' }),
    )
    .transform((items): TodoItem[] => items.map((t, i) => ({ id: t.id === undefined ? String(i + 1) : String(t.id), content: t.content, status: t.status })))
    .describe(
      'The whole todo list (it replaces the previous one): a JSON array of {"content": "...", "status": "pending|in_progress|completed|cancelled"} ' +
        'or a markdown checklist, one item per line: "- [ ] pending", "- [~] in progress", "- [x] completed".',
    ),
});

export const todoWrite: ToolDefinition<typeof schema> = {
  name: 'todo_write',
  description:
    'Write your todo list for the task: the whole list each time, with the status of every item. Use it for tasks with several steps, and update it as you go.',
  schema,
  kind: 'control',
  example: '<todo_write>\n<todos>\n- [x] Read the parser\n- [~] Handle CRLF line endings\n- [ ] Add tests\n</todos>\n</todo_write>',
  workflowText: 'todos',
};

const readSchema = z.object({});

export const todoRead: ToolDefinition<typeof readSchema> = {
  name: 'todo_read',
  description: 'Read your current todo list.',
  schema: readSchema,
  kind: 'control',
  example: '<todo_read>\n</todo_read>',
};
