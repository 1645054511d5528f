// Shells, privilege and the wrappers around a command (env, nice, timeout, xargs, sudo…): the
// wrappers are stripped so the real program is judged, privilege is dangerous in itself, and what a
// shell runs (`bash -c '…'`, eval) is judged as a command text of its own by the engine.
import type { Word } from '../shell-lex.js';
import { base, checkWriteTarget, danger, word, type State } from '../state.js';

export const SHELLS: ReadonlySet<string> = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'csh', 'tcsh', 'ash', 'busybox']);
const SUDO_LISTS = /^-(l|ll|k|S|n|-list|-reset-timestamp|-stdin|-non-interactive)$/;
const PRIVILEGE = new Set([
  'sudo',
  // sudoedit is `sudo -e`: the files it is given are edited as root.
  'sudoedit',
  'su',
  'doas',
  'pkexec',
  'run0',
  'runuser',
  'nsenter',
  'chroot',
  'setpriv',
  'capsh',
  'newgrp',
  'ksu',
  'gsudo',
  'gosu',
  'su-exec',
  // Documentation's `[sudo] pacman -S git`: the reader is to run it as root where their setup needs it.
  '[sudo]',
  // A script's helpers named for running their command as root (`asroot systemctl daemon-reload`); `run_as_root` alone is
  // as often a check that the script runs as root, and stays a program no table names.
  'asroot',
  'as_root',
]);
/** capsh's options that only print or test the capabilities (`capsh --print`), running nothing. */
const CAPSH_READS = /^--(print|current|help|version|license|decode=\w+|supports=\w+|has-[piab]=\w+|explain=\w+)$/;
/** MPI's launchers' options that take a value (Open MPI's, MPICH's Hydra's). */
const MPI_LAUNCHER = {
  valued:
    /^(-n|-np|-c|-N|-H|-x|-host|-hostfile|-machinefile|-wdir|-npernode|-rf|--n|--np|--host|--hostfile|--machinefile|--wdir|--npernode|--prefix|--rankfile|--map-by|--bind-to|--rank-by|--output-filename|--timeout|-ppn|-f|-genv|-env|-hosts)$/,
  valuedTwice: /^(-mca|--mca|-gmca|--gmca)$/,
};
/**
 * Programs that run the command in their arguments after their own options: the options that take
 * a value, and how many operands come before the command (flock's lock file, taskset's mask).
 */
