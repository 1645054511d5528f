import { readableJulia, readableR } from './package-calls.js';

// Inline interpreter code the checker can read after all: the few idioms agents write to read a
// version or a field of a JSON file (`node -p "require('./package.json').version"`,
// `python3 -c "import sys, json; print(json.load(sys.stdin)['name'])"`), and AppleScript that only
// speaks, shows or returns a value (`osascript -e 'say "done"'`, `return (current date)`). Anything
// else inline stays opaque. The grammar is a closed list on purpose: a call, an assignment or an
// import of something not named here makes the code unreadable again.

/** `.name`, `["key"]`, `['key']` or `[0]` after a value. */
const ACCESS = String.raw`(?:\s*\.\s*[A-Za-z_$][\w$]*|\s*\[\s*(?:'[^'\\]*'|"[^"\\]*"|\d+)\s*\])*`;
/** A JSON file by a relative path that stays inside the directory (no `..`). */
const JSON_FILE = String.raw`(?:\./)?(?:[\w@-][\w@.-]*/)*[\w@-][\w@.-]*\.json`;

/** Random bytes made here and printed as text (`require('crypto').randomBytes(32).toString('hex')`): a new secret, nothing read. */
const NODE_RANDOM = String.raw`(?:require\(\s*(?:'crypto'|"crypto"|'node:crypto'|"node:crypto")\s*\)|crypto)\s*\.\s*(?:randomBytes\(\s*\d+\s*\)\s*\.\s*toString\(\s*(?:'(?:hex|base64|base64url)'|"(?:hex|base64|base64url)")\s*\)|randomUUID\(\s*\))`;
/** A JSON file of the project read and parsed (`JSON.parse(require('fs').readFileSync('package.json', 'utf8'))`), which checks that it parses. */
const NODE_JSON_READ = String.raw`JSON\.parse\(\s*require\(\s*(?:'(?:node:)?fs'|"(?:node:)?fs")\s*\)\.readFileSync\(\s*(?:'${JSON_FILE}'|"${JSON_FILE}")\s*(?:,\s*(?:'utf-?8'|"utf-?8"))?\s*\)\s*\)`;
/** Where a package resolves from (`require.resolve('@crxjs/vite-plugin/package.json')`): a path looked up, no module's code run. */
const NODE_RESOLVE = String.raw`require\.resolve\(\s*(?:'[@\w][\w@./-]*'|"[@\w][\w@./-]*")\s*\)`;
const NODE_VALUE = String.raw`(?:(?:require\(\s*(?:'${JSON_FILE}'|"${JSON_FILE}")\s*\)|${NODE_JSON_READ})${ACCESS}|process\s*\.\s*(?:version|versions${ACCESS}|platform|arch|execPath|cwd\(\s*\))|${NODE_RESOLVE}|${NODE_RANDOM})`;
const NODE_WRAPPED = String.raw`(?:${NODE_VALUE}|JSON\.stringify\(\s*${NODE_VALUE}(?:\s*,\s*null\s*,\s*\d+)?\s*\)|Object\.keys\(\s*${NODE_VALUE}\s*\))`;
const NODE_PRINT = new RegExp(String.raw`^\s*${NODE_WRAPPED}\s*;?\s*$`);
/** A literal label before the value, joined to it or as an argument of its own (`console.log('JWT_SECRET=' + …)`, `console.log('cwd', …)`). */
const NODE_LABEL = String.raw`(?:(?:'[^'\\]*'|"[^"\\]*")\s*[+,]\s*)?`;
const NODE_EVAL = new RegExp(String.raw`^\s*(?:console\.log\(\s*${NODE_LABEL}${NODE_WRAPPED}\s*\)|${NODE_JSON_READ})\s*;?\s*$`);

const PY_MODULE = String.raw`[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*`;
const PY_IMPORT = new RegExp(
  String.raw`^(?:import\s+${PY_MODULE}(?:\s+as\s+\w+)?(?:\s*,\s*${PY_MODULE}(?:\s+as\s+\w+)?)*|from\s+${PY_MODULE}\s+import\s+\w+(?:\s*,\s*\w+)*)$`,
);
/** A string literal with no escapes. */
const PY_LITERAL = String.raw`(?:'[^'\\]*'|"[^"\\]*")`;
/**
 * Where a program is on the PATH (`shutil.which('uv')`): looked up, not run; a random token or id made
 * here (`secrets.token_hex()`); a module's version or the file it was loaded from (`parsetab.__file__`), or the version
 * imported by its name (`from metaextract import __version__`), or its file as `inspect.getfile(segyio)` finds it.
 */
