// agentrun as a library: start and talk to conversations (createClient), run a worker in your own
// process with your tools, hooks and MCP servers (createWorker), and define tools (defineTool).
export { createClient, ConversationError, type AgentrunClient, type ClientOptions, type StartOptions, type TemporalOptions } from './client/client.js';
export { createWorker, type AgentrunWorker, type WorkerOptions } from './client/worker.js';
export type { TestModels } from './model/scripted/allowed.js';
export type { WatchEvent } from './client/watch.js';
export type { ConversationSummary } from './client/list.js';
export type { PendingItem } from './client/pending.js';
export { defineTool, ToolDefinitionError, type CustomToolContext, type CustomToolSpec, type CustomToolKind } from './extensions/tools.js';
export type { ToolKind } from './tools/types.js';
export type { CodeHooks, ToolHookEvent, ModelHookEvent, HookRecord } from './extensions/hooks.js';
export type { CommandWrapper, CommandSpec, CommandContext } from './extensions/commands.js';
export { SettingsError, type McpServerInput, type Settings } from './extensions/settings.js';
export { getAgent, loadAgents, AgentDefinitionError, type AgentDefinition } from './extensions/agents.js';
export type { ToolContext, ToolResult, ToolDefinition } from './tools/types.js';
export type { RunConfigInput } from './config.js';
export type { ConversationResult, ConversationState } from '../workflows/api.js';
export type { StreamEvent } from './types.js';

// Lower-level parts, for programs that wire Temporal themselves.
export { bundleWorkflows, installRuntime, type AgentWorkerOptions } from '../worker/index.js';
export {
  WORKFLOW_TYPE,
  DEFAULT_TASK_QUEUE,
  sendMessageSignal,
  cancelSignal,
  pauseSignal,
  resumeSignal,
  decideApprovalUpdate,
  answerUpdate,
  rollbackUpdate,
  stateQuery,
  type ConversationInput,
  type PendingApproval,
  type PendingQuestion,
  type ApprovalDecision,
} from '../workflows/api.js';
export { runConfigSchema, parseDuration, type RunConfig } from './config.js';
export { Store, migrate, type StoreOptions } from './store/index.js';
export { resolveEndpoints, startEmbeddedPostgres, startTemporalDevServer, type Endpoints } from './embedded/index.js';
export { versionInfo, type VersionInfo } from './runtime/version.js';
