// createClient: the library face of agentrun for programs that start and talk to conversations.
// The CLI runs on the same functions (conversations.ts, watch.ts, list.ts).
import { conversationResult } from './outcome.js';
import { Client, Connection } from '@temporalio/client';
import { runConfigSchema, type RunConfigInput } from '../config.js';
import { gatherInspection } from './inspection.js';
import { rollbackFinished } from './rollback.js';
import { agentrunHome } from '../runtime/home.js';
import { Store } from '../store/index.js';
import {
  DEFAULT_TASK_QUEUE,
  pauseSignal,
  resumeSignal,
  rollbackUpdate,
  sendMessageSignal,
  stateQuery,
  type ConversationResult,
  type ConversationState,
} from '../../workflows/api.js';
import { answerQuestion, decideApproval, requestCancel } from './actions.js';
import { ConversationError, ensureExists, hasSearchAttributes, startConversation, talk, type ConversationDeps } from './conversations.js';
import { listConversations, type ConversationSummary } from './list.js';
import { pendingItems, type PendingItem } from './pending.js';
import { conversationInScope, noConversation, scopeOf, type TenantScope } from './tenancy.js';
import { watchEvents, type WatchEvent } from './watch.js';

export interface TemporalOptions {
  /** host:port of the Temporal frontend. */
  address: string;
  namespace?: string;
}

export interface ClientOptions {
  /** Where Temporal is (or a connected `@temporalio/client` Client, which the caller closes). */
  temporal: TemporalOptions | Client;
  /** PostgreSQL URL of agentrun's store (or a connected Store, which the caller closes). */
  database: string | Store;
  /** PostgreSQL schema of the store (default `public`). */
  schema?: string;
  /** Task queue conversations are started on (default `agentrun`). */
  taskQueue?: string;
  /** AGENTRUN_HOME: private checkpoint repositories (rollback, inspect diffs). */
  home?: string;
  /**
   * The tenants this client acts for: it starts conversations of the first (unless `config.tenant`
   * names another of them) and sees, lists and talks to theirs only; another tenant's conversation
   * reads as absent. Leave it out for an administrator's client, which sees every tenant.
   */
  tenants?: string | string[];
}

export interface StartOptions {
  task: string;
  /** A git repository on the worker's host. */
  workspace: string;
  /** Model spec: a provider model name or `scripted:FILE`. Also settable in `config.model`. */
  model?: string;
  /** Run options (as the CLI's flags and config file): maxTurns, approval, toolFormat, … */
  config?: Partial<RunConfigInput>;
  /** Conversation id (default: a new `conv-…` id). */
  id?: string;
}

export interface AgentrunClient {
  readonly temporal: Client;
  readonly store: Store;
  readonly taskQueue: string;
  start(options: StartOptions): Promise<{ conversationId: string }>;
  /** Start and wait for the end. */
  run(options: StartOptions): Promise<ConversationResult>;
  /** Wait for a started conversation's end. */
  result(conversationId: string): Promise<ConversationResult>;
  /** The live events (those of `agentrun watch --json`), from an offset, until the conversation ends. */
  watch(conversationId: string, options?: { from?: number; signal?: AbortSignal }): AsyncIterable<WatchEvent>;
  state(conversationId: string): Promise<ConversationState>;
  inspect(conversationId: string, options?: { maxChars?: number; diffs?: boolean }): Promise<NonNullable<Awaited<ReturnType<typeof gatherInspection>>>>;
  list(options?: { status?: string; limit?: number }): Promise<ConversationSummary[]>;
  /** What waits for a person (questions, calls awaiting approval) in this client's tenants' running conversations. */
  pending(): Promise<PendingItem[]>;
  /** `argsHash`: the pendingApproval.argsHash you were shown; the call is refused if its arguments differ. `by`: recorded as the decider. */
  approve(conversationId: string, options?: { callId?: string; argsHash?: string; reason?: string; by?: string }): Promise<{ callId: string }>;
  deny(conversationId: string, options?: { callId?: string; argsHash?: string; reason?: string; by?: string }): Promise<{ callId: string }>;
  answer(conversationId: string, text: string): Promise<{ callId: string }>;
  send(conversationId: string, text: string): Promise<void>;
  cancel(conversationId: string, reason?: string): Promise<void>;
  pause(conversationId: string): Promise<void>;
  resume(conversationId: string): Promise<void>;
  /** Restore the workspace files of a turn's checkpoint (running or finished conversations). */
  rollback(conversationId: string, toTurn: number): Promise<{ restored: string[]; removed: string[] }>;
  close(): Promise<void>;
}

export { ConversationError };

