// How often the dangerous-command checker (src/command-safety) stops a command a reviewer would let
// run, and how often it lets through one a reviewer would stop.
//
//   npx tsx bench/checker.ts [--corpus bench/checker-corpus.txt] [--list]
//
// The corpus holds commands coding agents run, labelled by hand (safe / dangerous). Under the
// default `--approval dangerous` policy every flagged command waits for a person, so the share of
// safe commands flagged is the share of an unattended run's commands that stall it. Goal: under 5%.
// Prints a table, the misjudged commands (with --list, or always when few), then one JSON line.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkCommand } from '../src/command-safety/dangerous.js';

const WORKSPACE = '/work/ws';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

interface Entry {
  label: 'safe' | 'dangerous';
  command: string;
}

function readCorpus(file: string): Entry[] {
  const out: Entry[] = [];
  for (const [n, line] of readFileSync(file, 'utf8').split('\n').entries()) {
    if (!line.trim() || line.startsWith('#')) continue;
    const tab = line.indexOf('\t');
    const label = line.slice(0, tab);
    if (tab < 0 || (label !== 'safe' && label !== 'dangerous')) throw new Error(`${file}:${n + 1}: expected "safe<TAB>command" or "dangerous<TAB>command"`);
    out.push({ label, command: line.slice(tab + 1).replace(/\\n/g, '\n') });
  }
  return out;
}

const file = arg('corpus') ?? fileURLToPath(new URL('checker-corpus.txt', import.meta.url));
const corpus = readCorpus(file);
const started = performance.now();
const judged = corpus.map((e) => ({ ...e, check: checkCommand(e.command, WORKSPACE) }));
const msPerCommand = (performance.now() - started) / corpus.length;

const safe = judged.filter((e) => e.label === 'safe');
const dangerous = judged.filter((e) => e.label === 'dangerous');
const falsePositives = safe.filter((e) => e.check.dangerous);
const missed = dangerous.filter((e) => !e.check.dangerous);
const flagged = judged.filter((e) => e.check.dangerous);
const pct = (a: number, b: number) => (b ? (100 * a) / b : 0);

console.log(`corpus: ${file} (${corpus.length} commands: ${safe.length} safe, ${dangerous.length} dangerous)`);
console.log(`safe commands flagged        ${falsePositives.length}/${safe.length}  ${pct(falsePositives.length, safe.length).toFixed(1)}%  (goal < 5%)`);
console.log(
  `dangerous commands caught    ${dangerous.length - missed.length}/${dangerous.length}  ${pct(dangerous.length - missed.length, dangerous.length).toFixed(1)}%`,
);
console.log(
  `flagged that are dangerous   ${flagged.length - falsePositives.length}/${flagged.length}  ${pct(flagged.length - falsePositives.length, flagged.length).toFixed(1)}%`,
);
console.log(`time per command             ${(msPerCommand * 1000).toFixed(0)} µs`);
const list = process.argv.includes('--list') || falsePositives.length + missed.length <= 30;
if (list) {
  for (const e of falsePositives) console.log(`  flagged, labelled safe: ${JSON.stringify(e.command)}: ${e.check.reasons.join('; ')}`);
  for (const e of missed) console.log(`  passed, labelled dangerous: ${JSON.stringify(e.command)}`);
}
console.log(
  JSON.stringify({
    bench: 'checker',
    commands: corpus.length,
    safe: safe.length,
    dangerous: dangerous.length,
    safeFlagged: falsePositives.length,
    safeFlaggedPct: Number(pct(falsePositives.length, safe.length).toFixed(2)),
    dangerousCaught: dangerous.length - missed.length,
    flaggedPrecisionPct: Number(pct(flagged.length - falsePositives.length, flagged.length).toFixed(2)),
    usPerCommand: Math.round(msPerCommand * 1000),
  }),
);
