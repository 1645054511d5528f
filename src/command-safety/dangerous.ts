// The dangerous-command checker (seed 001's dangerous_command_checker) and the "safe to repeat"
// classification the ledger uses after a crash (principle 3, docs/architecture.md). Both err on the careful side:
// anything not understood is not repeatable, and a command that cannot be parsed is reported.
import path from 'node:path';
import { readableInlineCode } from './inline-code.js';
import { parseShell, ShellParseError, type Pipeline, type Redirect, type SimpleCommand, type Word } from './shell-lex.js';

export interface CommandCheck {
  dangerous: boolean;
  reasons: string[];
  repeatable: boolean;
}

const FORK_BOMB = [
  /:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:\s*&/,
  /\b(\w+)\s*\(\s*\)\s*\{[^}]*\b\1\s*\|\s*\1\s*&/,
  /\bfork\s*\(\s*\)\s*while|while\s*\(?\s*1?\s*\)?\s*;?\s*do\s+fork/,
];
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'csh', 'tcsh', 'ash', 'busybox']);
const INTERPRETERS = new Set(['python', 'python2', 'python3', 'perl', 'ruby', 'node', 'php', 'lua']);
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'nc', 'ncat', 'socat']);
const PRIVILEGE = new Set(['sudo', 'su', 'doas', 'pkexec', 'run0']);
const POWER = new Set(['shutdown', 'reboot', 'halt', 'poweroff', 'telinit']);
const DISK = /^(mkfs(\..+)?|mke2fs|mkswap|wipefs|fdisk|sfdisk|cfdisk|gdisk|sgdisk|parted|badblocks)$/;
const ACCOUNTS = new Set(['passwd', 'chpasswd', 'useradd', 'userdel', 'usermod', 'groupadd', 'groupdel', 'visudo']);
const SAFE_DEVICES = /^\/dev\/(null|zero|stdout|stderr|stdin|tty|full|random|urandom|fd\/\d+)$/;
/** A word that assigns a shell variable (`NAME=value`), not a command. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const TEMP_DIRS = /^\/(tmp|var\/tmp)(\/|$)/;

/** Commands that only read, or whose repetition changes nothing more. */
const READ_ONLY = new Set([
  'ls',
  'cat',
  'head',
  'tail',
  'wc',
  'grep',
  'egrep',
  'fgrep',
  'rg',
  'ag',
  'ack',
  'tree',
  'pwd',
  'echo',
  'printf',
  'true',
  'false',
  'test',
  '[',
  '[[',
  'stat',
  'file',
  'du',
  'df',
  'which',
  'type',
  'whoami',
  'id',
  'date',
  'uname',
  'hostname',
  'printenv',
  'diff',
  'cmp',
  'comm',
  'uniq',
  'cut',
  'tr',
  'jq',
  'basename',
  'dirname',
  'realpath',
  'readlink',
  'sha1sum',
  'sha256sum',
  'sha512sum',
  'md5sum',
  'cksum',
  'nl',
  'column',
  'xxd',
  'od',
  'hexdump',
  'strings',
  'tac',
  'rev',
  'fold',
  'fmt',
  'expand',
  'paste',
  'join',
  'seq',
  'sleep',
  'cd',
  'pushd',
  'popd',
  'set',
  'export',
  'unset',
  'shopt',
  'ulimit',
  'umask',
  'ps',
  'nproc',
  'free',
  'uptime',
  'locale',
  'tsc',
  'pytest',
  'mypy',
  'flake8',
  'pylint',
  'pyflakes',
  'ctest',
  'javac',
  'gcc',
  'g++',
  'cc',
  'c++',
  'clang',
  'clang++',
  'rustc',
  'mocha',
  'jest',
  'tox',
  'shellcheck',
  'hadolint',
  'yamllint',
  'markdownlint',
  'wait',
  ':',
  'cloc',
  'tokei',
  'lsof',
  'env',
  'mkdir',
  'touch',
  'gofmt',
]);
const GIT_READ = new Set([
  'status',
  'diff',
  'log',
  'show',
  'rev-parse',
  'ls-files',
  'ls-tree',
  'grep',
  'blame',
  'describe',
  'shortlog',
  'cat-file',
  'rev-list',
  'merge-base',
  'name-rev',
  'whatchanged',
  'reflog',
  'for-each-ref',
  'show-ref',
  'check-ignore',
  'count-objects',
  'version',
  'help',
  'fsck',
  'var',
  'diff-tree',
  'diff-files',
  'diff-index',
  'ls-remote',
  'fetch',
]);
const NPM_SCRIPT = /^(test|lint|build|typecheck|type-check|check|tsc|compile|format:check|lint:.*|test:.*|build:.*|check:.*)$/;
const MAKE_UNSAFE = new Set(['install', 'uninstall', 'deploy', 'publish', 'release', 'push', 'upload', 'dist', 'distclean']);

