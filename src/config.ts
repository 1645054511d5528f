// Per-conversation run options: one zod schema for the CLI, config files and the
// workflow input. Kept free of Node APIs because the workflow imports the types.
import { z } from 'zod';
import { branchTemplateRefusal, idRefusal, refNameRefusal, tenantRefusal } from './ids.js';
import { networkRefusal, type NetworkMode } from './sandbox/network.js';
import { ENV_NAME_PATTERN, SANDBOX_POLICIES } from './sandbox/policy.js';

/** The providers a run may name (src/model/providers.ts holds each one's profile). */
export const PROVIDERS = ['openai', 'deepseek', 'vllm', 'llamacpp', 'ollama', 'openrouter', 'litellm'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** The priorities of a run's model calls (src/model/pool-names.ts gives their Temporal priority keys). */
const PRIORITIES = ['interactive', 'batch', 'nightly'] as const;
export type PriorityName = (typeof PRIORITIES)[number];

export const runConfigSchema = z.object({
  /** `scripted:/abs/file.yaml` or a provider model name (`gpt-4o`, `deepseek-chat`, …). */
  model: z.string().min(1),
  maxTurns: z.number().int().positive().default(50),
  /** Total tokens (prompt + completion) over the whole conversation. */
  maxTokens: z.number().int().positive().optional(),
  maxCostUsd: z.number().positive().optional(),
  maxTimeMs: z.number().int().positive().optional(),
  /** At a budget limit: end (`budget_exhausted`) or pause (`awaiting_budget`, work kept) until `agentrun budget raise` (workflows/session/budget.ts). */
  onBudget: z.enum(['end', 'pause']).default('end'),
  /** How long a paused budget waits for a raise. */
  budgetWaitMs: z
    .number()
    .int()
    .positive()
    .default(7 * 24 * 3600_000),
  /** When that wait runs out: end, or end with the work committed to agentrun/<id>-partial (pushed for repository jobs). */
  onBudgetTimeout: z.enum(['end', 'partial-branch']).default('end'),
  /** Set by `eval run --fork-at K`: turns 1…K are answered by the recording (`recorded:<recording>`), the later ones by `model`. */
  replayFirst: z.object({ recording: z.string().min(1), turns: z.number().int().positive() }).optional(),
  /** Set by a batch with --budget: the shared budget (src/model/budget-pool.ts) every model call reserves from. */
  budgetPool: z.string().min(1).optional(),
  approval: z.enum(['never', 'dangerous', 'always']).default('dangerous'),
  approvalTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(30 * 60_000),
  approvalTimeoutAction: z.enum(['deny', 'approve']).default('deny'),
  /** How long ask_followup_question waits for an answer before the run ends as failed. */
  questionTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(24 * 3600_000),
  toolFormat: z.enum(['xml', 'native']).default('xml'),
  continuation: z.enum(['prefill', 'prompt']).default('prompt'),
  maxContinuations: z.number().int().min(0).max(20).default(6),
  /** `80k`, `1.5M`, `0.8`, 80000 … parsed by src/context/safe-zone.ts. */
  safeZone: z.union([z.string(), z.number()]).optional(),
  contextWindow: z.number().int().positive().optional(),
  /** Low-water mark of a pruning step, as a fraction of the safe zone (src/context/prune.ts; default 0.6). */
  pruneTarget: z.number().min(0.1).max(1).optional(),
  /** Replies in a row without a tool call before the run fails (each gets a reminder first). */
  maxNoToolReplies: z.number().int().positive().default(3),
  loopDetection: z.boolean().default(true),
  loopThreshold: z.number().int().min(2).default(5),
  /** Continue-as-new after this many turns in one run (besides the server's suggestion). */
  continueAsNewEveryTurns: z.number().int().positive().optional(),
  /** Heartbeat timeout of streaming and command activities: how fast a dead worker is noticed. */
  heartbeatTimeoutMs: z.number().int().min(1000).default(30_000),
  /** How long a model call may wait for its first token before the attempt is abandoned and retried. */
  firstTokenTimeoutMs: z
    .number()
    .int()
    .min(1000)
    .default(5 * 60_000),
  /** Cap on one answer's output tokens (sent as max_completion_tokens or max_tokens, per provider). */
  maxOutputTokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  reasoningEffort: z.enum(['minimal', 'low', 'medium', 'high']).optional(),
  /** Provider profile (src/model/providers.ts); else inferred from the worker's OPENAI_BASE_URL. */
  provider: z.enum(PROVIDERS).optional(),
  /** Newest turns whose tool outputs are never cleared by pruning. */
  keepRecentTurns: z.number().int().min(0).default(3),
  /** Extra system instructions appended to the prompt. */
  instructions: z.string().optional(),
  /** Whose run this is: the fairness key of its model calls and the AgentrunTenant search attribute (default AGENTRUN_TENANT or `default`). */
  tenant: z
    .string()
    .refine((v) => !tenantRefusal(v), { error: (i) => tenantRefusal(String(i.input)) ?? 'invalid tenant' })
    .optional(),
  /** Which waiting model calls go first: interactive, then batch, then nightly (Temporal's priority key 2, 4, 5; none: 3). */
  priority: z.enum(PRIORITIES).optional(),
  /** Set by the schedule that started the run, for search attributes. */
  scheduleId: z
    .string()
    .refine((v) => !idRefusal('schedule name', v), { error: (i) => idRefusal('schedule name', String(i.input)) ?? 'invalid schedule name' })
    .optional(),
  planMode: z.boolean().default(false),
  /** The command sandbox (src/sandbox/): `off` only when asked for; plan mode makes `workspace-write` read-only. */
  sandbox: z.enum(SANDBOX_POLICIES).default('workspace-write'),
  /** Network of the command sandbox: off, allow:HOST[,HOST…] or on, through the egress proxy (src/sandbox/network.ts). */
  network: z
    .string()
    .refine((v) => !networkRefusal(v), { error: (i) => networkRefusal(String(i.input)) ?? 'invalid network' })
    .transform((v) => v.trim() as NetworkMode)
    .default('off'),
  /** Worker environment variables passed through to commands, by name (`--env NAME`). */
  env: z.array(z.string().regex(ENV_NAME_PATTERN, { error: 'expected an environment variable name such as NPM_TOKEN' })).default([]),
  /** Setup commands run in the workspace before turn 1, with the network through the egress proxy (src/environment/setup.ts). */
  setup: z.array(z.string().trim().min(1, { error: 'a setup command must not be empty' })).optional(),
  /** Setup's network (default `on`: any public host), through the egress proxy like `network`; absent: the settings' or `on`. */
  setupNetwork: z
    .string()
    .refine((v) => !networkRefusal(v), { error: (i) => networkRefusal(String(i.input)) ?? 'invalid network' })
    .transform((v) => v.trim() as NetworkMode)
    .optional(),
  /** How long the whole setup may take. */
  setupTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(20 * 60_000),
  /** Directories (relative to the workspace) that setup produces and the cache keeps; default: those of DEFAULT_CACHE_DIRS that exist. */
  cache: z.array(z.string().min(1)).optional(),
  /**
   * Commands run after setup on every job, after a cache hit too: what the cache does not hold
   * (generated code, compiled translations, a build of the repository's own packages).
   */
  maintenance: z.array(z.string().trim().min(1, { error: 'a maintenance command must not be empty' })).optional(),
  /** Setup runs in full and its outputs are not kept: the dependency cache is neither read nor written. */
  noCache: z.boolean().optional(),
  /**
   * When a finished job's workspace goes (src/environment/disk.ts): `never` kept, `failed` kept
   * only when the job did not complete with its branch pushed (absent: this), `always` kept; a
   * kept one goes after the host's AGENTRUN_KEEP_WORKSPACE_FOR.
   */
  keepWorkspace: z.enum(['never', 'failed', 'always']).optional(),
  /** The repository's check, run in the sandbox (network off) when the model calls attempt_completion. */
  verify: z.string().trim().min(1).optional(),
  /** Verify runs per conversation; after the last failing one the conversation ends `failed`. */
  verifyAttempts: z.number().int().positive().default(3),
  /** Also run verify before turn 1 and record it (was it failing before the agent?). */
  verifyBaseline: z.boolean().default(false),
  /** Repository job: clone this git URL or path on the worker that takes the job. */
  repo: z.string().min(1).optional(),
  /** Branch, tag or commit to check out (default: the remote's default branch). */
  ref: z
    .string()
    .refine((v) => !refNameRefusal(v, 'ref'), { error: (i) => refNameRefusal(String(i.input), 'ref') ?? 'invalid ref' })
    .optional(),
  /** Result branch; may hold {{date}} and {{id}} (default agentrun/<id>). */
  branch: z
    .string()
    .refine((v) => !branchTemplateRefusal(v), { error: (i) => branchTemplateRefusal(String(i.input)) ?? 'invalid branch' })
    .optional(),
  /** Push the result branch to the job's remote. */
  push: z.boolean().default(false),
  /** Commit and push the result branch even when the job changed nothing (else it says so and pushes nothing). */
  pushEmpty: z.boolean().default(false),
  /** Schedule-to-start timeout on the workspace host's queue: how long a silent host may take to pick up work before failover. */
  hostTimeoutMs: z.number().int().min(1000).default(20_000),
  /** Set by `delegate` on a sub-agent's run (workflows/session/delegate.ts): its agent, its parent, the tools it may use (all when absent). */
  agent: z.object({ name: z.string().min(1), parentId: z.string().min(1), tools: z.array(z.string()).optional() }).optional(),
});

export type RunConfigInput = z.input<typeof runConfigSchema>;
export type RunConfig = z.output<typeof runConfigSchema>;

export { parseDuration } from './duration.js';
