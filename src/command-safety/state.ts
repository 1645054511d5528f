// What every rule table (programs/*.ts) works with: the state of one judgement (the reasons found,
// whether the text may be re-run, the current directory as far as it can be followed), where a path
// points relative to the workspace, and the checks shared by several program families (a write to a
// file, a file through which git runs code).
import path from 'node:path';
import { SANDBOX_WORKSPACE } from '../sandbox/policy.js';
import type { LoopValues } from './loop-values.js';
import type { Word } from './shell-lex.js';

export interface State {
  ws: string;
  /** Current directory as far as it can be followed; null once it depends on something unknown. */
  cwd: string | null;
  reasons: string[];
  repeatable: boolean;
  /** Some command in the analysed text downloads data. */
  downloads: boolean;
  depth: number;
  /** The command being judged gets arguments from stdin through xargs (unseen). */
  xargs?: boolean;
  /** The text is the payload of another program (an option that executes, a wrapper): a shell there that reads its input runs unseen commands. */
  payload?: boolean;
  /** A program no table names needs a person (the command runs unsandboxed). */
  askUnknown?: boolean;
  /** Variables this text set to a literal program name by an assignment of their own (`PIP=pip; $PIP install`). */
  programs?: Map<string, string>;
  /** The command sets one of CI's workspace or toolchain variables itself, so they name whatever it put there. */
  setsConventionalVariable?: boolean;
  /** The command sets HOME itself (SETS_HOME). */
  setsHome?: boolean;
  /** The command sets IFS, so words split where it chose. */
  setsFieldSeparator?: boolean;
  /** The command turns on alias expansion (`shopt -s expand_aliases`, posix mode), so an alias it defines may run. */
  expandsAliases?: boolean;
  /** The command sets a variable named for a version itself (SETS_VERSION_VARIABLE), so it may hold code. */
  setsVersionVariable?: boolean;
  /** A name a runner resolves to one of the project's scripts first (`pdm run lint`), when no table names it. */
  projectScript?: string;
  /** Directories this text cloned a remote repository into (`git clone URL dir`), as absolute paths. */
  cloned?: string[];
  /** The values each `for` loop's variable takes, as the text spells them out (loop-values.ts). */
  loops?: Map<string, LoopValues>;
  /** The install prefix a configure script, meson or cmake was given earlier in this text (`--prefix=$HOME/.local`), and whether it lies outside the workspace. */
  installPrefix?: { text: string; outside: boolean };
  /** The command runs through a proxy chain (proxychains), so this machine's loopback names the far side's. */
  proxied?: boolean;
  /** Files this text wrote with a text it spells out, by absolute path: what each holds (null: text it cannot read). */
  written: Map<string, string | null>;
}

/**
 * CI's names for the checked-out workspace (GitHub Actions' GITHUB_WORKSPACE and its expression
 * `${{ github.workspace }}`, GitLab's CI_PROJECT_DIR, Jenkins' WORKSPACE), at the start of a word and
 * followed by a path or nothing.
 */
const CI_WORKSPACE =
  /^"?\$(\{(GITHUB_WORKSPACE|CI_PROJECT_DIR|WORKSPACE)\}|(GITHUB_WORKSPACE|CI_PROJECT_DIR|WORKSPACE)(?![\w])|\{\{\s*github\.workspace\s*\}\}|\((abs_)?top_(build|src)dir\))/;
/**
 * The shell's name for the current directory (`${PWD}/docker-data`, `$(pwd)/out`), and a Makefile's (`$(PWD)/static`,
 * `$(CURDIR)/out`, Automake's `$(builddir)` and `$(srcdir)`), where it can be followed. Automake's `$(top_builddir)` is the tree's top.
 */
const CURRENT_DIRECTORY = /^"?(\$\{PWD\}|\$PWD(?![\w])|\$\(pwd\)|\$\((PWD|CURDIR|(abs_)?(build|src)dir)\))/;
/**
 * Build conventions' variables for a toolchain's programs (haskell-ci's `$CABAL` and `$HC`, make's
 * `$CC` and `$CXX`, make's `$(RM)`, which is `rm -f`, Automake's `$(MKDIR_P)`, which is `mkdir -p`, and `$(SHELL)`, a shell like the user's `$SHELL`):
 * they run that program, and are judged as it is.
 */
