// `agentrun inspect`: a conversation's inspection (src/client/inspection.ts) printed for a person,
// or as one JSON object; an id the store does not know is looked up as a batch.
import { plural } from '../types.js';
import { wrapIndented } from './render/style.js';
import { bundleTooLargeReason } from '../workspace/offhost.js';
import { fleetLines } from './render/fleet.js';
import type { Session } from './session.js';
import { formatBytes } from '../tools/util.js';
import { gatherInspection } from '../client/inspection.js';
import { workspaceLine } from '../client/workspace-where.js';
import { CliError, EXIT } from './errors.js';

/**
 * `agentrun inspect ID`: a conversation's inspection, or a batch's table. The store and the
 * conversation's history are asked at once; only an id the store does not know is looked up as a
 * batch (whose module, with the run options' parsers, stays unloaded otherwise).
 */
export async function inspectCommand(session: Session, id: string, o: { json?: boolean; maxChars: string; diffs: boolean }): Promise<number> {
  const write = (s: string) => void process.stdout.write(s);
  const data = await gatherInspection(session, id, { maxChars: Number(o.maxChars), diffs: o.diffs });
  if (!data) {
    const { inspectBatch, formatBatchTable } = await import('./fleet.js');
    const batch = await inspectBatch(session, id);
    if (!batch) throw new CliError(`no conversation with id ${id}`);
    write((o.json ? JSON.stringify(batch) : formatBatchTable(batch)) + '\n');
    return EXIT.completed;
  }
  if (o.json) write(JSON.stringify(data) + '\n');
  else printInspection(data, write);
  return EXIT.completed;
}

/** The result branch, verify, who decided each approval and what gc removed: what an operator looks for first. */
function outcomeLines(data: Pick<NonNullable<Awaited<ReturnType<typeof gatherInspection>>>, 'outcome' | 'approvals' | 'collected'>): string {
  const lines: string[] = [];
  const o = data.outcome;
  if (o?.empty) lines.push('  branch: none (the job changed nothing: nothing committed or pushed)');
  else if (o?.branch)
    lines.push(
      `  branch: ${o.branch} at ${o.commit!.slice(0, 12)} (${o.pushed ? 'pushed' : o.keptAt ? `not pushed; commit kept at ${o.keptAt}` : 'not pushed'})  ` +
        `${plural(o.files ?? 0, 'file')} +${o.insertions} -${o.deletions}` +
        (o.verified === undefined ? '' : o.verified ? '  verified' : '  unverified'),
    );
  if (o?.verify)
    lines.push(
      `  verify: ${o.verify.passed === null ? 'not run' : o.verify.passed ? 'passed' : `failed (exit ${o.verify.exitCode ?? 'none'})`}  ${o.verify.command}  (${o.verify.attempts} run${o.verify.attempts === 1 ? '' : 's'})`,
    );
  for (const a of data.approvals ?? [])
    lines.push(
      `  approval ${a.callId}: ${a.approved ? 'approved' : 'denied'} ${a.timedOut ? 'when the wait timed out' : `by ${a.by ?? 'someone unnamed'}`} at ${new Date(a.atMs).toISOString()}${a.reason ? ` (${a.reason})` : ''}`,
    );
  const g = data.collected as
    { at?: string; workspace?: { path: string; bytes: number }; streamRows?: number; refs?: number; bundles?: { count: number } } | undefined;
  if (g)
    lines.push(
      `  gc: removed at ${g.at}: ${[
        g.workspace ? `the workspace ${g.workspace.path} (${(g.workspace.bytes / 1e6).toFixed(1)} MB)` : '',
        g.streamRows ? `${g.streamRows} stream rows` : '',
        g.refs ? `${g.refs} checkpoint refs` : '',
        g.bundles?.count ? `${g.bundles.count} bundles` : '',
      ]
        .filter(Boolean)
        .join(', ')}`,
    );
  return lines.map((l) => `${l}\n`).join('');
}

