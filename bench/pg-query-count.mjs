// Preloaded into any agentrun process (node --import ./bench/pg-query-count.mjs …): counts the
// PostgreSQL round trips it makes (every pg Client#query, the pool's included), by the Temporal
// activity that made them and by statement kind (verb and table, the tables a CTE writes too, or
// the tables a read reads), and prints them when the process exits: per activity type, how many
// executions made queries and the queries per execution. PG_QUERY_COUNT_FILE=PATH writes the JSON
// there instead of a table on stderr. Measurement only: it changes nothing the queries do.
// E.g. the quick start's five turns (scripted model), counted:
//   DATABASE_URL=… AGENTRUN_HOME=$(mktemp -d) node --import ./bench/pg-query-count.mjs bin/agentrun.js run \
//     --task "Write hello.py and make it greet with an exclamation mark" --workspace "$(mktemp -d)"
// Measured 2026-11-30 that way (five model steps, four tool calls, two with a checkpoint): a model
// step 15 → 10.2 round trips (without the stream's timed flushes, about 3 a step here and shared
// by every conversation of a process under load: 11.8 → 6.8), a tool call 7.5 → 5.5 (6 → 4 without
// a checkpoint), the rows and the stream's events the same. The model step's, after: the previous
// turn's record, the transcript with the turn's state, the context with turn_started, the usage,
// the segment with the message and message_completed, the calls with the loop check's earlier ones.
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import pg from 'pg';

// Where @temporalio/activity keeps the running activity's context (its own global symbol).
const ACTIVITY = Symbol.for('__temporal_activity_context_storage__');

/** { activityType: { runs: Set of "id/attempt", kinds: { kind: count } } } */
const byActivity = new Map();

/** A statement's kind: what it writes (verb and table, each write of a CTE), else the tables it reads. */
export function statementKind(sql) {
  const s = sql.replace(/\s+/g, ' ').trim();
  // Not an upsert's DO UPDATE nor a lock's FOR [NO KEY] UPDATE.
  const writes = [...s.matchAll(/(?<!(?:DO|FOR|KEY) )\b(INSERT INTO|UPDATE|DELETE FROM)\s+("?[\w.]+"?)/gi)].map(
    (m) => `${m[1].split(' ')[0].toUpperCase()} ${m[2]}`,
  );
  if (writes.length) return [...new Set(writes)].join(' + ');
  const verb = /^\w+/.exec(s)?.[0].toUpperCase() ?? '?';
  // The statement's own CTEs and a LATERAL are not tables.
  const ctes = new Set([...s.matchAll(/\b(\w+) AS (?:MATERIALIZED )?\(/gi)].map((m) => m[1].toLowerCase()));
  const tables = [
    ...new Set([...s.matchAll(/\b(?:FROM|JOIN)\s+("?[a-z_][\w.]*"?)/gi)].map((m) => m[1]).filter((t) => !ctes.has(t.toLowerCase()) && !/^LATERAL$/i.test(t))),
  ];
  if (verb === 'SELECT' || verb === 'WITH') return tables.length ? `SELECT ${tables.join(' + ')}` : `SELECT ${s.slice(7, 47)}`;
  return verb;
}

function activityOf() {
  const ctx = globalThis[ACTIVITY]?.getStore();
  const info = ctx?.info;
  return info
    ? { type: info.activityType, run: `${info.workflowExecution?.workflowId}/${info.activityId}/${info.attempt}` }
    : { type: '(no activity)', run: '' };
}

if (isMainThread) {
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(config, ...rest) {
    const sql = typeof config === 'string' ? config : config?.text;
    if (typeof sql === 'string') {
      const { type, run } = activityOf();
      let a = byActivity.get(type);
      if (!a) byActivity.set(type, (a = { runs: new Set(), kinds: new Map() }));
      if (run) a.runs.add(run);
      const kind = statementKind(sql);
      a.kinds.set(kind, (a.kinds.get(kind) ?? 0) + 1);
    }
    return query.call(this, config, ...rest);
  };
  process.on('exit', () => {
    const out = {};
    for (const [type, a] of [...byActivity].sort((x, y) => x[0].localeCompare(y[0]))) {
      const total = [...a.kinds.values()].reduce((n, k) => n + k, 0);
      const runs = a.runs.size;
      out[type] = {
        runs,
        queries: total,
        perRun: runs ? +(total / runs).toFixed(2) : null,
        kinds: Object.fromEntries([...a.kinds].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))),
      };
    }
    const file = process.env.PG_QUERY_COUNT_FILE;
    if (file) return writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
    const lines = ['pg queries by activity (runs = executions that queried):'];
    for (const [type, a] of Object.entries(out)) {
      lines.push(`  ${type}: ${a.queries} queries, ${a.runs} runs${a.perRun === null ? '' : `, ${a.perRun} per run`}`);
      for (const [kind, n] of Object.entries(a.kinds)) lines.push(`    ${String(n).padStart(5)}  ${kind}`);
    }
    process.stderr.write(`${lines.join('\n')}\n`);
  });
}