export const TOOLCHAIN_VARIABLES: Readonly<Record<string, string>> = {
  CABAL: 'cabal',
  HC: 'ghc',
  GHC: 'ghc',
  CC: 'cc',
  CXX: 'c++',
  MAKE: 'make',
  GO: 'go',
  SHELL: 'sh',
  RM: 'rm',
  MKDIR_P: 'mkdir',
};
/** The shell's builtins that give a variable a value (or take it away) without `NAME=`. */
const DECLARES = 'export|declare|typeset|readonly|local|read|for|unset';
const CONVENTIONAL = `GITHUB_WORKSPACE|CI_PROJECT_DIR|WORKSPACE|PWD|${Object.keys(TOOLCHAIN_VARIABLES).join('|')}`;
/** The command sets one of the conventional variables itself (an assignment, export, read, a loop's variable). */
export const SETS_CONVENTIONAL_VARIABLE = new RegExp(`\\b(${CONVENTIONAL})\\+?=|\\b(${DECLARES})\\b[^;&|\\n]*\\b(${CONVENTIONAL})\\b`);
/** A command that sets HOME itself: `$HOME` in it may not be the user's home. */
export const SETS_HOME = new RegExp(`\\bHOME\\+?=|\\b(${DECLARES})\\b[^;&|\\n]*\\bHOME\\b`);
/** A shell variable named for a version (`$PYTHON_VERSION`, `${NODE_VER}`): a CI matrix's version number. */
export const VERSION_VARIABLE = /^\$\{?(\w*VERSION|(\w+_)?VER)\}?$/i;
/** A command that sets a version-named variable itself: what it expands to is the command's own choice. */
export const SETS_VERSION_VARIABLE = new RegExp(
  `(^|[^\\w$])(\\w*VERSION|(\\w+_)?VER)\\+?=|\\b(${DECLARES}|mapfile|readarray)\\b[^;&|\\n]*\\b(\\w*VERSION|(\\w+_)?VER)\\b`,
  'i',
);

/**
 * `$GITHUB_WORKSPACE/test.sh` as the path it names in the workspace, and `${PWD}/out` as the path under
 * the current directory, when the rest is fixed and the command did not set the variable itself;
 * otherwise undefined.
 */
