// Programs that run other programs, judged by what they run. One entry per program family says which
// options execute, where the payload is, and how to read it:
//
// - `shell`: a command text the program hands to /bin/sh (`man -P`, `tar --to-command`, ssh's
//   ProxyCommand): judged as a command text of its own.
// - `program`: a program the tool runs with data or file names of its own appended (`rg --pre`,
//   `tar -I`, `go test -exec`): judged as a command; a shell or interpreter there runs that data as code.
// - `argv`: the following words are the command (`find -exec … ;`, `fd -x`, `bundle exec`).
// - `opaque`: code in the tool's own language that can run anything (awk's system(), sed's `e`,
//   vim's `:!`, gdb's `-ex`), or a payload out of sight (an environment variable, a config file):
//   dangerous, since what it runs cannot be read.
// - `writes`: a file the option writes (`find -fprint`, `git log --output`, `strace -o`).
//
// The engine (dangerous.ts) judges each payload; a program's own table (files.ts, git.ts…) still
// judges the rest of its arguments.
import path from 'node:path';
import { CONTAINER_SECRET_FILE, FILE_PRINTERS } from '../secrets.js';
import { parseShell, type Word } from '../shell-lex.js';
import { base, operands, word } from '../state.js';
import { ANSIBLE_COMMAND_MODULE, ansibleAdHoc } from './cloud.js';
import { INLINE_CODE, INTERPRETERS } from './interpreters.js';
import { PORT_SCANNERS, SSH_VALUED } from './network.js';
import { knownByName } from './operators.js';
import { CONTAINER_VALUED } from './trust.js';
import { SHELLS } from './shells.js';
import { DATABASE_CLIENTS, SYSTEM_PACKAGE_MANAGERS } from './system.js';
import { commandOptionValues, isRemoteTool, namedForAttack } from './unknown.js';

export type Payload =
  | { kind: 'shell' | 'program'; text: string; via: string }
  /** `appends`: the program adds file names or data to these words (find's `{}`, fd, xargs). */
  /** `scriptName`: the first word is the name of one of the project's scripts if no table names it (`pdm run lint`). */
  /** `container`: the words run inside a container, whose paths are the container's own files, not this machine's. */
  | { kind: 'argv'; words: Word[]; via: string; appends?: boolean; scriptName?: boolean; container?: boolean }
  | { kind: 'opaque'; via: string }
  | { kind: 'writes'; target: Word; via: string }
  | { kind: 'danger'; reason: string };

type Kind = 'shell' | 'program' | 'opaque' | 'writes';

/** An option that carries a payload: `--pager X`, `--pager=X`, `-PX` (short names take attached values). */
interface ExecOption {
  names: readonly string[];
  kind: Kind;
  /** Only the value's part after this prefix is the payload (`exec=` in `--checkpoint-action=exec=…`). */
  prefix?: RegExp;
  /** The value separates the program's words with this character (gcc's `-wrapper sh,-s`). */
  separator?: string;
}

interface Executor {
  options?: readonly ExecOption[];
  /** Payloads not carried by one option: find's `-exec … ;`, sed's script, awk's program. */
  extract?: (args: Word[]) => Payload[];
}

/** The value of option `a` (at index k), if `a` is one of `names`. */
function optionValue(args: Word[], k: number, names: readonly string[]): Word | undefined {
  const t = args[k]!.text;
  for (const n of names) {
    if (t === n) return args[k + 1];
    if (n.length > 2 && t.startsWith(`${n}=`)) return { ...args[k]!, text: t.slice(n.length + 1) };
    if (!n.startsWith('--') && n.length === 2 && t.startsWith(n) && t.length > 2 && !t.startsWith('--')) return { ...args[k]!, text: t.slice(2) };
    // A cluster ending in the option (`script -qc CMD`, `rsync -avze CMD`) takes the next word.
    if (!n.startsWith('--') && n.length === 2 && /^-[a-zA-Z]+$/.test(t) && t.endsWith(n[1]!)) return args[k + 1];
  }
  return undefined;
}

function fromOptions(options: readonly ExecOption[], args: Word[]): Payload[] {
  const out: Payload[] = [];
  for (let k = 0; k < args.length; k++) {
    if (args[k]!.text === '--') break;
    for (const o of options) {
      const v = optionValue(args, k, o.names);
      if (!v) continue;
      const via = o.names[0]!;
      let text = v.text;
      if (o.prefix) {
        const m = o.prefix.exec(text);
        if (!m) continue;
        text = text.slice(m[0].length);
      }
      if (o.separator) text = text.split(o.separator).join(' ');
      if (o.kind === 'writes') out.push({ kind: 'writes', target: { ...v, text }, via });
      else if (o.kind === 'opaque') out.push({ kind: 'opaque', via });
      // A shell's text with variables in it (`script -c "make ${target}"`) is read as `sh -c` reads it; another
      // payload a variable completes cannot be read.
      else if (v.expands && !v.nested.length && o.kind !== 'shell') out.push({ kind: 'opaque', via });
      else out.push({ kind: o.kind, text, via });
    }
  }
  return out;
}

/** The word that stands for the file names find and fd put in place of `{}`. */
export const FOUND = 'found-file';
const found = (w: Word, under = ''): Word => (w.text.includes('{}') ? { ...w, text: w.text.replaceAll('{}', under ? path.join(under, FOUND) : FOUND) } : w);

/** find's tests and options that choose no file: with only these, find hands over every file under where it starts. */
const FIND_EVERY_FILE = /^(-type|-xtype|-mindepth|-maxdepth|-depth|-d|-xdev|-mount|-follow|-noleaf|-ignore_readdir_race|-L|-H|-P|-print0?)$/;
const FIND_VALUED = /^(-type|-xtype|-mindepth|-maxdepth)$/;
const DELETERS = /^(rm|shred|unlink|srm|wipe)$/;

/**
 * find that deletes every file of the current directory (`find . -type f -exec shred -u {} \;`,
 * `find . -depth -type d -exec rm -rf {} +`, `find -delete`): the workspace and its history go, as
 * with `rm -rf .`.
 */
