// A conversation's repository extensions (src/extensions/repository.ts): read once from its
// starting tree by the step that places or starts it, stored, and from then on taken from the
// store by every step on any host (a sub-agent or a fork takes its parent's). A worker whose
// operator did not switch them on uses none, whatever was stored.
import { loadSettingsFile, operatorSettingsPath, SettingsError } from '../src/extensions/settings.js';
import { NO_REPOSITORY, readRepositoryExtensions, repositoryNotice, type RepositorySnapshot } from '../src/extensions/repository.js';
import type { Store } from '../src/store/index.js';
import { agentsFromFiles, type LoadedAgents } from '../src/extensions/agents.js';
import { activityLog, type ActivityDeps } from './deps.js';

const kept = new Map<string, RepositorySnapshot>();

/** Whether this worker runs repository extensions: its switch, unless the operator's settings say `repositorySetup: false`. */
async function switchedOn(deps: ActivityDeps): Promise<boolean> {
  if (!deps.repositoryExtensions) return false;
  try {
    return (await loadSettingsFile(operatorSettingsPath(deps.home))).repositorySetup !== false;
  } catch (err) {
    // A broken operator file is reported where it is used; it never turns repository extensions on.
    if (err instanceof SettingsError) return false;
    throw err;
  }
}

async function stored(store: Store, conversationId: string): Promise<RepositorySnapshot | undefined> {
  return (await store.getRepositoryExtensions(conversationId))?.snapshot as RepositorySnapshot | undefined;
}

/**
 * Read the starting tree's extensions and keep them (the first read wins; a retry keeps it), with
 * the one notice in the stream when the repository defines any. Called before any agent step.
 */
export async function captureRepositoryExtensions(deps: ActivityDeps, conversationId: string, workspace: string): Promise<RepositorySnapshot> {
  const { store } = deps;
  const have = await stored(store, conversationId);
  if (have) return have;
  // A sub-agent (config.agent.parentId) works in its parent's tree, which the parent's agent may have changed.
  const config = (await store.getConversation(conversationId))?.config as { agent?: { parentId?: string } } | undefined;
  const parent = config?.agent?.parentId;
  const read = parent ? ((await stored(store, parent)) ?? NO_REPOSITORY) : await readRepositoryExtensions(workspace, await switchedOn(deps));
  const snapshot = (await store.putRepositoryExtensions(conversationId, read)) as RepositorySnapshot;
  const notice = parent ? undefined : repositoryNotice(snapshot);
  if (notice) {
    await store.appendStream(
      conversationId,
      [{ type: 'repository_extensions', enabled: snapshot.enabled, found: snapshot.found, notice }],
      ['repository_extensions'],
    );
    activityLog(conversationId, 0).info({ enabled: snapshot.enabled, found: snapshot.found }, 'repository extensions');
  }
  return snapshot;
}

/** Forget what this worker kept of a conversation that ended (its id may be used again, `run --replace`). */
export function forgetRepositoryExtensions(conversationId: string): void {
  kept.delete(conversationId);
}

/** A fork keeps its parent's repository extensions (its tree is a later checkpoint, not a starting tree). */
export async function copyRepositoryExtensions(store: Store, from: string, to: string): Promise<void> {
  const snapshot = await stored(store, from);
  if (snapshot) await store.putRepositoryExtensions(to, snapshot);
}

/**
 * The repository extensions this step may use: the stored ones (read now from `workspace` for a
 * conversation started before they were stored), none when this worker's switch is off.
 */
export async function repositoryExtensionsOf(deps: ActivityDeps, conversationId: string, workspace: string): Promise<RepositorySnapshot> {
  if (!(await switchedOn(deps))) return NO_REPOSITORY;
  const hit = kept.get(conversationId);
  if (hit) return hit;
  const snapshot = (await stored(deps.store, conversationId)) ?? (workspace ? await captureRepositoryExtensions(deps, conversationId, workspace) : undefined);
  if (!snapshot) return NO_REPOSITORY;
  if (kept.size > 2000) kept.delete(kept.keys().next().value!);
  kept.set(conversationId, snapshot);
  return snapshot;
}

/** The agents a conversation may delegate to: the repository's as kept at its start (when this worker runs them) and the operator's. */
export async function agentsOf(deps: ActivityDeps, conversationId: string, workspace: string): Promise<LoadedAgents> {
  const snapshot = await repositoryExtensionsOf(deps, conversationId, workspace);
  return agentsFromFiles(snapshot.enabled ? (snapshot.agents ?? []) : [], deps.home);
}
