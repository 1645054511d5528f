// The tools of the activity running now beyond the built-in ones (custom, MCP), and their notes for
// the model. A worker runs each activity inside its own scope (src/extensions/scope.ts sets it), so
// two workers in one process keep their own tools, and the tool registry (./registry.ts) asks here
// instead of holding global state.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ToolDefinition } from './types.js';

export interface ToolScope {
  tools: ToolDefinition[];
  /** Told to the model in the system prompt (an MCP server that did not start, …). */
  notes: string[];
}

const current = new AsyncLocalStorage<ToolScope>();

export function extensionTools(): ToolDefinition[] {
  return current.getStore()?.tools ?? [];
}

export function extensionNotes(): string[] {
  return current.getStore()?.notes ?? [];
}

export function runInToolScope<T>(scope: ToolScope, fn: () => Promise<T>): Promise<T> {
  return current.run(scope, fn);
}
