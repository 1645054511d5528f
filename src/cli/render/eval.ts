// An eval run's report as a terminal table, JUnit XML (any CI) and Markdown (a pull-request
// comment); two runs compared as a table.
import type { compareReports, CaseReport, EvalReport } from '../../client/evals.js';
import { alignedColumns } from './columns.js';

const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
const usd = (n: number) => `$${n.toFixed(4)}`;
const secs = (ms: number | undefined) => (ms === undefined ? '' : `${(ms / 1000).toFixed(1)}s`);

/** What stands out about a case: why it failed, where a replay diverged, that it is flaky. */
function caseNote(c: CaseReport): string {
  const failed = c.trials.find((t) => !t.passed);
  const notes: string[] = [];
  if (c.regressed) notes.push('REGRESSED');
  else if (c.flaky) notes.push('flaky');
  if (failed?.divergence) notes.push(`diverged at turn ${failed.divergence.turn}: ${failed.divergence.why}`);
  else if (failed?.checkFailures) notes.push(failed.checkFailures.join(', '));
  else if (failed) notes.push(`${failed.status}${failed.verify === false ? ', verify failed' : ''}`);
  const line = notes.join('; ');
  return line.length > 110 ? `${line.slice(0, 109)}…` : line;
}

function caseRows(r: EvalReport): { head: string[]; rows: string[][] } {
  const head = ['case', 'recorded', 'passed', 'pass@k', 'pass^k', 'turns', 'cost (recorded)', 'wall (recorded)', 'note'];
  const rows = r.cases.map((c) => [
    c.caseId,
    c.recorded.passed ? 'passed' : 'failed',
    `${c.passes}/${c.k}`,
    c.passAtK.toFixed(2),
    c.passPowK.toFixed(2),
    `${c.meanTurns.toFixed(1)} (${c.recorded.turns})`,
    `${usd(c.meanCostUsd)} (${usd(c.recorded.costUsd)})`,
    `${secs(c.meanWallMs)} (${secs(c.recorded.wallMs)})`,
    caseNote(c),
  ]);
  return { head, rows };
}

function summary(r: EvalReport): string[] {
  return [
    `${r.set} · ${r.mode}${r.model ? ` with ${r.model}` : ''}${r.forkAt !== undefined ? ` from turn ${r.forkAt}` : ''} · ${r.cases.length} cases × k=${r.k}`,
    `pass rate ${pct(r.passRate)} (${r.passed}/${r.trials} trials; 95% interval ${pct(r.interval.low)}–${pct(r.interval.high)}); pass@${r.k} ${r.passAtK.toFixed(2)}, pass^${r.k} ${r.passPowK.toFixed(2)}`,
    `cost ${usd(r.costUsd)}${r.costRatio !== null ? ` (${r.costRatio.toFixed(2)}× the recordings per trial)` : ''}; ${r.tokens} tokens${r.wallRatio !== null ? `; wall time ${r.wallRatio.toFixed(2)}× the recordings` : ''}`,
    ...(r.regressions.length ? [`regressed: ${r.regressions.join(', ')}`] : []),
    ...(r.infra ? [`${r.infra} job(s) ended for the infrastructure`] : []),
  ];
}

export function evalTable(r: EvalReport): string {
  const { head, rows } = caseRows(r);
  return [...alignedColumns(head, rows), '', ...summary(r)].join('\n');
}

const xml = (s: string) =>
  s
    .replace(/[<>&"']/g, (ch) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[ch]!)
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD]/g, '');

/** One testcase per case: it fails when it regressed or no trial passed; the gate's verdict is a testcase of its own. */
export function evalJunit(r: EvalReport, gateFailures: string[]): string {
  const cases = r.cases.map((c) => {
    const failed = c.regressed || c.passes === 0;
    const secsTotal = c.trials.reduce((s, t) => s + (t.wallMs ?? 0), 0) / 1000;
    const body = failed ? `<failure message="${xml(caseNote(c) || 'failed')}">${xml(JSON.stringify(c.trials))}</failure>` : '';
    const out = `<system-out>${xml(`passed ${c.passes}/${c.k}; pass@k ${c.passAtK.toFixed(2)}; pass^k ${c.passPowK.toFixed(2)}`)}</system-out>`;
    return `    <testcase classname="${xml(r.set)}" name="${xml(c.caseId)}" time="${secsTotal.toFixed(3)}">${body}${out}</testcase>`;
  });
  const gate = `    <testcase classname="${xml(r.set)}" name="gate">${gateFailures.length ? `<failure message="${xml(gateFailures.join('; '))}"/>` : ''}</testcase>`;
  const failures = r.cases.filter((c) => c.regressed || c.passes === 0).length + (gateFailures.length ? 1 : 0);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="agentrun eval" tests="${r.cases.length + 1}" failures="${failures}">`,
    `  <testsuite name="${xml(`${r.set} (${r.mode})`)}" tests="${r.cases.length + 1}" failures="${failures}" id="${xml(r.runId)}">`,
    ...cases,
    gate,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

export function evalMarkdown(r: EvalReport, gateFailures: string[]): string {
  const { head, rows } = caseRows(r);
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `### agentrun eval: ${r.set} — ${gateFailures.length ? '❌ gate failed' : '✅ gate passed'}`,
    '',
    ...summary(r).map((l) => `- ${l}`),
    ...gateFailures.map((f) => `- **${f}**`),
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
    '',
    `Run \`${r.runId}\`.`,
    '',
  ].join('\n');
}

export function compareTable(c: ReturnType<typeof compareReports>): string {
  const rows = c.cases.map((x) => [
    x.caseId,
    `${x.a.passes}/${x.a.k}`,
    `${x.b.passes}/${x.b.k}`,
    x.change,
    x.pValue.toFixed(3),
    x.change === 'same' ? '' : x.significant ? 'beyond noise' : 'within noise',
  ]);
  const changed = c.cases.filter((x) => x.change !== 'same');
  return [
    ...alignedColumns(['case', c.a, c.b, 'change', 'p', ''], rows),
    '',
    `${changed.length} of ${c.cases.length} cases changed; pass rate ${pct(c.passRateA)} → ${pct(c.passRateB)} (${c.delta >= 0 ? '+' : ''}${pct(c.delta)}, p=${c.pValue.toFixed(3)}: ${c.significant ? 'beyond noise' : 'within noise'})`,
  ].join('\n');
}
