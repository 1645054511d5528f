// Shells, privilege and the wrappers around a command (env, nice, timeout, xargs, sudo…): the
// wrappers are stripped so the real program is judged, privilege is dangerous in itself, and what a
// shell runs (`bash -c '…'`, eval) is judged as a command text of its own by the engine.
import type { Word } from '../shell-lex.js';
import { base, danger, word, type State } from '../state.js';

export const SHELLS: ReadonlySet<string> = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'csh', 'tcsh', 'ash', 'busybox']);
const PRIVILEGE = new Set(['sudo', 'su', 'doas', 'pkexec', 'run0']);
/** Programs that run the command in their arguments after their own options. */
const WRAPPERS = new Set([
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
]);
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Strip wrappers (env, nice, timeout, xargs, sudo…) so the real program is judged. */
export function unwrap(words: Word[], st: State): Word[] {
  let ws = words;
  for (let guard = 0; guard < 10 && ws.length; guard++) {
    while (ws.length && VARIABLE.test(ws[0]!.text)) ws = ws.slice(1);
    const p = base(ws[0]);
    if (PRIVILEGE.has(p)) {
      danger(st, `runs a command with elevated privileges (${p})`);
      let k = 1;
      while (k < ws.length && ws[k]!.text.startsWith('-')) k += /^-[ugCDhpUrt]$/.test(ws[k]!.text) ? 2 : 1;
      if (p === 'su') return [];
      ws = ws.slice(k);
    } else if (WRAPPERS.has(p)) {
      if ((p === 'busybox' || p === 'toybox') && ws.length > 1 && !ws[1]!.text.startsWith('-')) {
        ws = ws.slice(1);
        continue;
      }
      if (p === 'command' && (ws[1]?.text === '-v' || ws[1]?.text === '-V')) return [word('which')];
      let k = 1;
      while (k < ws.length && (ws[k]!.text.startsWith('-') || (p === 'env' && VARIABLE.test(ws[k]!.text)))) {
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
      if (k >= ws.length) return [word('echo')];
      ws = ws.slice(k);
    } else break;
  }
  return ws;
}
