// Interpreters: python, node, perl, ruby and the rest. A script file or a module is code the
// checker does not read, so it is not repeatable; inline code (`-c`, `-e`) is opaque and needs a
// person unless it is one of the few read-only idioms of inline-code.ts; a few modules are test
// runners and linters (`python -m pytest`).
import type { Word } from '../shell-lex.js';
import { danger, onlyAsksAbout, operands, type Rule, type RuleTable, word } from '../state.js';
import { judgeScript } from './places.js';
import { attackToolChecks } from './operators.js';
import { addressGiven, judgeUnknownProgram, setuptoolsPlaceOutside } from './unknown.js';

/** Programs that run code from a file, stdin or an argument. */
export const INTERPRETERS: ReadonlySet<string> = new Set(['python', 'python2', 'python3', 'perl', 'ruby', 'node', 'php', 'lua']);

/**
 * PowerShell's options that run the code they are given, matched as pwsh matches them, by case and by
 * any prefix it accepts: -Command (`-c`, `-com…`) and -EncodedCommand (`-e`, `-ec`, `-enc…`, base64).
 */
const PWSH_CODE = /^-(c|com(m(a(n(d)?)?)?)?|e|ec|enc(o(d(e(d(c(o(m(m(a(n(d)?)?)?)?)?)?)?)?)?)?)?)$/i;
/** -File (`-f`, `-fi…`): the script pwsh runs, as its first operand is. */
const PWSH_FILE = /^-f(i(le?)?)?$/i;
/**
 * PowerShell's options that take a value which is data, not code: the execution policy, the input and
 * output formats, the window style, the working directory, a settings file, a session configuration's
 * name and a custom pipe's name.
 */
const PWSH_VALUED = /^-(ex|ep|exe\w*|executionpolicy|if|inp\w*|of|o|outp\w*|w|wi\w*|wd|wo\w*|settingsfile|se\w*|config\w*|cu\w*)$/i;
/**
 * A Windows path by its drive or a share (`C:\script.ps1`, `\\host\share\x.ps1`; typed unquoted, the
 * shell leaves `C:script.ps1`, still a path on drive C:): never in the workspace here.
 */
export const WINDOWS_ABSOLUTE = /^([A-Za-z]:|\\\\)/;

/**
 * pwsh and Windows PowerShell: a script given by -File or as the first operand is judged by where it
 * lies (a Windows drive's path is outside the workspace); -Command's and -EncodedCommand's code is
 * inline code (INLINE_CODE); every other option is data.
 */
const powershell: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // A hidden window is how a script keeps a person at the machine from seeing it run.
  const style = args.findIndex((a) => /^-w(i\w*)?$/i.test(a.text));
  if (style >= 0 && /^hidden$/i.test(args[style + 1]?.text ?? ''))
    return danger(st, `runs PowerShell with its window hidden (${prog} ${args[style]!.text} hidden)`);
  if (args.some((a) => PWSH_CODE.test(a.text))) return;
  const f = args.findIndex((a) => PWSH_FILE.test(a.text));
  const script = f >= 0 ? args[f + 1] : operands(args, PWSH_VALUED)[0];
  // A session opened with the execution policy Bypass or Unrestricted (`powershell -ep bypass`) runs
  // whatever scripts it is then given, the ones a policy would stop; the project's own script named
  // with it is judged as that script.
  const policy = args.findIndex((a) => /^-(ex|ep|exe\w*|executionpolicy)$/i.test(a.text));
  if (!script && policy >= 0 && /^(bypass|unrestricted)$/i.test(args[policy + 1]?.text ?? ''))
    return danger(st, `opens a PowerShell session with its script execution policy turned off (${prog} ${args[policy]!.text} ${args[policy + 1]!.text})`);
  if (!script || script.text === '-') return;
  // Windows PowerShell reads operands without -File as -Command's code, and words no file is named
  // (`(New-Object Net.WebClient).DownloadFile(…)`, `iex …; Start-Process …`) are code to either.
  if (f < 0 && (/^powershell(\.exe)?$/i.test(prog) || /[\s();${}|&]/.test(script.text)) && !/\.ps1$/i.test(script.text))
    return danger(st, `runs inline ${prog} code, which the checker cannot read (${script.text})`);
  if (WINDOWS_ABSOLUTE.test(script.text)) return danger(st, `runs a script from outside the workspace (${prog} ${script.text})`);
  judgeScript(prog, script, args.slice(args.indexOf(script) + 1), st);
};