export function workspaceVariablePath(t: string, st: State): string | undefined {
  const ci = CI_WORKSPACE.exec(t);
  const m = ci ?? CURRENT_DIRECTORY.exec(t);
  if (!m || st.setsConventionalVariable) return undefined;
  const rest = t.slice(m[0].length).replace(/"$/, '');
  if (/[$`"]/.test(rest) || (rest !== '' && !rest.startsWith('/'))) return undefined;
  const root = ci ? st.ws : st.cwd;
  return root === null ? undefined : root + rest;
}

/** One program run, as a rule sees it: its name (without directory), its arguments, the judgement so far. */
interface Invocation {
  prog: string;
  args: Word[];
  st: State;
  /** Judge other words as a command of their own (`npx jest`, `python -m ruff check`). */
  judge(words: Word[]): void;
  /** Whether a program table names `name` (a program the checker judges by its arguments). */
  knows(name: string): boolean;
  /** The command's leading assignments (`DESTDIR=$PWD/stage make install`), as written. */
  env?: readonly string[];
  /** xargs hands it names from its input as arguments (`find . -name '*.py' | xargs grep -n password`). */
  namesFromInput?: boolean;
}

/**
 * Options that ask a tool about itself or refresh its own data (`wpscan --update`, `commix --smoke-test`),
 * naming no target; Go's flag package takes a long flag with one dash (`s3scanner -version`).
 */
const ABOUT_ITSELF = /^(-h|--help|-help|-hh|--hh|-V|--version|-version|--list|--update|-ut|-update-templates|--smoke-test)$/;
/**
 * Only the tool asked about: help, its version or its lists, or its own data refreshed, of the
 * program or of a subcommand (`gato search -h`, `Coercer.py scan -h`: every word before names one).
 */
export const onlyAsksAbout = (args: Word[]) =>
  args.length > 0 &&
  (args.every((a) => ABOUT_ITSELF.test(a.text)) ||
    // A lone `version` or `help` verb (`trufflehog version`).
    (args.length === 1 && /^(version|help)$/.test(args[0]!.text)) ||
    // Help asked for verbosely (`wifite -h -v`): the longer help.
    (args.some((a) => /^(-h|--help)$/.test(a.text)) && args.every((a) => /^(-h|--help|-v|-vv|--verbose)$/.test(a.text))) ||
    (/^(-h|--help|-V|--version)$/.test(args.at(-1)!.text) && args.slice(0, -1).every((a) => /^(-h|--help|-V|--version|[a-z][a-z_-]*)$/.test(a.text))));

/** What a program family says about one of its programs: add reasons, or mark the text not repeatable. */
export type Rule = (c: Invocation) => void;

/** A family's rules, by program name; `patterns` for names that come in many spellings (`mkfs.ext4`). */
export interface RuleTable {
  programs: Readonly<Record<string, Rule>>;
  patterns?: readonly (readonly [RegExp, Rule])[];
}

export type PathClass = 'inside' | 'outside' | 'root' | 'home' | 'all' | 'variable' | 'unknown';

export const PATH_WORDS: Record<Exclude<PathClass, 'inside'>, string> = {
  outside: 'outside the workspace',
  root: 'the root directory',
  home: 'the home directory',
  all: 'everything in the current directory',
  variable: 'a path built from a variable',
  unknown: 'a path after changing to an unknown directory',
};

const SAFE_DEVICES = /^\/dev\/(null|zero|stdout|stderr|stdin|tty|full|random|urandom|fd\/\d+)$/;
/** The shared temporary directories; on macOS /tmp and /var/tmp are links into /private. */
export const TEMP_DIRS = /^\/(private\/)?(tmp|var\/tmp)(\/|$)/;
/** A hidden data file straight under the temporary directory, as it reads with that directory taken off (`/.sprockets-manifest.json`). */
const HIDDEN_DATA_FILE = /^\/\.[\w.-]+\.(json|ya?ml|txt|log|csv|xml|html?|md|toml|ini)$/;
/**
 * A path the text names under a temporary directory (`/tmp/build`, `/var/tmp/x.log`): written there
 * freely, so removed or moved away freely too (the sticky bit keeps other users' files there theirs). The
 * directory itself, a glob over it (`/tmp/*`) or a name a variable completes (`/tmp/$X`, which may climb
 * out with `..`) is not one; a glob over a named directory there (`/tmp/ota/*`) stays in that directory.
 */
export const namedTempPath = (abs: string | undefined, text: string) =>
  underTempDir(abs) && (!/[*?[$`]/.test(text) || (!/[$`]/.test(text) && !/[*?[]/.test(text.slice(0, text.lastIndexOf('/'))) && !/[*?[]/.test(abs)));
/** A path below a temporary directory, not the directory itself. */
export const underTempDir = (abs: string | undefined): abs is string => abs !== undefined && TEMP_DIRS.test(abs) && !/^\/(private\/)?(var\/)?tmp\/?$/.test(abs);

export function word(text: string): Word {
  return { text, expands: false, nested: [], procSub: false };
}

export function danger(st: State, reason: string): void {
  if (!st.reasons.includes(reason)) st.reasons.push(reason);
  st.repeatable = false;
}

/** A program that does what `does` says whatever it is given, unless asked only about itself (`-h`). */
export const dangerUnlessOnlyAsked =
  (does: (prog: string, args: Word[]) => string): Rule =>
  ({ prog, args, st }) => {
    st.repeatable = false;
    if (!onlyAsksAbout(args)) danger(st, does(prog, args));
  };

/**
 * A program's name without its directory. A Windows program run from the current directory
 * (`.\devcon.exe`) reaches the lexer as `.devcon.exe`, the backslash taken for an escape: its name is `devcon.exe`.
 */
export const base = (w: Word | undefined) => {
  if (!w) return '';
  // Most words are a bare name already (`git`, `npm`): no directory to take off and no leading dot.
  if (!w.text.includes('/') && !w.text.startsWith('.')) return w.text;
  return path.basename(w.text).replace(/^\.(?=[A-Za-z][\w-]*\.(exe|bat|cmd|com|ps1)$)/i, '');
};

function isUnder(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  // `...` and `..x` are names inside; only `..` itself or `../…` climbs out.
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !path.isAbsolute(rel));
}

/** A path under the sandbox's fixed workspace path as the same path under the workspace's own. */
function asHost(ws: string, abs: string): string {
  return isUnder(SANDBOX_WORKSPACE, abs) ? path.join(ws, path.relative(SANDBOX_WORKSPACE, abs)) : abs;
}

/**
 * A word that is only a command substitution running find with a name or path test (`find . -name
 * __pycache__`, `$(find build -path '*.pyc')`): the paths it prints lie under its start directories,
 * so it points where they do. A find that acts itself (-exec, -delete, -fprint) or whose test matches
 * any name (`-name '*'`) is left a computed path.
 */
const FIND_SUBSTITUTION = /^"?(?:`find\s+([^`$;|&<>]*)`|\$\(find\s+([^()`$;|&<>]*)\))"?$/;
function findStarts(t: string): string[] | undefined {
  const m = FIND_SUBSTITUTION.exec(t);
  if (!m) return undefined;
  const words = (m[1] ?? m[2]!).trim().split(/\s+/);
  let k = 0;
  while (/^-[HLP]$/.test(words[k] ?? '')) k++;
  const starts: string[] = [];
  while (k < words.length && !/^[-(!]/.test(words[k]!)) starts.push(words[k++]!);
  const expr = words.slice(k);
  if (expr.some((w) => /^-(exec|execdir|ok|okdir|delete|fprint0?|fprintf|fls)$/.test(w))) return undefined;
  const named = expr.some((w, j) => /^-(i?name|i?path|i?wholename|i?regex)$/.test(w) && !/^['"]?[*?.]*['"]?$/.test(expr[j + 1] ?? ''));
  if (!named || starts.some((s) => /['"\\~]/.test(s))) return undefined;
  return starts.length > 0 ? starts : ['.'];
}

/**
 * A word that is only a command substitution choosing among fixed paths it echoes (`"$([ -n "$ZSH_VERSION" ]
 * && echo ~/.zprofile || echo ~/.profile)"`, a shell's start-up file picked at run time): the paths it may print.
 */
function echoedPaths(t: string): string[] | undefined {
  if (!/^"?\$\(.*\)"?$/s.test(t)) return undefined;
  const paths = [...t.matchAll(/\becho\s+("?(?:~|\/|\$HOME\b)[^\s;|&)"]*)/g)].map((m) => m[1]!.replace(/^"/, ''));
  return paths.length ? paths : undefined;
}

/** The working directory after `cd ~`: the home, whose real path the checker does not know (outside the workspace). */
export const HOME_CWD = '/~home';

/** `${NAME:-DEFAULT}REST` (or `${NAME-DEFAULT}`) as DEFAULTREST, the default found across nested braces. */
function defaultValue(t: string): string | undefined {
  const m = /^"?\$\{\w+:?-/.exec(t);
  if (!m) return undefined;
  let depth = 1;
  for (let k = m[0].length; k < t.length; k++) {
    if (t[k] === '{') depth++;
    else if (t[k] === '}' && --depth === 0) return t.slice(m[0].length, k) + t.slice(k + 1).replace(/"$/, '');
  }
  return undefined;
}

/**
 * The home, and the places in it the user's shell and programs read their settings from, by the
 * variables that name them (in Make's spelling too, `$(HOME)`): the XDG directories, zsh's (`$ZDOTDIR`, the function path's `${fpath[1]}`, which
 * completions are written into, oh-my-zsh's `$ZSH` and `$ZSH_CUSTOM`), oh-my-bash's and fish's; and the tools' own homes a command prints (`$(pyenv root)`,
 * `$(go env GOPATH)`, `$(npm root -g)`), which lie in the home by their defaults, as Go's `$GOPATH` (`~/go`) does.
 */
const HOME_PLACE =
  /^"?\$\{?(HOME|GOPATH|XDG_(CONFIG|DATA|CACHE|STATE)_HOME|ZDOTDIR|fpath\[\d+\]|ZSH|ZSH_CUSTOM|OSH|OSH_CUSTOM|__fish_config_dir|__fish_user_data_dir|fisher_path)\}?"?(\/|$)|^"?\$\((HOME|XDG_(CONFIG|DATA|CACHE|STATE)_HOME)\)"?(\/|$)|^"?(\$\$?\((shell )?|`)((py|rb|nod|go|j|pl)env root|go env GOPATH|npm (root|prefix) -g|stack path --stack-root)(\)|`)"?(\/|$)/;

/**
 * A Makefile's install directories (`$(PREFIX)/bin`, `${PREFIX}/include`, `$(INSTALL_PATH)`, Go's
 * `$(GOBIN)`, GNU's lower-case `$(bindir)`, a kernel module's `$(MODDESTDIR)`): by the conventions' defaults, directories of the system (`/usr/local`), of the user's
 * desktop or of the home's programs. A script's `$SYSCONFDIR` is the system's configuration directory by the same convention.
 */
export const MAKE_INSTALL_DIR =
  /^"?\$[({](PREFIX|EXEC_PREFIX|BINDIR|SBINDIR|LIBDIR|LIB_DIR|MANDIR|MAN_DIR|MAN1DIR|DOCDIR|DOC_DIR|DATADIR|DATA_DIR|SHAREDIR|SHARE_DIR|SHARE|SYSCONFDIR|INCLUDEDIR|INSTALL_PATH|INSTALL_DIR|INSTALLDIR|INSTALL_PREFIX|GOBIN|prefix|exec_prefix|bindir|sbindir|libdir|libexecdir|datadir|datarootdir|mandir|man\d?dir|docdir|htmldir|pdfdir|infodir|localedir|sysconfdir|includedir|localstatedir|runstatedir|sharedstatedir|pkgdatadir|pkglibdir|pkglibexecdir|pkgincludedir)[)}](\/|"?$|\$[({])|^"?\$[({](MODDESTDIR|STAGINGMODDIR|INSTALL_MOD_PATH)[)}]|^"?\$(SYSCONFDIR|sysconfdir)(\/|"?$)/;

/**
 * An installed toolchain's home, by the variable its tools find it by (`$JAVA_HOME/lib`, `$GOROOT/src`, a Makefile's `$(GOROOT)/src`,
 * `$ANDROID_HOME/platforms`, PHP's `$PHP_INI_DIR/php.ini`): what is written there changes the JDK, Go, SDK or PHP of every build and run on the machine.
 */
const TOOLCHAIN_HOME =
  /^"?\$[({]?(JAVA_HOME|JRE_HOME|GOROOT|ANDROID_HOME|ANDROID_SDK_ROOT|ANDROID_NDK_HOME|ANDROID_NDK_ROOT|CATALINA_HOME|HADOOP_HOME|SPARK_HOME|M2_HOME|MAVEN_HOME|GRADLE_HOME|RUSTUP_HOME|FLUTTER_ROOT|DOTNET_ROOT|PHP_INI_DIR)[)}]?"?(\/|$)/;

/**
 * A snap's writable directories by the variables snapd gives its hooks and services: `$SNAP_DATA` and
 * `$SNAP_COMMON` under /var/snap, the machine's; `$SNAP_USER_DATA` and `$SNAP_USER_COMMON` under the home's ~/snap.
 */
const SNAP_PLACE = /^"?\$\{?SNAP_(USER_)?(DATA|COMMON)\}?"?(\/|$)/;

/** A Windows variable naming the user's profile (captured) or the machine's program, data and system directories. */
export const WINDOWS_PLACE =
  /^"?%(?:(USERPROFILE|HOMEPATH|APPDATA|LOCALAPPDATA)|ProgramFiles|ProgramFiles\(x86\)|ProgramW6432|ProgramData|CommonProgramFiles|CommonProgramFiles\(x86\)|SystemRoot|windir|SystemDrive|ALLUSERSPROFILE|PUBLIC)%/i;

/**
 * A variable named for a user's ssh directory or authorized keys (`"$targetUserSSHSettings"`, `$AUTHORIZED_KEYS_FILE`):
 * whichever user's it is, it lies in a home, and what is written there decides who may log in.
 */
const SSH_PLACE_VARIABLE = /^"?\$\{?\w*(ssh_?(dir|settings|folder|home)|authorized_?keys)\w*\}?"?(\/|$)/i;

/** Where a path argument points, relative to the workspace. */
export function classify(w: Word | string, st: State): { cls: PathClass; abs?: string } {
  const t = typeof w === 'string' ? w : w.text;
  const tildeIsName = typeof w !== 'string' && w.literalTilde === true;
  // A name that begins with a quoted `$` (`'$HOME'`) is a file of that name here, not the variable's place.
  if (typeof w !== 'string' && w.literalDollar) return classify(`./${t}`, st);
  if ((!tildeIsName && /^~([A-Za-z_][\w.-]*)?(\/|$|[{*?[])/.test(t)) || HOME_PLACE.test(t) || SSH_PLACE_VARIABLE.test(t)) return { cls: 'home' };
  const snap = SNAP_PLACE.exec(t);
  if (snap) return snap[1] ? { cls: 'home' } : { cls: 'outside', abs: '/var/snap' };
  const inWorkspace = workspaceVariablePath(t, st);
  if (inWorkspace !== undefined) return classify(inWorkspace, st);
  // Where any of the paths it may print lies outside the workspace, so does the word.
  const echoed = echoedPaths(t)?.map((e) => classify(e, st));
  const outside = echoed?.find((c) => c.cls !== 'inside');
  if (outside) return outside;
  const starts = findStarts(t);
  if (starts !== undefined) {
    const places = starts.map((s) => classify(s, st));
    // What find prints under the workspace itself is inside it, never the whole of it.
    const beyond = places.find((c) => c.cls !== 'inside' && c.cls !== 'all');
    return beyond ?? { cls: 'inside', abs: places[0]!.abs };
  }
  // A variable with a default (`${ZDOTDIR:-$HOME}/.zprezto`) points where its default does when unset.
  const fallback = defaultValue(t);
  if (fallback !== undefined) {
    const c = classify(fallback, st);
    if (c.cls === 'home' || c.cls === 'outside' || c.cls === 'root') return c;
  }
  // A Makefile's install directory (`$(PREFIX)/bin`, `$(MAN_DIR)/man1`) is the system's: /usr/local unless
  // the make is told otherwise. Whatever a recipe puts after `$(DESTDIR)` (`$(DESTDIR)$(PREFIX)$(BINDIR)`,
  // `$(DESTDIR)$(man1dir)`, `$(DESTDIR)/etc/x`) is such a place too, as DESTDIR is empty unless a packager
  // sets it (`DESTDIR=… make install` is judged where it is set).
  const staged = /^"?\$[({]DESTDIR[)}]/.exec(t);
  const installed = staged ? t.slice(staged[0].length).replace(/^"?/, '"') : t;
  if (MAKE_INSTALL_DIR.test(installed) || (staged && /^"?(\/|\$[({])/.test(installed))) return { cls: 'outside', abs: '/usr/local' };
  // Windows' own places by the variables that name them (`%ProgramFiles%\\dotnet`, `%windir%`, `%APPDATA%\\x`): the
  // machine's program and system directories, and the user's profile.
  const windowsPlace = WINDOWS_PLACE.exec(t);
  if (windowsPlace) return windowsPlace[1] ? { cls: 'home' } : { cls: 'outside', abs: t.replace(/^"/, '') };
  // A Windows drive's path (`C:\\tmp`, `M:\\EFI\\Boot`, `c:/artifact` as Git Bash writes it) is another place than a workspace on Linux.
  if (/^"?[A-Za-z]:[\\/]/.test(t)) return { cls: 'outside', abs: t.replace(/^"/, '') };
  // A word whose start is computed ($x, $(…), `…`) can point anywhere.
  if (/^"?(\$|`)/.test(t)) return { cls: 'variable' };
  // Globs and brace expansions: judge by the fixed prefix (`/*` is the root, `*` is everything here).
  const globAt = t.search(/[*?[{]/);
  const fixed = globAt >= 0 ? t.slice(0, globAt) : t;
  if (globAt >= 0 && /^(\.?\/?|\.\/)$/.test(fixed) && /^(\.\/)?(\*|\.\*|\*\/?|\.\[.*)$/.test(t)) return { cls: 'all' };
  const dir = fixed.endsWith('/') || fixed === '' ? fixed : globAt >= 0 ? path.dirname(fixed) : fixed;
  if (path.isAbsolute(dir)) {
    const abs = asHost(st.ws, path.resolve(dir));
    if (abs === '/') return { cls: 'root', abs };
    return { cls: isUnder(st.ws, abs) ? 'inside' : 'outside', abs };
  }
  if (st.cwd === null) return { cls: 'unknown' };
  const abs = path.resolve(st.cwd, dir === '' ? '.' : dir);
  if (abs === '/') return { cls: 'root', abs };
  if (!isUnder(st.ws, abs)) return { cls: 'outside', abs };
  // A glob is everything here only when its first name is wildcards alone (`*`, `**/x`); `*.egg` names some.
  if (abs === st.ws && (t === '.' || t === './' || t === '..' || (globAt === 0 && /^[*?]+$/.test(t.split('/')[0]!)))) return { cls: 'all', abs };
  return { cls: 'inside', abs };
}

/** This machine by its loopback name or address, with a port or not (`localhost`, `127.0.0.1:1025`, `[::1]`). */
export const THIS_MACHINE_ADDRESS = /^(localhost|127\.\d+\.\d+\.\d+|\[?::1\]?)(:\d+)?$/;
/** Whether a host, an address or a URL names this machine (`127.0.0.1:8080`, `udp://127.0.0.1:80`, `http://localhost:8545/`). */
export const namesThisMachine = (text: string) => THIS_MACHINE_ADDRESS.test(text.replace(/^[a-z][\w+.-]*:\/\//i, '').replace(/[/?#].*$/, ''));

/** A Makefile's variable alone (`$(BUILD_DIR)`), its name captured. */
export const MAKE_VARIABLE = /^\$\(([A-Z][A-Z0-9_]*)\)$/;
/**
 * Whether the only command substitution the lexer found in a word is a Makefile's variable of that name:
 * `$(NAME)` reads to it as a command run, and no other command may hide in the word.
 */
export const nestsOnlyVariable = (w: Word, name: string | undefined) =>
  w.nested.length === 0 || (name !== undefined && w.nested.every((n) => n.trim() === name));

/** The value of option `k` (`--x=v` or `--x v`), or undefined. */
export function optionValue(args: Word[], k: number): string | undefined {
  const t = args[k]!.text;
  const eq = t.indexOf('=');
  if (eq >= 0) return t.slice(eq + 1);
  const next = args[k + 1]?.text;
  return next !== undefined && !next.startsWith('-') ? next : undefined;
}

/** Non-option arguments (after `--` everything counts); `withValue` names options that take the next word. */
export function operands(args: Word[], withValue: RegExp = /^$/): Word[] {
  const out: Word[] = [];
  let opts = true;
  for (let k = 0; k < args.length; k++) {
    const t = args[k]!.text;
    if (opts && t === '--') {
      opts = false;
      continue;
    }
    if (opts && t.startsWith('-') && t !== '-') {
      if (withValue.test(t)) k++;
      continue;
    }
    out.push(args[k]!);
  }
  return out;
}

/** A short flag, alone or in a cluster (`-rf` has `r`), or one of the long spellings. */
export const hasFlag = (args: Word[], short: string, long: string[] = []) =>
  args.some((a) => (a.text.startsWith('-') && !a.text.startsWith('--') && a.text.slice(1).includes(short)) || long.includes(a.text));

/**
 * Files through which a repository makes git run code: hooks, config (core.fsmonitor,
 * core.hooksPath, filter and diff drivers, aliases), attributes that name those drivers,
 * submodules and alternates, and a hook by its name in any `hooks/` directory (a submodule's
 * git directory under `.git/modules`, a bare repository, a `core.hooksPath`). The worker itself
 * runs git in the workspace (checkpoints, the result branch), outside the sandbox, so writing them
 * is writing code the worker runs.
 */
export const GIT_CODE_PATH =
  /(^|\/)\.git(\/(config(\.worktree)?|hooks(\/.*)?|info(\/attributes)?|objects\/info(\/alternates)?)?)?\/?$|(^|\/)\.git(attributes|modules)$|(^|\/)hooks\/(pre-commit|post-checkout|pre-push|post-merge|post-commit|post-rewrite|pre-rebase|commit-msg|prepare-commit-msg|pre-receive|post-receive|post-update|pre-auto-gc|reference-transaction|fsmonitor-watchman)$/;
/** A glob that reaches into .git or onto a .git* file: what it names cannot be told before it runs. */
const GIT_GLOB = /(^|\/)\.git(\/[^*?[]*)?[^/]*[*?[]|(^|\/)\.git[^/]*[*?[]/;
export const GIT_CODE_REASON = 'which changes how git runs code (hooks, filters, config; the worker runs git here too)';

/** Whether a path names one of those files, as written or after resolving `..` and `cd`. */
export function gitCodePath(w: Word, st: State): boolean {
  const t = w.text;
  if (GIT_CODE_PATH.test(path.posix.normalize(t)) || GIT_GLOB.test(t)) return true;
  const c = classify(w, st);
  return c.abs !== undefined && GIT_CODE_PATH.test(path.resolve(st.cwd ?? '/', t));
}

/** The names of programs every system has, which scripts run by name through the search path. */
const SYSTEM_PROGRAM_NAME =
  /^(ls|cat|cp|mv|rm|ps|id|tar|gzip|chmod|chown|curl|wget|sudo|su|whoami|find|grep|sed|awk|env|which|head|tail|date|uname|hostname|service|systemctl|apt|apt-get|python|python3|perl|netstat|ifconfig|ip|passwd|mount|kill|crontab|ssh|scp|nc|git|make|gcc|bash|sh)$/;
/** A file a command writes (redirect, tee, cp, dd, sed -i): `what` reads before the target, "writes to /etc/passwd (outside the workspace)". */
const CGROUP_CONTROL = /(^|\/)(release_agent|notify_on_release|cgroup\.procs)$/;
/**
 * A file name that is an option making an archiver or a copier run a command (`--checkpoint-action=exec=sh
 * shell.sh`, `--use-compress-program=…`, rsync's `-e sh shell.sh`), or the `--checkpoint=N` that the
 * action needs beside it: a later `tar cf x *` or `rsync *` in that directory reads the name as its
 * option and runs the command.
 */
export const COMMAND_OPTION_NAME =
  /^(\.\/)?(--?(checkpoint|checkpoint-action|use-compress-program|to-command|rsh-command|rsync-path|info-script|new-volume-script|rsh)=|-e\s+\S)/;
/** A URL (`nfs://server/share/a.out`, `smb://…`, `ftp://…`): another machine's file. */
export const URL_TARGET = /^[a-z][\w+.-]*:\/\/[^/\s]/i;

/** Directories shells load code from as they start: completions, functions, start-up snippets. */
const SHELL_LOADED_DIR =
  /(^|\/)(bash_completion\.d|bash-completion\/completions|zsh\/(site-|vendor-)?functions|site-functions|fish\/(vendor_)?(completions|conf\.d|functions)|profile\.d)\/[^/]+$/;

/** A variable named for sudoers, cron tables, shell start-up files, registry credentials or ssh trust. */
const NAMED_TRUST_VARIABLE =
  /^"?\$[{(]?(\w*(SUDOERS|CRONTABS?|CRON_?(D|DIR|PATH|FILE)|NPMRC|PYPIRC|NETRC|BASHRC|ZSHRC|AUTHORIZED_KEYS|KNOWN_HOSTS)\w*|(SHELL_|BASH_)?PROFILE(_PATH|_FILE)?)[})]?("|\/|$)/i;
/**
 * The ports of this machine's infrastructure, not of a project's own server: the worker's Temporal
 * (7233, and its UI on 8233) and PostgreSQL, other databases, caches and brokers, Docker's and the
 * cluster's APIs, etcd, Vault and Consul. Reached on loopback they are another login's data and
 * controls. A web app's port (3000, 8000, 8080, …), the project's own dev server, is the project's.
 */
const INFRASTRUCTURE_PORTS = new Set([
  7233, 8233, 5432, 3306, 6379, 27017, 9200, 9300, 11211, 5672, 15672, 4222, 1883, 9092, 2181, 5984, 7474, 8086, 26257, 9042, 2375, 2376, 2379, 2380, 6443,
  10250, 8200, 8500,
]);
/** Whether a loopback word names one of INFRASTRUCTURE_PORTS (`127.0.0.1:2379`, or nc's `localhost 5432`). */
export function infrastructurePort(text: string, args: Word[]): boolean {
  const port = /(?:127\.\d+\.\d+\.\d+|localhost|\]):(\d+)/.exec(text)?.[1] ?? args[args.findIndex((a) => a.text === text) + 1]?.text;
  return port !== undefined && /^\d+$/.test(port) && INFRASTRUCTURE_PORTS.has(Number(port));
}
/**
 * bash's socket of this machine's own test service (`echo > /dev/tcp/127.0.0.1/5555`, a CI's wait for its server): a
 * connection that stays here, unless its port is the infrastructure's.
 */
export function ownServiceSocket(t: string): boolean {
  const socket = /^\/dev\/(tcp|udp)\/(127\.\d+\.\d+\.\d+|localhost)\/(\d+)$/.exec(t);
  return socket !== null && !infrastructurePort(`${socket[2]}:${socket[3]}`, []);
}

export function checkWriteTarget(target: Word, st: State, what: string): void {
  const t = target.text;
  if (gitCodePath(target, st)) danger(st, `${what} ${t}, ${GIT_CODE_REASON}`);
  if (SAFE_DEVICES.test(t) || /^&?\d+$/.test(t) || t === '-' || ownServiceSocket(t)) return;
  // /dev/shm is no device but memory every user may write, which leaves nothing on disk: where
  // intruders stage what they run, and no place a build keeps its files.
  if (/^\/dev\/shm(\/|$)/.test(t)) return danger(st, `${what} ${t}, shared memory outside the workspace where nothing reaches the disk`);
  if (/^\/dev\//.test(t)) return danger(st, `writes to a device (${t})`);
  // A cgroup's release agent runs as root on the host when the group empties, wherever the
  // hierarchy is mounted (`/tmp/cgrp`, `$d/w`): the container escape of a privileged container.
  if (CGROUP_CONTROL.test(t)) return danger(st, `${what} a cgroup's control file (${t}), which runs a program or moves a process on the host`);
  if (COMMAND_OPTION_NAME.test(t)) return danger(st, `${what} a file named as a command-running option (${t}), which a later wildcard hands to tar or rsync`);
  if (URL_TARGET.test(t)) return danger(st, `${what} ${t} (another machine)`);
  // A shell's start-up file by its bare name (`>> .bashrc`) is written where a guide expects the shell to stand, the home:
  // a project keeps its own copy under a directory of its own (`dotfiles/.bashrc`).
  if (/^(\.\/)?\.(bashrc|zshrc|bash_profile|bash_login|profile|zprofile|zshenv)$/.test(t))
    return danger(st, `${what} ${t}, a shell start-up file by its bare name, as the home holds it`);
  const c = classify(target, st);
  if (c.cls === 'inside' || c.cls === 'all') return;
  if (c.abs && TEMP_DIRS.test(c.abs)) {
    // A hidden name in the shared temporary directory (`/var/tmp/.system/x`) is where a file is put not to be
    // seen; the display servers' socket directories (`/tmp/.X11-unix`) are the system's own.
    // A hidden data file straight under it (`/tmp/.sprockets-manifest.json`) is a build's scratch copy, nothing run.
    const inTemp = c.abs.replace(/^\/(private\/)?(var\/)?tmp/, '');
    if (/\/\.(?!(X11|ICE|font|XIM|Test)-unix(\/|$))[^./][^/]*/.test(inTemp) && !HIDDEN_DATA_FILE.test(inTemp))
      return danger(st, `${what} ${t}, a hidden place in the shared temporary directory, where files are put not to be seen`);
    // A file in the shared temporary directory named as a system program (`/tmp/ls`, `/tmp/tar`) is the
    // step of a search-path hijack: a privileged script run with /tmp first on its PATH runs it instead.
    // Deeper (`/tmp/exfiltrate/passwd`, `/tmp/fakeroot/etc/passwd`) it is a copy kept under a name of its own.
    if (SYSTEM_PROGRAM_NAME.test(path.posix.basename(c.abs)) && !underTempDir(path.posix.dirname(c.abs)))
      return danger(st, `${what} ${t}, a file in the temporary directory named as a system program, which a search path there runs in its place`);
    st.repeatable = false;
    return;
  }
  // Under a prefix a command finds (`$(brew --prefix)/etc/bash_completion.d/x`), a shell's completion or
  // start-up directory holds code every new shell runs; under a variable it is a package's staging tree.
  if (SHELL_LOADED_DIR.test(t) && (c.cls !== 'variable' || /^(\$\(|`)/.test(t))) return danger(st, `${what} ${t}, a directory every new shell loads code from`);
  if (TOOLCHAIN_HOME.test(t)) return danger(st, `${what} ${t}, an installed toolchain every project on the machine uses`);
  // A variable so named (`"${SUDOERS_DEST}"`, `${CRONTAB_PATH}/app`, `$NPMRC_FILE`, `$profile_path`) says where it points.
  // A bare lower-case `$profile` is as often a coverage or build profile.
  if (c.cls === 'variable' && NAMED_TRUST_VARIABLE.test(t) && !/^"?\$[{(]?profile[})]?"?$/.test(t))
    return danger(st, `${what} ${t}, where its variable's name says the machine's sudoers or cron tables, or the user's start-up or credential files, are`);
  if (c.cls === 'variable' || c.cls === 'unknown') {
    st.repeatable = false;
    return;
  }
  danger(st, `${what} ${t} (${PATH_WORDS[c.cls]})`);
}
