// The built-in tools, in the order the prompt lists them. Nothing here knows about extensions,
// so the extensions can check their tools' names against these without a cycle.
import { askFollowupQuestion } from './ask-followup-question.js';
import { attemptCompletion } from './attempt-completion.js';
import { conversationMessageIdsWrite } from './conversation-message-ids-write.js';
import { delegate } from './delegate.js';
import { executeCommand } from './execute-command.js';
import { listCodeDefinitionNames } from './list-code-definition-names.js';
import { listFiles } from './list-files.js';
import { listPackageInfo } from './list-package-info.js';
import { planModeRespond } from './plan-mode-respond.js';
import { readFile } from './read-file.js';
import { replaceInFile } from './replace-in-file.js';
import { searchFiles } from './search-files.js';
import { todoRead, todoWrite } from './todo.js';
import type { ToolDefinition } from './types.js';
import { writeToFile } from './write-to-file.js';

export const TOOLS: ToolDefinition[] = [
  executeCommand,
  readFile,
  writeToFile,
  replaceInFile,
  searchFiles,
  listFiles,
  listCodeDefinitionNames,
  listPackageInfo,
  askFollowupQuestion,
  attemptCompletion,
  planModeRespond,
  todoWrite,
  todoRead,
  conversationMessageIdsWrite,
  // Offered only when the workspace defines agents (src/extensions/agents.ts offeredTools).
  delegate,
] as ToolDefinition[];

export const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

export const TOOL_NAMES: string[] = TOOLS.map((t) => t.name);