const PY_VALUE = String.raw`(?:secrets\.token_(?:hex|urlsafe)\(\s*\d*\s*\)|uuid\.uuid4\(\s*\)|${PY_MODULE}\.__(?:version|file)__|__version__|inspect\.getfile\(\s*${PY_MODULE}\s*\)|sys\.version(?:_info)?(?:\[\s*:?\s*\d+\s*\])?|sys\.executable|sys\.(?:platform|maxsize|byteorder)|sys\.get(?:filesystemencoding|defaultencoding|recursionlimit)\(\s*\)|platform\.python_version\(\s*\)|shutil\.which\(\s*${PY_LITERAL}\s*\)|json\.load\(\s*(?:sys\.stdin|open\(\s*(?:'${JSON_FILE}'|"${JSON_FILE}")\s*\))\s*\)${ACCESS})`;
/** A literal formatted with those values (`'{}.{}'.format(*sys.version_info)`): text made of them. */
const PY_FORMATTED = String.raw`${PY_LITERAL}\.format\(\s*\*?${PY_VALUE}(?:\s*,\s*\*?${PY_VALUE})*\s*\)`;
/** An f-string whose every field is one of those values (`f'torch {torch.__version__}'`): text made of them. */
const PY_FSTRING = String.raw`f(?:'(?:[^'\\{}]|\{\s*${PY_VALUE}\s*\})*'|"(?:[^"\\{}]|\{\s*${PY_VALUE}\s*\})*")`;
/** A password hash of literal words (`crypt.crypt("pw", "$6$salt")`, hashlib's digests): computed here, nothing read or run. */
const PY_HASH = String.raw`(?:crypt\.crypt\(\s*${PY_LITERAL}\s*(?:,\s*${PY_LITERAL}\s*)?\)|hashlib\.\w+\(\s*b?${PY_LITERAL}\s*\)\.hexdigest\(\s*\))`;
/** Arithmetic of number literals (`62**5`, `916132832 / 134200000`): computed here, no name read or called. */
const PY_ARITHMETIC = String.raw`[\d\s.+\-*/%()]*\d[\d\s.+\-*/%()]*`;
/**
 * A test input made of literals repeated and joined (`"A"*300`, `'A'*8 + 'netcore\x00'`), with byte and
 * line escapes: the bytes a fuzzing or overflow test feeds a program here, text and nothing run.
 */
const PY_ESCAPED = String.raw`b?(?:'(?:[^'\\]|\\(?:x[0-9a-fA-F]{2}|[0nrt\\'"]))*'|"(?:[^"\\]|\\(?:x[0-9a-fA-F]{2}|[0nrt\\'"]))*")`;
const PY_REPEATED = String.raw`${PY_ESCAPED}(?:\s*\*\s*\d+)?(?:\s*\+\s*${PY_ESCAPED}(?:\s*\*\s*\d+)?)*`;
/**
 * print as a function, or python2's print statement; the function may print a label before a value (`print('uv at:', shutil.which('uv'))`),
 * or joined to it (`print('loaded from ' + inspect.getfile(segyio))`).
 */
const PY_PRINTED = String.raw`(?:${PY_VALUE}|${PY_LITERAL}\s*\+\s*${PY_VALUE}|${PY_FORMATTED}|${PY_FSTRING}|${PY_HASH}|${PY_ARITHMETIC}|${PY_REPEATED})`;
const PY_PRINT = new RegExp(
  String.raw`^print(?:\(\s*(?:${PY_LITERAL}\s*,\s*)*${PY_PRINTED}(?:\s*,\s*(?:${PY_LITERAL}|${PY_PRINTED}))*\s*\)|\s+(?:${PY_VALUE}|${PY_HASH}|${PY_ARITHMETIC}|${PY_REPEATED}))$`,
);
/**
 * An assert on which interpreter or version runs (`assert sys.implementation.name == "micropython"`,
 * `assert sys.version_info >= (3, 8)`), or that a module has a name (`assert hasattr(parsetab, '_tabversion')`):
 * it only raises when the comparison fails.
 */
