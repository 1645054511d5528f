// Throughput of the streaming XML tool-call parser (src/parser/xml-stream.ts).
//
//   npx tsx bench/parser.ts [--mb 10] [--one-char-mb 10]
//
// A deterministic ~10 MB transcript of assistant output (prose, <thinking>, tool calls with
// TypeScript/HTML contents, SEARCH/REPLACE diffs, escaped commands) is parsed at 1-, 16- and
// 4096-character chunks. Baseline, measured in the same run: a plain `indexOf('<')` scan over
// the same text, i.e. the least work any tag finder must do. Linearity: time per MB on 1 MB vs
// 10 MB at 4096-character chunks. Per turn: the model step's parsing of each answer of the
// transcript streamed in 16-character deltas, as it was (the streaming split for watchers, then a
// second parse of the whole answer for its calls) against now (one StreamedAnswer pass whose calls
// the step takes), alternated in the same run. Prints a table, then one JSON line with all figures.
// Measured 2026-11-29 on the shared 2-core machine (load average 9 to 10, so noisy): per answer of
// about 1.7 kB, 41 µs parsed twice against 32 µs parsed once (-22%; runs ranged -17% to -45%).
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseXmlToolCalls, StreamedAnswer, XmlToolCallParser } from '../src/parser/xml-stream.js';
import { seededRandom } from '../test/helpers/seeded.js';

const TOOLS = [
  'read_file',
  'write_to_file',
  'replace_in_file',
  'execute_command',
  'list_files',
  'search_files',
  'list_code_definition_names',
  'ask_followup_question',
  'attempt_completion',
  'use_mcp_tool',
];

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : def;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}

// ---- Deterministic transcript ------------------------------------------------------------------

const WORDS = (
  'the file function test type error build module import export config update handler request ' +
  'response value result check parser stream token call workflow activity worker retry state ' +
  'first then after before because so we need to look at fix add remove change keep this that it'
).split(' ');
const IDENTS = ['user', 'order', 'item', 'cache', 'queue', 'session', 'token', 'payload', 'entry', 'record'];
const TYPES = ['string', 'number', 'boolean', 'Date', 'Buffer', 'unknown'];

