// What a program no family names is judged by: not its name, which no table can keep up with, but
// what its arguments point at. The programs every corpus brought that the tables did not know were
// most of the dangerous commands that passed (two thirds, docs/decisions.md); what they had in
// common was a path outside the workspace (a key, a device, /etc), another host, or an option that
// hands over a command. A program that only reads (safe-commands.ts) is never judged here.
import type { Word } from '../shell-lex.js';
import { classify, danger, type State } from '../state.js';

/**
 * Devices and system files any program may read or write without harm; macOS's /System is a sealed,
 * read-only volume of Apple's files (color profiles, fonts, frameworks), no one's secrets.
 */
const HARMLESS_PLACE =
  /^\/(dev\/(null|zero|stdout|stderr|stdin|tty|full|random|urandom|fd\/\d+)|tmp|var\/tmp|proc\/(self\/)?(cpuinfo|meminfo|loadavg|uptime|version)|usr\/(share|include|lib|local\/(share|include|lib))|System\/(Library|Applications|iOSSupport))(\/|$)/;
/** `user@host`, `user@host:path`, `host:/path`: another machine (an e-mail address in an option's value aside). */
const REMOTE = /^([\w.-]+@[\w.-]+\.?[\w-]*(:\S*)?|[\w-]+(\.[\w-]+)+:\/\S*)$/;
/** An option whose value is a command the program runs. */
const EXEC_OPTION = /^--?(exec|execute|command|cmd|shell|eval|pre|post|hook|on-[\w-]+|[\w-]+-(cmd|command|program|exec|hook|shell))(=|$)/;
/** A shell named by its path (the bare word is judged where it is handed over, with what it runs). */
const SHELL_VALUE = /^\/(usr\/)?bin\/(sh|bash|zsh|dash|ksh|fish)(\s|$)/;
/** A subcommand that reaches past the machine: publishing, deploying, logging in, destroying. */
const OUTWARD = /^(publish|deploy|release|upload|login|destroy|push)$/;

/** The value of option `k` (`--x=v` or `--x v`), or undefined. */
function optionValue(args: Word[], k: number): string | undefined {
  const t = args[k]!.text;
  const eq = t.indexOf('=');
  if (eq >= 0) return t.slice(eq + 1);
  const next = args[k + 1]?.text;
  return next !== undefined && !next.startsWith('-') ? next : undefined;
}

export function judgeUnknownProgram(prog: string, args: Word[], st: State): void {
  st.repeatable = false;
  for (const [k, a] of args.entries()) {
    const t = a.text;
    const value = t.startsWith('-') ? (t.includes('=') ? t.slice(t.indexOf('=') + 1) : '') : t;
    if (value && /^(\/|~|\$\{?HOME\b)/.test(value)) {
      const c = classify(value, st);
      if ((c.cls === 'outside' || c.cls === 'home' || c.cls === 'root') && !(c.abs && HARMLESS_PLACE.test(c.abs)))
        return danger(st, `gives ${prog}, which no table names, a path outside the workspace (${value})`);
    }
    if (!t.startsWith('-') && REMOTE.test(t) && !/^-/.test(args[k - 1]?.text ?? ''))
      return danger(st, `gives ${prog}, which no table names, another host (${t})`);
    if (t.startsWith('-') && EXEC_OPTION.test(t)) {
      const v = optionValue(args, k);
      if (v !== undefined) return danger(st, `gives ${prog}, which no table names, a command to run (${t.replace(/=.*/, '')})`);
    }
    if (SHELL_VALUE.test(value)) return danger(st, `gives ${prog}, which no table names, a shell (${value})`);
  }
  const sub = args.find((a) => !a.text.startsWith('-'));
  if (sub && OUTWARD.test(sub.text) && !args.some((a) => a.text === '--dry-run')) danger(st, `${prog} ${sub.text} reaches past this machine`);
}