export function printInspection(data: NonNullable<Awaited<ReturnType<typeof gatherInspection>>>, write: (s: string) => void): void {
  const c = data.conversation;
  if (c) {
    // Where the workspace is now (host and directory), and where it was first placed if it moved.
    const where =
      (data.workspace ? workspaceLine(data.workspace) : c.workspace) +
      ((data.collected as { workspace?: unknown } | undefined)?.workspace ? '  (removed by gc)' : '');
    // Live: a running conversation's own status (waiting for its provider or pool, a person, a
    // budget) is the one `list`, the batch table and the page show; the stored row says `running`.
    const live = data.state as { status?: string; providerWait?: string } | undefined;
    const status = c.status === 'running' && live?.status ? live.status : c.status;
    write(`conversation ${c.id}\n  status: ${status}${c.reason ? ` (${c.reason})` : ''}\n  model: ${c.model}\n  workspace: ${where}\n`);
    // What a refusing provider (or its pool) said while the model step waits for it.
    if (live?.status === 'waiting_for_provider' && live.providerWait) write(`  waiting for the provider: ${live.providerWait}\n`);
    const sb = data.sandbox;
    if (sb)
      write(
        `  sandbox: ${sb.policy}${sb.policy === 'off' ? ' (commands ran unconfined, as asked)' : ''}  network: ${sb.network}${sb.env.length ? `  env: ${sb.env.join(', ')}` : ''}\n`,
      );
    write(
      `  turns: ${c.turns}  tokens: ${c.usage.totalTokens} (prompt ${c.usage.promptTokens}, completion ${c.usage.completionTokens})  cost: $${c.costUsd.toFixed(4)}\n`,
    );
    // Over every model call (summaries and billed failed attempts too): the prompt cache's hit rate.
    const cache = data.cache;
    if (cache.promptTokens > 0)
      write(
        `  prompt cache: ${cache.cachedTokens} of ${cache.promptTokens} prompt tokens cached, hit rate ${cache.hitRate === undefined ? '-' : `${(cache.hitRate * 100).toFixed(1)}%`}\n`,
      );
  }
  write(outcomeLines(data));
  write(fleetLines(data.state as Parameters<typeof fleetLines>[0]));
  const off = data.offHost;
  if (off)
    write(
      off.skippedBytes !== undefined
        ? `  off-host checkpoints: none from turn ${off.skippedAtTurn} (${bundleTooLargeReason(off.skippedBytes, undefined, off.skippedBase)})\n`
        : `  off-host checkpoints: ${off.bundles} bundles, ${(off.bytes / 1e6).toFixed(1)} MB in PostgreSQL\n`,
    );
  if (data.subagents.length) {
    write('\nsub-agents\n');
    for (const a of data.subagents)
      write(
        `  ${a.id}  ${a.agent}  ${a.status}  turns ${a.turns}  cost $${a.costUsd.toFixed(4)}${a.reason && a.status !== 'completed' ? `  (${a.reason})` : ''}\n`,
      );
  }
  const todos = (data.state as { todos?: string } | undefined)?.todos;
  if (todos) write(`\ntodos\n${indent(todos)}\n`);
  write('\ntranscript\n');
  for (const t of data.transcript) {
    write(`── turn ${t.turn} ──\n`);
    for (const m of t.messages) {
      const label = m.kind === 'tool_result' ? `tool ${m.toolName}${m.status ? ` [${m.status}]` : ''}` : m.kind;
      write(`[${m.seq}] ${label} (${m.tokens} tokens)\n${indent(m.content)}\n`);
      for (const hk of m.hooks ?? [])
        write(`    hook ${hk.source} ${hk.event}${hk.command ? ` "${hk.command}"` : ''}: ${hk.outcome}${hk.detail ? ` (${hk.detail})` : ''}\n`);
    }
  }
  write('\ntimeline\n');
  for (const a of data.timeline.activities) {
    write(
      `  run ${a.run} ${a.type.padEnd(18)} attempts ${a.attempts}  ${a.durationMs ?? '?'} ms  ${a.outcome}${a.failure ? `: ${a.failure}` : ''}${a.summary ? `  ${a.summary}` : ''}${a.workerVersion ? `  (worker ${a.workerVersion})` : ''}\n`,
    );
  }
  for (const e of data.timeline.events) write(`  run ${e.run} ${e.at} ${e.kind} ${e.detail}\n`);
  const env = data.environment;
  if (env.repositoryExtensions) write(`\nRepository extensions\n  ${env.repositoryExtensions.notice}\n`);
  if (env.setup) {
    const outcome = (f: (typeof env.setup.afterMoves)[number]['finished']) =>
      f
        ? `${f.ok ? (f.cached ? `restored from the cache (${(f.dirs ?? []).join(', ')})` : 'ran') : (f.reason ?? 'failed')} in ${((f.ms ?? 0) / 1000).toFixed(1)} s${f.key ? `  key ${f.key.slice(0, 12)}` : ''}`
        : '(running, or lost with its worker)';
    write(
      `\nSetup (${env.setup.commands!.length} command${env.setup.commands!.length === 1 ? '' : 's'}${env.setup.attempts > 1 ? `, ${env.setup.attempts} attempts` : ''}${env.setup.hosts.length > 1 ? ` on hosts ${env.setup.hosts.join(', then ')}: the job moved when a host was lost` : ''}${env.setup.network && env.setup.network !== 'on' ? `, network ${env.setup.network}` : ''})\n`,
    );
    for (const c of env.setup.commands!) write(`  $ ${c.split('\n')[0]}\n`);
    write(`  ${outcome(env.setup.finished)}\n`);
    for (const m of env.setup.afterMoves) write(`  after move ${m.move}, on host ${m.host ?? '?'}: ${outcome(m.finished)}\n`);
    if (env.setup.log.trim()) write(`  log (the end):\n${env.setup.log.trimEnd().split('\n').slice(-40).join('\n').replace(/^/gm, '    ')}\n`);
  }
  for (const v of env.verify) {
    write(
      `\nVerify ${v.baseline ? '(before turn 1)' : `run ${v.attempt}`}: ${v.command}: ${v.passed ? 'passed' : `FAILED (exit ${v.exitCode ?? 'none'})`} in ${(v.ms / 1000).toFixed(1)} s\n`,
    );
    if (!v.passed && v.tail.trim()) write(`${wrapIndented(v.tail.trimEnd().split('\n').slice(-15).join('\n'), (process.stdout.columns || 160) - 2, '    ')}\n`);
  }
  if (data.network.length) {
    // Every connection through the egress proxy: what was reached, what was refused and why.
    const refused = data.network.filter((n) => !n.allowed).length;
    write(`\nNetwork (${data.network.length} connection${data.network.length === 1 ? '' : 's'} through the egress proxy, ${refused} refused)\n`);
    for (const n of data.network) {
      const target = `${n.host}:${n.port}${n.address && n.address !== n.host ? ` (${n.address})` : ''}`;
      const what = n.allowed
        ? `allowed  ↑${formatBytes(n.bytesUp)} ↓${formatBytes(n.bytesDown)} ${n.durationMs} ms${n.reason ? `  ${n.reason}` : ''}`
        : `REFUSED  ${n.reason ?? ''}`;
      write(`  ${n.at.toISOString()} ${n.method.padEnd(7)} ${target}  ${what}${n.callId ? `  [${n.callId}]` : ''}\n`);
    }
  }
  if (data.usageByTurn.length) {
    write('\nusage per turn\n');
    write(
      `  ${'turn'.padStart(5)} ${'calls'.padStart(5)} ${'prompt'.padStart(9)} ${'cached'.padStart(9)} ${'hit'.padStart(5)} ${'completion'.padStart(10)} ${'cost'.padStart(10)}\n`,
    );
    for (const t of data.usageByTurn) {
      const hit = t.promptTokens > 0 ? `${Math.round((100 * t.cachedTokens) / t.promptTokens)}%` : '-';
      write(
        `  ${String(t.turn).padStart(5)} ${String(t.requests).padStart(5)} ${String(t.promptTokens).padStart(9)} ${String(t.cachedTokens).padStart(9)} ${hit.padStart(5)} ${String(t.completionTokens).padStart(10)} ${`$${t.costUsd.toFixed(4)}`.padStart(10)}\n`,
      );
    }
  }
  if (data.pruneRecords.length) {
    write('\nprune records\n');
    for (const p of data.pruneRecords) write(`  turn ${p.turn}: ${p.tokensBefore} → ${p.tokensAfter} tokens; ${p.actions.join('; ')}\n`);
  }
  if (data.checkpoints.length) {
    write('\ncheckpoints\n');
    for (const cp of data.checkpoints) {
      write(`  turn ${cp.turn}: ${cp.commit.slice(0, 12)} ${cp.files.join(', ')}\n`);
      if (cp.diff) write(indent(cp.diff, '    ') + '\n');
    }
  }
}

function indent(text: string, pad = '    '): string {
  return text
    .split('\n')
    .map((l) => pad + l)
    .join('\n');
}