function findDeletesEverything(args: Word[]): Payload[] {
  const action = args.findIndex((a, k) => a.text === '-delete' || (/^-(exec|execdir|ok|okdir)$/.test(a.text) && DELETERS.test(base(args[k + 1]))));
  if (action < 0) return [];
  const first = args.findIndex((a) => /^[-(!]/.test(a.text) && !/^-[LHP]$/.test(a.text));
  const starts = args.slice(0, first < 0 ? action : first).filter((a) => !/^-[LHP]$/.test(a.text));
  if (!starts.every((a) => /^\.\/?$/.test(a.text))) return [];
  for (let k = first; k < action; k++) {
    if (!FIND_EVERY_FILE.test(args[k]!.text)) return [];
    if (FIND_VALUED.test(args[k]!.text)) k++;
  }
  return [
    {
      kind: 'danger',
      reason: `deletes every file in the current directory, the workspace's history too (find … ${args[action]!.text}${args[action]!.text === '-delete' ? '' : ` ${args[action + 1]!.text}`})`,
    },
  ];
}

/** find's `-exec CMD … ;` (or `+`), and its options that write files. */
function findPayloads(args: Word[]): Payload[] {
  const out: Payload[] = findDeletesEverything(args);
  // The files found lie under where the search starts: `{}` of `find /var/log -exec truncate -s 0 {} \;`
  // names files under /var/log, judged there by the payload's own rules.
  const first = args.findIndex((a) => /^[-(!]/.test(a.text) && !/^-[LHP]$/.test(a.text));
  const under = args.slice(0, first < 0 ? 0 : first).find((a) => /^(\/|~)/.test(a.text))?.text ?? '';
  for (let k = 0; k < args.length; k++) {
    const t = args[k]!.text;
    if (/^-(exec|execdir|ok|okdir)$/.test(t)) {
      let e = k + 1;
      while (e < args.length && args[e]!.text !== ';' && args[e]!.text !== '+') e++;
      // `{}` stands for each file found (FOUND here); the find rule judges where the search starts.
      // `-execdir` runs in each found file's directory: a relative name it is given (`cp {} libx.so.1`)
      // lies under where an absolute search starts, not in the workspace.
      const start = /dir$/.test(t) && args[0] && path.isAbsolute(args[0].text) ? args[0].text : undefined;
      const inStart = (w: Word, j: number): Word =>
        start && j > 0 && !/^[-{]|^\$|=|^\//.test(w.text) && !w.text.endsWith(FOUND) ? { ...w, text: path.join(start, w.text) } : w;
      out.push({
        kind: 'argv',
        words: args
          .slice(k + 1, e)
          .map((w) => found(w, under))
          .map(inStart),
        via: t,
        appends: true,
      });
      k = e;
    } else if (/^-(fprint|fprint0|fls|fprintf)$/.test(t) && args[k + 1]) out.push({ kind: 'writes', target: args[k + 1]!, via: t });
  }
  return out;
}

/** fd's `-x`/`--exec` and `-X`/`--exec-batch`: the command is the rest (up to `;`). */
function fdPayloads(args: Word[]): Payload[] {
  const k = args.findIndex((a) => /^(-x|--exec|-X|--exec-batch)$/.test(a.text));
  if (k < 0) return [];
  let e = k + 1;
  while (e < args.length && args[e]!.text !== ';') e++;
  return [{ kind: 'argv', words: args.slice(k + 1, e).map((w) => found(w)), via: args[k]!.text, appends: true }];
}

/**
 * sed's script: `e CMD` runs CMD, a bare `e` and the `e` flag of `s` run the pattern space (text the
 * checker cannot see), `w FILE` and the `w` flag write FILE. The script is the value of -e/--expression,
 * or the first operand without them.
 */
/** An address (line numbers, /regex/, $) before a sed command letter. */
const SED_ADDRESS = /^(\d+|\$|\/(?:[^/\\]|\\.)*\/)(\s*,\s*(\d+|\$|\/(?:[^/\\]|\\.)*\/))?\s*!?\s*/;

/**
 * A sed script's commands without their addresses: `;` and newlines separate them, except that `e`,
 * `w` and `W` take the rest of their line (a `;` there is the command's or the file name's own).
 */
function sedCommands(script: string): string[] {
  const out: string[] = [];
  for (const line of script.split('\n')) {
    let rest = line;
    while (rest.trim()) {
      const semi = rest.indexOf(';');
      const cmd = (semi < 0 ? rest : rest.slice(0, semi)).trim().replace(SED_ADDRESS, '');
      if (/^[eWw](\s|$)/.test(cmd)) {
        out.push(rest.trim().replace(SED_ADDRESS, ''));
        break;
      }
      out.push(cmd);
      if (semi < 0) break;
      rest = rest.slice(semi + 1);
    }
  }
  return out;
}

function sedPayloads(args: Word[]): Payload[] {
  const scripts: string[] = [];
  let sawE = false;
  const operands: Word[] = [];
  for (let k = 0; k < args.length; k++) {
    const t = args[k]!.text;
    if (t === '-e' || t === '--expression') {
      sawE = true;
      if (args[k + 1]) scripts.push(args[++k]!.text);
    } else if (t.startsWith('--expression=')) {
      sawE = true;
      scripts.push(t.slice(13));
    } else if (t === '-f' || t === '--file' || t === '-l') k++;
    else if (/^-[a-zA-Z]*e$/.test(t) && !t.startsWith('--')) {
      sawE = true;
      if (args[k + 1]) scripts.push(args[++k]!.text);
    } else if (!t.startsWith('-') || t === '-') operands.push(args[k]!);
  }
  if (!sawE && operands[0]) scripts.push(operands[0].text);
  const out: Payload[] = [];
  for (const script of scripts) {
    for (const cmd of sedCommands(script)) {
      if (/^e\s*$/.test(cmd)) out.push({ kind: 'opaque', via: 'sed e' });
      else if (/^e\s/.test(cmd)) out.push({ kind: 'shell', text: cmd.slice(1).trim(), via: 'sed e' });
      else if (/^[wW]\s*\S/.test(cmd)) out.push({ kind: 'writes', target: word(cmd.slice(1).trim()), via: 'sed w' });
      else if (cmd.startsWith('s') && cmd.length > 1) {
        const d = cmd[1]!;
        const parts = cmd.slice(2).split(d);
        if (parts.length < 3) continue;
        const flags = parts.slice(2).join(d);
        const w = /w\s*(.+)$/.exec(flags);
        if (/^[gpIiMm0-9]*e/.test(flags)) out.push({ kind: 'opaque', via: 'sed s///e' });
        if (w && /^[gpIiMme0-9]*w/.test(flags)) out.push({ kind: 'writes', target: word(w[1]!.trim()), via: 'sed s///w' });
      }
    }
  }
  return out;
}

/**
 * awk's program: `system("CMD")` and `print | "CMD"` / `"CMD" | getline` run CMD (judged when it is
 * a literal, unreadable when built at run time); `print > "FILE"` writes FILE.
 */
function awkPayloads(args: Word[]): Payload[] {
  let program: string | undefined;
  for (let k = 0; k < args.length; k++) {
    const t = args[k]!.text;
    if (/^-(f|v|F)$/.test(t) || t === '--file') {
      if (t === '-f' || t === '--file') return [];
      k++;
    } else if (!t.startsWith('-')) {
      program = t;
      break;
    }
  }
  if (program === undefined) return [];
  const out: Payload[] = [];
  const literal = String.raw`"((?:[^"\\]|\\.)*)"`;
  // Pipes are found with the string and regex literals set aside (`FS="|"`, `/a|b/`); a literal
  // next to a pipe is put back as the command it names.
  const strings: string[] = [];
  const bare = program
    .replace(new RegExp(literal, 'g'), (_m, body: string) => `\u0000${strings.push(body) - 1}\u0000`)
    .replace(/(^|[\s(~!,{;&|])\/(?:[^/\\\n]|\\.)+\//g, '$1');
  const command = (expr: string, via: string): Payload => {
    const lit = /^\u0000(\d+)\u0000$/.exec(expr.trim());
    return lit ? { kind: 'shell', text: strings[Number(lit[1])]!, via } : { kind: 'opaque', via };
  };
  for (const m of bare.matchAll(/\bsystem\s*\(\s*([^)]*)\)/g)) out.push(command(m[1]!, 'awk system()'));
  for (const m of bare.matchAll(/(?<![|])\|(?![|])&?/g)) {
    const before = bare.slice(0, m.index).trimEnd();
    const after = bare.slice(m.index + m[0].length).trimStart();
    if (/^getline\b/.test(after)) out.push(command(/(\u0000\d+\u0000|[\w$]+)$/.exec(before)?.[1] ?? '', 'awk pipe'));
    else out.push(command(/^(\u0000\d+\u0000|[^;}\s]+)/.exec(after)?.[1] ?? '', 'awk pipe'));
  }
  for (const m of program.matchAll(new RegExp(String.raw`>>?\s*${literal}`, 'g'))) out.push({ kind: 'writes', target: word(m[1]!), via: 'awk >' });
  if (args.some((a) => a.text === 'inplace' || a.text === '-i')) out.push({ kind: 'writes', target: word('.'), via: 'awk -i inplace' });
  return out;
}

/** vim's `-c CMD`, `--cmd CMD`, `+CMD`: `!CMD` runs CMD; a shell, a terminal, a script or a write is opaque. */
function vimPayloads(args: Word[]): Payload[] {
  const cmds: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const t = args[k]!.text;
    if ((t === '-c' || t === '--cmd' || t === '-S') && args[k + 1]) cmds.push(t === '-S' ? 'source' : args[++k]!.text);
    else if (t.startsWith('+') && t.length > 1) cmds.push(t.slice(1));
  }
  const out: Payload[] = [];
  for (const c of cmds) {
    const bare = c.replace(/^:+/, '').trim();
    if (bare.startsWith('!')) out.push({ kind: 'shell', text: bare.slice(1), via: 'vim :!' });
    else if (
      /(^|[|\s])(!|sh(ell)?\b|term(inal)?\b|sy(stem)?\b|redir|py(thon)?3?\b|lua\b|perl\b|ruby\b|so(urce)?\b|w(rite)?!?\s|call\b|exe(cute)?\b)/.test(bare) ||
      bare.includes('system(')
    )
      out.push({ kind: 'opaque', via: 'vim -c' });
  }
  return out;
}

/** ssh's `-o Key=Value` (or `-oKey=Value`, `-o 'Key Value'`): ProxyCommand, LocalCommand, KnownHostsCommand run commands. */
function sshPayloads(args: Word[]): Payload[] {
  const out: Payload[] = [];
  for (let k = 0; k < args.length; k++) {
    const t = args[k]!.text;
    const v = t === '-o' ? args[k + 1]?.text : t.startsWith('-o') ? t.slice(2) : undefined;
    if (v === undefined) continue;
    const m = /^\s*(ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand)\s*[= ]\s*(.*)$/i.exec(v);
    if (m && m[1]!.toLowerCase() !== 'remotecommand') out.push({ kind: 'shell', text: m[2]!.replace(/^;/, ''), via: `ssh -o ${m[1]}` });
    if (/^\s*(PKCS11Provider|SecurityKeyProvider)/i.test(v)) out.push({ kind: 'opaque', via: 'ssh -o PKCS11Provider' });
  }
  return out;
}

/** The command ssh runs on the host: a command text of its own (what it does there is done with this user's keys). */
function sshRemoteCommand(args: Word[]): Payload[] {
  const ops = operands(args, SSH_VALUED);
  return ops.length > 1
    ? [
        {
          kind: 'shell',
          text: ops
            .slice(1)
            .map((w) => w.text)
            .join(' '),
          via: 'ssh',
        },
      ]
    : [];
}

/** adb's global options that take a value (a device's serial, a transport, a server's host, port or socket). */
export const ADB_VALUED = /^(-s|-t|-H|-P|-L)$/;

/** `adb shell CMD…`, `adb exec-out CMD…`: the command runs on the device, a command text of its own. */
function adbShellCommand(args: Word[]): Payload[] {
  const ops = operands(args, ADB_VALUED);
  if (!/^(shell|exec-out)$/.test(ops[0]?.text ?? '')) return [];
  const words = ops.slice(1).filter((w) => !/^-[tTnx]+$/.test(w.text));
  return words.length ? [{ kind: 'shell', text: words.map((w) => w.text).join(' '), via: `adb ${ops[0]!.text}` }] : [];
}

/** Where a container runtime's `run`, `create` or `exec` names its image or container among its words, or -1. */
export function containerImageIndex(args: readonly Word[]): number {
  const sub = args.findIndex((a) => /^(run|create|exec)$/.test(a.text));
  if (sub < 0) return -1;
  let k = sub + 1;
  while (k < args.length && args[k]!.text.startsWith('-')) k += CONTAINER_VALUED.test(args[k]!.text) ? 2 : 1;
  return k;
}

/** `docker run IMAGE CMD…`, `docker exec CONTAINER CMD…`: the words after the image or container are the command. */
function containerCommand(args: Word[]): Payload[] {
  // `podman unshare CMD` runs CMD on this machine, as the user mapped to root in podman's user namespace.
  if (args[0]?.text === 'unshare' && args.length > 1) return [{ kind: 'argv', words: args.slice(1), via: 'podman unshare' }];
  const sub = args.findIndex((a) => /^(run|create|exec)$/.test(a.text));
  if (sub < 0) return [];
  const k = containerImageIndex(args);
  const rest = args.slice(k + 1);
  // An image named for an attack tool, a port scanner, a prober of other machines or an exploit (`wpscanteam/wpscan`,
  // `k0st/nmap`, `testssl/testssl.sh`, `spring4shell-poc`) runs that tool, its words after the image
  // the tool's own options: judged as the tool run here would be.
  const image = args[k];
  const tool = image?.text.replace(/[:@].*$/, '').replace(/^.*\//, '');
  // Its words may open with the tool's own subcommand (`trufflesecurity/trufflehog github --org=…`); a
  // shell, a path or the tool's name itself is a command given to the image instead; a URL is the tool's target.
  const path = rest[0]?.text.includes('/') && !/^[a-z][\w+.-]*:\/\//i.test(rest[0].text);
  const toolWords = !rest.length || rest[0]!.text.startsWith('-') || !(SHELLS.has(base(rest[0])) || path || base(rest[0]) === tool);
  if (args[sub]!.text !== 'exec' && tool && (knownByName(tool) || PORT_SCANNERS.includes(tool) || isRemoteTool(tool) || namedForAttack(tool)) && toolWords)
    return [{ kind: 'argv', words: [{ ...image!, text: tool }, ...rest], via: `the image named for ${tool}` }];
  if (!rest.length) return [];
  // A bare shell as a new container's command reads what is typed to it inside the container, as the
  // image's own default command would; what the container may reach is judged by its options, seen
  // here. One a running container starts on a terminal (`docker exec -it web bash`) runs there on what
  // the run types, which is nothing (the corpora label it safe sixteen times to four); without a
  // terminal it runs whatever is piped to it, unseen. Compose's `exec` gives one unless told `-T`.
  const options = args.slice(sub + 1, k);
  const terminal = args.slice(0, sub).some((a) => a.text === 'compose')
    ? !options.some((a) => /^(-T|--no-TTY|--no-tty)$/.test(a.text))
    : options.some((a) => /^(-[a-zA-Z]*t[a-zA-Z]*|--tty)$/.test(a.text));
  if (
    (args[sub]!.text !== 'exec' || terminal) &&
    SHELLS.has(base(rest[0])) &&
    base(rest[0]) !== 'busybox' &&
    rest.slice(1).every((w) => /^(-[il]+|--login)$/.test(w.text))
  )
    return [];
  // A package manager run in a container changes the container's packages, not this machine's; a
  // database client there with no host given logs in to the container's own database.
  if (SYSTEM_PACKAGE_MANAGERS.includes(base(rest[0]))) return [];
  // Options after the image are its entrypoint's (`fpm -s dir -t tar -p /out/out.tar .`), paths of the container's.
  if (rest[0]!.text.startsWith('-')) return [];
  if (DATABASE_CLIENTS.includes(base(rest[0])) && !rest.some((w) => /^(-h|--host)(=|$)|^-h\S|:\/\//.test(w.text))) return [];
  // The command's path names a file of the container's, not this machine's: it is judged by its name.
  const command = [{ ...rest[0]!, text: rest[0]!.text.replace(/^\/.*\//, '') }, ...rest.slice(1)];
  const out: Payload[] = [{ kind: 'argv', words: command, via: `${args[sub]!.text} in a container`, container: true }];
  // Inside a running container a file's path says nothing of this machine, but its name can say it
  // holds a secret (a flag, a password, a key), and printing it hands that over.
  const secretFile = rest.slice(1).find((w) => CONTAINER_SECRET_FILE.test(w.text));
  if (args[sub]!.text === 'exec' && FILE_PRINTERS.test(base(rest[0])) && secretFile)
    out.push({ kind: 'danger', reason: `prints a secret file inside a container (${args[sub]!.text} … ${rest[0]!.text} ${secretFile.text})` });
  return out;
}
/**
 * A local development environment's containers (`npx wp-env run cli wp plugin list`, `ddev exec
 * composer install`): the command runs in the project's own container, its paths the container's.
 */
const DDEV_TOOLS =
  /^(composer|drush|terminus|robo|npm|npx|yarn|php|artisan|wp|craft|magento|typo3|console|blackfire|xdebug|mysql|psql|redis-cli|phpunit|phpcs|phpstan)$/;
function devEnvironmentCommand(prog: string, args: Word[]): Payload[] {
  const ops = operands(args, /^--env-cwd$/);
  const verb = ops[0];
  const at = verb && (prog === 'wp-env' ? verb.text === 'run' && ops[1] : verb.text === 'exec') ? args.indexOf(prog === 'wp-env' ? ops[1]! : verb) + 1 : -1;
  // DDEV runs the project's tools in its web container by their own names (`ddev composer install`, `ddev terminus site:create …`).
  const tool = prog === 'ddev' && verb && DDEV_TOOLS.test(verb.text) ? args.indexOf(verb) : -1;
  const rest = at > 0 ? args.slice(at).filter((w) => !/^--env-cwd(=|$)/.test(w.text)) : tool >= 0 ? args.slice(tool) : [];
  if (!rest.length) return [];
  const command = [{ ...rest[0]!, text: rest[0]!.text.replace(/^\/.*\//, '') }, ...rest.slice(1)];
  return [{ kind: 'argv', words: command, via: `${prog} ${verb!.text} in a container`, container: true }];
}

/**
 * TeX given its source inline (`latex '\documentclass…'`): `\openout`, `\write18`, `\input|` and
 * the shell-escape options write files or run commands whose names are only known after macros
 * expand, so they are out of sight.
 */
function texPayloads(args: Word[]): Payload[] {
  const out: Payload[] = [];
  if (args.some((a) => /^--?(shell-escape|enable-write18)$/.test(a.text))) out.push({ kind: 'opaque', via: 'TeX -shell-escape' });
  if (args.some((a) => a.text.startsWith('\\') && /\\(openout|write18|input\s*\||directlua)/.test(a.text)))
    out.push({ kind: 'opaque', via: 'inline TeX (\\openout, \\write18)' });
  return out;
}

/** latexmk's `-pdflatex=CMD` and kin name the command of a step (without `=` most are plain switches). */
function latexmkCommands(args: Word[]): Payload[] {
  return args.flatMap((a): Payload[] => {
    const m = /^-(latex|pdflatex|xelatex|lualatex|dvipdf|ps2pdf|dvips|bibtex|biber|makeindex|pdf_previewer|dvi_previewer|ps_previewer)=(.*)$/s.exec(a.text);
    return m ? [{ kind: 'shell', text: m[2]!, via: `latexmk -${m[1]}=` }] : [];
  });
}

/** strace's and ltrace's `-p PID` (`--attach`): the tracer reads another process's calls, its buffers and secrets. */
function tracerAttaches(args: Word[]): Payload[] {
  return args.some((a) => /^(-p|--attach)(=|$)|^-p\d+$|^-[a-zA-Z]*p$/.test(a.text))
    ? [{ kind: 'danger', reason: 'attaches to another process and reads what it reads and writes (strace -p)' }]
    : [];
}

/**
 * A pager's initial commands (`less '+!rm -rf ~' file`, more's `+!cmd`): `!CMD` runs CMD in a shell and
 * `|` pipes the text to one; searches and line numbers (`+/pattern`, `+G`, `+42`) only move the view.
 */
function pagerPayloads(args: Word[]): Payload[] {
  const out: Payload[] = [];
  for (const a of args) {
    const bang = /^\+\+?([^!|]*)([!|])(.*)$/s.exec(a.text);
    if (!bang || a.text.startsWith('+/')) continue;
    out.push(bang[2] === '!' && bang[3]!.trim() ? { kind: 'shell', text: bang[3]!, via: "a pager's +!" } : { kind: 'opaque', via: `a pager's ${a.text}` });
  }
  return out;
}

/** gdb's `-ex CMD` / `-x FILE`: `!CMD` and `shell CMD` run CMD; python, pipes, dumps and scripts are opaque. */
function gdbPayloads(args: Word[]): Payload[] {
  const out: Payload[] = [];
  for (let k = 0; k < args.length; k++) {
    const t = args[k]!.text;
    if (/^(-ex|--ex|-eval-command|--eval-command|-iex)$/.test(t) && args[k + 1]) {
      const c = args[++k]!.text.trim();
      const m = /^(!|shell\s)(.*)$/.exec(c);
      // gdb's one-line Python (`pi print(sys.version)`) is judged as python's inline code.
      const python = /^(python|pi|py)\s+(\S.*)$/.exec(c);
      if (m) out.push({ kind: 'shell', text: m[2]!, via: 'gdb !' });
      else if (python) out.push({ kind: 'shell', text: `python3 -c '${python[2]!.replace(/'/g, `'\\''`)}'`, via: 'gdb python' });
      else if (/^(python|pi|py|pipe|\||dump|append|restore|source|call|print\s.*\(|define|guile|compile|set\s+(logging|shell))/.test(c))
        out.push({ kind: 'opaque', via: 'gdb -ex' });
    } else if (/^(-x|--command|-ix)$/.test(t)) {
      // A command file of the workspace's (`gdb -x command --args ./crackme`) is the project's own, as a script of it run is.
      const file = args[++k];
      if (!file || file.expands || /^(\/|~|\.\.)/.test(file.text)) out.push({ kind: 'opaque', via: 'gdb -x' });
    } else if (/^(-p|--pid)(=|$)/.test(t)) out.push({ kind: 'danger', reason: 'attaches to another process, whose memory may hold secrets (gdb -p)' });
  }
  return out;
}

/** Database shells: `.shell`/`.system` (sqlite3), `\!`/`system` (mysql, psql) run commands; `.output`/`.once` write. */
/**
 * SQL that changes the database server itself rather than a database's rows: its settings for every
 * client (`SET GLOBAL`, `ALTER SYSTEM`), its replication (`RESET MASTER`, `STOP SLAVE`, `CHANGE MASTER`),
 * its accounts and grants, whole databases dropped, or the server shut down.
 */
const SERVER_SQL =
  /^(set\s+(@@)?(global|persist)\b|set\s+@@global\.|alter\s+system\b|reset\s+(master|replica|slave)\b|(start|stop)\s+(all\s+)?(slaves?|replicas?)\b|change\s+(master|replication)\b|purge\s+(binary|master)\s+logs\b|(create|drop|alter|rename)\s+(user|role)\b|grant\b|revoke\b|drop\s+(database|schema)\b|shutdown\b|flush\s+privileges\b)/i;

/**
 * The server's own tables of accounts and their password hashes (PostgreSQL's pg_shadow and pg_authid,
 * MySQL's mysql.user, SQL Server's sql_logins and syslogins), and Azure AD Connect's key material.
 */
const ACCOUNT_TABLES = /\b(pg_shadow|pg_authid|mysql\.user|sys\.sql_logins|sql_logins|syslogins|mms_server_configuration)\b/i;

function dbShellPayloads(args: Word[]): Payload[] {
  const out: Payload[] = [];
  for (const a of args) {
    for (const line of a.text.split(/[;\n]/)) {
      const l = line.trim();
      if (SERVER_SQL.test(l))
        out.push({ kind: 'danger', reason: `changes the database server's settings, replication or accounts (${l.split(/\s+/).slice(0, 2).join(' ')})` });
      const table = /\bselect\b/i.test(l) ? ACCOUNT_TABLES.exec(l)?.[1] : undefined;
      if (table) out.push({ kind: 'danger', reason: `reads the database server's accounts and password hashes (${table})` });
      const m = /^(\.shell|\.system|\\!|system)\s+(.*)$/.exec(l);
      if (m) out.push({ kind: 'shell', text: m[2]!, via: m[1]! });
      const w = /^\.(output|once|log)\s+(\S+)/.exec(l);
      if (w) out.push({ kind: 'writes', target: word(w[2]!), via: `.${w[1]}` });
      if (/^\.(load|import)\s/.test(l)) out.push({ kind: 'opaque', via: l.split(/\s/)[0]! });
    }
  }
  if (args.some((a) => /^--(default-auth|plugin-dir|init-command)/.test(a.text))) out.push({ kind: 'opaque', via: '--default-auth' });
  return out;
}

/** socat's addresses: `EXEC:`/`SYSTEM:` run a command; joined to a network address they give it to the network. */
function socatPayloads(args: Word[]): Payload[] {
  const addrs = args.filter((a) => !a.text.startsWith('-') || a.text === '-');
  const net = addrs.some((a) =>
    /^(tcp|udp|sctp|openssl|ssl|tcp4|tcp6|udp4|udp6|tcp-listen|udp-listen|openssl-listen|socks\d?|proxy|vsock)[-\w]*:/i.test(a.text),
  );
  const out: Payload[] = [];
  for (const a of addrs) {
    const m = /^(exec|system):([^,]*)/i.exec(a.text);
    if (m) out.push({ kind: m[1]!.toLowerCase() === 'system' ? 'shell' : 'program', text: m[2]!, via: `socat ${m[1]}:` });
    if (net && (m || /^(file|open|create|gopen|pipe)?:?\//i.test(a.text) || /^(file|open|create|gopen):/i.test(a.text)))
      out.push({ kind: 'danger', reason: `connects ${m ? 'a program' : 'a file'} to the network (socat ${a.text})` });
    const f = /^(open|create|creat|gopen|file|pipe):([^,]+)/i.exec(a.text);
    if (f) out.push({ kind: 'writes', target: word(f[2]!), via: `socat ${f[1]}:` });
  }
  return out;
}

/**
 * `watchexec [OPTIONS] CMD…` runs its command through a shell on every change (after `--`, or from
 * the first operand); `--shell=none` runs the words as the command. `--shell` naming another shell
 * and `--filter-prog` hand over code of their own.
 */
const WATCHEXEC_VALUED =
  /^(-e|--exts|-w|--watch|-W|--watch-non-recursive|-F|--watch-file|-i|--ignore|--ignore-file|-f|--filter|--filter-file|-d|--debounce|--delay-run|-s|--signal|--stop-signal|--stop-timeout|-E|--env|--project-origin|--workdir|-o|--on-busy-update|--emit-events-to|--fs-events|--log-file|--poll|--timeout|--color|--wrap-process|--completions)$/;
function watchexecPayloads(args: Word[]): Payload[] {
  let k = 0;
  let shell = 'sh';
  while (k < args.length && args[k]!.text.startsWith('-') && args[k]!.text !== '--') {
    const t = args[k]!.text;
    if (/^--(shell|filter-prog)$/.test(t) || /^--(shell|filter-prog)=/.test(t)) {
      const v = t.includes('=') ? t.slice(t.indexOf('=') + 1) : (args[k + 1]?.text ?? '');
      if (t.startsWith('--filter-prog')) return [{ kind: 'opaque', via: 'watchexec --filter-prog' }];
      shell = v;
      k += t.includes('=') ? 1 : 2;
      continue;
    }
    k += WATCHEXEC_VALUED.test(t) ? 2 : 1;
  }
  if (args[k]?.text === '--') k += 1;
  const rest = args.slice(k);
  if (!rest.length) return [];
  if (shell === 'none') return [{ kind: 'argv', words: rest, via: 'watchexec --shell=none' }];
  if (!/^(sh|bash|zsh|dash|default)$/.test(shell)) return [{ kind: 'opaque', via: `watchexec --shell=${shell}` }];
  return [{ kind: 'shell', text: rest.map((w) => w.text).join(' '), via: 'watchexec' }];
}

/** `watch CMD…` hands its words joined to sh -c; with -x they are the command. */
function watchPayloads(args: Word[]): Payload[] {
  let k = 0;
  let exec = false;
  while (k < args.length && args[k]!.text.startsWith('-')) {
    if (/^(-x|--exec)$/.test(args[k]!.text)) exec = true;
    k += /^(-n|--interval|-d|--differences|-q|--equexit)$/.test(args[k]!.text) ? 2 : 1;
  }
  const rest = args.slice(k);
  if (!rest.length) return [];
  return exec ? [{ kind: 'argv', words: rest, via: 'watch -x' }] : [{ kind: 'shell', text: rest.map((w) => w.text).join(' '), via: 'watch' }];
}

/** `script [-c CMD] [FILE]`: CMD runs in a shell, FILE is written. */
function scriptPayloads(args: Word[]): Payload[] {
  const out = fromOptions([{ names: ['-c', '--command'], kind: 'shell' }], args);
  const ops = args.filter((a, k) => !a.text.startsWith('-') && !/^(-c|--command|-T|-I|-O|-B)$/.test(args[k - 1]?.text ?? ''));
  if (ops[0]) out.push({ kind: 'writes', target: ops[0], via: 'script' });
  return out;
}

/** tmux's commands that run a shell command (`run-shell CMD`, `new-session CMD`) or type into a pane (`send-keys`). */
function tmuxPayloads(args: Word[]): Payload[] {
  const k = args.findIndex((a) =>
    /^(run-shell|run|new-session|new|new-window|neww|split-window|splitw|respawn-pane|if-shell|if|send-keys|send|pipe-pane|pipep)$/.test(a.text),
  );
  // tmux's own `-c` (before any command) runs a shell command; a command's `-c` is its start directory.
  const own = fromOptions([{ names: ['-c'], kind: 'shell' }], k < 0 ? args : args.slice(0, k));
  if (k < 0) return own;
  const sub = args[k]!.text;
  if (/^send/.test(sub)) return typedIntoPane(args.slice(k + 1));
  const cmd = operands(args.slice(k + 1), /^-(t|s|n|c|e|F|x|y|l|p|S)$/);
  if (!cmd.length) return own;
  return [...own, { kind: 'shell', text: cmd.map((w) => w.text).join(' '), via: `tmux ${sub}` }];
}

/** The keys that end a typed line, and those that only drop or suspend what the pane runs. */
const ENTER_KEY = /^(C-m|C-j|Enter|KPEnter)$/;
const CLEARING_KEY = /^(C-c|C-z|C-u|C-l|C-d)$/;
/**
 * What `tmux send-keys` types into a pane, read as the lines its shell runs: its strings are typed as
 * they are, one after another, and Enter (or C-m) runs the line typed so far (`send-keys -t s:0 'make
 * test' Enter`). A key the checker cannot replay (Tab completes, Up recalls history) or hex keys make what
 * runs unknown; a copy-mode command (`-X`) types nothing. Text with variables in it (`"cd $DIR && npm run
 * dev"`) is read as `sh -c` reads such text: a command a variable names stays unknown there.
 */
function typedIntoPane(args: Word[]): Payload[] {
  if (args.some((a) => a.text === '-X')) return [];
  const keys = operands(args, /^-(t|N|c|F)$/);
  if (!keys.length) return [];
  const literal = args.some((a) => /^-[a-zA-Z]*l/.test(a.text));
  if (args.some((a) => /^-[a-zA-Z]*H/.test(a.text))) return [{ kind: 'opaque', via: 'tmux send-keys' }];
  const lines: string[] = [];
  let line = '';
  for (const key of keys.map((w) => w.text)) {
    if (!literal && ENTER_KEY.test(key)) {
      lines.push(line);
      line = '';
    } else if (!literal && CLEARING_KEY.test(key)) line = '';
    else if (!literal && key === 'Space') line += ' ';
    else if (!literal && /^([CM]-\S|Escape|Tab|BTab|BSpace|Up|Down|Left|Right|Home|End|PageUp|PageDown|NPage|PPage|PgUp|PgDn|IC|DC|F\d+)$/.test(key))
      return [{ kind: 'opaque', via: `tmux send-keys ${key}` }];
    else line += key;
  }
  // A line typed and left unrun is judged too: the next Enter, from anyone, runs it.
  return [...lines, line].filter((l) => l.trim()).map((text) => ({ kind: 'shell' as const, text, via: 'tmux send-keys' }));
}

/**
 * Runners that run their operands as a command: `bundle exec`, `uv run`, `npm exec`, `poetry run`.
 * A runner's module option (`uv run -m build`) runs that module with the environment's Python, as
 * `python -m build` does.
 */
const runsRest =
  (subs: RegExp, skipValued: RegExp = /^$/, moduleOption: RegExp = /^$/) =>
  (args: Word[]): Payload[] => {
    let k = 0;
    while (k < args.length && args[k]!.text.startsWith('-')) k += skipValued.test(args[k]!.text) ? 2 : 1;
    if (!subs.test(args[k]?.text ?? '')) return [];
    k++;
    while (k < args.length && args[k]!.text.startsWith('-') && !moduleOption.test(args[k]!.text)) k += skipValued.test(args[k]!.text) ? 2 : 1;
    const rest = moduleOption.test(args[k]?.text ?? '') ? [word('python'), word('-m'), ...args.slice(k + 1)] : args.slice(k);
    return rest.length
      ? [
          {
            kind: 'argv',
            words: rest,
            via: args
              .slice(0, k)
              .map((a) => a.text)
              .join(' '),
          },
        ]
      : [];
  };

/**
 * `screen [options] [CMD…]`: a new session runs CMD (`screen -dmS miner sudo ./miner`); a log file named
 * is written; `-X` sends a command to a running session (`stuff` types into its shell). Reattaching
 * and listing (`-r`, `-x`, `-R`, `-ls`, `-wipe`) start no command.
 */
function screenPayloads(args: Word[]): Payload[] {
  const out: Payload[] = [];
  let k = 0;
  for (; k < args.length && args[k]!.text.startsWith('-'); k++) {
    const t = args[k]!.text;
    if (t === '-X') return screenSessionCommand(args.slice(k + 1));
    if (/^-([a-zA-Z]*[rxR]|ls|list|wipe|v|version|-help|-version)$/.test(t)) return out;
    // An old screen's log file follows -L (`screen -L ./log CMD`); a newer one names it with -Logfile.
    if ((t === '-L' && /^[./~]/.test(args[k + 1]?.text ?? '') && args.length > k + 2) || t === '-Logfile') {
      if (args[k + 1]) out.push({ kind: 'writes', target: args[k + 1]!, via: `screen ${t}` });
      k++;
      // An option that takes a value may sit inside a cluster of flags (`-dmSL main`: -S names the session, -L logs).
    } else if (/^-[a-zA-Z]*[SceHhpTts][dmLDAUaiOfqln]*$/.test(t)) k++;
  }
  const rest = args.slice(k);
  return rest.length ? [...out, { kind: 'argv', words: rest, via: 'screen' }] : out;
}

/**
 * A running screen session's command (`screen -S api -X stuff "python3 -m server\r"`): `stuff` types its
 * text into the session's shell, which runs it at the line's end; `screen` and `exec` start a program;
 * `eval`, `source`, `register` and `paste` run screen commands the checker does not read. `quit`,
 * `detach` and the rest run nothing.
 */
function screenSessionCommand(words: Word[]): Payload[] {
  const [command, ...rest] = words;
  if (command?.text === 'stuff' && rest.length === 1)
    return [{ kind: 'shell', text: rest[0]!.text.replace(/(\\[rn]|\^M|[\r\n])+$/, ''), via: 'screen -X stuff' }];
  if (/^(screen|exec)$/.test(command?.text ?? '') && rest.length) return [{ kind: 'argv', words: rest, via: `screen -X ${command!.text}` }];
  return /^(stuff|eval|source|register|paste)$/.test(command?.text ?? '') ? [{ kind: 'opaque', via: `screen -X ${command!.text}` }] : [];
}

/** `parallel CMD ::: ARGS`: the words before the first `:::`/`::::` are a command text each input is appended to. */
function parallelPayloads(args: Word[]): Payload[] {
  const end = args.findIndex((a) => /^:{3,4}\+?$/.test(a.text));
  const cmd = operands(
    args.slice(0, end < 0 ? args.length : end),
    /^-(j|S|P|n|N|L|l|d|E|I|a|-jobs|-sshlogin|-arg-file|-delimiter|-joblog|-results|-timeout|-retries|-workdir|-tmpdir)$/,
  );
  // With no command, each input is a command line of its own (`parallel ::: 'make a' 'make b'`); inputs read
  // from a pipe or a file cannot be read here.
  if (!cmd.length)
    return end < 0
      ? []
      : args
          .slice(end + 1)
          .map((a) =>
            /^:{3,4}\+?$/.test(a.text) || args[end]!.text.startsWith('::::')
              ? { kind: 'opaque', via: 'parallel' }
              : { kind: 'shell', text: a.text, via: 'parallel' },
          );
  // A shell given its input as its script (`parallel bash -c {}`) runs whatever comes in.
  const words = args.slice(args.indexOf(cmd[0]!), end < 0 ? args.length : end);
  if (/(^|\/)(ba|z|da|k)?sh$/.test(cmd[0]!.text) && words.some((w, k) => /^-[a-zA-Z]*c$/.test(w.text) && /^\{[^}]*\}$/.test(words[k + 1]?.text ?? '{}')))
    return [{ kind: 'opaque', via: 'parallel' }];
  return [{ kind: 'shell', text: cmd.map((w) => w.text).join(' '), via: 'parallel' }];
}

/**
 * `rush [OPTIONS] 'CMD {}'`: each line of its input is put in the command text's `{}` and the text run
 * by a shell, as parallel's is; without a command each line is itself a command line, unread here.
 */
function rushPayloads(args: Word[]): Payload[] {
  const cmd = operands(args, /^(-[jDdtrionVT]|--(jobs|field-delimiter|record-delimiter|timeout|retries|infile|out-file|nrecords|assign|trim|shell))$/);
  return cmd.length ? [{ kind: 'shell', text: cmd.map((w) => w.text).join(' '), via: 'rush' }] : [{ kind: 'opaque', via: 'rush' }];
}

/** `entr [-s] CMD…`: with -s the first word is a shell command text, otherwise the words are the command. */
function entrPayloads(args: Word[]): Payload[] {
  const k = args.findIndex((a) => !a.text.startsWith('-'));
  if (k < 0) return [];
  return args.slice(0, k).some((a) => /^-[a-zA-Z]*s/.test(a.text))
    ? [{ kind: 'shell', text: args[k]!.text, via: 'entr -s' }]
    : [{ kind: 'argv', words: args.slice(k), via: 'entr', appends: args.slice(0, k).some((a) => a.text === '-p') }];
}

/** rpm's macro `%(CMD)` runs CMD in a shell, wherever a macro is expanded (--eval, --define, a query format). */
function rpmMacroPayloads(args: Word[]): Payload[] {
  return args.flatMap((a) => [...a.text.matchAll(/%\(([^)]*)\)?/g)].map((m): Payload => ({ kind: 'shell', text: m[1]!, via: 'rpm %(…)' })));
}

/** `env -S STRING` / `--split-string`: STRING is split into the command. */
function envPayloads(args: Word[]): Payload[] {
  return fromOptions([{ names: ['-S', '--split-string'], kind: 'shell' }], args);
}

const TAR: readonly ExecOption[] = [
  { names: ['--checkpoint-action'], kind: 'shell', prefix: /^exec=/ },
  { names: ['--to-command'], kind: 'shell' },
  { names: ['--use-compress-program', '-I'], kind: 'program' },
  { names: ['--rsh-command'], kind: 'program' },
  { names: ['--info-script', '--new-volume-script', '-F'], kind: 'shell' },
];

/**
 * uv's options that take the next word as their value (`--group dev`, `--extra test`, `--with ruff`,
 * `--python 3.12`, `--index URL`), so that word is not the command run.
 */
const UV_VALUED =
  /^(--with|--with-editable|--with-requirements|--python|-p|--from|--directory|--project|--package|--group|--only-group|--no-group|--extra|--no-extra|--env-file|--index|--default-index|--index-url|-i|--extra-index-url|--find-links|-f|--index-strategy|--keyring-provider|--resolution|--prerelease|--exclude-newer|--python-platform|--config-file|--cache-dir|--color|--link-mode|--refresh-package|--reinstall-package|--upgrade-package|-P|--no-build-package|--no-binary-package|--config-setting|-C|--allow-insecure-host)$/;

// A workspace or directory chosen first (`pnpm --filter web exec …`, `yarn --cwd app dlx …`) takes a value.
const INTERPRETER_RUNNERS = runsRest(/^(exec|x|dlx)$/, /^(-p|--package|-c|--call|--with|--from|--python|-w|--workspace|-F|--filter|-C|--dir|--cwd|--prefix)$/);

/**
 * An ansible ad-hoc run of the command or shell module on this machine hands its argument to the shell
 * (free form, or the `cmd` of its JSON form); on other hosts it is judged by cloud.ts as a change there.
 */
function ansiblePayloads(args: Word[]): Payload[] {
  const run = ansibleAdHoc(args);
  if (!run.local || !ANSIBLE_COMMAND_MODULE.test(run.module)) return [];
  let text = run.moduleArgs;
  if (text.trimStart().startsWith('{')) {
    try {
      const cmd: unknown = JSON.parse(text).cmd;
      if (typeof cmd !== 'string') return [{ kind: 'opaque', via: `ansible -m ${run.module}` }];
      text = cmd;
    } catch {
      return [{ kind: 'opaque', via: `ansible -m ${run.module}` }];
    }
  }
  return [{ kind: 'shell', text, via: `ansible -m ${run.module}` }];
}

/** One entry per program family. */
/** One entry for every spelling of a program family (`awk`, `gawk`, `mawk`…). */
const family = (names: string[], e: Executor): Record<string, Executor> => Object.fromEntries(names.map((n) => [n, e]));

const EXECUTORS: Readonly<Record<string, Executor>> = {
  find: { extract: findPayloads },
  ansible: { extract: ansiblePayloads },
  ...family(['fd', 'fdfind'], { extract: fdPayloads }),
  rg: { options: [{ names: ['--pre', '--hostname-bin'], kind: 'program' }] },
  ...family(['sed', 'gsed'], { extract: sedPayloads }),
  ...family(['awk', 'gawk', 'mawk', 'nawk'], { extract: awkPayloads }),
  ...family(['tar', 'gtar', 'bsdtar'], { options: TAR }),
  zip: { options: [{ names: ['--unzip-command', '-TT'], kind: 'shell' }] },
  man: { options: [{ names: ['--pager', '-P', '--html', '-H'], kind: 'shell' }] },
  ...family(['vi', 'vim', 'nvim', 'view', 'vimdiff', 'ex', 'rvim'], { extract: vimPayloads }),
  ssh: { extract: (args) => [...sshPayloads(args), ...sshRemoteCommand(args)] },
  adb: { extract: adbShellCommand },
  ...family(['scp', 'sftp'], { extract: sshPayloads, options: [{ names: ['-S'], kind: 'program' }] }),
  rsync: { options: [{ names: ['--rsh', '-e'], kind: 'shell' }] },
  env: { extract: envPayloads },
  go: {
    options: [
      { names: ['-exec', '-toolexec'], kind: 'program' },
      { names: ['-o'], kind: 'writes' },
    ],
  },
  // A compiler's output file is a write where it lands (`gcc -shared -o /usr/lib/x.so`), as cp's target is.
  ...family(['gcc', 'g++', 'cc'], {
    options: [
      { names: ['-wrapper'], kind: 'program', separator: ',' },
      { names: ['-o'], kind: 'writes' },
    ],
  }),
  ...family(['c++', 'clang', 'clang++', 'rustc'], { options: [{ names: ['-o'], kind: 'writes' }] }),
  xxd: {
    extract: (args) =>
      args.some((a) => /^-[a-zA-Z]*r/.test(a.text)) && operands(args).length >= 2 ? [{ kind: 'writes', target: operands(args)[1]!, via: 'xxd -r' }] : [],
  },
  base64: { options: [{ names: ['--output', '-o'], kind: 'writes' }] },
  tmux: { extract: tmuxPayloads },
  ...family(['make', 'gmake'], { options: [{ names: ['--eval', '-E'], kind: 'opaque' }] }),
  split: { options: [{ names: ['--filter'], kind: 'shell' }] },
  // reviewdog runs its `-diff` command to learn what changed.
  reviewdog: { options: [{ names: ['-diff', '--diff'], kind: 'shell' }] },
  gdb: { extract: gdbPayloads },
  ...family(['less', 'more'], { extract: pagerPayloads }),
  ...family(['sqlite3', 'mysql', 'mariadb', 'psql', 'sqlcmd', 'sqlcmd.exe'], { extract: dbShellPayloads }),
  lftp: { options: [{ names: ['-c', '-e'], kind: 'opaque' }] },
  busctl: { options: [{ names: ['--address'], kind: 'opaque', prefix: /^unixexec:/ }] },
  aria2c: {
    options: [
      {
        names: [
          '--on-download-complete',
          '--on-download-start',
          '--on-download-error',
          '--on-download-stop',
          '--on-download-pause',
          '--on-bt-download-complete',
        ],
        kind: 'program',
      },
    ],
  },
  openvpn: {
    options: [
      {
        names: ['--up', '--down', '--route-up', '--ipchange', '--client-connect', '--learn-address', '--tls-verify', '--auth-user-pass-verify', '--config'],
        kind: 'opaque',
      },
    ],
  },
  socat: { extract: socatPayloads },
  curl: { options: [{ names: ['--engine'], kind: 'opaque' }] },
  openssl: { options: [{ names: ['-engine'], kind: 'opaque' }] },
  'ssh-keygen': { options: [{ names: ['-D'], kind: 'opaque' }] },
  'ssh-add': { options: [{ names: ['-s', '-S'], kind: 'opaque' }] },
  gem: { options: [{ names: ['--editor', '-e'], kind: 'program' }] },
  ...family(['pip', 'pip3'], { options: [{ names: ['--editor'], kind: 'program' }] }),
  watch: { extract: watchPayloads },
  watchexec: { extract: watchexecPayloads },
  parallel: { extract: parallelPayloads },
  rush: { extract: rushPayloads },
  entr: { extract: entrPayloads },
  ...family(['rpm', 'rpmdb', 'rpmquery', 'rpmverify', 'rpmbuild', 'rpmspec'], { options: [{ names: ['--pipe'], kind: 'shell' }], extract: rpmMacroPayloads }),
  ...family(['su', 'runuser'], { options: [{ names: ['-c', '--command'], kind: 'shell' }] }),
  flock: { options: [{ names: ['-c', '--command'], kind: 'shell' }] },
  script: { extract: scriptPayloads },
  // Terminal recorders run the command they record: ttyrec's `-e CMD` or the words after `--`
  // (`ttyrec -t 60 -- ssh host`), asciinema's and termtosvg's `-c CMD`.
  ttyrec: {
    options: [{ names: ['-e'], kind: 'shell' }],
    extract: (args) => {
      const k = args.findIndex((a) => a.text === '--');
      return k >= 0 && k + 1 < args.length ? [{ kind: 'argv', words: args.slice(k + 1), via: 'ttyrec --' }] : [];
    },
  },
  ...family(['asciinema', 'termtosvg'], { options: [{ names: ['-c', '--command'], kind: 'shell' }] }),
  ...family(['strace', 'ltrace'], { options: [{ names: ['-o', '--output'], kind: 'writes' }], extract: tracerAttaches }),
  sort: { options: [{ names: ['-o', '--output'], kind: 'writes' }] },
  rlwrap: { options: [{ names: ['-l', '--logfile'], kind: 'writes' }] },
  screen: { extract: screenPayloads },
  bundle: { extract: runsRest(/^exec$/) },
  // V's `v retry CMD…` runs CMD until it succeeds; one word is a command line for the shell (`v retry 'sudo apt update'`).
  v: {
    extract: (args) => {
      const payloads = runsRest(/^retry$/, /^(-t|--timeout|-d|--delay|-r|--retries)$/)(args);
      const only = payloads[0]?.kind === 'argv' && payloads[0].words.length === 1 ? payloads[0].words[0]! : undefined;
      return only && /\s/.test(only.text) ? [{ kind: 'shell', text: only.text, via: 'v retry' }] : payloads;
    },
  },
  // `cabal exec -- CMD` and `opam exec -- CMD` run CMD in the project's or the switch's environment, as `bundle exec` does.
  cabal: { extract: runsRest(/^(v2-)?exec$/) },
  opam: { extract: runsRest(/^exec$/, /^(--switch|--root)$/) },
  // Stack runs `stack exec -- CMD`, and a build's `--exec CMD` after it builds, in the project's environment.
  stack: { options: [{ names: ['--exec'], kind: 'program' }], extract: runsRest(/^exec$/) },
  ip: { extract: ipExec },
  // `uv run CMD` and `uv tool run CMD` run a command; `uv tool install` and `uv tool list` run none.
  uv: {
    extract: (args) => {
      const tool = args.findIndex((a) => !a.text.startsWith('-'));
      const rest = args[tool]?.text === 'tool' && args[tool + 1]?.text === 'run' ? args.slice(tool + 1) : args;
      return runsRest(/^run$/, UV_VALUED, /^(-m|--module)$/)(rest);
    },
  },
  uvx: { extract: (args) => runsRest(/^/, UV_VALUED)([word('x'), ...args]) },
  ...family(['poetry', 'pipenv', 'hatch', 'rye'], { extract: runsRest(/^run$/) }),
  // pdm runs a script of pyproject's `[tool.pdm.scripts]` by that name before a command of it; Devbox a script of devbox.json.
  ...family(['pdm', 'devbox'], { extract: (args) => runsRest(/^run$/)(args).map((p) => (p.kind === 'argv' ? { ...p, scriptName: true } : p)) }),
  conda: { extract: runsRest(/^run$/, /^(-n|--name|-p|--prefix)$/) },
  // gum's spinner runs the command it shows a spinner for (`gum spin --title "scan" -- bash -c '…'`).
  gum: { extract: runsRest(/^spin$/, /^(--spinner|-s|--title|--align|-a|--timeout|--spinner\.foreground|--title\.foreground)$/) },
  // nix-shell runs `--run CMD` (and `--command CMD`) in a shell with the packages it was given.
  'nix-shell': { options: [{ names: ['--run', '--command'], kind: 'shell' }] },
  // `nix develop --command CMD…` and `nix shell … --command CMD…` run CMD in the flake's environment.
  nix: {
    extract: (args) => {
      const k = args.findIndex((a) => /^(-c|--command)$/.test(a.text));
      return k >= 0 && /^(develop|shell)$/.test(args[0]?.text ?? '') && args[k + 1]
        ? [{ kind: 'argv', words: args.slice(k + 1), via: `nix ${args[0]!.text} --command` }]
        : [];
    },
  },
  npm: { extract: INTERPRETER_RUNNERS, options: [{ names: ['--script-shell'], kind: 'program' }] },
  ...family(['pnpm', 'yarn', 'bun'], { extract: INTERPRETER_RUNNERS }),
  ...family(['docker', 'podman', 'nerdctl', 'finch'], { extract: containerCommand }),
  // Compose's own programs (Compose v1, podman's) are `docker compose`.
  ...family(['docker-compose', 'podman-compose'], { extract: (args) => containerCommand([word('compose'), ...args]) }),
  'wp-env': { extract: (args) => devEnvironmentCommand('wp-env', args) },
  ddev: { extract: (args) => devEnvironmentCommand('ddev', args) },
  ...family(['agetty', 'getty', 'mingetty'], { options: [{ names: ['-l', '--login-program'], kind: 'program' }] }),
  // dvips -R0 lets the DVI file's specials run commands.
  dvips: { extract: (args) => (args.some((a) => a.text === '-R0') ? [{ kind: 'opaque', via: 'dvips -R0' }] : []) },
  ...family(['tex', 'latex', 'pdflatex', 'xelatex', 'lualatex', 'luatex', 'pdftex', 'etex', 'xetex', 'context'], { extract: texPayloads }),
  // latexmk runs the commands it is told to use for each step; -e is Perl.
  latexmk: { options: [{ names: ['-e', '-r'], kind: 'opaque' }], extract: (args) => [...latexmkCommands(args), ...texPayloads(args)] },
  // copier runs a template's tasks and migrations (shell lines the template holds) only when trusted.
  copier: {
    extract: (args) => (args.some((a) => /^(--UNSAFE|--trust)$/.test(a.text)) ? [{ kind: 'opaque', via: "copier --trust (the template's tasks)" }] : []),
  },
  // dosbox's -c runs DOS commands on whatever directory it mounts.
  dosbox: { options: [{ names: ['-c'], kind: 'opaque' }] },
  ...family(
    [
      'gnome-terminal',
      'xterm',
      'konsole',
      'x-terminal-emulator',
      'xfce4-terminal',
      'tilix',
      'terminator',
      'alacritty',
      'kitty',
      'urxvt',
      'lxterminal',
      'mate-terminal',
    ],
    {
      extract: terminalCommand,
    },
  ),
};

/**
 * A terminal emulator opened on a command (`gnome-terminal --tab -- sslstrip -l 10000`, `xterm -e
 * top`, `kitty htop`): the words after `--`, `-e`, `-x` or `--command` are that command; one word with
 * blanks in it (`gnome-terminal -e 'tail -f log'`, `xfce4-terminal -e`) is a shell's command text.
 */
function terminalCommand(args: Word[]): Payload[] {
  const k = args.findIndex((a) => /^(--|-e|-x|--command|--execute)$/.test(a.text));
  const rest = k >= 0 ? args.slice(k + 1) : args.every((a) => !a.text.startsWith('-')) ? args : [];
  if (!rest.length) return [];
  if (rest.length === 1 && /\s/.test(rest[0]!.text)) return [{ kind: 'shell', text: rest[0]!.text, via: 'a terminal' }];
  return [{ kind: 'argv', words: rest, via: 'a terminal' }];
}

/** Whether a table entry names the program's executing options. */
export const hasExecutor = (prog: string) => Object.hasOwn(EXECUTORS, prog);
/** Whether the program's executor entry reads the payload of this option (`nix-shell --run`), so it is judged there, not as unreadable. */
export const executorReadsOption = (prog: string, option: string) =>
  Object.hasOwn(EXECUTORS, prog) && (EXECUTORS[prog]!.options ?? []).some((o) => o.names.includes(option.replace(/=.*/, '')));

/** A shell or interpreter by name (`sh`, `/bin/bash`, `python3.12`): a program handed one runs what follows as code. */
function runsCodeByName(name: string): boolean {
  const n = name.replace(/^.*\//, '');
  return SHELLS.has(n) || INTERPRETERS.has(n) || /^(python|perl|ruby|php|lua)\d+(\.\d+)*$/.test(n) || (n.length > 2 && Object.hasOwn(INLINE_CODE, n));
}

/** The shells and interpreters whose name, inside an argument, may start a command there. */
const CODE_NAME_SET = new Set([...SHELLS, ...INTERPRETERS, ...Object.keys(INLINE_CODE).filter((n) => n.length > 2)]);
const CODE_NAMES = [...CODE_NAME_SET]
  .sort((a, b) => b.length - a.length)
  .map((n) => n.replace(/[.+]/g, '\\$&'))
  .join('|');
/**
 * A shell or interpreter where a command starts inside an argument: after a character that programs
 * put before a command (`--pre-hook=`, `!` of a shell escape, `execute(`, `system("`, `|`, `;`) or
 * at the argument's start; after a blank only as an absolute path (`ProxyCommand /bin/sh -i`).
 */
const CODE_START = new RegExp(String.raw`(^|[=!({|;&\`'",:]\s*|\s)((?:/[\w.+-]+)*/)?(${CODE_NAMES})(?:\d+(?:\.\d+)*)?(?=$|[\s;&|)}'"\`#<>])`, 'g');
/**
 * Whether a word holds one of CODE_START's names as a piece of its own between the characters that can stand around
 * one: a cheap test that passes every word CODE_START can match, so most words skip its scan.
 */
const mayNameCode = (text: string) =>
  text.split(/[\s=!({|;&`'",:/)}#<>]+/).some((piece) => CODE_NAME_SET.has(piece) || CODE_NAME_SET.has(piece.replace(/\d+(?:\.\d+)*$/, '')));
const FORM_FIELDS = /^[\w.[\]%-]+=[\w.%+,:/@-]*(?:&[\w.[\]%-]+=[\w.%+,:/@-]*)+$/;
const CLOSER: Record<string, string> = { '(': ')', '{': '}', '"': '"', "'": "'", '`': '`' };
const CODE_OPTION = /^(-[a-zA-Z]*[ecxE]|--(eval|exec|execute|command|code|script|expr|expression|run))(=|$)/;
/** Functions of many languages that start a command (awk's system(), m4's esyscmd, TeX's \write18, PHP's shell_exec…). */
const SPAWNS =
  /\b(system|popen|esyscmd|syscmd|shell_exec|passthru|proc_open|run-shell-command|os\.execute|io\.popen|spawn|execute)\s*[("{]|\\write18\b|\bexec\s*[{(]/;

/**
 * What a program no table knows hands to a shell or an interpreter: an argument that is one
 * (`valgrind /bin/sh …`, `tcpdump -z sh`, the words after it are its arguments), one where a command
 * starts inside an argument (`--pre-hook='/bin/sh …'`, `-e 'system("/bin/sh")'`, `--bind
 * 'enter:execute(bash)'`), and code that calls a function that starts commands. `input` is text the
 * program reads on stdin (`echo 'esyscmd(sh)' | m4`).
 */
export function handoffPayloads(prog: string, args: Word[], input: Word[], known: boolean): Payload[] {
  const out: Payload[] = [];
  // A program a table knows takes names as arguments (`rpm -qf /bin/bash`); only a command inside one counts.
  const k = known ? -1 : args.findIndex((a, i) => handsOver(a, args[i - 1], args[i + 1]));
  if (k >= 0) out.push({ kind: 'argv', words: args.slice(k), via: `${prog} ${args[k]!.text}` });
  // A script's helper named for running what it is given (`run_and_log_cmd "sudo mkdir …"`, `remote_exec curl …`)
  // runs its arguments as a command: one argument with blanks as a command line, several as the words of one.
  // So does any program's argument written as a command through sudo (`"sudo ls /root"`).
  if (!known) out.push(...namedRunnerPayloads(prog, args));
  // An unknown program's command option is read as a command of its own.
  if (!known)
    for (const v of commandOptionValues(args))
      out.push(parses(v.text) ? { kind: 'shell', text: v.text, via: `${prog} command option` } : { kind: 'opaque', via: `${prog} ${v.text.slice(0, 40)}` });
  for (const [i, a] of [...args, ...input].entries()) {
    // The words from the handed-over shell on are its command, judged whole above.
    if (k >= 0 && i >= k && i < args.length) continue;
    // A form's or a query's fields (`query=python&type=tutorial`): values a request sends, the `&` between them no shell's.
    if (FORM_FIELDS.test(a.text)) continue;
    const start = !mayNameCode(a.text)
      ? undefined
      : [...a.text.matchAll(CODE_START)].find((m) => {
          // A blank alone before the name counts only for an absolute path; a bare name alone (`--lang=bash`) is a language.
          if (m[1]!.trim() === '' && (known || (m[1] !== '' && !m[2]))) return false;
          const rest = /^\s*\S/.test(a.text.slice(m.index + m[0].length));
          // The shell or interpreter a setting names (`CONFIG_SHELL=/bin/bash`, `--shell=/bin/zsh`,
          // `--python=/usr/bin/python3`, `-DPython_EXECUTABLE=/usr/bin/python3`, gn's `--script-executable=`) runs the program's own scripts.
          if (!rest && m[1]!.startsWith('=') && /(shell|python|interpreter|executable)$/i.test(a.text.slice(0, m.index))) return false;
          return m[2] !== undefined || rest || /[!({|;&`]/.test(m[1]!);
        });
    if (start) {
      const lead = start[1]!.trim().slice(-1);
      const from = start.index + start[1]!.length;
      const close = CLOSER[lead];
      const end = close ? a.text.indexOf(close, from) : -1;
      const text = a.text.slice(from, end < 0 ? undefined : end);
      out.push(parses(text) ? { kind: 'shell', text, via: prog } : { kind: 'opaque', via: `${prog} ${text.slice(0, 40)}` });
    }
    // Code is the value of an option that takes code (`-e`, `--eval=`), or the text piped in; a
    // search pattern (`semgrep -p 'os.system($X)'`) is not run.
    const code = i >= args.length || CODE_OPTION.test(a.text) || CODE_OPTION.test(args[i - 1]?.text ?? '');
    if (code && SPAWNS.test(a.text)) out.push({ kind: 'opaque', via: `${prog} ${a.text.slice(0, 40)}` });
  }
  return out;
}

/**
 * Names of scripts' helpers that run the command they are given: a word that says so (`cmd`, `exec`,
 * `spawn`), unless the name asks about one (`is_cmd`), or `run` beside words about how (`run_and_log_cmd`, `runQuiet`,
 * `run-as-root`), or `run` alone.
 */
const RUNNER_WORD = /^(cmd|command|exec|execute|spawn|sudo)$/;
/** A first word that makes the name a question about a command (`is_cmd node`, `has_command git`), not a run of one. */
const ASKS_WORD = /^(is|has|have|check|require|requires|need|needs|ensure|which|find|get|list|print|show|test|exists?)$/;
const RUN_MANNER_WORD =
  /^(and|log|logged|quiet|quietly|silent|silently|verbose|echo|safe|safely|retry|as|root|checked|or|die|fail|with|sudo|cmd|command|it|trace|traced|timed)$/;
/**
 * A script's helper named for reporting and stopping (`die "sudo required"`, `warn`): its arguments are a message. A
 * logger of steps (`log_step "sudo rm …"`) may run what it logs, and is read as a runner.
 */
const MESSAGE_HELPER = /^(die|error|err|fail|fatal|abort|panic|warn|warning|info|notice|msg|message|say)$/i;
function namedRunnerPayloads(prog: string, args: Word[]): Payload[] {
  const sudoLine = MESSAGE_HELPER.test(prog) ? undefined : args.find((a) => /^sudo\s+\S/.test(a.text) && parses(a.text));
  if (sudoLine) return [{ kind: 'shell', text: sudoLine.text, via: `${prog}'s argument` }];
  const words = prog
    .replace(/\.(sh|bash|py)$/, '')
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[-_.]+/);
  const runner =
    (!ASKS_WORD.test(words[0]!) && words.some((w) => RUNNER_WORD.test(w))) ||
    (words.includes('run') && (words.length === 1 || words.every((w) => w === 'run' || RUN_MANNER_WORD.test(w))));
  if (!runner || !args.length || args[0]!.text.startsWith('-')) return [];
  if (args.length === 1 && /\s/.test(args[0]!.text))
    return parses(args[0]!.text) ? [{ kind: 'shell', text: args[0]!.text, via: prog }] : [{ kind: 'opaque', via: prog }];
  return [{ kind: 'argv', words: args, via: prog }];
}

function parses(text: string): boolean {
  try {
    parseShell(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Words before a shell's name that make it data: a package, a language or the shell a completion
 * script is written for, not a command (`brew info fish`, `bat -l bash`, `golangci-lint completion zsh`, `listmonk-cli complete zsh`).
 */
const NAMES_DATA =
  /^(install|add|uninstall|remove|upgrade|info|search|show|use|list|which|-l|-s|--lang|--language|--shell|--syntax|(--)?(gen-|generate-|print-)?completions?(-out)?|complete|(--)?autocomplete)$/;

/** Options whose value is where a program writes its output (`coverage html -d htmlcov/python`): a directory, not a program. */
const OUTPUT_OPTION = /^(-d|-o|--output|--out|--outdir|--out-dir|--output-dir|--directory|--dest|--destination|--target-dir)$/;

/** Whether this argument is a shell or interpreter the program runs: a path always (but an output directory), a bare shell unless named as data, a bare interpreter with its arguments after it. */
function handsOver(a: Word, before: Word | undefined, after: Word | undefined): boolean {
  if (a.expands || !/^[\w./+-]+$/.test(a.text) || !runsCodeByName(a.text)) return false;
  if (OUTPUT_OPTION.test(before?.text ?? '')) return false;
  // A relative path last on the line (`cibuildwheel --output-dir wheelhouse wrappers/python`) is as often
  // the project's directory of that name; a shell's, an absolute path or one given arguments runs.
  if (a.text.includes('/')) return path.isAbsolute(a.text) || after !== undefined || SHELLS.has(path.basename(a.text));
  // A command given to it (`completion bash -c …`) makes it a shell again.
  if (NAMES_DATA.test(before?.text ?? '') && !/^-[a-z]*c$/.test(after?.text ?? '')) return false;
  return SHELLS.has(a.text) || after !== undefined;
}

/** `ip netns exec NAME CMD…` and `ip vrf exec NAME CMD…` run CMD inside a network namespace or VRF. */
function ipExec(args: Word[]): Payload[] {
  const ops = operands(args, /^(-n|-netns|-b|-batch|-f|-family|-rc|-rcvbuf)$/);
  if (!/^(netns|vrf)$/.test(ops[0]?.text ?? '') || ops[1]?.text !== 'exec' || ops.length < 4) return [];
  const k = args.indexOf(ops[3]!);
  return [{ kind: 'argv', words: args.slice(k), via: `ip ${ops[0]!.text} exec` }];
}

/** The payloads of one program run (none for a program no entry names). */
export function payloadsOf(prog: string, args: Word[]): Payload[] {
  const e = Object.hasOwn(EXECUTORS, prog) ? EXECUTORS[prog] : undefined;
  if (!e) return [];
  // An option whose name is built at run time (`find . -${t}exec …`) may be one that executes.
  const built = args.find((a) => a.expands && /^-+[$`]/.test(a.text));
  // sed runs code only through its script, read as ever; a built option is at most -i or -E,
  // so what it could change is the files after the script, judged as written.
  if (built && (prog === 'sed' || prog === 'gsed'))
    return [
      ...sedPayloads(args),
      ...operands(args.filter((a) => a !== built))
        .slice(1)
        .map((target): Payload => ({ kind: 'writes', target, via: `${prog} ${built.text}` })),
    ];
  if (built) return [{ kind: 'opaque', via: `${prog} ${built.text}` }];
  return [...(e.options ? fromOptions(e.options, args) : []), ...(e.extract ? e.extract(args) : [])];
}

/**
 * Environment variables whose value a program runs (pagers, editors, ssh for git, diff drivers,
 * lesspipe), and those that load code into every program (preloads, startup files, interpreter
 * options): the first are judged as command texts, the second are opaque.
 */
export const COMMAND_VARIABLES = /^(\w*PAGER|\w*EDITOR|VISUAL|\w+_COMMAND|\w+_CMD|GIT_SSH|GIT_EXTERNAL_DIFF|\w*ASKPASS|LESSOPEN|LESSCLOSE|BROWSER|RSYNC_RSH)$/;
export const CODE_LOADING_VARIABLES =
  /^(LD_PRELOAD|LD_AUDIT|DYLD_INSERT_LIBRARIES|BASH_ENV|ENV|PERL5OPT|PERL5DB|RUBYOPT|PYTHONSTARTUP|PYTHONINSPECT|PROMPT_COMMAND|GIT_CONFIG_PARAMETERS|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|GIT_EXEC_PATH|GIT_TEMPLATE_DIR)$/;
