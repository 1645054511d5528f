// The dangerous-command checker and the "safe to repeat" classification the ledger uses after a
// crash (principle 3, docs/architecture.md). Both err on the careful side: anything not understood
// is not repeatable, and a command that cannot be parsed is reported.
//
// The engine here walks the parsed text (shell-lex.ts): nested substitutions, redirections,
// wrappers (programs/shells.ts), what runs code fed by a download, and the constructs it cannot see
// through; then it looks the program up in the rule tables, one per family (programs/*.ts), the
// shape of Codex's command_safety. A program in no table is repeatable only if safe-commands.ts
// names it.
import path from 'node:path';
import { readableInlineCode } from './inline-code.js';
import { parseShell, ShellParseError, type Pipeline, type Redirect, type SimpleCommand, type Word } from './shell-lex.js';
import { isReadOnly } from './safe-commands.js';
import { base, checkWriteTarget, classify, danger, GIT_CODE_PATH, GIT_CODE_REASON, hasFlag, operands, type Rule, type RuleTable, type State } from './state.js';
import { BUILD_TOOL_RULES } from './programs/build-tools.js';
import { FILE_RULES } from './programs/files.js';
import { GIT_RULES } from './programs/git.js';
import { INLINE_CODE, INTERPRETERS, INTERPRETER_RULES } from './programs/interpreters.js';
import { DOWNLOADERS, NETWORK_RULES } from './programs/network.js';
import { PACKAGE_RULES } from './programs/packages.js';
import { SHELLS, unwrap } from './programs/shells.js';
import { SYSTEM_RULES } from './programs/system.js';

export interface CommandCheck {
  dangerous: boolean;
  reasons: string[];
  repeatable: boolean;
}

const FAMILIES: readonly RuleTable[] = [FILE_RULES, GIT_RULES, PACKAGE_RULES, BUILD_TOOL_RULES, INTERPRETER_RULES, NETWORK_RULES, SYSTEM_RULES];
const RULES = new Map<string, Rule>();
for (const f of FAMILIES) {
  for (const [prog, rule] of Object.entries(f.programs)) {
    if (RULES.has(prog)) throw new Error(`command-safety: ${prog} has rules in two families`);
    RULES.set(prog, rule);
  }
}
const PATTERNS = FAMILIES.flatMap((f) => f.patterns ?? []);

/** A program no family names: it changes something unless it only reads. */
const unknownProgram: Rule = ({ prog, st }) => {
  if (!isReadOnly(prog)) st.repeatable = false;
};

function ruleFor(prog: string): Rule {
  return RULES.get(prog) ?? PATTERNS.find(([re]) => re.test(prog))?.[1] ?? unknownProgram;
}

const FORK_BOMB = [
  /:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:\s*&/,
  /\b(\w+)\s*\(\s*\)\s*\{[^}]*\b\1\s*\|\s*\1\s*&/,
  /\bfork\s*\(\s*\)\s*while|while\s*\(?\s*1?\s*\)?\s*;?\s*do\s+fork/,
];
/** A word that assigns a shell variable (`NAME=value`), not a command. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const KEYWORDS = ['if', 'then', 'else', 'elif', 'do', '!', '{', '}', 'fi', 'done', 'esac', 'while', 'until'];
/** Places whose reading is itself the harm (secrets of the worker), wherever a command touches them. */
const SECRET_PLACES =
  /^\/proc\/[^/]+\/(environ|root|mem|cwd|fd|maps|cmdline)(\/|$)|^\/etc\/(shadow|gshadow|sudoers)|(^|\/)\.(ssh|aws|gnupg|kube|docker|netrc|git-credentials|npmrc|pypirc|gitconfig|config\/gh)(\/|$)|^\/var\/run\/secrets|^\/run\/secrets|^\/var\/lib\/agentrun/;

/** The approval reason for a file tool (write_to_file, replace_in_file) writing such a file. */
export function gitCodeFileReason(file: string): string | undefined {
  return GIT_CODE_PATH.test(path.posix.normalize(file)) ? `writes ${file}, ${GIT_CODE_REASON}` : undefined;
}

function analyzeNested(src: string, st: State): void {
  const sub = analyzeText(src, st.ws, st.cwd, st.depth + 1);
  for (const r of sub.reasons) danger(st, r);
  if (!sub.repeatable) st.repeatable = false;
  if (sub.downloads) st.downloads = true;
}

function checkRedirects(redirects: Redirect[], st: State): void {
  for (const r of redirects) {
    for (const n of r.target.nested) analyzeNested(n, st);
    if (r.op === '<' || r.op === '<<' || r.op === '<<-' || r.op === '<<<' || r.op === '<&') continue;
    if (r.op === '>>' || r.op === '&>>') st.repeatable = false;
    if (r.op === '>&' && /^\d+$/.test(r.target.text)) continue;
    checkWriteTarget(r.target, st, 'writes to');
  }
}

const runsCode = (prog: string) => SHELLS.has(prog) || INTERPRETERS.has(prog) || prog === 'source' || prog === '.';

/**
 * Constructs the checker cannot see through, whatever the program, each needing approval under
 * `--approval dangerous`: inline interpreter code, eval of expanded text, scripts from process
 * substitutions, code run after a download, arguments fed by xargs, and secret places.
 */