const WRAPPERS: Readonly<Record<string, { valued?: RegExp; valuedTwice?: RegExp; operands?: number }>> = {
  env: { valued: /^-(u|C|-unset|-chdir)$/ },
  nice: { valued: /^-(n|-adjustment)$/ },
  nohup: {},
  time: { valued: /^-(f|o|-format|-output)$/ },
  stdbuf: { valued: /^-(i|o|e)$/ },
  ionice: { valued: /^-(c|n|p|P|u|-class|-classdata)$/ },
  command: {},
  builtin: {},
  exec: { valued: /^-a$/ },
  unbuffer: {},
  chronic: {},
  setsid: {},
  busybox: {},
  toybox: {},
  chrt: { valued: /^-(T|P|D)$/, operands: 1 },
  taskset: { operands: 1 },
  flock: { valued: /^-(w|E|-timeout|-conflict-exit-code)$/, operands: 1 },
  watch: { valued: /^-(n|d|-interval)$/ },
  strace: { valued: /^-(o|e|p|u|s|a|b|E|I|O|P|S|X)$/ },
  ltrace: { valued: /^-(o|e|p|u|s|a|n|A|D|F|l|x)$/ },
  timeout: { valued: /^-(s|k|-signal|-kill-after)$/, operands: 1 },
  logsave: { operands: 1 },
  // MSYS2's setup action runs its command in the MSYS2 shell (`msys2do pacman -S …`).
  msys2do: {},
  // A Flatpak app's command run on the host, outside its sandbox (`flatpak-spawn --host openFPGALoader …`).
  'flatpak-spawn': {},
  // Emscripten's wrappers run the build tool with its compilers in the environment.
  emmake: {},
  emcmake: {},
  emconfigure: {},
  // -a, -m and -p take their value attached or none; -r, -o, -c, -i, -A, -n, -N, -R, -U and -W take none.
  rlwrap: {
    valued:
      /^-(b|C|D|e|f|g|H|l|M|O|P|q|s|S|t|w|z|-(break-chars|command-name|history-no-dupes|extra-char-after-completion|file|forget-matching|history-filename|logfile|multi-line-ext|only-cook|pre-given|quote-characters|histsize|substitute-prompt|set-term-name|wait-before-prompt|filter))$/,
  },
  pexec: {},
  'ssh-agent': { valued: /^-(a|E|P|t)$/ },
  unshare: { valued: /^-(S|G|R|w|-setuid|-setgid|-root|-wd)$/ },
  xvfb: {},
  'xvfb-run': { valued: /^-(n|s|f|e|-server-num|-server-args)$/ },
  caffeinate: {},
  'dbus-run-session': {},
  proxychains: { valued: /^-f$/ },
  proxychains4: { valued: /^-f$/ },
  firejail: {},
  // Sandboxes run their command inside what their options bind or mount: the command is what is judged.
  bwrap: {
    valued:
      /^--(args|chdir|unsetenv|lock-file|sync-fd|tmpfs|proc|dev|dir|remount-ro|exec-label|file-label|uid|gid|hostname|seccomp|info-fd|json-status-fd|userns-block-fd|block-fd|cap-add|cap-drop|perms|size|userns|userns2|pidns|overlay-src|tmp-overlay|ro-overlay)$/,
    valuedTwice: /^--(bind|bind-try|dev-bind|dev-bind-try|ro-bind|ro-bind-try|symlink|setenv|file|bind-data|ro-bind-data|chmod|overlay)$/,
  },
  nsjail: {
    valued:
      /^(-[cCuUgGEBRTtDHpPlL]|--(chroot|user|group|config|cwd|hostname|env|bindmount|bindmount_ro|tmpfsmount|mount|time_limit|port|bindhost|log|log_fd|rlimit_\w+|cgroup_\w+|seccomp_policy|seccomp_string|max_cpus|proc_path|uid_mapping|gid_mapping|macvlan_iface))$/,
  },
  valgrind: {},
  choom: { valued: /^-(n|p)$/ },
  cpulimit: { valued: /^-(l|p|e|-limit|-pid|-exe)$/ },
  numactl: { valued: /^-(C|N|m|p|i|-physcpubind|-cpunodebind|-membind|-preferred|-interleave)$/ },
  prlimit: { valued: /^-(p|-pid)$/ },
  nocache: {},
  eatmydata: {},
  fakeroot: {},
  faketime: { operands: 1 },
  catchsegv: {},
  'systemd-inhibit': { valued: /^--(what|who|why|mode)$/ },
  torsocks: {},
  torify: {},
  'aa-exec': { valued: /^-(p|n|-profile|-namespace)$/ },
  sshpass: { valued: /^-(p|f|d)$/ },
  multitime: { valued: /^-(n|s)$/ },
  softlimit: { valued: /^-[acdflmoprst]$/ },
  setlock: { operands: 1 },
  // Retry wrappers (`retry --times=3 -- CMD`, a CI script's `retry CMD` function, Travis' `travis_retry`)
  // run their command until it succeeds.
  retry: { valued: /^-(t|d|m|x|-times|-delay|-max-delay|-until|-tries|-sleep|-backoff)$/ },
  travis_retry: {},
  // Slurm's job launchers run their command on the cluster's nodes, as the user's own job.
  srun: { valued: /^-(A|B|c|C|d|D|e|G|i|J|L|m|M|n|N|o|p|q|r|S|t|T|w|W|x)$/ },
  salloc: { valued: /^-(A|B|c|C|d|D|G|J|L|m|M|n|N|p|q|S|t|w|W|x)$/ },
  // MPI's and Horovod's launchers start their command as many processes, here or on the hosts they are given.
  mpirun: MPI_LAUNCHER,
  mpiexec: MPI_LAUNCHER,
  horovodrun: {
    valued:
      /^(-np|--num-proc|-H|--hosts|-hostfile|--hostfile|-p|--ssh-port|-i|--ssh-identity-file|--host-discovery-script|--min-np|--max-np|--slots|--network-interface|--start-timeout|--output-filename|--config-file|--log-level)$/,
    valuedTwice: /^--blacklist-cooldown-range$/,
  },
  // Xcode's tool runner: `xcrun [-sdk SDK] TOOL …` runs TOOL from the selected developer directory.
  xcrun: { valued: /^(-sdk|--sdk|-toolchain|--toolchain)$/ },
};
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*=/;
/** A wrapper this file strips, or a program that runs its command with privileges. */
export const isWrapperName = (p: string) => Object.hasOwn(WRAPPERS, p) || PRIVILEGE.has(p);

/** A wrapper that was stripped, with the words it was given before the command (for options that write or run). */
export interface Stripped {
  prog: string;
  words: Word[];
}

/**
 * Strip wrappers (env, nice, timeout, xargs, sudo…) so the real program is judged. `stripped`
 * collects each wrapper and its own words; `env -S STRING` is split into the command.
 */
