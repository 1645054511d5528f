// The extensions of the activity running now: its tools and notes (src/tools/scope.ts, which the
// tool registry reads) and its hooks. A worker runs each activity inside its own scope, so two
// workers in one process keep their own.
import { AsyncLocalStorage } from 'node:async_hooks';
import { runInToolScope, type ToolScope } from '../tools/scope.js';
import type { HookRunner } from './hooks.js';

export { extensionNotes } from '../tools/scope.js';

export interface ExtensionScope extends ToolScope {
  hooks?: HookRunner;
}

const currentHooks = new AsyncLocalStorage<HookRunner | undefined>();

export function extensionHooks(): HookRunner | undefined {
  return currentHooks.getStore();
}

export function runInExtensionScope<T>(scope: ExtensionScope, fn: () => Promise<T>): Promise<T> {
  return runInToolScope(scope, () => currentHooks.run(scope.hooks, fn));
}