/** The option (or argument) by which each program takes inline code. */
export const INLINE_CODE: Readonly<Record<string, RegExp>> = {
  python: /^-[a-zA-Z]*c/,
  python2: /^-[a-zA-Z]*c/,
  python3: /^-[a-zA-Z]*c/,
  // A module loaded by its plain name (`-MDancer2`, `-mstrict`, `-MO=Deparse`) or a library directory
  // (`-Ilib`) is not a cluster ending in -e, though its letters hold an `e`; a module word with code
  // after it (`-M'strict;system q(id)'`) is still read as code.
  perl: /^-(?![Mm]-?[\w:]+(=[\w,.:-]*)?$|I)[a-zA-Z]*[eE]/,
  // A library required by name (`-rrubygems`, `-rjson`) is not a cluster ending in -e.
  ruby: /^-(?!r[\w/.-]+$)[a-zA-Z]*e/,
  node: /^(-[a-zA-Z]*[ep]|--eval|--print)/,
  deno: /^eval$/,
  bun: /^(-e|--eval)$/,
  php: /^(-[a-zA-Z]*r|--run)$/,
  lua: /^-[a-zA-Z]*e/,
  tclsh: /^$/,
  osascript: /^-e$/,
  julia: /^(-e|--eval|-E|--print)$/,
  R: /^(-e)$/,
  Rscript: /^(-e)$/,
  ghc: /^(-e)$/,
  ghci: /^(-e)$/,
  octave: /^(--eval)$/,
  'octave-cli': /^(--eval)$/,
  jrunscript: /^(-e)$/,
  jjs: /^$/,
  expect: /^(-c)$/,
  emacs: /^(--eval|-eval|--exec|-l|--load|-f|--funcall)$/,
  pwsh: PWSH_CODE,
  irb: /^$/,
  dc: /^(-e|--expression)$/,
  gnuplot: /^(-e)$/,
  guile: /^(-c)$/,
  clisp: /^(-x)$/,
  sbcl: /^(--eval)$/,
  racket: /^(-e|--eval)$/,
  slsh: /^(-e)$/,
  bpftrace: /^(-e)$/,
  powershell: PWSH_CODE,
  pry: /^$/,
};

/** Python's `-m MODULE`, after flags that take no value (`-m`, `-Im`, `-mpip`): it ends python's options. */
const PYTHON_MODULE_OPTION = /^-[bBdEhiIOPqRsSuvVx]*m/;

/** Interpreters' options that take the next word as their value (a library, a directory, a warning filter). */
const INTERPRETER_VALUED = /^(-r|--require|--import|--loader|--experimental-loader|--input-type|--env-file|-I|-C|-W|-X|-l|-s)$/;
/** A script by its path or its extension (`./bin/index.js`, `tools/gen.py`, `build.jl`). */
const SCRIPT_FILE = /^[^-].*(\/|\.(m?js|cjs|ts|mts|py|rb|pl|pm|php|lua|jl|R|r|tcl|exs?|scpt))$/;

/**
 * The words an interpreter reads as its own options. Python stops at `-m MODULE`: what follows is
 * the module's (`python -m pip install -c constraints.txt` gives pip a constraints file, not code).
 * Every interpreter stops at its script: what follows is the script's (`node ./bin/index.js bundle
 * -p spago-bin` gives the script `-p`, not code to print).
 */
export function interpreterOwnArgs(prog: string, args: Word[]): Word[] {
  const module = /^python[0-9.]*$/.test(prog) ? args.findIndex((a) => PYTHON_MODULE_OPTION.test(a.text)) : -1;
  const own = module < 0 ? args : args.slice(0, module);
  const inline = Object.hasOwn(INLINE_CODE, prog) ? INLINE_CODE[prog]! : undefined;
  for (let k = 0; k < own.length; k++) {
    const t = own[k]!.text;
    // Inline code's option (or deno's `eval`) is followed by the code, not a script.
    if (inline?.test(t) || (t.startsWith('-') && INTERPRETER_VALUED.test(t))) k++;
    // Only a word that is plainly a script file ends the options: an option's value this list does
    // not know (`osascript -l JavaScript -e …`) must not hide the code after it.
    else if (SCRIPT_FILE.test(t)) return own.slice(0, k);
  }
  return own;
}