export function unwrap(words: Word[], st: State, stripped: Stripped[] = []): Word[] {
  let ws = words;
  for (let guard = 0; guard < 10 && ws.length; guard++) {
    while (ws.length && VARIABLE.test(ws[0]!.text)) ws = ws.slice(1);
    const p = base(ws[0]);
    const spec = Object.hasOwn(WRAPPERS, p) ? WRAPPERS[p] : undefined;
    // capsh told only to print or test the capabilities runs nothing, as `sudo -l` below.
    if (p === 'capsh' && ws.length > 1 && ws.slice(1).every((w) => CAPSH_READS.test(w.text))) return [word('true')];
    // `busybox --install` links every applet into the system's program directories (or the one it is given).
    if (p === 'busybox' && ws[1]?.text === '--install') {
      const dir = ws.slice(2).find((w) => !w.text.startsWith('-'));
      if (dir) checkWriteTarget(dir, st, "links busybox's programs into");
      else danger(st, "links busybox's programs into the system's program directories (busybox --install)");
      return [word('true')];
    }
    // corepack runs the package manager it is given (`corepack yarn npm publish`) at the project's pinned version.
    if (p === 'corepack' && /^(yarn|pnpm|npm|npx|pnpx)$/.test(ws[1]?.text ?? '')) {
      ws = ws.slice(1);
      continue;
    }
    // `sudo -l` lists what the user may run as whom and runs nothing (-k, -S and -n only say how to ask).
    if (p === 'sudo' && ws.length > 1 && ws.slice(1).some((w) => /^-(l|ll|-list)$/.test(w.text)) && ws.slice(1).every((w) => SUDO_LISTS.test(w.text)))
      return [word('true')];
    // `sudo -V` prints its version (and, as root, its settings); `-h` its usage: neither runs a command.
    // pkexec and doas print theirs the same way.
    if (/^(sudo|pkexec|doas)$/.test(p) && ws.length === 2 && /^(-V|--version|-h|--help)$/.test(ws[1]!.text)) return [word('true')];
    if (PRIVILEGE.has(p)) {
      danger(st, `runs a command with elevated privileges (${p})`);
      let k = 1;
      while (k < ws.length && ws[k]!.text.startsWith('-')) k += /^-[ugCDhpUrtTn]$/.test(ws[k]!.text) ? 2 : 1;
      // su takes a command text (-c), which its table entry reads.
      if (p === 'su' || p === 'newgrp') {
        stripped.push({ prog: p, words: ws.slice(1) });
        return [];
      }
      // chroot's first operand is the new root; gosu's and su-exec's the user the command runs as.
      if (p === 'chroot' || p === 'gosu' || p === 'su-exec') k++;
      ws = ws.slice(k);
    } else if (spec) {
      if ((p === 'busybox' || p === 'toybox') && ws.length > 1 && !ws[1]!.text.startsWith('-')) {
        ws = ws.slice(1);
        continue;
      }
      if (p === 'command' && (ws[1]?.text === '-v' || ws[1]?.text === '-V')) return [word('which')];
      // `xcrun -f TOOL` only prints where TOOL is; the options end at the tool's name.
      if (
        p === 'xcrun' &&
        ws
          .slice(
            1,
            ws.findIndex((w, k) => k > 0 && !w.text.startsWith('-')),
          )
          .some((w) => /^(-f|--find)$/.test(w.text))
      )
        return [word('which')];
      if (p === 'watch' || (p === 'flock' && ws.some((w) => w.text === '-c'))) return ws; // their own table entry reads the command
      let k = 1;
      while (k < ws.length && ((ws[k]!.text.startsWith('-') && ws[k]!.text !== '-') || (p === 'env' && VARIABLE.test(ws[k]!.text)))) {
        const t = ws[k]!.text;
        if (p === 'env' && (t === '-S' || t === '--split-string' || t.startsWith('--split-string=') || /^-S./.test(t))) {
          const text = t === '-S' || t === '--split-string' ? ws[k + 1]?.text : t.startsWith('-S') ? t.slice(2) : t.slice(15);
          stripped.push({ prog: p, words: ws.slice(1, k) });
          return text === undefined ? [] : [...splitWords(text), ...ws.slice(k + (t === '-S' || t === '--split-string' ? 2 : 1))];
        }
        if (t === '--') {
          k++;
          break;
        }
        k += spec.valuedTwice?.test(t) ? 3 : spec.valued?.test(t) ? 2 : 1;
      }
      k += spec.operands ?? 0;
      stripped.push({ prog: p, words: ws.slice(1, k) });
      if (k >= ws.length) return p === 'env' ? [ws[0]!] : [];
      ws = ws.slice(k);
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

/** The words of `env -S` text, split as env does: blanks separate, quotes group, a backslash escapes. */
function splitWords(text: string): Word[] {
  const out: Word[] = [];
  let cur: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      if (cur !== undefined) out.push(word(cur));
      cur = undefined;
    } else if (c === "'") {
      const j = text.indexOf("'", i + 1);
      const end = j < 0 ? text.length : j;
      cur = (cur ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      let part = '';
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\\' && j + 1 < text.length) j++;
        part += text[j];
        j++;
      }
      cur = (cur ?? '') + part;
      i = j;
    } else if (c === '\\' && i + 1 < text.length) cur = (cur ?? '') + text[++i];
    else cur = (cur ?? '') + c;
  }
  if (cur !== undefined) out.push(word(cur));
  return out;
}