function runRequest(options: StartOptions) {
  const parsed = runConfigSchema.safeParse({ ...options.config, ...(options.model ? { model: options.model } : {}) });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConversationError(
      `invalid run option ${issue.path.join('.') || '(config)'}: ${issue.message}${issue.path[0] === 'model' ? ' (give `model`, e.g. "gpt-4o" or "scripted:FILE")' : ''}`,
    );
  }
  if (!options.task?.trim()) throw new ConversationError('the task is empty: say what the agent should do');
  if (!options.workspace?.trim()) throw new ConversationError('no workspace: give the path of a git repository on the worker host');
  return { task: options.task, workspace: options.workspace, config: parsed.data };
}

export async function createClient(options: ClientOptions): Promise<AgentrunClient> {
  let scope: TenantScope;
  try {
    scope = scopeOf(options.tenants);
  } catch (err) {
    throw new ConversationError((err as Error).message);
  }
  const ownConnection = !(options.temporal instanceof Client);
  let temporal: Client;
  let namespace: string;
  if (options.temporal instanceof Client) {
    temporal = options.temporal;
    namespace = temporal.options.namespace;
  } else {
    const { address } = options.temporal;
    namespace = options.temporal.namespace ?? 'default';
    let connection: Connection;
    try {
      connection = await Connection.connect({ address, connectTimeout: '10s' });
    } catch (err) {
      throw new ConversationError(`cannot reach Temporal at ${address}: ${(err as Error).message}`);
    }
    temporal = new Client({ connection, namespace });
  }
  const store = typeof options.database === 'string' ? await Store.connect(options.database, { schema: options.schema }) : options.database;
  const deps: ConversationDeps = {
    client: temporal,
    store,
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    namespace,
    searchAttributes: await hasSearchAttributes(temporal.connection as Connection, namespace),
    scope,
  };
  /** A conversation this client may name, else the same error as for one that does not exist. */
  const own = async (id: string) => {
    if (scope !== undefined && !(await conversationInScope({ store, client: temporal }, id, scope))) throw new ConversationError(noConversation(id, scope));
  };
  const home = options.home ?? agentrunHome();
  const decide =
    (approved: boolean) =>
    (id: string, o: { callId?: string; argsHash?: string; reason?: string; by?: string } = {}) =>
      talk(deps, id, (h) => decideApproval(h, { ...o, approved }), { update: true });

  const client: AgentrunClient = {
    temporal,
    store,
    taskQueue: deps.taskQueue,
    async start(o) {
      const req = runRequest(o);
      if (scope !== undefined) {
        const tenant = req.config.tenant ?? scope[0]!;
        if (!scope.includes(tenant)) throw new ConversationError(`tenant ${tenant} is not one this client acts for (${scope.join(', ')})`);
        req.config = { ...req.config, tenant };
      }
      const { id } = await startConversation(deps, req, o.id);
      return { conversationId: id };
    },
    async run(o) {
      const { conversationId } = await client.start(o);
      return client.result(conversationId);
    },
    async result(id) {
      await own(id);
      return conversationResult(temporal.workflow.getHandle(id));
    },
    watch(id, o = {}) {
      // An unknown id would otherwise wait for events for ever.
      return (async function* () {
        await ensureExists(deps, id);
        yield* watchEvents(deps, id, o);
      })();
    },
    state: (id) => talk(deps, id, (h) => h.query(stateQuery)),
    async inspect(id, o = {}) {
      await own(id);
      const data = await gatherInspection({ store, client: temporal, home }, id, { maxChars: o.maxChars ?? 100_000, diffs: o.diffs ?? false });
      if (!data) throw new ConversationError(noConversation(id, scope));
      return data;
    },
    list: (o) => listConversations(deps, { ...o, tenants: scope }),
    pending: async () => (await pendingItems(deps, deps.taskQueue, scope)).items,
    approve: decide(true),
    deny: decide(false),
    answer: (id, text) => talk(deps, id, (h) => answerQuestion(h, text), { update: true }),
    send: (id, text) => talk(deps, id, (h) => h.signal(sendMessageSignal, { text })),
    cancel: (id, reason) => talk(deps, id, (h) => requestCancel(h, reason)),
    pause: (id) => talk(deps, id, (h) => h.signal(pauseSignal)),
    resume: (id) => talk(deps, id, (h) => h.signal(resumeSignal)),
    async rollback(id, toTurn) {
      const desc = await talk(deps, id, (h) => h.describe());
      if (desc.status.name === 'RUNNING') {
        const r = await talk(deps, id, (h) => h.executeUpdate(rollbackUpdate, { args: [{ toTurn }] }), { update: true });
        return { restored: r.restored, removed: r.removed };
      }
      try {
        return await rollbackFinished({ store, home }, id, { toTurn });
      } catch (err) {
        throw new ConversationError((err as Error).message);
      }
    },
    async close() {
      if (typeof options.database === 'string') await store.close().catch(() => {});
      if (ownConnection) await temporal.connection.close().catch(() => {});
    },
  };
  return client;
}
