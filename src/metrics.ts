// agentrun's own Prometheus counters (turns, tokens, cost, tool failures, continuations,
// prunes), served by `agentrun worker` next to the Temporal runtime's metrics.
type Labels = Record<string, string>;

const counters = new Map<string, { help: string; values: Map<string, number> }>();

const HELP: Record<string, string> = {
  agentrun_turns_total: 'Conversation turns completed',
  agentrun_tokens_total: 'Model tokens used, by kind (prompt, completion)',
  agentrun_prompt_tokens_total: 'Prompt tokens, by whether the provider served them from its prompt cache (cached: true, billed at the cached price)',
  agentrun_cost_usd_total: 'Model cost in USD',
  agentrun_model_calls_total: 'Model call segments, by outcome',
  agentrun_continuations_total: 'Extra segments requested after a length cut-off',
  agentrun_tool_calls_total: 'Tool calls, by tool and outcome',
  agentrun_prunes_total: 'Context pruning passes that changed the request',
  agentrun_pool_refusals_total: 'Provider refusals (429, 529, overloaded) per provider pool',
  agentrun_pool_pause_seconds_total: 'Seconds a provider pool was paused by refusals or exhausted limits this worker saw',
  agentrun_fenced_total: 'A superseded host stopped by the fence: writes refused (kind write), running steps ended (kind step)',
  agentrun_wait_seconds_total:
    "Seconds this worker's steps spent waiting, by what for (a database connection, a provider pool slot, the fence, git, a command's start)",
  agentrun_waits_total: "Waits of this worker's steps, by what for (agentrun_wait_seconds_total's count)",
};

function key(labels: Labels): string {
  return Object.entries(labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, '_')}"`)
    .join(',');
}

export function inc(name: keyof typeof HELP, labels: Labels = {}, by = 1): void {
  addTo(name, key(labels), by);
}

function addTo(name: keyof typeof HELP, labelKey: string, by: number): void {
  let c = counters.get(name);
  if (!c) counters.set(name, (c = { help: HELP[name]!, values: new Map() }));
  c.values.set(labelKey, (c.values.get(labelKey) ?? 0) + by);
}

/** Time `p` as a wait for `what`: where a worker's steps spend time without computing (agentrun_wait_seconds_total). */
export async function timedWait<T>(what: string, p: Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await p;
  } finally {
    waited(what, performance.now() - t0);
  }
}

/** The label key of each kind of wait, made once: a turn records a few dozen waits (every query is one). */
const waitKeys = new Map<string, string>();

export function waited(what: string, ms: number): void {
  let k = waitKeys.get(what);
  if (k === undefined) waitKeys.set(what, (k = key({ what })));
  addTo('agentrun_wait_seconds_total', k, ms / 1000);
  addTo('agentrun_waits_total', k, 1);
}

const GAUGE_HELP = {
  agentrun_pool_in_flight: 'Model calls of this worker holding a provider pool slot',
  agentrun_pool_waiting: 'Model calls of this worker waiting for a provider pool slot',
};
const gauges = new Map<string, Map<string, number>>();

export function gauge(name: keyof typeof GAUGE_HELP, labels: Labels, value: number): void {
  let g = gauges.get(name);
  if (!g) gauges.set(name, (g = new Map()));
  g.set(key(labels), value);
}

export function renderMetrics(): string {
  const lines: string[] = [];
  for (const [name, g] of gauges) {
    lines.push(`# HELP ${name} ${GAUGE_HELP[name as keyof typeof GAUGE_HELP]}`, `# TYPE ${name} gauge`);
    for (const [labels, v] of g) lines.push(`${name}${labels ? `{${labels}}` : ''} ${v}`);
  }
  for (const [name, c] of counters) {
    lines.push(`# HELP ${name} ${c.help}`, `# TYPE ${name} counter`);
    for (const [labels, v] of c.values) lines.push(`${name}${labels ? `{${labels}}` : ''} ${v}`);
  }
  return lines.join('\n') + '\n';
}