/**
 * The option, as one word, that a program's inline code is given with (`-c`, `-e`, `-r`): what code
 * from a here-document or another program stands for.
 */
export function inlineOption(prog: string): string {
  const re = Object.hasOwn(INLINE_CODE, prog) ? INLINE_CODE[prog]! : undefined;
  return ['-c', '-e', '-r'].find((f) => re?.test(f)) ?? '-e';
}

const PY_CHECKERS = ['pytest', 'unittest', 'mypy', 'pyflakes', 'pylint', 'compileall', 'py_compile', 'flake8', 'doctest'];

/** setup.py's commands that send the package or its metadata to an index (`sdist upload`, `register`, `upload_docs`). */
const SETUP_PY_SENDS = /^(upload|register|upload_docs|upload_sphinx)$/;

/**
 * A script's first argument that sends something past this machine (`python docs/plugins/algolia.py
 * upload`, `node scripts/transifex.mjs push`, judged in dangerous.ts for scripts of other languages), or takes down what was sent (django-bakery's `manage.py unpublish`),
 * as a Makefile's `make upload` or a build tool's task does.
 */
export const SCRIPT_SENDS = /^(upload|publish|unpublish|deploy|undeploy|release|push)$/;

const python: Rule = ({ args, st, judge, knows }) => {
  const ops = operands(args);
  if (/(^|\/)setup\.py$/.test(ops[0]?.text ?? '')) {
    const send = ops.slice(1).find((o) => SETUP_PY_SENDS.test(o.text));
    if (send) return danger(st, `publishes to a package index (setup.py ${send.text})`);
    const place = ops.some((o) => o.text === 'install') ? setuptoolsPlaceOutside(args, st) : undefined;
    if (place) return danger(st, `installs into a place outside the workspace (setup.py install ${place})`);
  }
  if (/\.py$/.test(ops[0]?.text ?? '') && SCRIPT_SENDS.test(ops[1]?.text ?? ''))
    return danger(st, `runs a script that sends something past this machine (${ops[0]!.text} ${ops[1]!.text})`);
  const m = args.findIndex((a) => a.text === '-m');
  const mod = m >= 0 ? args[m + 1]?.text : undefined;
  if (args.some((a) => a.text === '--version' || a.text === '-V') && args.length === 1) return;
  if (mod && PY_CHECKERS.includes(mod)) return;
  // `python -m ruff check`, `python -m twine upload` and `python -m pip install` are the programs' own
  // commands: a module a program table names is judged as that program.
  if (mod && !INTERPRETERS.has(mod) && knows(mod)) return judge(args.slice(m + 1));
  // A program shipped as a zip application (`python pipx.pyz ensurepath`) is that program, run from the file.
  const zipapp = /^(?:.*\/)?([\w-]+)\.pyz$/.exec(ops[0]?.text ?? '')?.[1];
  if (zipapp && !INTERPRETERS.has(zipapp) && knows(zipapp)) return judge([word(zipapp), ...args.slice(args.indexOf(ops[0]!) + 1)]);
  // A module no table names is a program of its own (`python -m smtpburst --server smtp.example.com`): its
  // arguments are judged as such a program's are.
  if (mod && !INTERPRETERS.has(mod)) judgeUnknownProgram(mod, args.slice(m + 2), st);
  st.repeatable = false;
};

/** Repeatable only when it prints its version. */
const versionOnly: Rule = ({ args, st }) => {
  if (!(args.length === 1 && /^(-v|--version|-version)$/.test(args[0]!.text))) st.repeatable = false;
};

/**
 * A JVM's debugger agent serving on every interface (`-agentlib:jdwp=…,server=y,…,address=*:5005`): whoever
 * reaches the port runs code in the process; `address=5005` or `localhost:5005` is this machine's alone.
 */