function transcript(targetBytes: number, seed = 42): { text: string; calls: number; messages: string[] } {
  // Seeded, so every run parses the same text.
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const int = (n: number): number => Math.floor(r() * n);
  const sentence = (): string => {
    const n = 6 + int(14);
    const ws: string[] = [];
    for (let i = 0; i < n; i++) ws.push(pick(WORDS));
    const s = ws.join(' ');
    return s[0]!.toUpperCase() + s.slice(1) + (r() < 0.1 ? ` (\`${pick(IDENTS)}.ts\`, a < b)` : '') + '.';
  };
  const prose = (n: number): string => Array.from({ length: n }, sentence).join(' ');
  const path = (ext: string): string => `src/${pick(IDENTS)}/${pick(IDENTS)}-${int(100)}.${ext}`;
  const tsFile = (): string => {
    const lines: string[] = [`import { ${pick(IDENTS)} } from './${pick(IDENTS)}.js';`, ''];
    const fns = 3 + int(10);
    for (let f = 0; f < fns; f++) {
      const a = pick(IDENTS);
      const t = pick(TYPES);
      lines.push(
        `export async function get${a[0]!.toUpperCase()}${a.slice(1)}${f}<T extends Record<string, ${t}>>(input: Array<T>, opts?: Map<string, ${t}[]>): Promise<T | undefined> {`,
        `  // ${sentence()}`,
        `  if (input.length < ${int(50)} && opts?.has('${a}')) return undefined;`,
        `  const out = input.filter((x) => x !== null && typeof x === 'object');`,
        `  return out.length > 0 ? out[0] : undefined;`,
        '}',
        '',
      );
    }
    return lines.join('\n');
  };
  const htmlFile = (): string => {
    const items = Array.from({ length: 3 + int(8) }, () => `    <li class="item">${sentence()} &amp; more</li>`).join('\n');
    return `<!doctype html>\n<html lang="en">\n  <head><title>${pick(IDENTS)}</title></head>\n  <body>\n  <ul>\n${items}\n  </ul>\n  <script>if (a < b && b > c) { run(); }</script>\n  </body>\n</html>`;
  };
  const call = (): string => {
    switch (int(7)) {
      case 0:
        return `<read_file>\n<path>${path('ts')}</path>\n</read_file>`;
      case 1:
        return `<write_to_file>\n<path>${path('ts')}</path>\n<content>\n${tsFile()}\n</content>\n</write_to_file>`;
      case 2:
        return `<write_to_file>\n<path>${path('html')}</path>\n<content>\n${htmlFile()}\n</content>\n</write_to_file>`;
      case 3: {
        const line = `  if (input.length < ${int(50)}) return undefined;`;
        return (
          `<replace_in_file>\n<path>${path('ts')}</path>\n<diff>\n<<<<<<< SEARCH\n${line}\n=======\n` +
          `${line.replace('<', '<=')}\n>>>>>>> REPLACE\n</diff>\n</replace_in_file>`
        );
      }
      case 4:
        return `<execute_command>\n<command>npm run build &amp;&amp; npx vitest run test/${pick(IDENTS)} 2&gt;&amp;1 | tail -n ${int(80)}</command>\n<requires_approval>false</requires_approval>\n</execute_command>`;
      case 5:
        return `<search_files>\n<path>src</path>\n<regex>function\\s+${pick(IDENTS)}&lt;T&gt;</regex>\n<file_pattern>*.ts</file_pattern>\n</search_files>`;
      default:
        return `<list_files>\n<path>src/${pick(IDENTS)}</path>\n<recursive>true</recursive>\n</list_files>`;
    }
  };
  const parts: string[] = [];
  let size = 0;
  let calls = 0;
  while (size < targetBytes) {
    const msg: string[] = [];
    if (r() < 0.4) msg.push(`<thinking>\n${prose(2 + int(6))}\n</thinking>\n`);
    msg.push(prose(1 + int(4)), '\n\n');
    const n = 1 + int(3);
    for (let i = 0; i < n; i++) {
      msg.push(call(), '\n');
      calls++;
      if (r() < 0.3) msg.push(prose(1), '\n');
    }
    if (r() < 0.05) {
      msg.push('<attempt_completion>\n<result>\n', prose(3), '\n</result>\n</attempt_completion>\n');
      calls++;
    }
    const m = msg.join('');
    parts.push(m);
    size += m.length;
  }
  return { text: parts.join(''), calls, messages: parts };
}

// ---- Measurement -------------------------------------------------------------------------------

function chunk(text: string, size: number): string[] {
  const out: string[] = new Array(Math.ceil(text.length / size));
  for (let i = 0, k = 0; i < text.length; i += size, k++) out[k] = text.slice(i, i + size);
  return out;
}

/** Parse pre-split chunks; returns ms and the number of tool calls seen (also keeps the work observable). */
function parseOnce(chunks: readonly string[]): { ms: number; calls: number; problems: number } {
  const t0 = performance.now();
  const p = new XmlToolCallParser(TOOLS);
  let calls = 0;
  let problems = 0;
  for (let i = 0; i < chunks.length; i++) {
    const evs = p.push(chunks[i]!);
    for (let j = 0; j < evs.length; j++) {
      const t = evs[j]!.type;
      if (t === 'tool_call') calls++;
      else if (t === 'tool_error') problems++;
    }
  }
  for (const e of p.end()) if (e.type === 'tool_error') problems++;
  return { ms: performance.now() - t0, calls, problems };
}

function indexOfScan(text: string): { ms: number; count: number } {
  const t0 = performance.now();
  let count = 0;
  for (let i = text.indexOf('<'); i !== -1; i = text.indexOf('<', i + 1)) count++;
  return { ms: performance.now() - t0, count };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Median time of `runs` runs (after one warm-up run). */
function timeParse(chunks: readonly string[], runs: number, expectCalls: number): number {
  const warm = parseOnce(chunks);
  if (warm.calls !== expectCalls || warm.problems !== 0) {
    throw new Error(`parser result wrong: ${warm.calls} calls (expected ${expectCalls}), ${warm.problems} problems`);
  }
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) ms.push(parseOnce(chunks).ms);
  return median(ms);
}

const MB = 1024 * 1024;
const totalMb = arg('mb', 10);
const oneCharMb = Math.min(arg('one-char-mb', totalMb), totalMb);

