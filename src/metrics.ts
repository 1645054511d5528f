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
  agentrun_fenced_total: 'A superseded host stopped by the fence: writes refused (kind write), running steps ended (kind step)',
};

function key(labels: Labels): string {
  return Object.entries(labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, '_')}"`)
    .join(',');
}

export function inc(name: keyof typeof HELP, labels: Labels = {}, by = 1): void {
  let c = counters.get(name);
  if (!c) counters.set(name, (c = { help: HELP[name]!, values: new Map() }));
  const k = key(labels);
  c.values.set(k, (c.values.get(k) ?? 0) + by);
}

export function renderMetrics(): string {
  const lines: string[] = [];
  for (const [name, c] of counters) {
    lines.push(`# HELP ${name} ${c.help}`, `# TYPE ${name} counter`);
    for (const [labels, v] of c.values) lines.push(`${name}${labels ? `{${labels}}` : ''} ${v}`);
  }
  return lines.join('\n') + '\n';
}