const PY_ASSERT = new RegExp(
  String.raw`^assert\s+(?:(?:${PY_VALUE}|sys\.implementation\.name|sys\.platform)\s*(?:==|!=|>=|<=|<|>)\s*(?:${PY_LITERAL}|\d+|\(\s*\d+(?:\s*,\s*\d+)*\s*,?\s*\))|${PY_LITERAL}\s+(?:not\s+)?in\s+${PY_VALUE}|hasattr\(\s*${PY_MODULE}\s*,\s*${PY_LITERAL}\s*\))(?:\s*,\s*${PY_LITERAL})?$`,
);
/** A library's own report of its version and build (`qutip.about()`, `pandas.show_versions()`, `numpy.show_config()`): printed, nothing else done. */
const PY_REPORT = new RegExp(String.raw`^${PY_MODULE}\.(?:about|show_versions|show_config|print_versions)\(\s*\)$`);
/**
 * perl's `-pe`/`-pi -e` with substitutions and no `e` flag: a sed-like edit, no code run. The pattern
 * and the replacement are interpolated, so neither may hold `@{…}` or `${…}` (which run code as they
 * are read); the replacement may name only what the pattern captured (`$1`, `${1}`, `$&`), never another
 * variable (`$ENV{…}` would write a secret). Delimiters may be a punctuation mark or a pair of braces.
 */
const PERL_PATTERN = String.raw`(?:[^\\@$]|\\.|@(?!\{)|\$(?!\{))*?`;
const PERL_REPLACEMENT = String.raw`(?:[^\\@$]|\\.|\$(?:\d+|\{\d+\}|&))*?`;
const PERL_ONE_SUBSTITUTION = new RegExp(
  String.raw`\s*s(?:([/|#!,:%$])${PERL_PATTERN}\1${PERL_REPLACEMENT}\1|\{${PERL_PATTERN}\}\s*\{${PERL_REPLACEMENT}\})[gimsxr]*\s*(?:;|$)`,
  'y',
);
/** Whether `code` is only substitutions, one after another. */
const perlSubstitutesOnly = (code: string) => {
  PERL_ONE_SUBSTITUTION.lastIndex = 0;
  while (PERL_ONE_SUBSTITUTION.lastIndex < code.length) if (!PERL_ONE_SUBSTITUTION.test(code)) return false;
  return code.trim().length > 0;
};

/**
 * perl's `-ne` that matches each line and prints numbers computed from what it matched (`/^(\d+)\.(\d+)/;
 * print(10000 * $1 + 100 * $2)`, haskell-ci's version arithmetic): a match with no code inside it, and a
 * print of capture groups, number literals and operators. A variable or an array in the pattern
 * (`@{[…]}` runs code as it is interpolated) makes it unreadable.
 */