interface State {
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
}

type PathClass = 'inside' | 'outside' | 'root' | 'home' | 'all' | 'variable' | 'unknown';

function isUnder(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Where a path argument points, relative to the workspace. */
function classify(w: Word | string, st: State): { cls: PathClass; abs?: string } {
  const t = typeof w === 'string' ? w : w.text;
  if (t.startsWith('~') || /^\$\{?HOME\}?(\/|$)/.test(t)) return { cls: 'home' };
  // A word whose start is computed ($x, $(…), `…`) can point anywhere.
  if (/^"?(\$|`)/.test(t)) return { cls: 'variable' };
  // Globs and brace expansions: judge by the fixed prefix (`/*` is the root, `*` is everything here).
  const globAt = t.search(/[*?[{]/);
  const fixed = globAt >= 0 ? t.slice(0, globAt) : t;
  if (globAt >= 0 && /^(\.?\/?|\.\/)$/.test(fixed) && /^(\.\/)?(\*|\.\*|\*\/?|\.\[.*)$/.test(t)) return { cls: 'all' };
  const base = fixed.endsWith('/') || fixed === '' ? fixed : globAt >= 0 ? path.dirname(fixed) : fixed;
  if (path.isAbsolute(base)) {
    const abs = path.resolve(base);
    if (abs === '/') return { cls: 'root', abs };
    return { cls: isUnder(st.ws, abs) ? 'inside' : 'outside', abs };
  }
  if (st.cwd === null) return { cls: 'unknown' };
  const abs = path.resolve(st.cwd, base === '' ? '.' : base);
  if (abs === '/') return { cls: 'root', abs };
  if (!isUnder(st.ws, abs)) return { cls: 'outside', abs };
  if (abs === st.ws && (t === '.' || t === './' || t === '..' || globAt === 0)) return { cls: 'all', abs };
  return { cls: 'inside', abs };
}

const PATH_WORDS: Record<Exclude<PathClass, 'inside'>, string> = {
  outside: 'outside the workspace',
  root: 'the root directory',
  home: 'the home directory',
  all: 'everything in the current directory',
  variable: 'a path built from a variable',
  unknown: 'a path after changing to an unknown directory',
};

function danger(st: State, reason: string): void {
  if (!st.reasons.includes(reason)) st.reasons.push(reason);
  st.repeatable = false;
}

const base = (w: Word | undefined) => (w ? path.basename(w.text) : '');

/** Strip wrappers (env, nice, timeout, xargs, sudo…) so the real program is judged. */
function unwrap(words: Word[], st: State): Word[] {
  let ws = words;
  for (let guard = 0; guard < 10 && ws.length; guard++) {
    while (ws.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(ws[0]!.text)) ws = ws.slice(1);
    const p = base(ws[0]);
    if (PRIVILEGE.has(p)) {
      danger(st, `runs a command with elevated privileges (${p})`);
      let k = 1;
      while (k < ws.length && ws[k]!.text.startsWith('-')) k += /^-[ugCDhpUrt]$/.test(ws[k]!.text) ? 2 : 1;
      if (p === 'su') return [];
      ws = ws.slice(k);
    } else if (
      [
        'env',
        'nice',
        'nohup',
        'time',
        'stdbuf',
        'ionice',
        'command',
        'builtin',
        'exec',
        'unbuffer',
        'chronic',
        'setsid',
        'busybox',
        'toybox',
        'chrt',
        'taskset',
        'flock',
        'watch',
        'strace',
        'ltrace',
      ].includes(p)
    ) {
      if ((p === 'busybox' || p === 'toybox') && ws.length > 1 && !ws[1]!.text.startsWith('-')) {
        ws = ws.slice(1);
        continue;
      }
      if (p === 'command' && (ws[1]?.text === '-v' || ws[1]?.text === '-V')) return [{ text: 'which', expands: false, nested: [], procSub: false }];
      let k = 1;
      while (k < ws.length && (ws[k]!.text.startsWith('-') || (p === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(ws[k]!.text)))) {
        k += /^-(n|u|C|c|o|e|i)$/.test(ws[k]!.text) && p !== 'env' && p !== 'nohup' ? 2 : p === 'env' && ws[k]!.text === '-u' ? 2 : 1;
      }
      if (k >= ws.length) return p === 'env' ? [ws[0]!] : [];
      ws = ws.slice(k);
    } else if (p === 'timeout') {
      let k = 1;
      while (k < ws.length && ws[k]!.text.startsWith('-')) k += /^-(s|k)$/.test(ws[k]!.text) ? 2 : 1;
      ws = ws.slice(k + 1); // the duration
    } else if (p === 'xargs') {
      st.xargs = true;
      let k = 1;
      while (k < ws.length && ws[k]!.text.startsWith('-')) k += /^-[IndPLsEa]$/.test(ws[k]!.text) ? 2 : 1;
      if (k >= ws.length) return [{ text: 'echo', expands: false, nested: [], procSub: false }];
      ws = ws.slice(k);
    } else break;
  }
  return ws;
}

function analyzeNested(src: string, st: State): { downloads: boolean; repeatable: boolean } {
  const sub = analyzeText(src, st.ws, st.cwd, st.depth + 1);
  for (const r of sub.reasons) danger(st, r);
  if (!sub.repeatable) st.repeatable = false;
  if (sub.downloads) st.downloads = true;
  return { downloads: sub.downloads, repeatable: sub.repeatable };
}

/**
 * Files through which a repository makes git run code: hooks, config (core.fsmonitor,
 * core.hooksPath, filter and diff drivers, aliases), attributes that name those drivers,
 * submodules and alternates. The worker itself runs git in the workspace (checkpoints, the
 * result branch), outside the sandbox, so writing them is writing code the worker runs.
 */
const GIT_CODE_PATH =
  /(^|\/)\.git(\/(config(\.worktree)?|hooks(\/.*)?|info(\/attributes)?|objects\/info(\/alternates)?)?)?\/?$|(^|\/)\.git(attributes|modules)$/;
/** A glob that reaches into .git or onto a .git* file: what it names cannot be told before it runs. */
const GIT_GLOB = /(^|\/)\.git(\/[^*?[]*)?[^/]*[*?[]|(^|\/)\.git[^/]*[*?[]/;
const GIT_CODE_REASON = 'which changes how git runs code (hooks, filters, config; the worker runs git here too)';

/** Whether a path names one of those files, as written or after resolving `..` and `cd`. */
function gitCodePath(w: Word, st: State): boolean {
  const t = w.text;
  if (GIT_CODE_PATH.test(path.posix.normalize(t)) || GIT_GLOB.test(t)) return true;
  const c = classify(w, st);
  return c.abs !== undefined && GIT_CODE_PATH.test(path.resolve(st.cwd ?? '/', t));
}

/** The approval reason for a file tool (write_to_file, replace_in_file) writing such a file. */
export function gitCodeFileReason(file: string): string | undefined {
  return GIT_CODE_PATH.test(path.posix.normalize(file)) ? `writes ${file}, ${GIT_CODE_REASON}` : undefined;
}

function checkWriteTarget(target: Word, st: State, what: string): void {
  // `what` reads before the target: "writes to /etc/passwd (outside the workspace)".
  const t = target.text;
  if (gitCodePath(target, st)) danger(st, `${what} ${t}, ${GIT_CODE_REASON}`);
  if (SAFE_DEVICES.test(t) || /^&?\d+$/.test(t) || t === '-') return;
  if (/^\/dev\//.test(t)) return danger(st, `writes to a device (${t})`);
  const c = classify(target, st);
  if (c.cls === 'inside' || c.cls === 'all') return;
  if (c.abs && TEMP_DIRS.test(c.abs)) {
    st.repeatable = false;
    return;
  }
  if (c.cls === 'variable' || c.cls === 'unknown') {
    st.repeatable = false;
    return;
  }
  danger(st, `${what} ${t} (${PATH_WORDS[c.cls]})`);
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

/** Non-option arguments (after `--` everything counts). */
function operands(args: Word[], withValue: RegExp = /^$/): Word[] {
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

const hasFlag = (args: Word[], short: string, long: string[] = []) =>
  args.some((a) => (a.text.startsWith('-') && !a.text.startsWith('--') && a.text.slice(1).includes(short)) || long.includes(a.text));

function analyzeCommand(cmd: SimpleCommand, st: State, prev: SimpleCommand[]): void {
  for (const w of cmd.words) for (const n of w.nested) analyzeNested(n, st);
  checkRedirects(cmd.redirects, st);
  let words = cmd.words;
  // Shell keywords around the real command.
  while (words.length && ['if', 'then', 'else', 'elif', 'do', '!', '{', '}', 'fi', 'done', 'esac', 'while', 'until'].includes(words[0]!.text))
    words = words.slice(1);
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

  if (DOWNLOADERS.has(prog)) {
    st.downloads = true;
    st.repeatable = false;
  }
  // Downloaded code run through a shell, eval or an interpreter.
  const runsCode = SHELLS.has(prog) || INTERPRETERS.has(prog) || prog === 'eval' || prog === 'source' || prog === '.';
  if (runsCode && nestedDownloads) danger(st, 'runs code downloaded from the network');
  if (runsCode && prev.length) {
    const readsStdin = SHELLS.has(prog)
      ? !args.some((a) => a.text === '-c')
      : INTERPRETERS.has(prog)
        ? operands(args).length === 0 || args.some((a) => a.text === '-')
        : false;
    const feeds = prev.some((p) => {
      const pw = unwrap(p.words, { ...st, reasons: [] });
      const pp = base(pw[0]);
      return DOWNLOADERS.has(pp) || (pp === 'base64' && hasFlag(pw.slice(1), 'd', ['--decode'])) || (pp === 'xxd' && hasFlag(pw.slice(1), 'r'));
    });
    if (readsStdin && feeds) danger(st, `pipes downloaded or decoded content into ${prog}`);
  }
  if ((SHELLS.has(prog) || prog === 'eval') && !nestedDownloads) {
    const k = args.findIndex((a) => a.text === '-c');
    const script = prog === 'eval' ? args.map((a) => a.text).join(' ') : k >= 0 ? args[k + 1]?.text : undefined;
    if (script !== undefined) {
      const sub = analyzeText(script, st.ws, st.cwd, st.depth + 1);
      for (const r of sub.reasons) danger(st, r);
      if (!sub.repeatable) st.repeatable = false;
      if (sub.downloads) st.downloads = true;
      return;
    }
  }

  switch (prog) {
    case 'rm':
    case 'rmdir':
    case 'unlink':
    case 'shred':
    case 'srm': {
      st.repeatable = false;
      const recursive = (prog === 'rm' && hasFlag(args, 'r', ['--recursive'])) || hasFlag(args, 'R');
      if (args.some((a) => a.text === '--no-preserve-root')) danger(st, 'deletes with --no-preserve-root');
      for (const t of operands(args)) {
        if (t.procSub) continue;
        const c = classify(t, st);
        if (c.cls === 'inside') continue;
        if (c.cls === 'all' && !recursive) continue;
        if ((c.cls === 'variable' || c.cls === 'unknown') && !recursive) continue;
        danger(st, `${recursive ? 'recursively deletes' : 'deletes'} ${PATH_WORDS[c.cls]} (${t.text})`);
      }
      return;
    }
    case 'find': {
      const exprAt = args.findIndex((a) => /^[-(!]/.test(a.text));
      const starts = (exprAt < 0 ? args : args.slice(0, exprAt)).filter((a) => !a.text.startsWith('-'));
      const deletes =
        args.some((a) => a.text === '-delete') ||
        args.some((a, k) => /^-(exec|execdir|ok|okdir)$/.test(a.text) && /^(rm|shred|unlink)$/.test(base(args[k + 1])));
      const writes = args.some((a) => /^-(delete|exec|execdir|ok|okdir|fprint|fprint0|fprintf|fls)$/.test(a.text));
      if (writes) st.repeatable = false;
      if (deletes) {
        for (const s of starts.length ? starts : [{ text: '.', expands: false, nested: [], procSub: false }]) {
          const c = classify(s, st);
          if (c.cls !== 'inside' && c.cls !== 'all') danger(st, `deletes files found in ${PATH_WORDS[c.cls]} (${s.text})`);
        }
      }
      return;
    }
    case 'dd': {
      st.repeatable = false;
      const of = args.find((a) => a.text.startsWith('of='));
      if (of) checkWriteTarget({ ...of, text: of.text.slice(3) }, st, 'writes (dd) to');
      return;
    }
    case 'chmod':
    case 'chown':
    case 'chgrp':
    case 'chattr': {
      st.repeatable = false;
      const recursive = hasFlag(args, 'R', ['--recursive']);
      const ops = operands(args).slice(1); // the mode/owner comes first
      for (const t of ops) {
        // `chmod +x .git/hooks/pre-commit` arms a hook.
        if (gitCodePath(t, st)) danger(st, `changes the permissions of ${t.text}, ${GIT_CODE_REASON}`);
        const c = classify(t, st);
        if (c.cls === 'inside' || (c.cls === 'all' && !recursive)) continue;
        if (c.cls === 'variable' || c.cls === 'unknown') {
          if (recursive) danger(st, `${recursive ? 'recursively ' : ''}changes permissions of ${PATH_WORDS[c.cls]} (${t.text})`);
          continue;
        }
        danger(st, `${recursive ? 'recursively ' : ''}changes ownership or permissions of ${PATH_WORDS[c.cls]} (${t.text})`);
      }
      return;
    }
    case 'tee': {
      for (const t of operands(args)) checkWriteTarget(t, st, 'writes to');
      if (hasFlag(args, 'a', ['--append'])) st.repeatable = false;
      return;
    }
    case 'cp':
    case 'mv':
    case 'install':
    case 'ln':
    case 'rsync':
    case 'scp': {
      st.repeatable = false;
      const ops = operands(args, /^-(t|S|m|o|g|e)$/);
      const targetDir = args.findIndex((a) => a.text === '-t' || a.text.startsWith('--target-directory'));
      const dest =
        targetDir >= 0
          ? args[targetDir]!.text.includes('=')
            ? { ...args[targetDir]!, text: args[targetDir]!.text.split('=')[1]! }
            : args[targetDir + 1]
          : ops[ops.length - 1];
      if (dest && ops.length >= (targetDir >= 0 ? 1 : 2) && !/^[^/]*:/.test(dest.text))
        checkWriteTarget(dest, st, prog === 'ln' ? 'creates a link at' : 'writes to');
      if (prog === 'mv') {
        for (const s of targetDir >= 0 ? ops : ops.slice(0, -1)) {
          const c = classify(s, st);
          if (c.cls === 'root' || c.cls === 'home' || c.cls === 'outside') danger(st, `moves ${s.text} (${PATH_WORDS[c.cls]})`);
        }
      }
      return;
    }
    case 'kill':
    case 'pkill':
    case 'killall':
    case 'killall5': {
      st.repeatable = false;
      if (prog === 'killall5') return danger(st, 'kills every process (killall5)');
      if (prog === 'kill') {
        let k = 0;
        if (args[0] && /^-(\d+|[A-Z][A-Z0-9+]*|SIG\w+)$/.test(args[0].text)) k = 1;
        else if (args[0] && /^-(s|n)$/.test(args[0].text)) k = 2;
        const pids = args.slice(k).filter((a) => a.text !== '--');
        if (pids.some((a) => a.text === '-1')) danger(st, 'kills every process the user can signal (kill -1)');
      }
      if ((prog === 'pkill' || prog === 'killall') && args.some((a) => a.text === '-u') && args.some((a) => a.text === 'root'))
        danger(st, `kills root's processes (${prog})`);
      return;
    }
    case 'init':
      if (args[0] && /^[06]$/.test(args[0].text)) danger(st, `shuts down or reboots the machine (init ${args[0].text})`);
      st.repeatable = false;
      return;
    case 'systemctl':
      st.repeatable = false;
      if (args.some((a) => /^(poweroff|reboot|halt|kexec|suspend|hibernate|emergency|rescue)$/.test(a.text)))
        danger(st, 'shuts down or reboots the machine (systemctl)');
      return;
    case 'crontab':
      st.repeatable = false;
      if (hasFlag(args, 'r')) danger(st, 'removes all cron jobs (crontab -r)');
      return;
    case 'git':
      return analyzeGit(args, st);
    case 'npm':
    case 'pnpm':
    case 'yarn':
    case 'bun': {
      const sub = operands(args)[0]?.text;
      if (sub === 'publish' || sub === 'unpublish' || sub === 'deprecate') return danger(st, `publishes to a package registry (${prog} ${sub})`);
      const script = sub === 'run' || sub === 'run-script' ? operands(args)[1]?.text : sub;
      const readOnly =
        ['test', 't', 'ls', 'list', 'outdated', 'view', 'info', 'why', 'explain', 'help', 'config', 'root', 'bin', 'prefix', 'audit'].includes(sub ?? '') &&
        !args.some((a) => a.text === 'fix' || a.text === 'set');
      if (args.some((a) => a.text === '-v' || a.text === '--version')) return;
      if (!(readOnly || (script !== undefined && NPM_SCRIPT.test(script)))) st.repeatable = false;
      return;
    }
    case 'npx':
    case 'pnpx':
    case 'bunx': {
      const inner = operands(args, /^(-p|--package)$/);
      if (!inner.length) return;
      return analyzeCommand({ words: inner, redirects: [] }, st, []);
    }
    case 'cargo': {
      const sub = operands(args)[0]?.text;
      if (sub === 'publish' || sub === 'yank' || sub === 'owner') return danger(st, `publishes to a package registry (cargo ${sub})`);
      if (
        !['test', 'build', 'check', 'clippy', 'doc', 'fmt', 'tree', 'metadata', 'bench', 'version', 'nextest', 'verify-project'].includes(sub ?? '') ||
        args.some((a) => a.text === '--fix')
      )
        st.repeatable = false;
      return;
    }
    case 'go': {
      const sub = operands(args)[0]?.text;
      if (!['test', 'build', 'vet', 'list', 'version', 'doc', 'fmt'].includes(sub ?? '') && !(sub === 'env' && !hasFlag(args, 'w'))) st.repeatable = false;
      return;
    }
    case 'make':
    case 'gmake':
    case 'ninja': {
      const targets = operands(args, /^-(C|f|j|l|o|W|I)$/).filter((a) => !a.text.includes('='));
      if (targets.some((t) => MAKE_UNSAFE.has(t.text))) st.repeatable = false;
      return;
    }
    case 'mvn':
    case 'mvnw':
    case 'gradle':
    case 'gradlew': {
      const goals = operands(args);
      if (
        !goals.length ||
        goals.some((g) => !/^(test|compile|verify|package|build|check|clean|assemble|validate|dependencies|tasks|lint)$/.test(g.text.replace(/^:/, '')))
      )
        st.repeatable = false;
      return;
    }
    case 'dotnet': {
      if (!['build', 'test', '--version', '--info'].includes(operands(args)[0]?.text ?? args[0]?.text ?? '')) st.repeatable = false;
      return;
    }
    case 'python':
    case 'python2':
    case 'python3': {
      const m = args.findIndex((a) => a.text === '-m');
      const mod = m >= 0 ? args[m + 1]?.text : undefined;
      if (args.some((a) => a.text === '--version' || a.text === '-V') && args.length === 1) return;
      if (mod && ['pytest', 'unittest', 'mypy', 'pyflakes', 'pylint', 'compileall', 'py_compile', 'flake8', 'doctest'].includes(mod)) return;
      if (mod === 'ruff' || mod === 'black' || mod === 'isort') return analyzeCommand({ words: args.slice(m + 1), redirects: [] }, st, []);
      st.repeatable = false;
      return;
    }
    case 'ruff':
      if (operands(args)[0]?.text !== 'check' || args.some((a) => a.text === '--fix')) st.repeatable = false;
      return;
    case 'black':
    case 'isort':
    case 'prettier':
      if (!args.some((a) => ['--check', '-c', '--diff', '--check-only', '--list-different', '-l'].includes(a.text))) st.repeatable = false;
      return;
    case 'eslint':
      if (args.some((a) => a.text.startsWith('--fix'))) st.repeatable = false;
      return;
    case 'vitest':
      if (operands(args)[0]?.text !== 'run' && !args.some((a) => a.text === '--run')) st.repeatable = false;
      return;
    case 'playwright':
      if (operands(args)[0]?.text !== 'test') st.repeatable = false;
      return;
    case 'sed':
      if (args.some((a) => /^-[a-zA-Z]*i/.test(a.text) || a.text.startsWith('--in-place'))) st.repeatable = false;
      return;
    case 'sort':
      if (args.some((a) => /^-[a-zA-Z]*o/.test(a.text) || a.text.startsWith('--output'))) st.repeatable = false;
      return;
    case 'awk':
    case 'gawk':
    case 'mawk':
      if (args.some((a) => /system\s*\(|print[f]?[^;}]*>\s*"|getline|-i\s*inplace/.test(a.text) || a.text === 'inplace')) st.repeatable = false;
      return;
    case 'yq':
      if (hasFlag(args, 'i', ['--inplace'])) st.repeatable = false;
      return;
    case 'cmake':
      if (!args.some((a) => a.text === '--build')) st.repeatable = false;
      return;
    case 'source':
    case '.':
      if (!/activate$/.test(args[0]?.text ?? '')) st.repeatable = false;
      return;
    case 'node':
    case 'java':
    case 'ruby':
    case 'perl':
      if (!(args.length === 1 && /^(-v|--version|-version)$/.test(args[0]!.text))) st.repeatable = false;
      return;
    case 'mkdir':
      if (!hasFlag(args, 'p', ['--parents'])) st.repeatable = false;
      return;
    case 'cd':
    case 'pushd': {
      const to = args[0];
      if (!to || to.text === '-' || to.text === '~' || to.text.startsWith('~/') || to.expands) st.cwd = null;
      else if (st.cwd !== null || path.isAbsolute(to.text)) st.cwd = path.resolve(st.cwd ?? '/', to.text);
      return;
    }
  }
  if (POWER.has(prog)) return danger(st, `shuts down or reboots the machine (${prog})`);
  if (DISK.test(prog)) return danger(st, `formats or repartitions disks (${prog})`);
  if (ACCOUNTS.has(prog)) return danger(st, `changes system accounts (${prog})`);
  if (['twine', 'gem'].includes(prog) && args.some((a) => a.text === 'upload' || a.text === 'push'))
    return danger(st, `publishes to a package registry (${prog})`);
  if (prog === 'docker' && args.some((a) => a.text === 'push')) return danger(st, 'pushes an image to a registry (docker push)');
  if (!READ_ONLY.has(prog)) st.repeatable = false;
}

function analyzeGit(args: Word[], st: State): void {
  let k = 0;
  while (k < args.length && args[k]!.text.startsWith('-'))
    k += /^-(C|c)$/.test(args[k]!.text) || args[k]!.text === '--git-dir' || args[k]!.text === '--work-tree' ? 2 : 1;
  const sub = args[k]?.text;
  const rest = args.slice(k + 1);
  switch (sub) {
    case 'push': {
      st.repeatable = false;
      const force = rest.some((a) => /^--force(-with-lease|-if-includes)?(=.*)?$/.test(a.text) || (/^-[a-zA-Z]+$/.test(a.text) && a.text.includes('f')));
      if (force) danger(st, 'force-pushes, rewriting history on the remote (git push --force)');
      const refspecs = operands(rest, /^(-o|--push-option|--repo|--receive-pack)$/).slice(1);
      if (!force && refspecs.some((r) => r.text.startsWith('+'))) danger(st, 'force-pushes a ref (git push +ref)');
      if (rest.some((a) => a.text === '--delete' || a.text === '-d' || a.text === '--prune') || refspecs.some((r) => r.text.startsWith(':')))
        danger(st, 'deletes refs on the remote (git push --delete)');
      if (rest.some((a) => a.text === '--mirror')) danger(st, 'mirrors onto the remote, overwriting its refs (git push --mirror)');
      return;
    }
    case 'filter-branch':
    case 'filter-repo':
      return danger(st, `rewrites the repository's history (git ${sub})`);
    case 'reflog':
      if (rest[0]?.text === 'expire' || rest[0]?.text === 'delete') danger(st, 'destroys the reflog, the record needed to recover commits');
      return;
    case 'update-ref':
      st.repeatable = false;
      if (rest.some((a) => a.text === '-d') && rest.some((a) => /^refs\/(heads|remotes|tags)\//.test(a.text) || /^(main|master)$/.test(a.text)))
        danger(st, 'deletes a shared ref (git update-ref -d)');
      return;
    case 'branch':
      if (rest.length && !rest.every((a) => /^(-a|-r|-v|-vv|--list|--all|--remotes|--show-current|--contains|--merged|--no-merged)$/.test(a.text)))
        st.repeatable = false;
      return;
    case 'config':
      if (!gitConfigReads(rest)) danger(st, `changes git configuration (git config ${rest.map((a) => a.text).join(' ')}), ${GIT_CODE_REASON}`);
      return;
    case 'submodule': {
      st.repeatable = false;
      const op = operands(rest)[0]?.text ?? '';
      if (['add', 'set-url', 'init', 'sync'].includes(op)) danger(st, `changes the repository's submodules (git submodule ${op}), ${GIT_CODE_REASON}`);
      return;
    }
    case 'remote': {
      const op = operands(rest)[0]?.text;
      // The worker pushes result branches to the remote, and an ext:: URL is a command.
      if (op === 'add' || op === 'set-url') return danger(st, `changes where git fetches and pushes (git remote ${op}), ${GIT_CODE_REASON}`);
      if (rest.length && !rest.every((a) => /^(-v|show)$/.test(a.text))) st.repeatable = false;
      return;
    }
    case 'tag':
    case 'stash':
      if (rest.length && !rest.every((a) => /^(-l|--list|-v|show|list)$/.test(a.text))) st.repeatable = false;
      return;
    default:
      if (!sub || !GIT_READ.has(sub)) st.repeatable = false;
  }
}

/** Read actions of `git config`: the old flags and the subcommands of git 2.46. */
const GIT_CONFIG_READ = /^(--get|--get-all|--get-regexp|--get-urlmatch|--get-color|--get-colorbool|-l|--list)$/;
const GIT_CONFIG_WRITE = /^(--add|--unset|--unset-all|--replace-all|--rename-section|--remove-section|-e|--edit)$/;
/** Options of `git config` that take a value (so it is not a name or a value of the setting). */
const GIT_CONFIG_VALUED = /^(-f|--file|--blob|--type|--default|--comment|--value)$/;

/** True when `git config ARGS` only reads: a read action, or a single name (`git config user.name`). */
function gitConfigReads(args: Word[]): boolean {
  if (args.some((a) => GIT_CONFIG_WRITE.test(a.text))) return false;
  if (args.some((a) => GIT_CONFIG_READ.test(a.text.replace(/=.*$/, '')))) return true;
  const ops = operands(args, GIT_CONFIG_VALUED);
  const action = ops[0]?.text;
  if (action === 'get' || action === 'list') return true;
  if (action === 'set' || action === 'unset' || action === 'rename-section' || action === 'remove-section' || action === 'edit') return false;
  return ops.length === 1;
}

const INLINE_CODE: Record<string, RegExp> = {
  python: /^-[a-zA-Z]*c/,
  python2: /^-[a-zA-Z]*c/,
  python3: /^-[a-zA-Z]*c/,
  perl: /^-[a-zA-Z]*[eE]/,
  ruby: /^-[a-zA-Z]*e/,
  node: /^(-[a-zA-Z]*[ep]|--eval|--print)/,
  deno: /^eval$/,
  bun: /^(-e|--eval)$/,
  php: /^-[a-zA-Z]*r/,
  lua: /^-[a-zA-Z]*e/,
  awk: /system\s*\(|\|\s*"/,
  gawk: /system\s*\(|\|\s*"/,
  tclsh: /^$/,
  osascript: /^-e$/,
};
/** Places whose reading is itself the harm (secrets of the worker), wherever a command touches them. */
const SECRET_PLACES =
  /^\/proc\/[^/]+\/(environ|root|mem|cwd|fd|maps|cmdline)(\/|$)|^\/etc\/(shadow|gshadow|sudoers)|(^|\/)\.(ssh|aws|gnupg|kube|docker|netrc|git-credentials|npmrc|pypirc|gitconfig|config\/gh)(\/|$)|^\/var\/run\/secrets|^\/run\/secrets|^\/var\/lib\/agentrun/;
const LOOPBACK = /(^|[/@:\s])(127\.\d+\.\d+\.\d+|localhost|\[?::1\]?|0\.0\.0\.0)([:/\s]|$)/;

/**
 * Constructs the checker cannot see through, each needing approval under `--approval dangerous`:
 * inline interpreter code, eval of expanded text, scripts from process substitutions, code run
 * after a download, arguments fed by xargs, uploads of local files, connections to this host,
 * and secret places.
 */
function flagOpaque(prog: string, args: Word[], st: State): void {
  const inline = INLINE_CODE[prog];
  const readable = (k: number) => args[k + 1] !== undefined && !args[k + 1]!.expands && readableInlineCode(prog, args[k]!.text, args[k + 1]!.text);
  if (inline && args.some((a, k) => inline.test(a.text) && !readable(k))) danger(st, `runs inline ${prog} code, which the checker cannot read`);
  if (prog === 'eval' && args.some((a) => a.expands)) danger(st, 'evaluates text built at run time (eval)');
  const runsCode = SHELLS.has(prog) || INTERPRETERS.has(prog) || prog === 'source' || prog === '.';
  if (runsCode && args.some((a) => a.procSub)) danger(st, `runs a script produced by a process substitution (${prog} <(…))`);
  if (st.downloads && (runsCode || /^\.?\.?\//.test(prog) || prog === 'chmod')) danger(st, `runs code after downloading (${prog})`);
  if (st.xargs && !READ_ONLY.has(prog)) danger(st, `gives ${prog} arguments from its input through xargs, unseen by the checker`);
  if (DOWNLOADERS.has(prog)) {
    if (
      args.some((a, i) => /^@/.test(a.text) && i > 0 && /^(-d|--data(-binary|-raw|-urlencode)?|-F|--form)$/.test(args[i - 1]!.text)) ||
      args.some((a) => /^(-d|-F|--data[a-z-]*=?|--form=?)@|^[^=\s]+=@/.test(a.text)) ||
      args.some((a) => /^(-T|--upload-file)$/.test(a.text))
    ) {
      danger(st, `uploads a local file (${prog})`);
    }
    if (args.some((a) => LOOPBACK.test(a.text))) danger(st, `connects to a service on this host (${prog})`);
  }
  for (const a of args) {
    if (SECRET_PLACES.test(a.text) || (a.text.startsWith('~') && SECRET_PLACES.test(a.text.slice(1))))
      danger(st, `touches a place that holds secrets (${a.text})`);
    else if (classify(a, st).cls === 'home' && !READ_ONLY.has(prog)) danger(st, `touches the home directory (${a.text})`);
  }
  if (prog === 'sed' && args.some((a) => /^-[a-zA-Z]*i/.test(a.text) || a.text.startsWith('--in-place'))) {
    const files = operands(args, /^-(e|f)$/).slice(args.some((a) => /^-(e|f)$/.test(a.text)) ? 0 : 1);
    for (const f of files) checkWriteTarget(f, st, 'edits');
  }
  if (prog === 'ln') {
    for (const src of operands(args, /^-(t|S)$/).slice(0, -1)) {
      const c = classify(src, st);
      if (c.cls === 'root' || c.cls === 'home' || c.cls === 'outside') danger(st, `links to ${src.text} (${PATH_WORDS[c.cls]}), a way out of the workspace`);
    }
  }
  if (prog === 'kill' && args.some((a) => a.expands || /^\d+$/.test(a.text))) danger(st, 'signals a process by pid (kill), which may be the worker');
  if (prog === 'git' && args.some((a) => a.text === '--global' || a.text === '--system'))
    danger(st, 'changes git configuration outside the workspace (--global/--system)');
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
