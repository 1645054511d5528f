// The extension tools (custom, MCP) and notes for the model of the activity running now. A worker
// runs each activity inside its own scope, so two workers in one process keep their own tools,
// and the tool registry (src/tools/index.ts) asks here instead of holding global state.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ToolDefinition } from '../tools/types.js';
import type { HookRunner } from './hooks.js';

export interface ExtensionScope {
  tools: ToolDefinition[];
  /** Told to the model in the system prompt (an MCP server that did not start, …). */
  notes: string[];
  hooks?: HookRunner;
}

const current = new AsyncLocalStorage<ExtensionScope>();

export function extensionTools(): ToolDefinition[] {
  return current.getStore()?.tools ?? [];
}

export function extensionNotes(): string[] {
  return current.getStore()?.notes ?? [];
}

export function extensionHooks(): HookRunner | undefined {
  return current.getStore()?.hooks;
}

export function runInExtensionScope<T>(scope: ExtensionScope, fn: () => Promise<T>): Promise<T> {
  return current.run(scope, fn);
}