const JDWP_EVERY_INTERFACE = /^-(agentlib:jdwp|Xrunjdwp:)[=:]?.*\bserver=y\b.*\baddress=(\*|0\.0\.0\.0|\[?::\]?):\d+/;
/**
 * Game servers' and their proxies' jars (Minecraft's, Paper's, Spigot's, Velocity's, Waterfall's, BungeeCord's,
 * Forge's and Fabric's servers), and Selenium's grid server: started, they listen on every interface (for
 * players; for anyone who would drive a browser on this machine).
 */
const GAME_SERVER_JAR =
  /^(paper|purpur|spigot|craftbukkit|velocity|waterfall|bungeecord|minecraft[_-]server|forge-.*-server|fabric-server|selenium-server)[\w.{}\\*-]*\.jar$/i;
/**
 * `java -jar tool.jar …`: the jar is a program of its own, judged by where it lies, by its name (an
 * attack tool's jar is that tool) and by its arguments as a program no table names is (another
 * machine's address or URL, a path outside the workspace, a command handed over).
 */
const java: Rule = (c) => {
  const jdwp = c.args.find((a) => JDWP_EVERY_INTERFACE.test(a.text));
  if (jdwp) danger(c.st, `serves the JVM's debugger, which runs code in the process, on every network interface (${jdwp.text.replace(/^-agentlib:/, '')})`);
  const j = c.args.findIndex((a) => a.text === '-jar');
  const jar = j >= 0 ? c.args[j + 1] : undefined;
  if (!jar) {
    // A main class from a class path (`java -cp ysoserial.jar ysoserial.exploit.RMIRegistryExploit host 1099 …`) names what it runs.
    const main = operands(c.args, /^(-cp|-classpath|--class-path|-p|--module-path)$/)[0];
    if (main && /(^|\.)exploits?\.|Exploit$/.test(main.text)) return danger(c.st, `runs an exploit (${main.text})`);
    // marshalsec's JNDI and RMI servers hand a deserialisation or JNDI injection's victim the attacker's class, wherever it points.
    if (main && /^marshalsec\.jndi/.test(main.text)) return danger(c.st, `serves a JNDI injection's payload to the machines it is aimed at (${main.text})`);
    // The main class's arguments are its own, as a jar's are (`… marshalsec.jndi.LDAPRefServer "http://10.8.219.166:8000/#Exploit"`).
    const address = main ? addressGiven(c.args.slice(c.args.indexOf(main) + 1)) : undefined;
    if (address) return danger(c.st, `runs a Java program given another machine's address (${main!.text} ${address})`);
    return versionOnly(c);
  }
  const rest = c.args.slice(j + 2);
  // A jar named for an exploit, a vulnerability's number or JNDI injection (`JNDIExploit.jar`, `CVE-2022-26134.jar`,
  // `JNDI-Injection-Exploit-1.0-all.jar`, `jndi-utils-1.0.jar`) serves the class or gadget chain its victim loads, or sends it.
  if (/(exploit|jndi|cve[-_]\d{4}[-_]\d{4,})[^/]*\.jar$/i.test(jar.text) && !onlyAsksAbout(rest))
    danger(c.st, `runs an exploit, or serves a JNDI injection's payload (${jar.text})`);
  if (GAME_SERVER_JAR.test(jar.text.replace(/^.*\//, '')) && !onlyAsksAbout(rest))
    danger(c.st, `starts a server that listens on every network interface (${jar.text})`);
  judgeScript(c.prog, jar, rest, c.st);
  attackToolChecks(jar.text.replace(/^.*\//, ''), rest, c.st);
  judgeUnknownProgram(jar.text.replace(/^.*\//, ''), rest, c.st);
};

const source: Rule = ({ args, st }) => {
  // A virtualenv's activate script only sets variables.
  if (!/activate$/.test(args[0]?.text ?? '')) st.repeatable = false;
};

export const INTERPRETER_RULES: RuleTable = {
  programs: {
    python,
    python2: python,
    python3: python,
    // setup.py run as a program (`setup.py sdist upload`, its shebang naming python) is python running it.
    'setup.py': (call) => python({ ...call, args: [word('setup.py'), ...call.args] }),
    node: versionOnly,
    java,
    ruby: versionOnly,
    perl: versionOnly,
    source,
    '.': source,
    pwsh: powershell,
    powershell,
  },
};
