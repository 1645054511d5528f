// The hand-written shell lexer (src/command-safety/shell-lex.ts) against tree-sitter-bash (through
// @vscode/tree-sitter-wasm) on the checker's corpora: whether both find the same commands (the
// program names of every simple command, nested substitutions included, and their argument counts),
// which one fails to read a text, and the time each takes per command.
//
//   npx tsx bench/shell-grammar.ts [--list]
//
// Prints the disagreements (with --list), a summary per parser, then one JSON line.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Node as TSNode } from '@vscode/tree-sitter-wasm';
import { parseShell, ShellParseError } from '../src/command-safety/shell-lex.js';

const require = createRequire(import.meta.url);
type TreeSitterModule = typeof import('@vscode/tree-sitter-wasm');

const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const commands = ['checker-corpus.txt', 'checker-corpus-outside.tsv', 'checker-corpus-fresh.tsv'].flatMap((f) =>
  readFileSync(here(f), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => l.split('\t')[1]!.replace(/\\n/g, '\n')),
);

/** Names that are declarations or tests, which the two parsers file under different node kinds. */
const NOT_PROGRAMS = /^(export|declare|local|readonly|typeset|\[\[|\[|test|!|\{|\}|then|do|if|while|until|for|case|function|time)$/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** `name/argc` of every simple command the lexer finds, nested ones included, sorted. */
function lexerCommands(src: string): string[] {
  const out: string[] = [];
  const walk = (text: string, depth: number) => {
    if (depth > 8) return;
    for (const p of parseShell(text))
      for (const c of p.commands) {
        for (const w of c.words) for (const n of w.nested) walk(n, depth + 1);
        for (const r of c.redirects) for (const n of r.target.nested) walk(n, depth + 1);
        const words = c.words.filter((w, k) => !(ASSIGNMENT.test(w.text) && c.words.slice(0, k).every((x) => ASSIGNMENT.test(x.text))));
        let k = 0;
        while (k < words.length && NOT_PROGRAMS.test(words[k]!.text)) k++;
        if (k < words.length && !NOT_PROGRAMS.test(words[k]!.text)) out.push(`${words[k]!.text}/${words.length - k - 1}`);
      }
  };
  walk(src, 0);
  return out.sort();
}

/** The text of a word node without its quoting. */
function unquote(n: TSNode): string {
  if (n.type === 'raw_string') return n.text.slice(1, -1);
  if (n.type === 'string') return n.text.slice(1, -1).replace(/\\(["\\$`])/g, '$1');
  if (n.type === 'concatenation') return n.namedChildren.map((c) => (c ? unquote(c) : '')).join('');
  if (n.type === 'word') return n.text.replace(/\\(.)/g, '$1');
  return n.text;
}

function treeCommands(root: TSNode): string[] {
  const out: string[] = [];
  for (const c of root.descendantsOfType('command')) {
    if (!c) continue;
    const name = c.childForFieldName('name');
    if (!name) continue;
    const text = unquote(name.namedChildren[0] ?? name);
    if (NOT_PROGRAMS.test(text)) continue;
    const args = c.namedChildren.filter(
      (x) => x && x.id !== name.id && !/^(variable_assignment|file_redirect|herestring_redirect|heredoc_redirect|comment)$/.test(x.type),
    );
    out.push(`${text}/${args.length}`);
  }
  return out.sort();
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;

const ts = require('@vscode/tree-sitter-wasm') as TreeSitterModule;
await ts.Parser.init();
const bash = await ts.Language.load(path.join(path.dirname(require.resolve('@vscode/tree-sitter-wasm/package.json')), 'wasm', 'tree-sitter-bash.wasm'));
const parser = new ts.Parser();
parser.setLanguage(bash);

const ROUNDS = 5;
const lexTimes: number[] = [];
const treeTimes: number[] = [];
let lexFails = 0;
let treeErrors = 0;
let agree = 0;
const disagreements: string[] = [];
for (const src of commands) {
  let lex: string[] | undefined;
  const lt: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    try {
      lex = lexerCommands(src);
    } catch (e) {
      if (!(e instanceof ShellParseError)) throw e;
      lex = undefined;
    }
    lt.push(performance.now() - t0);
  }
  lexTimes.push(quantile(lt, 0.5));
  let tree: string[] = [];
  let hasError = false;
  const tt: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    const t = parser.parse(src);
    tree = t ? treeCommands(t.rootNode) : [];
    hasError = !t || t.rootNode.hasError;
    t?.delete();
    tt.push(performance.now() - t0);
  }
  treeTimes.push(quantile(tt, 0.5));
  if (!lex) lexFails++;
  if (hasError) treeErrors++;
  if (lex && JSON.stringify(lex) === JSON.stringify(tree)) agree++;
  else
    disagreements.push(
      `${JSON.stringify(src)}\n    lexer: ${lex ? lex.join(' ') : '(cannot read)'}\n    tree:  ${tree.join(' ')}${hasError ? ' (with ERROR nodes)' : ''}`,
    );
}
if (process.argv.includes('--list')) for (const d of disagreements) console.log(d);
const r = {
  commands: commands.length,
  agreePct: Number(((100 * agree) / commands.length).toFixed(2)),
  lexerCannotRead: lexFails,
  treeWithErrors: treeErrors,
  lexerMsP50: Number(quantile(lexTimes, 0.5).toFixed(4)),
  lexerMsP99: Number(quantile(lexTimes, 0.99).toFixed(4)),
  treeMsP50: Number(quantile(treeTimes, 0.5).toFixed(4)),
  treeMsP99: Number(quantile(treeTimes, 0.99).toFixed(4)),
};
console.log(`${r.commands} commands; the two find the same commands in ${r.agreePct}%`);
console.log(`lexer: cannot read ${r.lexerCannotRead}; p50 ${r.lexerMsP50} ms, p99 ${r.lexerMsP99} ms`);
console.log(`tree-sitter-bash: trees with errors ${r.treeWithErrors}; p50 ${r.treeMsP50} ms, p99 ${r.treeMsP99} ms`);
console.log(JSON.stringify({ bench: 'shell-grammar', ...r }));