function flagOpaque(prog: string, args: Word[], st: State): void {
  const inline = Object.hasOwn(INLINE_CODE, prog) ? INLINE_CODE[prog] : undefined;
  const readable = (k: number) => args[k + 1] !== undefined && !args[k + 1]!.expands && readableInlineCode(prog, args[k]!.text, args[k + 1]!.text);
  if (inline && args.some((a, k) => inline.test(a.text) && !readable(k))) danger(st, `runs inline ${prog} code, which the checker cannot read`);
  if (prog === 'eval' && args.some((a) => a.expands)) danger(st, 'evaluates text built at run time (eval)');
  if (runsCode(prog) && args.some((a) => a.procSub)) danger(st, `runs a script produced by a process substitution (${prog} <(…))`);
  if (st.downloads && (runsCode(prog) || /^\.?\.?\//.test(prog) || prog === 'chmod')) danger(st, `runs code after downloading (${prog})`);
  if (st.xargs && !isReadOnly(prog)) danger(st, `gives ${prog} arguments from its input through xargs, unseen by the checker`);
  for (const a of args) {
    if (SECRET_PLACES.test(a.text) || (a.text.startsWith('~') && SECRET_PLACES.test(a.text.slice(1))))
      danger(st, `touches a place that holds secrets (${a.text})`);
    else if (classify(a, st).cls === 'home' && !isReadOnly(prog)) danger(st, `touches the home directory (${a.text})`);
  }
}

/** Downloaded or decoded content piped into a shell or interpreter that reads its stdin. */
function fedByDownload(prog: string, args: Word[], st: State, prev: SimpleCommand[]): boolean {
  const readsStdin = SHELLS.has(prog)
    ? !args.some((a) => a.text === '-c')
    : INTERPRETERS.has(prog)
      ? operands(args).length === 0 || args.some((a) => a.text === '-')
      : false;
  return (
    readsStdin &&
    prev.some((p) => {
      const pw = unwrap(p.words, { ...st, reasons: [] });
      const pp = base(pw[0]);
      return DOWNLOADERS.has(pp) || (pp === 'base64' && hasFlag(pw.slice(1), 'd', ['--decode'])) || (pp === 'xxd' && hasFlag(pw.slice(1), 'r'));
    })
  );
}

function analyzeCommand(cmd: SimpleCommand, st: State, prev: SimpleCommand[]): void {
  for (const w of cmd.words) for (const n of w.nested) analyzeNested(n, st);
  checkRedirects(cmd.redirects, st);
  let words = cmd.words;
  // Shell keywords around the real command.
  while (words.length && KEYWORDS.includes(words[0]!.text)) words = words.slice(1);
  if (!words.length) return;
  if (['for', 'case', 'select', 'function'].includes(words[0]!.text)) {
    st.repeatable = false;
    return;
  }
  st.xargs = false;
  // Leading assignments (`x=$(ls)`, `V=1 make`) set variables; what their substitutions run was judged above.
  while (words.length && ASSIGNMENT.test(words[0]!.text)) words = words.slice(1);
  if (!words.length) return;
  if (words[0]!.expands) return danger(st, `runs a command whose name is computed (${words[0]!.text}); what runs cannot be seen before it runs`);
  words = unwrap(words, st);
  if (!words.length) return;
  if (words[0]!.expands) return danger(st, `runs a command whose name is computed (${words[0]!.text}); what runs cannot be seen before it runs`);
  const prog = base(words[0]);
  const args = words.slice(1);
  flagOpaque(prog, args, st);
  const nestedDownloads = args.some((a) => a.nested.length > 0 && a.nested.some((n) => analyzeText(n, st.ws, st.cwd, st.depth + 1).downloads));
  // Downloaded code run through a shell, eval or an interpreter.
  const shellOrEval = SHELLS.has(prog) || prog === 'eval';
  if ((runsCode(prog) || prog === 'eval') && nestedDownloads) danger(st, 'runs code downloaded from the network');
  if ((runsCode(prog) || prog === 'eval') && prev.length && fedByDownload(prog, args, st, prev)) danger(st, `pipes downloaded or decoded content into ${prog}`);
  // What a shell runs with -c, and what eval runs, is a command text of its own.
  if (shellOrEval && !nestedDownloads) {
    const k = args.findIndex((a) => a.text === '-c');
    const script = prog === 'eval' ? args.map((a) => a.text).join(' ') : k >= 0 ? args[k + 1]?.text : undefined;
    if (script !== undefined) return analyzeNested(script, st);
  }
  ruleFor(prog)({ prog, args, st, judge: (inner) => analyzeCommand({ words: inner, redirects: [] }, st, []) });
}

function analyzeText(src: string, ws: string, cwd: string | null, depth: number): State {
  const st: State = { ws, cwd, reasons: [], repeatable: true, downloads: false, depth };
  if (depth > 8) {
    st.repeatable = false;
    return st;
  }
  for (const re of FORK_BOMB) if (re.test(src)) danger(st, 'is a fork bomb');
  let pipelines: Pipeline[];
  try {
    pipelines = parseShell(src);
  } catch (e) {
    if (!(e instanceof ShellParseError)) throw e;
    st.repeatable = false;
    // Unbalanced input still gets the textual checks below.
    if (/\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b/.test(src)) danger(st, 'pipes downloaded content into a shell');
    if (/\brm\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+(\/|~|\*)/.test(src)) danger(st, 'recursively deletes the root directory, the home directory or everything here');
    return st;
  }
  for (const p of pipelines) {
    if (p.op === '&') st.repeatable = false;
    p.commands.forEach((c, i) => analyzeCommand(c, st, p.commands.slice(0, i)));
  }
  return st;
}

/**
 * Classify a shell command. `dangerous` commands need a person's approval under the default
 * policy; `repeatable` ones may be re-run after a crash interrupted them.
 */
export function checkCommand(command: string, workspace?: string): CommandCheck {
  // Without a workspace, relative paths count as inside an imaginary one and absolute ones as outside.
  const ws = workspace ? path.resolve(workspace) : '/nonexistent-workspace';
  const st = analyzeText(command, ws, ws, 0);
  return { dangerous: st.reasons.length > 0, reasons: st.reasons, repeatable: st.reasons.length === 0 && st.repeatable };
}
