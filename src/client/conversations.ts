// Starting a conversation and talking to a running one: shared by the CLI and the SDK.
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client, type Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import type { RunConfig } from '../config.js';
import { idRefusal } from '../ids.js';
import { SA_COST, SA_MODEL, SA_STATUS, SA_TENANT, SA_TURNS, SA_WORKSPACE, SEARCH_ATTRIBUTES } from '../search-attributes.js';
import { DEFAULT_TENANT, runPriority } from '../model/pool-names.js';
import type { Store } from '../store/index.js';
import { workspaceOrigin } from '../workspace/identity.js';
import { WORKFLOW_TYPE, type ConversationInput } from '../../workflows/api.js';
import { sessionStartMetadata } from '../../workflows/summaries.js';
import { notRunning, temporalMessage, UpdateDeadlineError, withinDeadline } from './actions.js';
import { conversationInScope, noConversation, type TenantScope } from './tenancy.js';

/** What the conversation functions need: a Temporal client and the store. */
export interface ConversationDeps {
  client: Client;
  store: Store;
  taskQueue: string;
  namespace: string;
  /** Whether the namespace has agentrun's search attributes. */
  searchAttributes: boolean;
  /** The tenants this caller is confined to (src/client/tenancy.ts); absent: every tenant. */
  scope?: TenantScope;
}

/** A request the caller can act on (bad id, not running, no worker): the message says what to do. */
export class ConversationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConversationError';
  }
}

export function newConversationId(): string {
  const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `conv-${stamp}-${randomBytes(3).toString('hex')}`;
}

export async function startConversation(
  deps: Omit<ConversationDeps, 'store' | 'namespace'>,
  req: { task: string; workspace: string; config: RunConfig },
  id = newConversationId(),
) {
  const refused = idRefusal('conversation id', id);
  if (refused) throw new ConversationError(refused);
  // A local workspace this client sees: its first placement goes to a host on this machine that sees this directory.
  const origin = req.config.repo === undefined ? await workspaceOrigin(req.workspace) : undefined;
  // A run started here is interactive unless it says otherwise; its tenant is named, for the search attribute.
  const config = { ...req.config, priority: req.config.priority ?? 'interactive', tenant: req.config.tenant ?? DEFAULT_TENANT } satisfies RunConfig;
  req = { ...req, config };
  const input: ConversationInput = { ...req, searchAttributes: deps.searchAttributes, ...(origin ? { origin } : {}) };
  try {
    const handle = await deps.client.workflow.start(WORKFLOW_TYPE, {
      workflowId: id,
      taskQueue: deps.taskQueue,
      args: [input],
      ...sessionStartMetadata(req, { id, atMs: Date.now() }),
      priority: runPriority(config),
      typedSearchAttributes: deps.searchAttributes
        ? [
            { key: SA_STATUS, value: 'running' },
            { key: SA_WORKSPACE, value: req.workspace },
            { key: SA_MODEL, value: req.config.model },
            { key: SA_TENANT, value: config.tenant },
            // As the workflow shows them before its first turn: given here, they cost no upsert there.
            { key: SA_TURNS, value: 0 },
            { key: SA_COST, value: 0 },
          ]
        : undefined,
    });
    return { id, handle, req };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      throw new ConversationError(`a conversation with id ${id} already exists; choose another id or inspect it`);
    throw err;
  }
}

export async function ensureExists(deps: Pick<ConversationDeps, 'client' | 'store' | 'scope'>, id: string): Promise<void> {
  if (deps.scope !== undefined) {
    // A caller confined to tenants names only their stored conversations; another's reads as absent.
    if (!(await conversationInScope(deps, id, deps.scope))) throw new ConversationError(noConversation(id, deps.scope));
    return;
  }
  if (await deps.store.getConversation(id)) return;
  try {
    await deps.client.workflow.getHandle(id).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new ConversationError(`no conversation with id ${id}`);
    throw err;
  }
}

const UPDATE_WAIT_MS = 20_000;

/** An update needs a worker to run it; without one it would wait for ever. */
async function ensureWorkerPolls(deps: Pick<ConversationDeps, 'client' | 'namespace'>, id: string): Promise<void> {
  const desc = await deps.client.workflow.getHandle(id).describe();
  if (desc.status.name !== 'RUNNING') throw new ConversationError(`conversation ${id} is not running any more (${desc.status.name.toLowerCase()})`);
  const res = await deps.client.workflowService.describeTaskQueue({
    namespace: deps.namespace,
    taskQueue: { name: desc.taskQueue },
    taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
  });
  if (!res.pollers?.length) {
    throw new ConversationError(
      `no worker polls task queue ${desc.taskQueue}, so conversation ${id} cannot take this now: start \`agentrun worker\` (or \`agentrun dev\`) and try again`,
    );
  }
}

type Handle = ReturnType<Client['workflow']['getHandle']>;

/** Updates and signals to a running conversation, with clear errors when it is not running. */
export async function talk<T>(
  deps: Pick<ConversationDeps, 'client' | 'store' | 'namespace' | 'scope'>,
  id: string,
  fn: (h: Handle) => Promise<T>,
  opts: { update?: boolean } = {},
): Promise<T> {
  await ensureExists(deps, id);
  if (opts.update) await ensureWorkerPolls(deps, id);
  const handle = deps.client.workflow.getHandle(id);
  try {
    // The server remembers pollers for a while after a worker died: bound the wait for an update.
    return opts.update ? await withinDeadline(deps.client, UPDATE_WAIT_MS, () => fn(handle)) : await fn(handle);
  } catch (err) {
    if (err instanceof UpdateDeadlineError) {
      throw new ConversationError(
        `no worker took this within ${UPDATE_WAIT_MS / 1000} s: is \`agentrun worker\` (or \`agentrun dev\`) running for conversation ${id}?`,
      );
    }
    if (notRunning(err)) throw new ConversationError(`conversation ${id} is not running any more`);
    throw new ConversationError(temporalMessage(err));
  }
}

/** Whether the namespace has agentrun's search attributes (workflows only upsert them then). */
export async function hasSearchAttributes(connection: Connection, namespace: string): Promise<boolean> {
  try {
    const res = await connection.operatorService.listSearchAttributes({ namespace });
    return Object.keys(SEARCH_ATTRIBUTES).every((k) => k in (res.customAttributes ?? {}));
  } catch {
    // Temporal Cloud does not serve the operator API to every key: run without search attributes.
    return false;
  }
}