const tGen = performance.now();
const big = transcript(totalMb * MB);
const bigMb = big.text.length / MB; // UTF-16 code units; the transcript is ASCII, so = bytes
const small = transcript(1 * MB, 42); // the same generator, stopped at 1 MB
const smallMb = small.text.length / MB;
const genMs = performance.now() - tGen;

// Baseline: several runs for a stable median (it is ~100x faster than parsing).
indexOfScan(big.text);
const scanMs = median(Array.from({ length: 9 }, () => indexOfScan(big.text).ms));
const ltCount = indexOfScan(big.text).count;

type Row = { case: string; chunk: number; mb: number; ms: number; mbPerS: number; vsIndexOf: number };
const rows: Row[] = [];
const row = (name: string, size: number, mb: number, ms: number): Row => {
  const mbPerS = mb / (ms / 1000);
  const r: Row = {
    case: name,
    chunk: size,
    mb: Number(mb.toFixed(3)),
    ms: Number(ms.toFixed(1)),
    mbPerS: Number(mbPerS.toFixed(1)),
    vsIndexOf: Number((ms / mb / (scanMs / bigMb)).toFixed(1)),
  };
  rows.push(r);
  return r;
};

// 4096 and 16 on the full text; 1-char on `oneCharMb` (10 million pushes take a few seconds).
const c4096 = chunk(big.text, 4096);
row('parse', 4096, bigMb, timeParse(c4096, 5, big.calls));
const c16 = chunk(big.text, 16);
row('parse', 16, bigMb, timeParse(c16, 3, big.calls));
let oneText = big.text;
let oneCalls = big.calls;
if (oneCharMb < totalMb) {
  const part = transcript(oneCharMb * MB, 42);
  oneText = part.text;
  oneCalls = part.calls;
}
const c1 = chunk(oneText, 1);
row('parse', 1, oneText.length / MB, timeParse(c1, 1, oneCalls));
c1.length = 0;

// Linearity: per-MB cost on 1 MB vs 10 MB at 4096-char chunks. Runs of the two sizes are
// interleaved after warm-up so JIT state and heap size are the same for both.
const s4096 = chunk(small.text, 4096);
timeParse(s4096, 1, small.calls);
const smallRuns: number[] = [];
const bigRuns: number[] = [];
for (let round = 0; round < 5; round++) {
  bigRuns.push(parseOnce(c4096).ms);
  for (let k = 0; k < 3; k++) smallRuns.push(parseOnce(s4096).ms);
}
const smallMs = median(smallRuns);
const bigMs4096 = median(bigRuns);
const perMbSmall = smallMs / smallMb;
const perMbBig = bigMs4096 / bigMb;

// Per turn: every answer of the 1 MB transcript in 16-character deltas, parsed twice (the split,
// then the whole text again) or once (the split keeps the whole-message result).
const answers = small.messages.map((m) => chunk(m, 16));
function parseTurns(once: boolean): { ms: number; calls: number } {
  const t0 = performance.now();
  let calls = 0;
  for (let a = 0; a < answers.length; a++) {
    const deltas = answers[a]!;
    if (once) {
      const s = new StreamedAnswer(TOOLS);
      for (let i = 0; i < deltas.length; i++) s.push(deltas[i]!);
      s.end();
      calls += s.parseOf(small.messages[a]!)!.calls.length;
    } else {
      const p = new XmlToolCallParser(TOOLS);
      for (let i = 0; i < deltas.length; i++) p.push(deltas[i]!);
      p.end();
      calls += parseXmlToolCalls(small.messages[a]!, TOOLS).calls.length;
    }
  }
  if (calls !== small.calls) throw new Error(`per-turn parse wrong: ${calls} calls (expected ${small.calls})`);
  return { ms: performance.now() - t0, calls };
}
parseTurns(false);
parseTurns(true);
const twiceRuns: number[] = [];
const onceRuns: number[] = [];
for (let round = 0; round < 11; round++) {
  twiceRuns.push(parseTurns(false).ms);
  onceRuns.push(parseTurns(true).ms);
}
const twiceMs = median(twiceRuns);
const onceMs = median(onceRuns);
const perTurn = (ms: number) => (ms / answers.length) * 1000;