const PERL_CPAN_INSTALL = /^\s*install\s*\(?\s*(['"]?)[A-Za-z][\w:]*\1(\s*,\s*(['"]?)[A-Za-z][\w:]*\3)*\s*\)?\s*;?\s*$/;
const PERL_MATCH = /^m?\/(?:[^\\/]|\\.)*\/[imsx]*$/;
const PERL_PRINT_NUMBERS = /^print\s*\(?[\d\s$+\-*/%().?:<>=!]*\)?$/;
const perlMatchPrint = (code: string) => {
  const statements = code
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
  return (
    statements.length > 0 &&
    !/\(\?\??\{/.test(code) &&
    statements.every((s) => (PERL_MATCH.test(s) && !/@|\$[{\w]/.test(s)) || (PERL_PRINT_NUMBERS.test(s) && !/\$(?!\d)/.test(s)))
  );
};

/** An AppleScript string literal with no escapes. */
const AS_TEXT = String.raw`"[^"\\]*"`;
/**
 * AppleScript lines that only speak or show something, or name an application's id or version:
 * `say "…"`, `display notification "…" with title "…"`, `id of app "…"`, `beep`. A dialog that asks
 * for an answer is left out (it is how a script asks the user for a password), and so is everything
 * that tells an application to act or runs a shell (`do shell script`).
 */
const APPLESCRIPT_DISPLAY = new RegExp(
  String.raw`^\s*(?:say\s+${AS_TEXT}(?:\s+using\s+${AS_TEXT})?|display\s+(?:notification|dialog|alert)\s+${AS_TEXT}(?:\s+(?:with\s+title|subtitle|sound\s+name|message)\s+${AS_TEXT})*|(?:id|version|name)\s+of\s+(?:app|application)\s+${AS_TEXT}|beep(?:\s+\d+)?)\s*$`,
);

/**
 * AppleScript that only hands back a value Standard Additions reads without acting (`return (the
 * clipboard)`, `return (current date)`, `return (system info)`, a literal), and JavaScript for
 * Automation that only prints literal text (`console.log('done')`): osascript prints the value and
 * nothing else happens. `system attribute` (the environment) and `do shell script` are left out.
 */
const AS_VALUE = String.raw`(?:${AS_TEXT}|\d+(?:\.\d+)?|the\s+clipboard|current\s+date|system\s+info|time\s+to\s+GMT|path\s+to\s+(?:desktop|documents\s+folder|home\s+folder|downloads\s+folder|temporary\s+items)(?:\s+as\s+text)?)`;
const APPLESCRIPT_RETURN = new RegExp(String.raw`^\s*(?:return|get)\s+(?:\(\s*${AS_VALUE}\s*\)|${AS_VALUE})(?:\s+as\s+(?:text|string))?\s*$`);
const JXA_PRINT = /^\s*console\.log\(\s*(?:'[^'\\]*'|"[^"\\]*")\s*\)\s*;?\s*$/;

/**
 * Ruby's one-line conversion between JSON and YAML of what comes in (stdin or the files named after
 * it): parsed, printed; nothing else is called (`puts YAML.dump(JSON.load(ARGF))`).
 */
const RUBY_INPUT = String.raw`(?:ARGF|STDIN|\$stdin)(?:\.read)?`;
const RUBY_PARSED = String.raw`(?:JSON\.(?:load|parse)|YAML\.(?:load|safe_load))\(\s*${RUBY_INPUT}\s*\)`;
const RUBY_CONVERT = new RegExp(
  String.raw`^(?:puts|print|p)\s*\(?\s*(?:(?:YAML\.dump|JSON\.(?:pretty_generate|generate|dump))\(\s*${RUBY_PARSED}\s*\)|${RUBY_PARSED}\.(?:to_yaml|to_json))\s*\)?\s*;?$`,
);

/** A string literal that interpolates nothing (no `$`, `@`, `#{`, backquote or escape). */
const LITERAL = String.raw`(?:'[^'\\$@\`]*'|"[^"\\$@#\`]*")`;
/** A regular expression literal that interpolates nothing (no `#{`). */
const RUBY_REGEX = String.raw`\/(?:[^\\/#\n]|\\.|#(?!\{))*\/[imx]*`;
/**
 * ruby's per-line code (`-ne`, `-lne`, reading each line into `$_`, not in place) that prints the line
 * or what string methods given literals make of it (`puts $_.split(/\s+###/)[0]`, `print $_.strip`),
 * whatever a trailing `if $_ =~ /re/` selects: nothing is called but the line's own methods.
 */
const RUBY_LINE_METHOD = String.raw`\.(?:split|strip|lstrip|rstrip|chomp|chop|upcase|downcase|squeeze|sub|gsub|tr|delete|slice|length|size|reverse)(?:\(\s*(?:${RUBY_REGEX}|${LITERAL}|\d+)(?:\s*,\s*(?:${LITERAL}|\d+))*\s*\))?`;
const RUBY_LINE_PRINT = new RegExp(
  String.raw`^(?:puts|print|p)\s*\(?\s*\$_(?:${RUBY_LINE_METHOD}|\[\s*-?\d+\s*\])*\s*\)?(?:\s+if\s+\$_\s*=~\s*${RUBY_REGEX})?$`,
);
const EXIT_CODE = String.raw`(?:\d{1,3}|true|false)?`;
/** A package loaded by its name from the toolchain's or the workspace's packages (`'@parcel/rust'`, `"bundler"`), not by a path. */
const PACKAGE_NAME = String.raw`(?:'@?[\w-][\w.-]*(?:/[\w-][\w.-]*)?'|"@?[\w-][\w.-]*(?:/[\w-][\w.-]*)?")`;
/** Perl text that says only a loaded module's version (`"$Dancer2::VERSION\n"`, `qq{$Dancer2::VERSION\n}`). */
const PERL_VERSION_TEXT = String.raw`(?:"(?:[\w .:-]|\\n|\$[A-Za-z]\w*(?:::\w+)*::VERSION)*"|qq\{(?:[\w .:-]|\\n|\$[A-Za-z]\w*(?:::\w+)*::VERSION)*\})`;
/**
 * Statements that only end the program with a status or print a literal, per language: `exit 0`,
 * `exit(1)`, `sys.exit(0)`, `process.exit(0)`, `puts "ok"`, `print('ok')`, `console.log("ok")`.
 * (Loading a library of the workspace or the toolchain with ruby's `-r` or python's `import` runs
 * its code as a test run does.)
 */
const LITERAL_STATEMENT: Readonly<Record<string, RegExp>> = {
  ruby: new RegExp(
    String.raw`^(?:exit!?(?:\s*\(\s*${EXIT_CODE}\s*\)|\s+${EXIT_CODE})?|(?:puts|print|p)(?:\s*\(\s*${LITERAL}\s*\)|\s+${LITERAL})|require(?:\s*\(\s*${PACKAGE_NAME}\s*\)|\s+${PACKAGE_NAME})|nil|true)$`,
  ),
  python: new RegExp(String.raw`^(?:(?:sys\.)?exit\(\s*${EXIT_CODE}\s*\)|print\(\s*${LITERAL}?\s*\)|pass|import\s+sys)$`),
  node: new RegExp(
    String.raw`^(?:process\.exit\(\s*${EXIT_CODE}\s*\)|console\.log\(\s*${LITERAL}?\s*\)|(?:console\.log\(\s*)?require\(\s*${PACKAGE_NAME}\s*\)(?:\s*\.\s*version)?(?:\s*\))?)$`,
  ),
  perl: new RegExp(
    String.raw`^(?:exit(?:\s*\(\s*${EXIT_CODE}\s*\)|\s+${EXIT_CODE})?|print(?:\s*\(\s*(?:${LITERAL}|${PERL_VERSION_TEXT})\s*\)|\s+(?:${LITERAL}|${PERL_VERSION_TEXT}))|print\s*\(?\s*join\(\s*"\\n"\s*,\s*@INC\s*\)\s*\)?)$`,
  ),
};
/** The option each language's literal-only code may come with: code run once, not per input line or in place. */
const LITERAL_FLAG: Readonly<Record<string, RegExp>> = { ruby: /^-e$/, python: /^-c$/, node: /^(-e|--eval|-p|--print|eval)$/, perl: /^-[eE]$/ };

function onlyLiterals(prog: string, flag: string, code: string): boolean {
  // deno's and bun's eval run JavaScript as node's -e does.
  const lang = /^python[23]?(\.\d+)?$/.test(prog) ? 'python' : prog === 'deno' || prog === 'bun' ? 'node' : prog;
  const statement = Object.hasOwn(LITERAL_STATEMENT, lang) ? LITERAL_STATEMENT[lang]! : undefined;
  if (!statement || !LITERAL_FLAG[lang]!.test(flag)) return false;
  const statements = code
    .split(/[;\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
  return statements.length > 0 && statements.every((s) => statement.test(s));
}

/**
 * Python that only computes and prints with modules that reach nothing past the process: a hash of a
 * literal password (`bcrypt.hashpw(b"pw", bcrypt.gensalt())`), a value of the interpreter or the machine's
 * name (`sys.path`, `platform.platform()`), a conversion of stdin or of literals (`zlib.decompress`,
 * `bytes.fromhex(…).decode()`, `urllib.parse.quote(input())`, `yaml.safe_load(sys.stdin)`). Every name
 * called or read must be one of these modules' or the builtins listed, or a name the code assigned
 * itself; a file opened, a module of the system (os, subprocess, socket, pty, ctypes…), an f-string, a
 * dunder attribute, eval and exec keep the code unreadable.
 */
const PY_QUIET_WHOLE =
  'zlib|gzip|bz2|lzma|base64|binascii|hashlib|hmac|bcrypt|crypt|math|statistics|random|secrets|uuid|string|struct|codecs|unicodedata|textwrap|datetime|time|calendar|decimal|fractions|itertools|collections|ipaddress|html|shlex';
const PY_QUIET_MODULES = new RegExp(
  String.raw`^(os\.(urandom|cpu_count|getpid|sep|linesep|name)|sys\.(path|version|version_info|platform|executable|maxsize|byteorder|argv|stdin\.read|stdin\.buffer\.read|stdout\.write|stdout\.buffer\.write|getdefaultencoding)(\.(split|strip|join|replace|lower|upper|decode|encode|startswith|endswith))?|platform\.\w+|json\.(dumps|loads|load|dump)|yaml\.(safe_load|safe_dump|dump|__version__)|(${PY_QUIET_WHOLE})\.[\w.]+|urllib\.(parse\.\w+|quote|unquote|quote_plus|urlencode))$`,
);
/** The modules themselves, imported whole (`import sys, yaml`); of os only the names above may then be used (`os.urandom`), never `os.system` or `os.environ`. */
const PY_QUIET_MODULE_NAME = new RegExp(String.raw`^(sys|os|platform|json|yaml|${PY_QUIET_WHOLE}|urllib|urllib\.parse)$`);
const PY_QUIET_BUILTINS = new Set(
  'print len str int float bytes bytearray bool list dict set tuple sorted reversed range enumerate zip map filter sum min max abs round hex oct bin ord chr repr format isinstance any all input raw_input True False None and or not in is for if else dir type'.split(
    ' ',
  ),
);
/** A Python string literal, with its prefix (`b'…'`, `r"…"`) and triple quotes: data, whatever it says. */
const PY_STRING_LITERAL = /\b[bru]{0,2}('''[\s\S]*?'''|"""[\s\S]*?"""|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")|('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")/gi;
function pythonComputesOnly(code: string): boolean {
  if (/\bf['"]/.test(code)) return false;
  // String literals become a placeholder: what they say is data.
  const bare = code.replace(PY_STRING_LITERAL, ' _s_ ');
  if (/['"\\]/.test(bare) || /__(?!version__|file__|name__|doc__)\w*__|\blambda\b/.test(bare)) return false;
  const own = new Set<string>(['_s_']);
  const statements = bare
    .split(/[;\n]/)
    .map((t) => t.trim())
    .filter(Boolean);
  for (const statement of statements) {
    const imported = /^(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+([\w.]+)\s+import\s+([\w\s,]+))$/.exec(statement);
    if (imported) {
      // `import sys, yaml` binds the modules; `from bcrypt import hashpw` binds `bcrypt.hashpw` as `hashpw`.
      const names = imported[1] ? imported[1].split(',').map((n) => n.trim()) : [];
      if (!names.every((n) => PY_QUIET_MODULE_NAME.test(n))) return false;
      const from = imported[3] ? imported[3].split(',').map((n) => n.trim()) : [];
      if (!from.every((n) => PY_QUIET_MODULES.test(`${imported[2]}.${n}`))) return false;
      for (const n of from) own.add(n);
      continue;
    }
    const assigned = /^([A-Za-z_]\w*)\s*=(?!=)\s*(.*)$/.exec(statement);
    const expression = assigned ? assigned[2]! : statement;
    // Names bound by a comprehension's `for` are its own.
    for (const m of expression.matchAll(/\bfor\s+([A-Za-z_]\w*)/g)) own.add(m[1]!);
    // A name read or called, with the attributes after it; an attribute of a value (`).decode`, `_s_.join`) belongs to that value.
    // A keyword argument's name (`gensalt(rounds=10)`) names a parameter, nothing read.
    for (const m of expression.matchAll(/(?<!\.\s*)(?<!\w)([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)(?!\s*=(?!=))/g)) {
      const chain = m[1]!.replace(/\s+/g, '');
      const root = chain.split('.')[0]!;
      if (!(PY_QUIET_BUILTINS.has(chain) || own.has(root) || PY_QUIET_MODULES.test(chain) || /^(bytes|str|int)\.\w+$/.test(chain))) return false;
    }
    if (assigned) own.add(assigned[1]!);
  }
  return statements.length > 0;
}

/**
 * Modules whose calls reach past the process (the system, files, processes, the network, code loading,
 * the desktop) and names that open, write, delete, run, load or connect whatever they are called on.
 * Python that names none of them runs only the project's or a library's own code, as
 * `python script.py` in the workspace does.
 */
const PY_REACHING_MODULE =
  /^(os|sys|posix|nt|subprocess|shutil|socket|socketserver|ssl|select|selectors|pty|tty|termios|fcntl|ctypes|cffi|urllib|urllib2|urllib3|http|httplib|requests|httpx|aiohttp|websocket|websockets|ftplib|smtplib|telnetlib|poplib|imaplib|nntplib|xmlrpc|paramiko|fabric|invoke|pexpect|ptyprocess|sh|plumbum|pickle|cPickle|_pickle|marshal|shelve|dill|importlib|imp|pkgutil|builtins|__builtin__|runpy|code|codeop|pathlib|tempfile|tarfile|zipfile|io|signal|mmap|multiprocessing|asyncio|concurrent|webbrowser|keyring|getpass|pwd|spwd|grp|resource|sqlite3|dbm|serial|usb|bluetooth|scapy|impacket|pwn|pwnlib|boto3|botocore|docker|kubernetes|pyautogui|pynput|keyboard|mouse|winreg|_winreg|win32api|win32con|fileinput|glob|logging|gc|inspect|dis|types|operator|functools|atexit|sysconfig|site|distutils|setuptools|pip|ensurepip|venv|zipimport)$/;
const PY_REACHING_NAME =
  /^(open|exec|eval|compile|getattr|setattr|delattr|globals|locals|vars|breakpoint|system|popen|spawn\w*|exec\w*|fork\w*|environ|getenv|putenv|unsetenv|chmod|chown|chroot|kill\w*|remove\w*|unlink|rmtree|rmdir|mkdir|makedirs|rename|symlink|link|truncate|write|writelines|write_text|write_bytes|save\w*|dump|to_csv|to_json|to_parquet|to_pickle|to_excel|extract|extractall|connect|bind|listen|accept|send\w*|urlopen|urlretrieve|request|post|put|patch|delete|upload\w*|publish|push|setuid|setgid|seteuid|dup2|load_library|LoadLibrary|cdll|CDLL|WinDLL|run|call|check_call|check_output|Popen|shell|cmd|command|execute|serve\w*|server|start\w*|daemon\w*|install\w*|uninstall\w*|reset|drop\w*|flush\w*|deploy\w*|sudo|login|authenticate|credential\w*|token|password|secret\w*)$/i;
/** A file name that holds a key or a credential (`.env`, `id_rsa`, `token.json`, `server.key`): read, it is a secret printed. */
const PY_SECRET_FILE = /(^|\/)(\.env(\.\w+)?|[^/]*(secret|passw|credential|token|private|id_(rsa|ecdsa|ed25519|dsa))[^/]*|[^/]+\.(key|pem|pfx|p12))$/i;
/**
 * Python that imports the project's or a library's modules and calls them with none of those modules or
 * names (`from fraud_detection_tester import verify_implementation; verify_implementation()`,
 * `import qutip; print(qutip.settings)`), reading at most a project file opened by a relative name
 * (`json.load(open('stats.json'))`). No f-string, no dunder but a version or file, no literal naming a
 * place outside the workspace or the network, and only imports, assignments and expressions.
 */
function pythonCallsLibrariesOnly(code: string): boolean {
  if (/\bf['"]/i.test(code)) return false;
  const literals: string[] = [];
  const bare = code.replace(PY_STRING_LITERAL, (m) => {
    literals.push(m.replace(/^[bru]{0,2}(?:'''|"""|'|")|(?:'''|"""|'|")$/gi, ''));
    return ' _s_ ';
  });
  if (/['"\\]/.test(bare) || /__(?!version__|file__|name__|doc__|package__)\w*__/.test(bare)) return false;
  if (literals.some((l) => /^\s*(\/|~|\.\.(\/|$)|[A-Za-z]:\\)|:\/\/|\$/.test(l) || PY_SECRET_FILE.test(l))) return false;
  // A project file opened by a relative name to be read: `open('stats.json')`, `open('a.txt', 'r')`.
  const opened = bare.replace(/\bopen\(\s*_s_\s*\)/g, ' _s_ ');
  const readModes = literals.filter((l) => /^[rwaxbt+]{1,3}$/.test(l));
  const reading =
    /\bopen\(\s*_s_\s*,\s*_s_\s*\)/.test(opened) && readModes.every((l) => /^rb?t?$/.test(l))
      ? opened.replace(/\bopen\(\s*_s_\s*,\s*_s_\s*\)/g, ' _s_ ')
      : opened;
  const statements = reading
    .split(/[;\n]/)
    .map((t) => t.trim())
    .filter(Boolean);
  for (const statement of statements) {
    const imported = /^(?:import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)|from\s+([\w.]+)\s+import\s+([\w\s,]+))$/.exec(statement);
    if (imported) {
      const modules = imported[1] ? imported[1].split(',').map((n) => n.trim().split(/\s+/)[0]!) : [imported[2]!];
      if (modules.some((m) => PY_REACHING_MODULE.test(m.split('.')[0]!))) return false;
      if ((imported[3] ?? '').split(',').some((n) => PY_REACHING_NAME.test(n.trim()))) return false;
      continue;
    }
    // Only assignments and expressions: a loop, a definition, a `with` or a `del` is more than a call.
    if (/^(def|class|with|del|global|nonlocal|raise|try|except|finally|while|for|if|elif|else|async|await|yield|return|lambda)\b/.test(statement)) return false;
    for (const m of statement.matchAll(/[A-Za-z_]\w*/g)) if (PY_REACHING_NAME.test(m[0]) || PY_REACHING_MODULE.test(m[0])) return false;
  }
  return statements.length > 0;
}

/** A name of a file in the project, by a relative path that stays inside it. */
const PROJECT_FILE = String.raw`(?:\./)?(?:\.?[\w@-][\w@.-]*/)*\.?[\w@-][\w@.-]*`;
/**
 * Laravel's and Composer's step that makes the project's settings file from its example unless it is
 * there (`file_exists('.env') || copy('.env.example', '.env');`): a copy inside the project.
 */
const PHP_ENV_COPY = new RegExp(
  String.raw`^(?:file_exists|is_file)\(\s*(['"])(${PROJECT_FILE})\1\s*\)\s*(?:\|\||or)\s*copy\(\s*(['"])${PROJECT_FILE}\3\s*,\s*(['"])\2\4\s*\)\s*;?$`,
);
/**
 * Composer's documented install steps: its installer downloaded into the project, and removed after
 * (`copy('https://getcomposer.org/installer', 'composer-setup.php');`, `unlink('composer-setup.php');`);
 * the installer is then run as a script, judged as any other.
 */
const PHP_COMPOSER_STEP = new RegExp(
  String.raw`^(?:copy\(\s*(['"])https://getcomposer\.org/installer\1\s*,\s*(['"])${PROJECT_FILE}\2\s*\)|unlink\(\s*(['"])${PROJECT_FILE}\3\s*\))\s*;?$`,
);
/** A digest of literal text printed (`echo md5('240610708');`): computed here, nothing read or run. */
const PHP_DIGEST_PRINT = /^echo\s+(?:md5|sha1|crc32)\(\s*(?:'[^'\\]*'|"[^"\\$]*")\s*\)\s*;?$/;

/**
 * Whether `code`, given to `prog` with `flag`, only reads a version or a JSON field and prints it.
 * `flag` is the option that introduced it (`-p`/`--print` print the value themselves).
 */
export function readableInlineCode(prog: string, given: string, code: string): boolean {
  // Python's switches that only change the run's setting (isolated, no site, unbuffered, optimised,
  // quiet) may share the word with -c (`python -Ic '…'`): the code is read as -c's.
  const flag = /^python[23]?(\.\d+)?$/.test(prog) && /^-[IEsSBuOqR]+c$/.test(given) ? '-c' : given;
  // A lone name or number is evaluated and dropped: nothing is called or printed (`python -c
  // "expression"`); `node -p` prints it, and `process` holds the environment.
  const evaluates = (prog === 'node' && /^(-e|--eval)$/.test(flag)) || (/^python[23]?(\.\d+)?$/.test(prog) && flag === '-c');
  if (evaluates && /^\s*([A-Za-z_]\w*|\d+)\s*;?\s*$/.test(code)) return true;
  if (onlyLiterals(prog, flag, code)) return true;
  // bun's and deno's eval run JavaScript as node's -e does.
  if (prog === 'node' || prog === 'bun' || prog === 'deno') {
    if (/^(-p|--print|-pe)$/.test(flag)) return NODE_PRINT.test(code);
    if (/^(-e|--eval|eval)$/.test(flag)) return NODE_EVAL.test(code);
    return false;
  }
  if (prog === 'julia' && /^(-e|--eval|-E|--print)$/.test(flag)) return readableJulia(code);
  if (/^(R|Rscript)$/.test(prog) && flag === '-e') return readableR(code);
  if (prog === 'ruby' && /^-e$/.test(flag)) return RUBY_CONVERT.test(code.trim());
  if (prog === 'ruby' && /^-[la]*n[la]*e$/.test(flag)) return RUBY_LINE_PRINT.test(code.trim());
  if (/^php[\d.]*$/.test(prog) && flag === '-r') return [PHP_ENV_COPY, PHP_COMPOSER_STEP, PHP_DIGEST_PRINT].some((r) => r.test(code.trim()));
  if (prog === 'osascript') return flag === '-e' && (APPLESCRIPT_DISPLAY.test(code) || APPLESCRIPT_RETURN.test(code) || JXA_PRINT.test(code));
  if (prog === 'perl' && /^-[a-zA-Z]*e$/.test(flag)) {
    if (/^-[a-zA-Z]*n[a-zA-Z]*e$/.test(flag) && perlMatchPrint(code)) return true;
    // CPAN's shell function installing modules by name (`perl -MCPAN -e 'install Config::FromHash'`), as `cpan` does.
    if (PERL_CPAN_INSTALL.test(code)) return true;
    return perlSubstitutesOnly(code.trim()) && !/\(\?\??\{/.test(code);
  }
  if (/^python[23]?(\.\d+)?$/.test(prog) && flag === '-c') {
    const statements = code
      .split(/[;\n]/)
      .map((s) => s.trim())
      .filter(Boolean);
    // Imports run module code from the path, as a test run does (`python -c 'import docs.plugins.main'`
    // checks that a module loads); what prints must be one of the values or arithmetic, a library may
    // report its own versions, and an assert may only compare which interpreter or version runs.
    return (
      (statements.length > 0 && statements.every((s) => PY_IMPORT.test(s) || PY_PRINT.test(s) || PY_ASSERT.test(s) || PY_REPORT.test(s))) ||
      pythonComputesOnly(code) ||
      pythonCallsLibrariesOnly(code)
    );
  }
  return false;
}