const pad = (s: string | number, n: number): string => String(s).padStart(n);
console.log(
  `agentrun parser bench: ${bigMb.toFixed(2)} MB transcript, ${big.calls} tool calls, ${ltCount} '<' characters (generated in ${genMs.toFixed(0)} ms)`,
);
console.log(`baseline indexOf('<') scan: ${scanMs.toFixed(2)} ms = ${(bigMb / (scanMs / 1000)).toFixed(0)} MB/s\n`);
console.log(`${'case'.padEnd(8)}${pad('chunk', 7)}${pad('MB', 8)}${pad('ms', 10)}${pad('MB/s', 9)}${pad('x indexOf', 11)}`);
for (const r of rows)
  console.log(
    `${r.case.padEnd(8)}${pad(r.chunk, 7)}${pad(r.mb.toFixed(2), 8)}${pad(r.ms.toFixed(1), 10)}${pad(r.mbPerS.toFixed(1), 9)}${pad(r.vsIndexOf.toFixed(1), 11)}`,
  );
if (oneCharMb < totalMb)
  console.log(
    `(1-char chunks measured on the first ${oneText.length / MB < 1 ? (oneText.length / MB).toFixed(2) : (oneText.length / MB).toFixed(1)} MB only: --one-char-mb ${oneCharMb})`,
  );
console.log(`'x indexOf' = parser time per MB / indexOf-scan time per MB (how many times slower than the bare scan)\n`);
console.log('linearity at 4096-char chunks:');
console.log(`  ${smallMb.toFixed(2)} MB: ${smallMs.toFixed(1)} ms = ${perMbSmall.toFixed(2)} ms/MB`);
console.log(`  ${bigMb.toFixed(2)} MB: ${bigMs4096.toFixed(1)} ms = ${perMbBig.toFixed(2)} ms/MB`);
console.log(
  `  ratio of ms/MB, ${bigMb.toFixed(0)} MB vs ${smallMb.toFixed(0)} MB: ${(perMbBig / perMbSmall).toFixed(2)} (1.00 = linear; a quadratic parser would show ~${(bigMb / smallMb).toFixed(0)})\n`,
);
console.log(`per turn (${answers.length} answers of ${smallMb.toFixed(2)} MB, 16-character deltas):`);
console.log(`  split, then parsed again whole: ${twiceMs.toFixed(1)} ms = ${perTurn(twiceMs).toFixed(1)} µs/answer`);
console.log(
  `  parsed once (StreamedAnswer):   ${onceMs.toFixed(1)} ms = ${perTurn(onceMs).toFixed(1)} µs/answer (${((1 - onceMs / twiceMs) * 100).toFixed(0)}% less)`,
);
console.log(
  `  load average: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);

console.log(
  JSON.stringify({
    bench: 'parser',
    transcriptMb: Number(bigMb.toFixed(3)),
    toolCalls: big.calls,
    indexOf: { ms: Number(scanMs.toFixed(2)), mbPerS: Number((bigMb / (scanMs / 1000)).toFixed(1)) },
    parse: rows.map(({ chunk: size, mb, ms, mbPerS, vsIndexOf }) => ({ chunk: size, mb, ms, mbPerS, ratioVsIndexOf: vsIndexOf })),
    oneCharMb: Number((oneText.length / MB).toFixed(3)),
    linearity: {
      chunk: 4096,
      smallMb: Number(smallMb.toFixed(3)),
      smallMsPerMb: Number(perMbSmall.toFixed(3)),
      bigMb: Number(bigMb.toFixed(3)),
      bigMsPerMb: Number(perMbBig.toFixed(3)),
      ratio: Number((perMbBig / perMbSmall).toFixed(3)),
    },
    perTurn: {
      answers: answers.length,
      delta: 16,
      twiceMs: Number(twiceMs.toFixed(2)),
      onceMs: Number(onceMs.toFixed(2)),
      twiceUsPerAnswer: Number(perTurn(twiceMs).toFixed(2)),
      onceUsPerAnswer: Number(perTurn(onceMs).toFixed(2)),
      goal: 'the answer parsed once per turn: less than twice',
    },
    load: loadavg().map((l) => Number(l.toFixed(2))),
    node: process.version,
  }),
);
